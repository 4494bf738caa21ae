"""HTML to text for chunking: a linear tokenizer and a block-by-block text builder.

1. `events` cuts HTML into start tags, end tags and text, as a browser's tokenizer would in
   outline: `<` opens a tag only before a letter, `/`, `!` or `?`; comments run to `-->`;
   `<!…>`, `<?…>` and malformed end tags are bogus comments to the next `>`; the text of script,
   style, title, textarea and a few more runs to their end tag; a construct left open at the end
   of the input swallows the rest, as in a browser. Character references are decoded in text.
2. `html_to_text` turns the events into readable text: script, style, head, template and
   noscript dropped; block elements become line or blank-line breaks, table cells `a | b | c`
   rows, list items `- ` lines (indented at most `MAX_LIST_INDENT` levels), headings `# ` lines
   the markdown strategy can use; spaces collapse except inside `<pre>`.

Why not `html.parser`: on malformed markup (`"<a " * n`, `"<!--" * n`) its time is quadratic in
Python 3.11 (the CVE-2025-6069 class), fixed only in later patch releases. Here every search starts
where the previous one ended, so each character is looked at a bounded number of times whatever
the input (`Scanner.scanned` counts them; tests/test_linear.py holds it to that).
It does not build a DOM, apply CSS or run scripts. Used by `chunking.load` for .html files.
"""

from __future__ import annotations

import html as entities
import re
from collections import Counter
from collections.abc import Iterator

MAX_LIST_INDENT = 8  # deeper lists are indented no further: the output stays linear in the input
SKIPPED = frozenset({"script", "style", "head", "template", "noscript"})
RAW_TEXT = frozenset({"script", "style", "xmp", "iframe", "noembed", "noframes", "noscript", "title", "textarea"})
DECODED_RAW_TEXT = frozenset({"title", "textarea"})  # their text may hold character references
HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
# Newlines wanted around each block element: 2 is a blank line, 1 a line break.
BREAKS = {
    **dict.fromkeys(HEADINGS, 2),
    **dict.fromkeys(("p", "table", "section", "article", "nav", "header", "footer", "pre", "blockquote",
                     "ul", "ol", "dl", "hr", "main", "aside", "figure", "form", "details"), 2),
    **dict.fromkeys(("div", "li", "tr", "br", "dt", "dd", "caption", "summary", "figcaption"), 1),
}
CELLS = ("td", "th")
CELL_SEPARATOR = " | "
HTML_SPACE = re.compile(r"[ \t\n\r\f]+")  # HTML's own whitespace: U+00A0 (&nbsp;) is text, not space
_NAME_END = re.compile(r"[\t\n\f\r />]")
_NUMERIC_REFERENCE = re.compile(r"&#(?:[xX]([0-9a-fA-F]+)|([0-9]+));?")

Event = tuple[str, str]  # ("start" | "end" | "data", tag name or text)


def html_to_text(html: str) -> tuple[str, str]:
    """(text, title) of an HTML page: readable text with markdown-style headings, and its `<title>`.

    >>> html_to_text("<title>T</title><h1>Fares</h1><p>Adults &euro;49,<br>children   free.</p>")
    ('# Fares\\n\\nAdults €49,\\nchildren free.', 'T')
    """
    if not isinstance(html, str):
        raise TypeError(f"html must be a str, got {type(html).__name__}")
    builder = _TextBuilder()
    for kind, value in events(html):
        if kind == "data":
            builder.data(value)
        elif kind == "start":
            builder.start(value)
        else:
            builder.end(value)
    return builder.text(), builder.title()


def events(html: str) -> Iterator[Event]:
    """Start tags, end tags (names lowercased) and decoded text of `html`, in order."""
    return Scanner(html).events()


