"""Word (.docx) to text for chunking: one walk over the XML, every style looked up in one dict.

1. python-docx opens the package (zip, parts, core-properties title). One pass over the styles
   part builds a dict of paragraph styles by id; one walk over the body's lxml elements reads the
   text, each element visited once (`DocxText.visited`; tests/test_docx.py holds it to a small
   multiple of the XML's elements, whatever the number of styles).
2. The text is what Word shows in its final view. An element without a rule is read through, so
   tracked insertions and moves-to, content controls, hyperlinks, smart tags, custom XML, field
   results and text boxes lose nothing; what Word does not show is skipped by name: deletions,
   moves-from, field codes, properties, the branches of an `mc:AlternateContent` after the one read.
3. Blocks as `chunking.html_text` writes them: `# ` headings (Title, Heading 1–9 by style name, or
   an outline level), `- ` list items, `a | b | c` table rows (a nested table flattened into its
   cell), a text box after its paragraph; footnotes `[^1]` and endnotes `[^i]` where referenced,
   each note a `[^1]: text` paragraph after the body.

Left out, and counted in one `LeftOutWarning` per file: headers, footers, comments, hidden text,
charts, SmartArt, embedded objects, `w:altChunk` imports and subdocuments. It does not number list
items, lay out equations (their text is read), join a paragraph whose mark is a tracked deletion
to the next, or map symbol fonts to Unicode. Used by `chunking.load`; notebook 14.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import re
import warnings
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chunking.html_text import CELL_SEPARATOR

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
MATH = "{http://schemas.openxmlformats.org/officeDocument/2006/math}"
DRAWING = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
MAX_LIST_INDENT = 8  # as the HTML reader: deeper list levels are indented no further
MAX_HEADING = 6  # markdown's deepest heading; Heading 7–9 and outline levels past 6 become 6
# What Word does not show in the final view, or properties that hold no text: never walked into.
UNSHOWN = frozenset(W + name for name in (
    "del", "moveFrom", "delText", "delInstrText", "instrText", "rPr", "tblPr", "tblPrEx", "trPr", "tcPr",
    "tblGrid", "sdtPr", "sdtEndPr", "sectPr", "rubyPr", "customXmlPr", "smartTagPr"))
CHARACTERS = {W + "tab": "\t", W + "ptab": "\t", W + "br": "\n", W + "cr": "\n", W + "noBreakHyphen": "-"}
# Kinds of left-out content, plural -> singular, in the order the warning names them.
LEFT_OUT = {"headers": "header", "footers": "footer", "comments": "comment",
            "runs of hidden text": "run of hidden text", "charts": "chart", "SmartArt diagrams": "SmartArt diagram",
            "embedded objects": "embedded object", "imported documents (w:altChunk)": "imported document (w:altChunk)",
            "subdocuments": "subdocument"}

Block = tuple[str, str]  # ("item" for a list paragraph | "block", text)


class LeftOutWarning(UserWarning):
    """A Word file had content the reader does not read (headers, comments, …): the message counts it."""


@dataclass(frozen=True)
class DocxText:
    """What `read_docx` read: the text, the core-properties title, what it left out, and its work."""

    text: str
    title: str
    left_out: dict[str, int]  # kind ("headers", "comments", …) -> how many; empty when nothing was
    visited: int  # XML elements looked at: styles, body, notes, headers and footers
    style_lookups: int  # paragraph styles looked up, one dict lookup each

    @property
    def note(self) -> str:
        """What the warning says was left out ("left out 2 headers and 3 comments"); "" for nothing."""
        counts = [f"{n} {kind if n > 1 else LEFT_OUT[kind]}" for kind in LEFT_OUT if (n := self.left_out.get(kind))]
        if not counts:
            return ""
        return "left out " + (", ".join(counts[:-1]) + " and " + counts[-1] if len(counts) > 1 else counts[0])


def read_docx(source: bytes | str | os.PathLike, *, name: str | None = None) -> DocxText:
    """The text of a Word file (its bytes or its path) by the module's rules, its title and what it
    left out. A file python-docx cannot open is a one-line ValueError naming it (`name`, default the
    path); content left out is one `LeftOutWarning` naming it, with counts.

    >>> import io, docx
    >>> document, buffer = docx.Document(), io.BytesIO()
    >>> for line in ("Fares", "Adults pay 49."):
    ...     _ = document.add_paragraph(line)
    >>> document.save(buffer)
    >>> read_docx(buffer.getvalue()).text
    'Fares\\n\\nAdults pay 49.'
    """
    data, name = _source(source, name)
    try:
        with _quiet("docx"):
            result = _read(data)
    except Exception as error:  # a zip that is not a Word file, broken XML, missing parts…
        detail = " ".join(str(error).split())[:200] or "no detail"
        raise ValueError(f"file {name!r} is not a readable .docx file ({type(error).__name__}: {detail})") from None
    if result.note:
        warnings.warn(f"file {name!r}: {result.note} (the reader reads the body, footnotes and endnotes)",
                      LeftOutWarning, stacklevel=2)
    return result


def _source(source: object, name: object) -> tuple[bytes, str]:
    """The file's bytes and the name errors and warnings give it."""
    if name is not None and not isinstance(name, str):
        raise TypeError(f"name must be a str or None, got {type(name).__name__}")
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source), name or "<bytes>"
    if not isinstance(source, (str, os.PathLike)):
        raise TypeError(f"source must be bytes or a path, got {type(source).__name__}")
    name = name or os.fsdecode(source)
    try:
        return Path(source).read_bytes(), name
    except OSError as error:
        raise OSError(error.errno, f"cannot read file {name!r}: {error.strerror or error}") from None


