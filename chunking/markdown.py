"""Markdown chunking: sections by heading, blocks packed, the heading path kept beside.

1. Parse with markdown-it-py (CommonMark plus tables), so ATX and setext headings are
   found and a `#` line inside a code block is not a heading.
2. Cut the document into sections at headings; a section's heading path is the list of
   headings above it, e.g. `("Guide", "Install", "Linux")`. A heading with no text under it
   joins the next section.
3. Within a section, pack its top-level blocks (paragraphs, lists, fenced code, tables…)
   up to `chunk_size`. A chunk never crosses a section boundary, and a fenced code block
   or table is never split unless it alone exceeds `chunk_size` — then at line ends.
   Other oversize blocks are cut at paragraphs, lines, sentences, then words.
4. Every chunk carries `metadata["heading_path"]`; with `include_heading_path` (default)
   the path goes into `context`, so the embedder sees it while `text` and offsets stay exact.
5. A table split across chunks keeps its header: each later piece gets the header and delimiter
   rows in `metadata["table_header"]` and, with `include_table_header` (default), in `context`
   after the heading path — so a row is never read without its column names (each of the two
   rows cut to `HEADER_ROW_CHARS`: a table of thousands of columns repeats only their start).

Without any heading the whole text is one section, still packed by blocks — never one giant
chunk. `chunk_size` bounds `text`; the heading path and a repeated table header in `context` come
on top (count both with `embed_text` against the embedder's window). It parses any text as
CommonMark, so a plain-text line followed by `=====` becomes a setext heading; it does not parse
HTML or reStructuredText.
Taught in notebook 04.
"""

from __future__ import annotations

import bisect
import functools
import re
from dataclasses import dataclass, field

from chunking.options import check_flag, check_text, resolve_minimum, resolve_sizes
from chunking.packing import fallback, merge_small, pack
from chunking.sizers import resolve_unit
from chunking.types import Chunk, Span, make_chunks, trim

STRATEGY = "markdown"
PATH_SEPARATOR = " > "
VERBATIM_BLOCKS = ("fence", "code_block", "table_open")  # split only at line ends
FALLBACK = {"verbatim": ("lines",), "paragraph_open": ("sentences", "words")}
FALLBACK_DEFAULT = ("paragraphs", "lines", "sentences", "words")
PART_CHARS = 100_000  # a longer document is parsed in parts of about this size (see `_parts`)
TITLE_CHARS = 200  # a heading in a heading path is cut here: the path is copied into every chunk
HEADER_ROW_CHARS = 500  # a repeated table header's rows are cut here, for the same reason
_HEADING_AFTER_BLANK = re.compile(r"(?:\r\n?|\n)[ \t]*(?:\r\n?|\n)(?=#{1,6}(?:[ \t\r\n]|$))")
_FENCE_LINE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$", re.MULTILINE)
_RAW_HTML = re.compile(r"^ {0,3}<(?:script|pre|style|textarea|!--|\?|![A-Za-z]|!\[CDATA\[)", re.M | re.I)
_LINE_END = re.compile(r"\r\n?|\n")
_LONE_CR = re.compile(r"\r(?!\n)")  # `^` would miss lines after it


@dataclass
class Section:
    """Consecutive top-level blocks under one heading path."""

    path: tuple[str, ...]
    blocks: list[tuple[Span, str]] = field(default_factory=list)  # (span, block type)
    has_body: bool = False


def chunk(
    text: str,
    *,
    chunk_size: int = 200,
    chunk_overlap: int | float = 0,
    unit="tokens",
    include_heading_path: bool = True,
    include_table_header: bool = True,
    min_chunk_size: int | None = None,
    doc_id: str = "",
) -> list[Chunk]:
    """Heading-aware chunks of a markdown document, each with its heading path.

    `min_chunk_size` (in the unit) merges a chunk measuring less into a neighbour of the same
    section when the merged text still fits `chunk_size` (never across a heading).

    >>> doc = "# Guide\\n\\nIntro.\\n\\n## Install\\n\\nRun it.\\n"
    >>> [(c.text, c.metadata["heading_path"]) for c in chunk(doc)]
    [('# Guide\\n\\nIntro.', ('Guide',)), ('## Install\\n\\nRun it.', ('Guide', 'Install'))]
    """
    text = check_text(text)
    size, overlap = resolve_sizes(chunk_size, chunk_overlap)
    bound = resolve_unit(unit).bind(text)
    check_flag("include_heading_path", include_heading_path)
    check_flag("include_table_header", include_table_header)
    minimum = resolve_minimum(min_chunk_size, size)
    spans, paths, headers = [], [], []
    for section in sections(text):
        pieces = [span for span, _ in section.blocks]
        section_spans = pack(pieces, bound, size, overlap, _block_splitter(bound, section, size, overlap))
        if minimum:
            section_spans = merge_small(section_spans, bound, size, minimum)
        spans += section_spans
        paths += [section.path] * len(section_spans)
        headers += _table_headers(text, section, section_spans)
    context = [_context(PATH_SEPARATOR.join(p) if include_heading_path else "", h if include_table_header else "")
               for p, h in zip(paths, headers)]
    metadata = [{"heading_path": p, **({"table_header": h} if h else {})} for p, h in zip(paths, headers)]
    return make_chunks(text, spans, strategy=STRATEGY, doc_id=doc_id, metadata=metadata, context=context)


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
    line_starts = [0] + [m.end() for m in re.finditer(r"\r\n?|\n", text)]
    starts = []
    for first_line, part in _parts(text, line_starts):
        tokens = parse(part)
        for i, tok in enumerate(tokens):
            if tok.level == 0 and tok.nesting >= 0 and tok.map:
                is_heading = tok.type == "heading_open"
                title = short(tokens[i + 1].content.strip()) if is_heading else ""
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


def short(title: str) -> str:
    """A heading's text, cut to `TITLE_CHARS` (it is copied into every chunk's context)."""
    return title if len(title) <= TITLE_CHARS else title[: TITLE_CHARS - 1].rstrip() + "…"


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


def _table_headers(text: str, section: Section, spans: list[Span]) -> list[str]:
    """For each chunk of a section, the header and delimiter rows of the table it starts inside of
    (a later piece of a split table), else "". Spans and tables are in order: one merge-like pass."""
    tables = [span for span, kind in section.blocks if kind == "table_open"]
    headers, t, header = [], 0, None
    for start, _ in spans:
        while t < len(tables) and tables[t][1] <= start:
            t, header = t + 1, None
        inside = t < len(tables) and tables[t][0] < start
        if inside and header is None:
            header = _header_rows(text, tables[t])  # once per table, however many pieces it has
        headers.append(header if inside else "")
    return headers


def _header_rows(text: str, table: Span) -> str:
    """The first two lines of a table: its header row and the delimiter row under it, each cut to
    `HEADER_ROW_CHARS` (every later piece of the table carries them: a table of thousands of columns
    must not copy its whole header row into each)."""
    start, end = table
    lines = []
    for _ in range(2):
        found = _LINE_END.search(text, start, end)
        stop = found.start() if found else end
        row = text[start : min(stop, start + HEADER_ROW_CHARS + 1)].rstrip()
        lines.append(row if len(row) <= HEADER_ROW_CHARS else row[: HEADER_ROW_CHARS - 1] + "…")
        start = found.end() if found else end
    return "\n".join(line for line in lines if line)


def _context(path: str, header: str) -> str:
    return f"{path}\n\n{header}" if path and header else path or header


def _block_splitter(bound, section: Section, size: int, overlap: int):
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
