"""Contextual chunking, the plain version: every chunk keeps its exact span and gains a heading context.

1. Take the spans of a base chunker: the caller's `spans`, or by default blank-line paragraphs
   packed up to `chunk_size` tokens (a paragraph too long alone cut at words, a word at code points).
2. Find the document title: its first markdown heading, else its first non-empty line (cut to 100
   characters; a heading is cut to 200).
3. Cut the document into markdown sections at headings (markdown-it-py, block level); a section's
   heading path is the headings above it, and a heading with nothing under it joins the next section.
4. A span's context is the title and the heading path of the section holding most of the span
   (ties to the earlier one), joined with " > "; the title is left out when the path starts with it.

`chunk` returns `(start, end, context)` triples: the offsets are the base chunker's, and the context is
what an embedder would see above the text. Compared with `chunking/contextual.py` it has only the
"heading" provider (the engine also writes a TF-IDF summary, or asks an LLM), runs none of the engine's
strategies as its base (the default here is a small paragraph packing: pass any chunker's spans), and
always finds paths from the sections, where the engine takes the markdown strategy's own (the same:
a markdown chunk lies in one section). Given the engine's recursive or markdown spans, the contexts
are the engine's exactly.
Taught in notebook 09.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

import tiktoken
from markdown_it import MarkdownIt

Span = tuple[int, int]
SEPARATOR = " > "
LINE_CHARS, HEADING_CHARS = 100, 200  # a title taken from a line, or a heading, is cut here
BASE_LEVELS = (r"\n\s*\n", r"\s+")  # the default base chunker cuts after blank lines, then whitespace
_NON_SPACE = re.compile(r"\S")


def chunk(text: str, chunk_size: int, *, spans: Sequence[Span] | None = None) -> list[tuple[int, int, str]]:
    """`(start, end, context)` for each span of `text` (default: paragraphs packed to `chunk_size` tokens).

    >>> chunk("# Guide\\n\\nIntro.\\n\\n## Install\\n\\nRun it.\\n", 200, spans=[(0, 15), (17, 36)])
    [(0, 15, 'Guide'), (17, 36, 'Guide > Install')]
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}: {text!r:.60}")
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size <= 0:
        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
    spans = _base_spans(text, 0, len(text), chunk_size) if spans is None else list(spans)
    if not all(isinstance(span, (tuple, list)) and len(span) == 2 and all(isinstance(x, int) for x in span)
               and 0 <= span[0] < span[1] <= len(text) for span in spans):
        raise ValueError(f"spans must be (start, end) pairs with 0 <= start < end <= {len(text)}, got {spans!r:.200}")
    title, sections = _title(text), _sections(text)
    return [(start, end, SEPARATOR.join(_path(title, sections, len(text), start, end))) for start, end in spans]


def _path(title: str, sections: list[tuple[int, tuple[str, ...]]], length: int, start: int, end: int) -> tuple:
    """The title, then the heading path of the section holding most of `[start, end)` (the first of a tie)."""
    ends = [begin for begin, _ in sections[1:]] + [length]
    shared = [min(stop, end) - max(begin, start) for (begin, _), stop in zip(sections, ends)]
    best = max(range(len(sections)), key=shared.__getitem__, default=None)  # max keeps the first of equals
    path = sections[best][1] if best is not None and shared[best] > 0 else ()
    if title and not (path and path[0].strip().casefold() == title.strip().casefold()):
        return (title, *path)
    return path


def _title(text: str) -> str:
    """The first markdown heading with text, else the first non-empty line."""
    tokens = _parser().parse(text)
    for token, inline in zip(tokens, tokens[1:]):
        if token.type == "heading_open" and inline.content.strip():
            return _cut(inline.content.strip(), HEADING_CHARS)
    return _cut(next((line.strip() for line in text.splitlines() if line.strip()), ""), LINE_CHARS)


def _sections(text: str) -> list[tuple[int, tuple[str, ...]]]:
    """(start, heading path) of each section, in order."""
    line_starts = [0, *(m.end() for m in re.finditer(r"\r\n?|\n", text))]  # CR, LF, CRLF: as markdown-it counts
    tokens = _parser().parse(text)
    blocks = [  # top-level blocks: (first line's offset, heading level or 0, heading text)
        (line_starts[t.map[0]], int(t.tag[1:]) if t.type == "heading_open" else 0,
         _cut(tokens[i + 1].content.strip(), HEADING_CHARS) if t.type == "heading_open" else "")
        for i, t in enumerate(tokens) if t.level == 0 and t.nesting >= 0 and t.map
    ]
    if not blocks or text[: blocks[0][0]].strip():  # text the parser drops (a link definition) opens a block
        blocks.insert(0, (0, 0, ""))
    sections: list = [[None, ()]]  # [start of the first block, heading path]
    stack: list[tuple[int, str]] = []  # (level, text) of the headings above
    has_body = False  # does the last section hold more than headings?
    for (begin, level, title), end in zip(blocks, [b[0] for b in blocks[1:]] + [len(text)]):
        first = _NON_SPACE.search(text, begin, end)  # a block starts at its first non-space character
        if not first:
            continue
        if level:
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, title))
            if has_body:
                sections.append([None, ()])
            sections[-1][1], has_body = tuple(title for _, title in stack), False
        else:
            has_body = True
        if sections[-1][0] is None:
            sections[-1][0] = first.start()
    return [(start, path) for start, path in sections if start is not None]


def _base_spans(text: str, start: int, end: int, size: int, levels: Sequence[str] = BASE_LEVELS) -> list[Span]:
    """Greedy runs of the pieces cut after each match of `levels[0]` that fit in `size` tokens; a piece
    too long alone is cut at the next level, and below the last one into code points."""
    cuts = [start, *(m.end() for m in re.compile(levels[0]).finditer(text, start, end)), end] if levels else None
    bounds = zip(cuts, cuts[1:]) if cuts else ((i, i + 1) for i in range(start, end))
    pieces = [(a, b) for a, b in (_trim(text, *bound) for bound in bounds) if a < b]
    fits = lambda a, b: _tokens(text[a:b]) <= size  # noqa: E731
    chunks, first = [], 0
    while first < len(pieces):
        last = first
        while last + 1 < len(pieces) and fits(pieces[first][0], pieces[last + 1][1]):
            last += 1
        if last == first and levels and not fits(*pieces[first]):
            chunks += _base_spans(text, *pieces[first], size, levels[1:])
        else:  # fits, or a code point too big alone: a chunk of its own
            chunks.append((pieces[first][0], pieces[last][1]))
        first = last + 1
    return chunks


def _trim(text: str, start: int, end: int) -> Span:
    """`[start, end)` without its leading and trailing whitespace; `(end, end)` if nothing else is left."""
    piece = text[start:end]
    if not piece.strip():
        return end, end
    return start + len(piece) - len(piece.lstrip()), start + len(piece.rstrip())


def _cut(title: str, chars: int) -> str:
    return title if len(title) <= chars else title[: chars - 1].rstrip() + "…"


def _tokens(text: str) -> int:
    return len(_encoding().encode_ordinary(text))


@functools.cache
def _encoding() -> tiktoken.Encoding:
    return tiktoken.get_encoding("cl100k_base")


@functools.cache
def _parser() -> MarkdownIt:
    # Block level only: headings and their text are found without inline parsing (emphasis, links).
    return MarkdownIt("commonmark").enable("table").disable(["inline", "text_join"])
