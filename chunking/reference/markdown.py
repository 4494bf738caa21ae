"""Markdown chunking, the plain version: sections by heading, blocks packed, the heading path beside.

1. Parse with markdown-it-py (CommonMark plus tables, block level): ATX and setext headings are
   found, and a `#` line inside fenced code is not one.
2. Cut the document into sections at headings; a section's heading path is the headings above it,
   e.g. ("Guide", "Install", "Linux"). A heading with nothing under it joins the next section.
3. Pack each section's top-level blocks greedily: each chunk is the longest run of whole blocks whose
   text has at most `chunk_size` tokens. A chunk never crosses a section boundary.
4. A block too long alone is cut: code and tables only at line ends; a paragraph at sentences, then
   words; any other block (list, quote…) at blank lines, lines, sentences, words; below that, the
   longest runs of code points that fit.

`chunk` returns `(start, end, heading_path)` triples. Compared with `chunking/markdown.py` it leaves
out overlap, other units and the `context` field, and keeps headings whole where the engine cuts one
at 200 characters (a path is copied into every chunk). The engine parses a document of 200 000
characters or more in parts (the same blocks, less memory at once) and cuts a line or word too long
into trimmed token windows: one encoding, not one per code point (see `reference/recursive.py`).
Its sentence splitter is compact: on the corpus it also cuts after "vs." in a paragraph of
coastal_sensor_report.md; given the engine's sentence splitter as `levels`, spans and paths are the
engine's.
Taught in notebook 04.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping

import tiktoken
from markdown_it import MarkdownIt

Span = tuple[int, int]
Chunk = tuple[int, int, tuple[str, ...]]  # (start, end, heading path)
Splitter = Callable[[str], list[Span]]  # a text -> the trimmed spans of its pieces
VERBATIM = ("fence", "code_block", "table_open")  # cut only at line ends
FALLBACK = {"paragraph_open": ("sentences", "words")}
OTHER_FALLBACK = ("paragraphs", "lines", "sentences", "words")
# Each level cuts its text after every match of its pattern.
PATTERNS = {
    "paragraphs": r"(?:\r\n|\r(?!\n)|\n)(?:[ \t\f\v]*(?:\r\n|\r(?!\n)|\n))+",
    "lines": r"\r\n|\r|\n",
    "sentences": r"(?<![.!?…])[.!?…]+[\"')\]”’»]*(?=\s)|[。！？]+[」』）]*",
    "words": r"\s+",
}


def chunk(text: str, chunk_size: int, *, levels: Mapping[str, Splitter] | None = None) -> list[Chunk]:
    """`(start, end, heading_path)` of each chunk of a markdown document, at most `chunk_size` tokens.

    `levels` may replace a level's splitter, e.g. `{"sentences": chunking.segment.split_sentences}`.

    >>> chunk("# Guide\\n\\nIntro.\\n\\n## Install\\n\\nRun it.\\n", 200)
    [(0, 15, ('Guide',)), (17, 36, ('Guide', 'Install'))]
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}: {text!r:.60}")
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size <= 0:
        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
    splitters = {name: functools.partial(_pieces, pattern) for name, pattern in PATTERNS.items()} | dict(levels or {})
    chunks = []
    for path, blocks in _sections(text):
        kinds = {(start, end): kind for start, end, kind in blocks}
        finer = functools.partial(_split_block, text, kinds, chunk_size, splitters)
        chunks += [(start, end, path) for start, end in _pack(text, list(kinds), chunk_size, finer)]
    return chunks


def _sections(text: str) -> list[tuple[tuple[str, ...], list[tuple[int, int, str]]]]:
    """(heading path, blocks) of each section; each block is (start, end, type)."""
    sections: list = [[(), []]]
    stack: list[tuple[int, str]] = []  # (level, text) of the headings above
    has_body = False  # does the last section hold more than headings?
    for start, end, kind, level, title in _blocks(text):
        if kind == "heading_open":
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, title))
            if has_body:
                sections.append([(), []])
            sections[-1][0], has_body = tuple(title for _, title in stack), False
        else:
            has_body = True
        sections[-1][1].append((start, end, kind))
    return [(path, blocks) for path, blocks in sections if blocks]


