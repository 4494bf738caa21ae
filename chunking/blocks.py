"""The markdown structure of a text: its blocks, and its sections under their headings.

1. `parse` runs markdown-it-py (CommonMark plus tables) on block level only, so ATX and setext
   headings are found and a `#` line inside a code block is not a heading; a long document is
   parsed in parts cut where CommonMark closes every block (`_parts`).
2. `sections(text)` cuts the text into sections at headings, each with its heading path —
   `("Guide", "Install", "Linux")`, every heading cut to `HEADING_CHARS` — and its top-level
   blocks as spans that cover all of the text. A heading with no text under it joins the next section.
3. `pack_section` packs one section's blocks up to a size bound, cutting a block too big alone at
   the finest boundaries its type allows (fenced code and tables at line ends only).
Used by the markdown, contextual and parent-child strategies and by `chunking.load`; it parses any
text as CommonMark, not HTML or reStructuredText. Taught in notebook 04.
"""

from __future__ import annotations

import bisect
import functools
import re
from dataclasses import dataclass, field

from chunking.packing import Splitter, fallback, merge_small, pack
from chunking.sizers import Bound
from chunking.types import Span, trim

PATH_SEPARATOR = " > "
VERBATIM_BLOCKS = ("fence", "code_block", "table_open")  # split only at line ends
FALLBACK = {"verbatim": ("lines",), "paragraph_open": ("sentences", "words")}
FALLBACK_DEFAULT = ("paragraphs", "lines", "sentences", "words")
PART_CHARS = 100_000  # a longer document is parsed in parts of about this size (see `_parts`)
HEADING_CHARS = 200  # a heading in a heading path is cut here: the path is copied into every chunk
_HEADING_AFTER_BLANK = re.compile(r"(?:\r\n?|\n)[ \t]*(?:\r\n?|\n)(?=#{1,6}(?:[ \t\r\n]|$))")
_FENCE_LINE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$", re.MULTILINE)
_RAW_HTML = re.compile(r"^ {0,3}<(?:script|pre|style|textarea|!--|\?|![A-Za-z]|!\[CDATA\[)", re.M | re.I)
_LONE_CR = re.compile(r"\r(?!\n)")  # `^` would miss lines after it
LINE_END = re.compile(r"\r\n?|\n")


@dataclass
class Section:
    """Consecutive top-level blocks under one heading path."""

    path: tuple[str, ...]
    blocks: list[tuple[Span, str]] = field(default_factory=list)  # (span, block type)
    has_body: bool = False


def sections(text: str) -> list[Section]:
    """Split `text` into sections of top-level blocks, each with its heading path."""
    stack: list[tuple[int, str]] = []
    result = [Section(path=())]
    for span, kind, level, title in _blocks(text):
        if kind == "heading_open":
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, title))
            path = tuple(t for _, t in stack)
            if result[-1].has_body or not result[-1].blocks:
                result.append(Section(path=path))
            result[-1].path = path  # a bare heading before this one joins this section
        else:
            result[-1].has_body = True
        result[-1].blocks.append((span, kind))
    return [s for s in result if s.blocks]


def _blocks(text: str) -> list[tuple[Span, str, int, str]]:
    """Top-level blocks as (span, type, heading level, heading text), covering all text.

    Each block runs from its first line to the next block's first line (trimmed), so lines
    the parser drops, such as link reference definitions, stay inside a chunk.
    """
    line_starts = [0] + [m.end() for m in LINE_END.finditer(text)]
    starts = []
    for first_line, part in _parts(text, line_starts):
        tokens = parse(part)
        for i, tok in enumerate(tokens):
            if tok.level == 0 and tok.nesting >= 0 and tok.map:
                is_heading = tok.type == "heading_open"
                title = short_heading(tokens[i + 1].content.strip()) if is_heading else ""
                begin = line_starts[first_line + tok.map[0]]
                starts.append((begin, tok.type, int(tok.tag[1:]) if is_heading else 0, title))
    if not starts or text[: starts[0][0]].strip():
        starts.insert(0, (0, "paragraph_open", 0, ""))
    blocks = []
    for (begin, kind, level, title), nxt in zip(starts, [s[0] for s in starts[1:]] + [len(text)]):
        span = trim(text, begin, nxt)
        if span[0] < span[1]:
            blocks.append((span, kind, level, title))
    return blocks


