"""Parent-child chunking, the plain version: small children to search, big parents to read.

1. Cut the markdown into sections at headings, found by markdown-it-py (a `#` line in fenced code
   is none; `Title` over `=====` is one); a heading with only a heading under it joins the next.
2. Parents: sections packed greedily up to `parent_size` cl100k_base tokens. A section too big for
   one is packed from its top-level blocks; a block too big alone is cut at lines, then sentences.
3. Children: in each parent, the sentences of each section (or part) packed up to `chunk_size`;
   a sentence too big alone is cut at words, a word into windows of its own tokens. Each child
   carries its parent's index.

What `chunking/parent_child.py` adds: heading paths, ids and metadata on each child, overlap,
parents of token windows or of semantically close sentences, storage of parents in the payload or
a collection of their own, and token counts from one encoding of the text (here each candidate
chunk is re-encoded: fine for a page, slow for 10 MB). Spans differ in two ways. (a) Our sentence
splitter is compact; given the engine's (`split=`), the spans are the engine's on the bundled
markdown. (b) The engine cuts a block too big for a parent by its type: code and tables at lines
then token windows, paragraphs at sentences, lists and quotes at blank lines first; so a paragraph
of several lines, a list with blank lines, or a code line longer than a parent is cut elsewhere.
Taught in notebook 08.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable

import tiktoken
from markdown_it import MarkdownIt

Span = tuple[int, int]
# A sentence ends after . ! ? … (and closing quotes or brackets) before whitespace, after 。！？, or at a blank line.
SENTENCE_END = re.compile(r"(?<![.!?…])[.!?…]+[\"'”’)\]]*(?=\s)|[。！？]+[」』）]*|\n[ \t]*\n")


def chunk(
    text: str, chunk_size: int, *, parent_size: int = 800, split: Callable[[str], list[Span]] | None = None
) -> tuple[list[Span], list[tuple[int, int, int]]]:
    """Parent spans, and child spans `(start, end, parent index)` packed inside them."""
    _check(text, chunk_size, parent_size)
    split = split or split_sentences
    pieces = []  # whole sections, or the parts of a section too big for one parent
    for blocks in sections(text):
        pieces += _pack(text, blocks, parent_size, functools.partial(_split_block, split))
    parents = _pack(text, pieces, parent_size, lambda t, piece, size: [piece])  # every piece fits: none is cut
    children, k = [], 0
    for index, (_, parent_end) in enumerate(parents):
        while k < len(pieces) and pieces[k][1] <= parent_end:
            children += [(a, b, index) for a, b in _pack_sentences(split, text, pieces[k], chunk_size)]
            k += 1
    return parents, children


def sections(text: str) -> list[list[Span]]:
    """The top-level block spans of each section; a block runs from its first line to the next block's."""
    line_starts = [0, *(m.end() for m in re.finditer(r"\r\n?|\n", text))]
    parsed = MarkdownIt("commonmark").enable("table").parse(text)  # CommonMark plus tables, as GitHub renders
    tokens = [t for t in parsed if t.level == 0 and t.nesting >= 0 and t.map]  # the top-level blocks
    marks = [(0, False), *((line_starts[t.map[0]], t.type == "heading_open") for t in tokens)]
    result: list[list[Span]] = []
    after_heading = False
    for (begin, heading), (end, _) in zip(marks, [*marks[1:], (len(text), False)]):
        span = _trim(text, begin, end)
        if span[0] >= span[1]:  # whitespace before the first block
            continue
        if not result or heading and not after_heading:  # a heading after a heading joins its section
            result.append([])
        result[-1].append(span)
        after_heading = heading
    return result


def split_sentences(text: str) -> list[Span]:
    """Sentence spans: cut at every end mark followed by whitespace, CJK end mark and blank line."""
    cuts = [0, *(m.end() for m in SENTENCE_END.finditer(text)), len(text)]
    return [span for a, b in zip(cuts, cuts[1:]) if (span := _trim(text, a, b))[0] < span[1]]


