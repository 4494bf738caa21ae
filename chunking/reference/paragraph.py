"""Paragraph chunking, the plain version: blank-line paragraphs packed up to a token budget.

1. Split the text at blank lines: lines of nothing but spaces or tabs. CRLF is one line break,
   so "a\\r\\nb" is one paragraph and "a\\r\\n\\r\\nb" two.
2. `chunk_size=None`: one chunk per paragraph, however long (the one deliberate exception to
   the size bound: the author's paragraph is the unit).
3. Otherwise pack consecutive paragraphs: a chunk takes one more while its text, encoded alone
   (cl100k_base), has at most `chunk_size` tokens; `chunk_overlap` carries the previous chunk's
   trailing paragraphs that fit within it, as in `reference/sentence.py`.
4. A paragraph over `chunk_size` is cut into sentences, packed the same way, a sentence still too
   long into words, a word into token windows (as `reference/fixed.py`).

The sentence splitter is compact (`.!?` or `。！？`, a few abbreviations, single initials), where
`chunking/paragraph.py` cuts with `chunking/segment.py`'s (lowercase continuations, "Fig. 3", list
numbers, headings...). So the two differ only inside paragraphs over `chunk_size` that the two
splitters cut differently; with `sentences=chunking.segment.split_sentences` the spans are the
engine's (tests: the corpus). The engine is faster (one encoding estimates every piece), and so at
tiny sizes can pack a word too long alone, as `reference/sentence.py` explains; it also takes
other units and fraction overlaps. Taught in notebook 03.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable

import tiktoken

Span = tuple[int, int]
NEWLINE = r"(?:\r\n|\r(?!\n)|\n)"  # CRLF is one line break: a lone "\r\n" is never a blank line
BLANK_LINES = re.compile(rf"{NEWLINE}(?:[ \t\f\v]*{NEWLINE})+")
SENTENCE_END = re.compile(r"(?<![.!?])[.!?]+[\"')\]”’]*(?=\s|$)|[。！？]+[」』）\"'”’]*")
ABBREVIATIONS = frozenset("mr mrs ms dr prof st vs cf e.g i.e u.s u.k".split())


def chunk(
    text: str, chunk_size: int | None, *, chunk_overlap: int = 0, sentences: Callable[[str], list[Span]] | None = None
) -> list[Span]:
    """Spans of whole paragraphs packed up to `chunk_size` tokens (`None`: one per paragraph);
    `sentences` splits an oversize paragraph's text (default: the compact `split_sentences`).

    >>> chunk("One.\\n\\nTwo.\\n \\nThree.", None)
    [(0, 4), (6, 10), (13, 19)]
    """
    _check(text, chunk_size, chunk_overlap)
    if chunk_size is None:
        return split_paragraphs(text)
    sentences = sentences or split_sentences
    windows = functools.partial(_token_windows, text, size=chunk_size, overlap=chunk_overlap)

    def cut(start: int, end: int) -> list[Span]:  # a paragraph too long: its sentences
        parts = [(start + s, start + e) for s, e in sentences(text[start:end])]
        return pack(text, parts, chunk_size, chunk_overlap, cut_words)

    def cut_words(start: int, end: int) -> list[Span]:  # a sentence too long: its words, then token windows
        return pack(text, _words(text, start, end), chunk_size, chunk_overlap, windows)

    return pack(text, split_paragraphs(text), chunk_size, chunk_overlap, cut)


def split_paragraphs(text: str) -> list[Span]:
    """Paragraph spans of `text`: the text between blank lines, trimmed of whitespace."""
    return _between(text, [m.end() for m in BLANK_LINES.finditer(text)])


def split_sentences(text: str) -> list[Span]:
    """Sentence spans: cut after end marks followed by whitespace, but not after "Dr." or "J."."""
    cuts = []
    for m in SENTENCE_END.finditer(text):
        before = text[max(0, m.start() - 20) : m.start()].split()  # bounded look-back: no quadratic scan
        word = before[-1].lstrip("([\"'“‘") if before else ""
        if not m.group().startswith(".") or not (word.lower() in ABBREVIATIONS or len(word) == 1 and word.isupper()):
            cuts.append(m.end())
    return _between(text, cuts)


def pack(text: str, pieces: list[Span], size: int, overlap: int, cut: Callable[[int, int], list[Span]]) -> list[Span]:
    """Each chunk is the longest run of whole pieces whose text fits `size` tokens; a piece too
    long alone is `cut`, and no overlap is carried into it or out of it."""
    enc = tiktoken.get_encoding("cl100k_base")
    fits = lambda i, j, limit=size: len(enc.encode_ordinary(text[pieces[i][0] : pieces[j][1]])) <= limit  # noqa: E731
    chunks: list[Span] = []
    first = new = 0  # the chunk's first piece (overlap included) and the first piece no chunk holds yet
    while new < len(pieces):
        if not fits(new, new):
            chunks += cut(*pieces[new])
            first = new = new + 1
            continue
        while not fits(first, new):  # the carried-over pieces leave no room: drop them from the front
            first += 1
        last = new
        while last + 1 < len(pieces) and fits(first, last + 1):
            last += 1
        chunks.append((pieces[first][0], pieces[last][1]))
        # the most trailing pieces whose text fits `overlap` (not all: every chunk adds a piece);
        # counts are not monotone: "obligations as" is 4 tokens, "its obligations as" 3: try every k
        carried = [k for k in range(1, last - first + 1) if overlap and fits(last + 1 - k, last, overlap)]
        first, new = last + 1 - max(carried, default=0), last + 1
    return chunks


def _between(text: str, cuts: list[int]) -> list[Span]:
    """The non-empty pieces between consecutive cuts, trimmed of whitespace."""
    spans, previous = [], 0
    for cut in [*cuts, len(text)]:
        piece = text[previous:cut]
        if piece.strip():
            spans.append((previous + len(piece) - len(piece.lstrip()), previous + len(piece.rstrip())))
        previous = cut
    return spans


def _words(text: str, start: int, end: int) -> list[Span]:
    return [(start + m.start(), start + m.end()) for m in re.finditer(r"\S+", text[start:end])]


def _token_windows(text: str, start: int, end: int, size: int, overlap: int) -> list[Span]:
    """Windows of `size` tokens over one long word, cut at character edges: `reference/fixed.py`."""
    enc = tiktoken.get_encoding("cl100k_base")
    fits = lambda a, b: len(enc.encode_ordinary(text[a:b])) <= size  # noqa: E731
    char_at, at = {0: start}, 0  # byte offset of each character edge -> its offset in `text`
    for k, ch in enumerate(text[start:end], start + 1):
        at += len(ch.encode("utf-8"))
        char_at[at] = k
    sizes = (len(enc.decode_single_token_bytes(t)) for t in enc.encode_ordinary(text[start:end]))
    cuts = [char_at.get(b) for b in itertools.accumulate(sizes, initial=0)]
    spans, i, n = [], 0, len(cuts) - 1
    while i < n:
        j = min(i + size, n)
        while j > i and (cuts[j] is None or j > i + 1 and not fits(cuts[i], cuts[j])):
            j -= 1
        if j == i:  # one character needs more than `size` tokens: it is a window of its own
            j = next(k for k in range(i + 1, n + 1) if cuts[k] is not None)
        a, b = cuts[i], cuts[j]
        spans += [(a, b)] if fits(a, b) else _code_point_windows(a, b, fits)
        if j == n:
            break
        i = max(j - overlap, i + 1)
        while cuts[i] is None:
            i += 1
    return spans


def _code_point_windows(start: int, end: int, fits: Callable[[int, int], bool]) -> list[Span]:
    """One token or character too long alone, cut into windows of code points (one at least)."""
    spans = []
    while start < end:
        stop = start + 1
        while stop < end and fits(start, stop + 1):
            stop += 1
        spans.append((start, stop))
        start = stop
    return spans


def _check(text: object, chunk_size: object, chunk_overlap: object) -> None:
    if not isinstance(text, str):
        raise TypeError(f"text must be str, got {type(text).__name__}: {text!r:.60}")
    if chunk_size is None:
        if chunk_overlap != 0:
            raise ValueError(f"chunk_overlap must be 0 when chunk_size is None, got {chunk_overlap!r}")
        return
    for name, value in (("chunk_size", chunk_size), ("chunk_overlap", chunk_overlap)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} must be an int, got {value!r}")
    if chunk_size <= 0:
        raise ValueError(f"chunk_size must be > 0, got {chunk_size!r}")
    if not 0 <= chunk_overlap < chunk_size:
        raise ValueError(f"chunk_overlap must be >= 0 and < chunk_size={chunk_size}, got {chunk_overlap!r}")