def parse(text: str) -> list:
    """markdown-it's block tokens of `text`, inline content left unparsed: that halves the cost, and
    inline parsing's time is quadratic on unclosed brackets and emphasis ("![" * n).

    The parser keeps an object per block; `chunking.chunk` pauses the garbage collector meanwhile
    (10 MB parsed 30% slower per MB than 1 MB while the collector kept rescanning them).
    """
    return _parser().parse(text)


def short_heading(title: str) -> str:
    """A heading's text, cut to `HEADING_CHARS` (a heading path is copied into every chunk's context)."""
    return title if len(title) <= HEADING_CHARS else title[: HEADING_CHARS - 1].rstrip() + "…"


def _parts(text: str, line_starts: list[int]) -> list[tuple[int, str]]:
    """`text` as (first line, part) pieces of about PART_CHARS, each parsed on its own.

    A long document is cut only before a `#` heading line that follows a blank line outside any
    fenced code: there CommonMark closes every open block, so the parts' blocks are the whole
    text's blocks. Raw HTML blocks that may hold blank lines (`<pre>`, `<!--`…), indented fences
    and lone CR line breaks disable cutting.
    Parsing in parts keeps markdown-it's per-block objects to one part at a time.
    """
    if len(text) < 2 * PART_CHARS or _RAW_HTML.search(text) or _LONE_CR.search(text):
        return [(0, text)]
    fenced = _fenced_spans(text)
    if fenced is None:
        return [(0, text)]
    fence_starts = [a for a, _ in fenced]
    cuts = [0]
    for m in _HEADING_AFTER_BLANK.finditer(text):
        at = m.end()
        k = bisect.bisect_right(fence_starts, at) - 1
        if at - cuts[-1] >= PART_CHARS and not (k >= 0 and at < fenced[k][1]):
            cuts.append(at)
    lines = [bisect.bisect_left(line_starts, cut) for cut in cuts]
    return [(line, text[a:b]) for line, a, b in zip(lines, cuts, [*cuts[1:], len(text)])]


def _fenced_spans(text: str) -> list[Span] | None:
    """Where fenced code runs: from an opening fence line to its closing one (or the end).

    None when a fence line is indented: it may belong to a list item, which can end the fence
    before its closing line does — only a full parse can tell.
    """
    spans, opened = [], None
    for m in _FENCE_LINE.finditer(text):
        marker, rest = m.group(1), m.group(2)
        if text[m.start()] == " ":
            return None
        if opened is None:
            if not (marker[0] == "`" and "`" in rest):  # a backtick fence's info has no backtick
                opened = (m.start(), marker)
        elif marker[0] == opened[1][0] and len(marker) >= len(opened[1]) and not rest.strip():
            spans.append((opened[0], m.end()))
            opened = None
    if opened is not None:
        spans.append((opened[0], len(text)))
    return spans


def pack_section(section: Section, bound: Bound, size: int, overlap: int = 0, minimum: int = 0) -> list[Span]:
    """A section's blocks packed up to `size`; a block too big alone is cut at the finest boundaries its
    type allows (fenced code and tables at line ends only); with `minimum`, a chunk measuring less is
    merged into a neighbour it fits with."""
    spans = pack([span for span, _ in section.blocks], bound, size, overlap,
                 _block_splitter(bound, section, size, overlap))
    return merge_small(spans, bound, size, minimum) if minimum else spans


def _block_splitter(bound: Bound, section: Section, size: int, overlap: int) -> Splitter:
    """Cut an oversize block at the finest boundaries its type allows (code and tables: lines only)."""
    kinds = dict(section.blocks)

    def split(span: Span) -> list[Span]:
        kind = kinds.get(span, "")
        levels = FALLBACK["verbatim"] if kind in VERBATIM_BLOCKS else FALLBACK.get(kind, FALLBACK_DEFAULT)
        return fallback(bound, size, overlap, levels)(span)

    return split


@functools.cache
def _parser():
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table").disable(["inline", "text_join"])