def _read(data: bytes) -> DocxText:
    """Open the package with python-docx, then walk its styles, body, notes, headers and footers."""
    import docx
    from docx.opc.constants import RELATIONSHIP_TYPE as RT

    document = docx.Document(io.BytesIO(data))
    part = document.part
    walker = Walker(Styles(_part_xml(part, RT.STYLES)))
    blocks = walker.story(document.element.body)
    blocks += walker.notes(footnotes=_part_xml(part, RT.FOOTNOTES), endnotes=_part_xml(part, RT.ENDNOTES))
    walker.count_left_out(part)
    text = _join([block for block in blocks if block[1].strip()])
    return DocxText(text, _title(document), dict(walker.left_out), walker.visited + walker.styles.visited,
                    walker.styles.lookups)


class Styles:
    """Paragraph styles by id, from one pass over the styles part: a paragraph's style is one lookup.

    As python-docx's `paragraph.style`: an id that is missing, or whose first style is not a
    paragraph style, means the default paragraph style (the last one marked default).
    """

    def __init__(self, root: Any | None) -> None:
        self.visited = self.lookups = 0
        self._kinds: dict[str, str] = {}  # id -> type of the first style with that id
        own: dict[str, tuple] = {}
        default = None
        for style in () if root is None else root:
            self.visited += 1
            if style.tag != W + "style":
                continue
            kind, style_id = style.get(W + "type", "paragraph"), style.get(W + "styleId")
            if kind == "paragraph" and _is_on(style, W + "default", missing=False):
                default = style
            if style_id is not None and style_id not in self._kinds:
                self._kinds[style_id] = kind
                if kind == "paragraph":
                    own[style_id] = self._own(style)
        self._styles = self._resolve(own)
        self.default = Style() if default is None else self._derive(self._own(default))

    def paragraph(self, style_id: str | None) -> Style:
        """The style a paragraph with this `w:pStyle` id (None: without one) has."""
        self.lookups += 1
        if style_id is None or self._kinds.get(style_id) != "paragraph":
            return self.default
        return self._styles[style_id]

    def _own(self, style: Any) -> tuple:
        """(name, basedOn id, outline level or None, numbered or None) the style itself sets."""
        name = based_on = outline = numbered = None
        for child in style:
            self.visited += 1
            if child.tag == W + "name":
                name = child.get(W + "val")
            elif child.tag == W + "basedOn":
                based_on = child.get(W + "val")
            elif child.tag == W + "pPr":
                _, outline, numbered, _ = self.settings(child)
        # python-docx's names: styles.xml's "heading 1" is the "Heading 1" users see
        name = name or ""
        return (f"H{name[1:]}" if re.fullmatch(r"heading [1-9]", name) else name), based_on, outline, numbered

    def settings(self, properties: Any) -> tuple[str | None, int | None, bool | None, int | None]:
        """(style id, outline level, numbered, list level) a `w:pPr` sets; None for what it does not set."""
        style_id = outline = numbered = level = None
        for child in properties:
            self.visited += 1
            if child.tag == W + "pStyle":
                style_id = child.get(W + "val")
            elif child.tag == W + "outlineLvl":
                outline = _number(child.get(W + "val"))
            elif child.tag == W + "numPr":
                numbered = True
                for item in child:
                    self.visited += 1
                    if item.tag == W + "numId":
                        numbered = item.get(W + "val") != "0"  # numId 0 takes numbering away
                    elif item.tag == W + "ilvl":
                        level = _number(item.get(W + "val"))
        return style_id, outline, numbered, level

    def _resolve(self, own: dict[str, tuple]) -> dict[str, Style]:
        """Every style with what it inherits through `w:basedOn`, each chain walked once (cycles cut)."""
        styles: dict[str, Style] = {}
        for style_id in own:
            chain, seen, at = [], set(), style_id
            while at in own and at not in styles and at not in seen:
                self.visited += 1
                seen.add(at)
                chain.append(at)
                at = own[at][1]
            base = styles.get(at, Style())
            for link in reversed(chain):
                base = styles[link] = self._derive(own[link], base)
        return styles

    def _derive(self, own: tuple, base: Style | None = None) -> Style:
        name, based_on, outline, numbered = own
        base = base or self._styles.get(based_on, Style())
        return Style(name, _heading_level(name), base.outline if outline is None else outline,
                     base.numbered if numbered is None else numbered)