def _pack(text: str, pieces: list[Span], size: int, cut: Callable[[str, Span, int], list[Span]]) -> list[Span]:
    """Greedy packing: grow a chunk while text[its start:next piece's end] fits; a piece too big alone is `cut`."""
    chunks: list[Span] = []
    growing = False  # may the last chunk take the next piece?
    for start, end in pieces:
        if _tokens(text[start:end]) > size:
            chunks += cut(text, (start, end), size)
            growing = False  # the parts of a cut piece stand alone: nothing is packed across them
        elif growing and _tokens(text[chunks[-1][0] : end]) <= size:
            chunks[-1] = (chunks[-1][0], end)
        else:
            chunks.append((start, end))
            growing = True
    return chunks


def _lines(text: str, span: Span) -> list[Span]:
    found = (_trim(text, span[0] + m.start(), span[0] + m.end()) for m in re.finditer(r"[^\r\n]+", text[slice(*span)]))
    return [s for s in found if s[0] < s[1]]


def _split_block(split: Callable[[str], list[Span]], text: str, span: Span, size: int) -> list[Span]:
    """A block too big for a parent: its lines packed, a line too big cut at sentences."""
    return _pack(text, _lines(text, span), size, functools.partial(_pack_sentences, split))


def _pack_sentences(split: Callable[[str], list[Span]], text: str, span: Span, size: int) -> list[Span]:
    """The sentences of text[span] packed; a sentence too big alone cut at words."""
    sentences = [(span[0] + a, span[0] + b) for a, b in split(text[span[0] : span[1]])]
    return _pack(text, sentences, size, _split_sentence)


def _split_sentence(text: str, span: Span, size: int) -> list[Span]:
    words = [(span[0] + m.start(), span[0] + m.end()) for m in re.finditer(r"\S+", text[span[0] : span[1]])]
    return _pack(text, words, size, _token_windows)


def _token_windows(text: str, span: Span, size: int) -> list[Span]:
    """Windows of at most `size` tokens of the word's own encoding, each cut between two characters."""
    enc, word = _encoding(), text[span[0] : span[1]]
    char_at = dict(zip(itertools.accumulate((len(c.encode()) for c in word), initial=0), range(len(word) + 1)))
    byte_ends = itertools.accumulate(len(enc.decode_single_token_bytes(t)) for t in enc.encode_ordinary(word))
    # (tokens so far, offset in text) at every token boundary that falls between two characters
    cuts = [(0, span[0]), *((k + 1, span[0] + char_at[b]) for k, b in enumerate(byte_ends) if b in char_at)]
    spans, p = [], 0
    while p < len(cuts) - 1:
        # the farthest boundary within `size` tokens whose text, encoded alone, still fits
        q = next((q for q in range(len(cuts) - 1, p, -1)
                  if cuts[q][0] - cuts[p][0] <= size and _tokens(text[cuts[p][1] : cuts[q][1]]) <= size), None)
        a, b = cuts[p][1], cuts[q or p + 1][1]
        while a < b:  # one window; or, if not even the next character fits, its code points
            stop = b if q else next(k for k in range(b, a, -1) if k == a + 1 or _tokens(text[a:k]) <= size)
            spans.append((a, stop))
            a = stop
        p = q or p + 1
    return spans


def _trim(text: str, start: int, end: int) -> Span:
    piece = text[start:end]
    return start + len(piece) - len(piece.lstrip()), start + len(piece.rstrip())


def _tokens(text: str) -> int:
    return len(_encoding().encode_ordinary(text))  # special-token strings count as plain text


@functools.cache
def _encoding() -> tiktoken.Encoding:
    return tiktoken.get_encoding("cl100k_base")


def _check(text: object, chunk_size: object, parent_size: object) -> None:
    if not isinstance(text, str):
        raise TypeError(f"text must be str, got {type(text).__name__}: {text!r:.60}")
    for name, value in (("chunk_size", chunk_size), ("parent_size", parent_size)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} must be an int, got {value!r}")
        if value < 1:
            raise ValueError(f"{name} must be > 0, got {value!r}")
    if parent_size < chunk_size:
        raise ValueError(f"parent_size must be >= chunk_size={chunk_size}, got {parent_size!r}")