class Scanner:
    """The tokenizer: one pass, every search starting where the last one ended.

    `scanned` adds up the characters each search looked at; it stays within a small multiple of
    the input's length for any input (the work count the tests check).
    """

    def __init__(self, html: str) -> None:
        self.html, self.scanned = html, 0

    def events(self) -> Iterator[Event]:
        html, n, pos = self.html, len(self.html), 0
        while pos < n:
            lt = self.find("<", pos)
            if lt > pos:
                yield "data", decode(html[pos:lt])
            if lt == n:
                return
            after = html[lt + 1 : lt + 2]
            if after.isascii() and after.isalpha():
                name, pos, closed = self.start_tag(lt)
                if pos is None:  # left open at the end: a browser drops it
                    return
                yield "start", name
                if closed:
                    yield "end", name
                elif name in RAW_TEXT:
                    pos = yield from self.raw_text(name, pos)
            elif after == "/":
                pos = yield from self.end_tag(lt)
            elif after == "!" and html.startswith("<!--", lt):
                pos = self.comment_end(lt)
            elif after in ("!", "?"):
                pos = self.find(">", lt + 2) + 1  # a bogus comment: doctype, CDATA, <?xml …?>
            else:
                yield "data", "<"
                pos = lt + 1

    def find(self, needle: str, start: int) -> int:
        """`html.find(needle, start)`, or the input's length when it is not there; counted."""
        found = self.html.find(needle, start)
        found = len(self.html) if found == -1 else found
        self.scanned += found + len(needle) - start
        return found

    def start_tag(self, lt: int) -> tuple[str, int | None, bool]:
        """(name, position after the tag or None if it never closes, self-closing?)."""
        html = self.html
        end = self.name_end(lt + 1)
        name = html[lt + 1 : end].lower()
        close = self.tag_close(end)
        if close is None:
            return name, None, False
        return name, close + 1, html[close - 1] == "/" and close - 1 >= end

    def name_end(self, start: int) -> int:
        match = _NAME_END.search(self.html, start)
        end = match.start() if match else len(self.html)
        self.scanned += end - start + 1
        return end

    def tag_close(self, start: int) -> int | None:
        """Offset of the `>` closing a tag whose attributes start at `start`; None at the end of input.

        A `>` inside a quoted attribute value does not close the tag. `gt` is kept between
        attributes and searched again only after a quoted value ran past it: no region is
        scanned twice, however many attributes the tag has.
        """
        html, n, at = self.html, len(self.html), start
        gt = self.find(">", at)
        while True:
            equals = html.find("=", at, gt)
            self.scanned += (gt if equals == -1 else equals) - at
            if equals == -1:
                return gt if gt < n else None
            value = equals + 1
            while value < n and html[value] in " \t\n\r\f":
                value += 1
            self.scanned += value - equals
            if value < n and html[value] in "\"'":
                at = self.find(html[value], value + 1) + 1
                if at > n:
                    return None
                if at > gt:
                    gt = self.find(">", at)
            else:
                at = value

    def end_tag(self, lt: int) -> Iterator[Event]:
        """The events of `</…` (an end tag, or nothing for `</>` and bogus comments); returns the next position."""
        html, n = self.html, len(self.html)
        after = html[lt + 2 : lt + 3]
        if after.isascii() and after.isalpha():
            end = self.name_end(lt + 2)
            close = self.tag_close(end)
            if close is None:
                return n
            yield "end", html[lt + 2 : end].lower()
            return close + 1
        if not after:  # "</" at the very end is text
            yield "data", "</"
            return n
        return self.find(">", lt + 2) + 1  # "</>" is nothing; "</ x>" or "</3>" a bogus comment

    def comment_end(self, lt: int) -> int:
        """Position after a comment `<!-- … -->` (`<!-->` and `<!--->` are empty ones)."""
        for empty in ("<!-->", "<!--->"):
            if self.html.startswith(empty, lt):
                return lt + len(empty)
        return self.find("-->", lt + 4) + 3

    def raw_text(self, name: str, start: int) -> Iterator[Event]:
        """The text of a raw-text element up to its end tag (or the end of input); returns the next position."""
        pattern = re.compile(rf"</{name}(?=[\t\n\f\r />]|$)", re.IGNORECASE)
        match = pattern.search(self.html, start)
        stop = match.start() if match else len(self.html)
        self.scanned += stop - start + len(name) + 2
        if stop > start:
            text = self.html[start:stop]
            yield "data", decode(text) if name in DECODED_RAW_TEXT else text
        if match is None:
            return stop
        yield "end", name
        close = self.tag_close(match.end())
        return len(self.html) if close is None else close + 1


def decode(text: str) -> str:
    """Character references decoded as a browser does; a number past U+10FFFF becomes U+FFFD.

    (`html.unescape` would turn its digits into an int first, and more than 4,300 digits raise.)
    """
    if "&" not in text:
        return text
    if "&#" in text:
        text = _NUMERIC_REFERENCE.sub(_capped, text)
    return entities.unescape(text)


def _capped(match: re.Match) -> str:
    """A numeric reference without leading zeros (for `html.unescape`), or U+FFFD beyond Unicode."""
    hexadecimal, decimal = match.groups()
    digits = (hexadecimal or decimal).lstrip("0") or "0"
    if len(digits) > 7 or int(digits, 16 if hexadecimal else 10) > 0x10FFFF:
        return "\ufffd"
    return f"&#x{digits};" if hexadecimal else f"&#{digits};"