@dataclass(frozen=True)
class Style:
    """What a paragraph style means for the text: its name, a heading level, numbering."""

    name: str = ""
    heading: int = 0  # 1–6 from the name ("Title", "Heading 1" …), 0 for any other
    outline: int | None = None  # outline level 0–9 it sets or inherits (9 is body text)
    numbered: bool = False  # it sets or inherits list numbering


class Walker:
    """One pass over a story's elements (the body, a note, a header): blocks of text, in order.

    Every element it meets is counted in `visited`; an element without a rule of its own is read
    through (`_walk`), one in `UNSHOWN` is skipped with all it holds.
    """

    def __init__(self, styles: Styles) -> None:
        self.styles, self.visited = styles, 0
        self.left_out: Counter[str] = Counter()
        self.references: dict[str, dict[str, str]] = {"footnote": {}, "endnote": {}}  # kind -> note id -> label
        self._out: list[Block] = []  # the blocks of the container being walked
        self._parts: list[str] = []  # the text of the paragraph being walked (or loose runs between blocks)
        self._boxes: list[Block] = []  # blocks met inside that paragraph (text boxes), read after it
        self._properties = None  # that paragraph's w:pPr
        self._in_paragraph = self._plain = False
        self._fields: list[bool] = []  # open complex fields, innermost last: True while in its code
        self._codes = self._open_from = 0  # fields in their code; below _open_from none is
        self._rules = {W + "p": self._paragraph, W + "tbl": self._table, W + "pPr": self._paragraph_properties,
                       W + "r": self._run, W + "t": self._text, MATH + "t": self._text, W + "sym": self._symbol,
                       W + "fldChar": self._field, W + "footnoteReference": self._reference,
                       W + "endnoteReference": self._reference, MC + "AlternateContent": self._alternate,
                       W + "ruby": self._ruby, DRAWING + "graphicData": self._graphic, W + "object": self._object,
                       W + "altChunk": self._elsewhere, W + "subDoc": self._elsewhere,
                       **dict.fromkeys(CHARACTERS, self._character)}

    def story(self, root: Any, *, plain: bool = False) -> list[Block]:
        """The blocks of one story, its fields its own; `plain` skips headings and lists (cells, headers)."""
        saved = self._fields, self._codes, self._open_from
        self._fields, self._codes, self._open_from = [], 0, 0
        blocks = self._blocks(root, plain=plain)
        self._fields, self._codes, self._open_from = saved
        return blocks

    def notes(self, *, footnotes: Any | None, endnotes: Any | None) -> list[Block]:
        """A `[^label]: text` block for each note referenced in what was walked, footnotes first."""
        blocks = []
        for kind, root in (("footnote", footnotes), ("endnote", endnotes)):
            labels = dict(self.references[kind])  # a note's own references add no notes here
            bodies: dict[str, Any] = {}
            for note in () if root is None or not labels else root:
                self.visited += 1
                if note.tag == W + kind:
                    bodies.setdefault(note.get(W + "id"), note)
            for note_id, label in labels.items():
                if (body := bodies.get(note_id)) is not None:
                    text = _join([b for b in self.story(body) if b[1].strip()]).split("\n")
                    lines = [f"[^{label}]: {text[0]}".rstrip()] + [f"    {line}" if line else "" for line in text[1:]]
                    blocks.append(("block", "\n".join(lines)))
        return blocks

    def count_left_out(self, part: Any) -> None:
        """Count the headers and footers that hold text, and the comments, of a document part."""
        from docx.opc.constants import RELATIONSHIP_TYPE as RT

        kinds, seen = {RT.HEADER: "headers", RT.FOOTER: "footers"}, set()
        for rel in part.rels.values():
            if rel.is_external or rel.reltype not in (*kinds, RT.COMMENTS) or id(rel.target_part) in seen:
                continue
            seen.add(id(rel.target_part))
            root = _xml(rel.target_part)
            if rel.reltype == RT.COMMENTS:
                self.left_out["comments"] += sum(1 for _ in root.iterchildren(W + "comment"))
                self.visited += len(root)
                continue
            reader = Walker(self.styles)  # what a header leaves out is not the body's
            if any(text.strip() for _, text in reader.story(root, plain=True)):
                self.left_out[kinds[rel.reltype]] += 1
            self.visited += reader.visited

    def _walk(self, element: Any) -> None:
        rules = self._rules
        for child in element:
            tag = child.tag
            if not isinstance(tag, str) or tag in UNSHOWN:  # comments and processing instructions too
                continue
            self.visited += 1
            rule = rules.get(tag)
            if rule is None:
                self._walk(child)
            else:
                rule(child)

    def _blocks(self, container: Any, *, plain: bool = False) -> list[Block]:
        """The blocks of a container (body, cell, note, text box); runs outside a paragraph make one."""
        saved = self._out, self._parts, self._boxes, self._in_paragraph, self._plain
        self._out, self._parts, self._boxes, self._in_paragraph, self._plain = [], [], [], False, plain or self._plain
        self._walk(container)
        self._flush_loose()
        blocks = self._out
        self._out, self._parts, self._boxes, self._in_paragraph, self._plain = saved
        return blocks

    def _flush_loose(self) -> None:
        if text := "".join(self._parts).strip():
            self._out.append(("block", text))
        self._parts = []

    def _place(self, blocks: list[Block]) -> None:
        """Blocks met inside a paragraph wait for it to end; others join the container's."""
        (self._boxes if self._in_paragraph else self._out).extend(blocks)

    def _paragraph(self, p: Any) -> None:
        if not self._in_paragraph:
            self._flush_loose()
        saved = self._parts, self._boxes, self._properties, self._in_paragraph
        self._parts, self._boxes, self._properties, self._in_paragraph = [], [], None, True
        self._walk(p)
        self._end_field_codes()
        blocks = [self._block("".join(self._parts)), *self._boxes]
        self._parts, self._boxes, self._properties, self._in_paragraph = saved
        self._place(blocks)

    def _paragraph_properties(self, properties: Any) -> None:
        if self._in_paragraph and self._properties is None:
            self._properties = properties

    def _block(self, text: str) -> Block:
        """A paragraph's block: a `# ` heading, a `- ` list item, or its text."""
        if self._plain:
            return "block", text
        style_id = outline = numbered = level = None
        if self._properties is not None:
            style_id, outline, numbered, level = self.styles.settings(self._properties)
        style = self.styles.paragraph(style_id)
        heading = style.heading or _outline_heading(style.outline if outline is None else outline)
        if heading:
            return "block", f"{'#' * heading} {' '.join(text.split())}"
        if numbered or (numbered is None and style.numbered) or style.name.startswith("List"):
            if level is None:  # the style's: "List Bullet 2" is the second level
                level = int(m.group(1)) - 1 if (m := re.search(r" ([0-9]{1,3})$", style.name)) else 0
            return "item", f"{'  ' * min(max(level, 0), MAX_LIST_INDENT)}- {text.strip()}"
        return "block", text.strip()

    def _table(self, table: Any) -> None:
        """One `a | b | c` line per row; rows and cells inside content controls and custom XML too."""
        if not self._in_paragraph:
            self._flush_loose()
        rows, separator = [], " " if self._plain else CELL_SEPARATOR  # a table in a cell is its cell's text
        for row in self._within(table, W + "tr"):
            properties = row.find(W + "trPr")
            if properties is not None and properties.find(W + "del") is not None:
                continue  # a row deleted with tracked changes
            cells = [" ".join(" ".join(text for _, text in self._blocks(cell, plain=True)).split())
                     for cell in self._within(row, W + "tc")]
            rows.append(separator.join(cells).strip())
        self._place([("block", "\n".join(row for row in rows if row))])

    def _within(self, element: Any, tag: str) -> Iterator[Any]:
        """The `tag` children of `element`, and those inside wrappers between (content controls…)."""
        for child in element:
            if not isinstance(child.tag, str) or child.tag in UNSHOWN:
                continue
            self.visited += 1
            if child.tag == tag:
                yield child
            elif child.tag == MC + "AlternateContent":
                if (branch := self._branch(child)) is not None:
                    yield from self._within(branch, tag)
            else:
                yield from self._within(child, tag)

    def _emit(self, text: str) -> None:
        if not self._codes:  # a field's code is not shown, only its result
            self._parts.append(text)

    def _text(self, element: Any) -> None:
        self._emit(element.text or "")

    def _character(self, element: Any) -> None:
        self._emit(CHARACTERS[element.tag])

    def _symbol(self, element: Any) -> None:
        code = _number(element.get(W + "char") or "", 16)
        ok = code is not None and 0 <= code < 0x110000 and not 0xD800 <= code < 0xE000
        self._emit(chr(code) if ok else "\ufffd")

    def _run(self, run: Any) -> None:
        properties = run.find(W + "rPr")
        if properties is None or not _is_on(properties.find(W + "vanish")):
            self._walk(run)
            return
        shown, self._parts = self._parts, []  # hidden text: walked for its fields, then dropped
        self._walk(run)
        if "".join(self._parts).strip():
            self.left_out["runs of hidden text"] += 1
        self._parts = shown

    def _field(self, char: Any) -> None:
        kind = char.get(W + "fldCharType")
        if kind == "begin":
            self._fields.append(True)
            self._codes += 1
        elif kind == "separate" and self._fields and self._fields[-1]:
            self._fields[-1] = False
            self._codes -= 1
        elif kind == "end" and self._fields:
            self._codes -= self._fields.pop()
            self._open_from = min(self._open_from, len(self._fields))

    def _end_field_codes(self) -> None:
        """A field's code ends with its paragraph: a field never separated hides no text after it."""
        if self._codes:
            for i in range(self._open_from, len(self._fields)):
                self._fields[i] = False
            self._codes = 0
        self._open_from = len(self._fields)

    def _reference(self, reference: Any) -> None:
        kind = "footnote" if reference.tag == W + "footnoteReference" else "endnote"
        labels = self.references[kind]
        note_id = reference.get(W + "id") or ""
        if note_id not in labels:
            n = len(labels) + 1
            labels[note_id] = str(n) if kind == "footnote" else _roman(n)  # as Word numbers them
        self._emit(f"[^{labels[note_id]}]")

    def _alternate(self, element: Any) -> None:
        if (branch := self._branch(element)) is not None:
            self._walk(branch)

    def _branch(self, element: Any) -> Any | None:
        """The branch of an `mc:AlternateContent` to read: its first Choice, else its Fallback."""
        fallback = None
        for child in element:
            if not isinstance(child.tag, str):
                continue
            self.visited += 1
            if child.tag == MC + "Choice":
                return child
            if child.tag == MC + "Fallback" and fallback is None:
                fallback = child
        return fallback

    def _ruby(self, ruby: Any) -> None:
        """Ruby text: the base, then its guide in parentheses ("漢字(かんじ)")."""
        parts = {}
        for child in ruby:
            if isinstance(child.tag, str):
                self.visited += 1
                parts.setdefault(child.tag, child)
        if (base := parts.get(W + "rubyBase")) is not None:
            self._walk(base)
        if (guide := parts.get(W + "rt")) is not None:
            outer, self._parts = self._parts, []
            self._walk(guide)
            text, self._parts = "".join(self._parts), outer
            if text:
                self._parts.append(f"({text})")

    def _graphic(self, data: Any) -> None:
        uri = data.get("uri", "")
        if "chart" in uri:
            self.left_out["charts"] += 1
        elif "diagram" in uri:
            self.left_out["SmartArt diagrams"] += 1
        self._walk(data)  # a shape's text box is in here

    def _object(self, element: Any) -> None:
        self.left_out["embedded objects"] += 1
        self._walk(element)

    def _elsewhere(self, element: Any) -> None:
        kind = "subdocuments" if element.tag == W + "subDoc" else "imported documents (w:altChunk)"
        self.left_out[kind] += 1