def _blocks(text: str) -> list[tuple[int, int, str, int, str]]:
    """Top-level blocks as (start, end, type, heading level, heading text). Each runs from its first line
    to the next block's first line (trimmed), so lines the parser drops (link definitions) stay in."""
    line_starts = [0, *(m.end() for m in re.finditer(r"\r\n?|\n", text))]  # CR, LF, CRLF: as markdown-it counts lines
    tokens = _parser().parse(text)
    starts = []
    for i, t in enumerate(tokens):
        if t.level == 0 and t.nesting >= 0 and t.map:
            heading = t.type == "heading_open"  # then the next token holds its text
            starts.append((line_starts[t.map[0]], t.type, int(t.tag[1:]) if heading else 0,
                           tokens[i + 1].content.strip() if heading else ""))
    if not starts or text[: starts[0][0]].strip():
        starts.insert(0, (0, "paragraph_open", 0, ""))
    ends = [begin for begin, *_ in starts[1:]] + [len(text)]
    spans = [(_trim(text, begin, end), rest) for (begin, *rest), end in zip(starts, ends)]
    return [(start, end, *rest) for (start, end), rest in spans if start < end]


def _pack(text: str, pieces: list[Span], size: int, split_finer: Callable) -> list[Span]:
    """Greedy runs of whole pieces that fit; a piece too long alone goes to `split_finer`."""
    chunks: list[Span] = []
    first = 0
    while first < len(pieces):
        if not _fits(text, *pieces[first], size):  # its parts are packed among themselves
            chunks += split_finer(*pieces[first])
            first += 1
            continue
        last = first
        while last + 1 < len(pieces) and _fits(text, pieces[first][0], pieces[last + 1][1], size):
            last += 1
        chunks.append((pieces[first][0], pieces[last][1]))
        first = last + 1
    return chunks


def _split_block(text: str, kinds: dict, size: int, splitters: dict, start: int, end: int) -> list[Span]:
    """Cut one block too long alone at the finest boundaries its type allows."""
    kind = kinds[start, end]
    names = ("lines",) if kind in VERBATIM else FALLBACK.get(kind, OTHER_FALLBACK)
    return _split(text, start, end, size, [splitters[name] for name in names])


def _split(text: str, start: int, end: int, size: int, levels: list) -> list[Span]:
    """Chunks of `text[start:end]` cut at `levels` in order (one that does not occur is skipped)."""
    start, end = _trim(text, start, end)
    if start >= end:
        return []
    if not levels:  # below the last level: the longest runs of code points that fit
        code_points = [(i, i + 1) for i in range(start, end) if not text[i].isspace()]
        return _pack(text, code_points, size, lambda a, b: [(a, b)])  # one too big alone stands alone
    pieces = [(start + a, start + b) for a, b in levels[0](text[start:end])]
    if len(pieces) == 1:
        return _split(text, start, end, size, levels[1:])
    return _pack(text, pieces, size, lambda a, b: _split(text, a, b, size, levels[1:]))


def _pieces(pattern: str, text: str) -> list[Span]:
    """The trimmed, non-empty pieces of `text` cut after every match of `pattern`."""
    cuts = [0, *(m.end() for m in re.finditer(pattern, text)), len(text)]
    return [span for a, b in zip(cuts, cuts[1:]) if (span := _trim(text, a, b))[0] < span[1]]


def _trim(text: str, start: int, end: int) -> Span:
    """`[start, end)` without its leading and trailing whitespace; `(end, end)` if nothing else is left."""
    piece = text[start:end]
    if not piece.strip():
        return end, end
    return start + len(piece) - len(piece.lstrip()), start + len(piece.rstrip())


def _fits(text: str, start: int, end: int, size: int) -> bool:
    return len(_encoding().encode_ordinary(text[start:end])) <= size


@functools.cache
def _encoding() -> tiktoken.Encoding:
    return tiktoken.get_encoding("cl100k_base")


@functools.cache
def _parser() -> MarkdownIt:
    # Block level only: inline parsing (emphasis, links) is not needed to find blocks.
    return MarkdownIt("commonmark").enable("table").disable(["inline", "text_join"])