class _TextBuilder:
    """Collects text block by block: inline text waits in `line` until a block boundary flushes it."""

    def __init__(self) -> None:
        self.blocks: list[str] = []  # finished text, breaks included
        self.line: list[str] = []  # inline text of the block being read, spaces not yet collapsed
        self.breaks = 0  # newlines owed before the next text
        self.skipping: Counter[str] = Counter()  # open script/style/head/... elements, by name
        self.pre: list[str] | None = None  # raw text of the open <pre>, else None
        self.prefix = ""  # "## " for a heading, "- " for a list item
        self.lists: list[int] = []  # per open list: 0 for <ul>, else the next <ol> number
        self.cells = 0  # cells seen in the current table row
        self.title_parts: list[str] | None = None  # text of <title> while inside it
        self.titles: list[str] = []

    def start(self, tag: str) -> None:
        if tag == "body" and self.skipping["head"]:
            self.skipping["head"] = 0  # </head> is optional: the body ends the head
        if tag == "title":
            self.title_parts = []
        if tag in SKIPPED:
            self.skipping[tag] += 1
        if self.skipped() or self.pre is not None:
            return
        if tag in BREAKS:
            self._flush(1 if tag in ("ul", "ol") and self.lists else BREAKS[tag])  # nested lists stay tight
        if tag in HEADINGS:
            self.prefix = "#" * HEADINGS[tag] + " "
        elif tag in ("ul", "ol"):
            self.lists.append(0 if tag == "ul" else 1)
        elif tag == "li":
            self._start_item()
        elif tag == "tr":
            self.cells = 0
        elif tag in CELLS:
            self.line.append(CELL_SEPARATOR if self.cells else "")
            self.cells += 1
        elif tag == "pre":
            self.pre = []

    def end(self, tag: str) -> None:
        if tag == "title" and self.title_parts is not None:
            self.titles.append(HTML_SPACE.sub(" ", "".join(self.title_parts)).strip(" "))
            self.title_parts = None
        if self.skipping[tag]:
            self.skipping[tag] -= 1
            return
        if self.skipped():
            return
        if tag == "pre" and self.pre is not None:
            self._flush_pre()
        elif self.pre is None and tag in BREAKS:
            self._flush(1 if tag in ("ul", "ol") and len(self.lists) > 1 else BREAKS[tag])
            if tag in HEADINGS or tag == "li":
                self.prefix = ""  # an empty heading or item must not lend its prefix to the next block
            elif tag in ("ul", "ol") and self.lists:
                self.lists.pop()

    def data(self, data: str) -> None:
        if self.title_parts is not None:
            self.title_parts.append(data)
        elif self.skipped():
            return
        elif self.pre is not None:
            self.pre.append(data)
        else:
            self.line.append(data)

    def skipped(self) -> bool:
        return any(self.skipping.values())

    def text(self) -> str:
        self._flush(0)
        if self.pre is not None:  # an unclosed <pre> runs to the end
            self._flush_pre()
        lines = [line.rstrip(" \t") for line in "".join(self.blocks).split("\n")]
        return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip("\n")

    def title(self) -> str:
        return self.titles[0] if self.titles else ""

    def _start_item(self) -> None:
        indent = "  " * min(max(len(self.lists) - 1, 0), MAX_LIST_INDENT)
        if self.lists and self.lists[-1]:
            self.prefix = f"{indent}{self.lists[-1]}. "
            self.lists[-1] += 1
        else:
            self.prefix = f"{indent}- "

    def _flush(self, breaks: int) -> None:
        """End the current block: emit its collapsed text (if any), then owe `breaks` newlines."""
        text = HTML_SPACE.sub(" ", "".join(self.line)).strip(" ")
        if text:
            self._emit(self.prefix + text)
            self.prefix = ""  # a prefix waits for the first text of its heading or item, then is spent
        self.line = []
        self.breaks = max(self.breaks, breaks)

    def _flush_pre(self) -> None:
        raw = "".join(self.pre).replace("\r\n", "\n").replace("\r", "\n")
        self.pre = None
        raw = raw[1:] if raw.startswith("\n") else raw  # HTML ignores a newline right after <pre>
        if raw.strip():
            self._emit(raw.rstrip("\n"))
        self.breaks = max(self.breaks, 2)

    def _emit(self, text: str) -> None:
        if self.blocks:
            self.blocks.append("\n" * self.breaks)
        self.blocks.append(text)
        self.breaks = 0