def _join(blocks: list[Block]) -> str:
    """Blocks separated by a blank line; consecutive list items by a line break, as one list."""
    parts = []
    for i, (kind, text) in enumerate(blocks):
        if i:
            parts.append("\n" if kind == "item" and blocks[i - 1][0] == "item" else "\n\n")
        parts.append(text)
    return "".join(parts)


def _heading_level(style: str) -> int:
    """1–6 for Word's "Title" and "Heading 1" … "Heading 9" styles (deeper ones are 6), else 0."""
    if style == "Title":
        return 1
    name, _, number = style.partition(" ")
    return min(int(number), MAX_HEADING) if name == "Heading" and number.isdigit() and int(number) > 0 else 0


def _outline_heading(outline: int | None) -> int:
    """Outline levels 0–8 are headings 1–9 (cut at 6); 9, the default, is body text."""
    return min(outline + 1, MAX_HEADING) if outline is not None and 0 <= outline < 9 else 0


def _is_on(element: Any, attribute: str = W + "val", *, missing: bool = True) -> bool:
    """A WordprocessingML on/off value: an absent element is off; an absent `w:val` is `missing`."""
    if element is None:
        return False
    value = element.get(attribute)
    return missing if value is None else value not in ("0", "false", "off")


def _number(value: str | None, base: int = 10) -> int | None:
    try:
        return int(value, base) if value else None
    except ValueError:
        return None


def _roman(n: int) -> str:
    """Lower-case roman numerals, Word's endnote numbers: 1 -> "i", 4 -> "iv"."""
    digits = []
    for value, letters in ((1000, "m"), (900, "cm"), (500, "d"), (400, "cd"), (100, "c"), (90, "xc"), (50, "l"),
                           (40, "xl"), (10, "x"), (9, "ix"), (5, "v"), (4, "iv"), (1, "i")):
        count, n = divmod(n, value)
        digits.append(letters * count)
    return "".join(digits)


def _part_xml(part: Any, reltype: str) -> Any | None:
    """The XML of the part `part` relates to by `reltype`, None without one."""
    try:
        return _xml(part.part_related_by(reltype))
    except KeyError:
        return None


def _xml(part: Any) -> Any:
    """A part's root element; parts python-docx keeps as bytes (footnotes…) are parsed as it parses."""
    from docx.oxml.parser import parse_xml

    element = getattr(part, "element", None)
    return element if element is not None else parse_xml(part.blob)


def _title(document: Any) -> str:
    """The core-properties title; "" without a core-properties part (python-docx's stand-in has one)."""
    from docx.opc.constants import RELATIONSHIP_TYPE as RT

    try:
        document.part.package.part_related_by(RT.CORE_PROPERTIES)
    except KeyError:
        return ""
    return (document.core_properties.title or "").strip()


@contextlib.contextmanager
def _quiet(logger: str) -> Iterator[None]:
    """Silence a library's warnings (logging and `warnings`) for the duration of the block."""
    log = logging.getLogger(logger)
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        log.setLevel(level)
