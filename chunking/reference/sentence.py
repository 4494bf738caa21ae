"""Sentence chunking, the plain version: whole sentences packed up to a token budget.

1. Split the text into sentences: `split_sentences` below, or any `split` function.
2. Pack consecutive sentences: a chunk takes one more while its text `text[first_start:last_end]`,
   encoded alone (cl100k_base), has at most `chunk_size` tokens.
3. `chunk_overlap` starts the next chunk with the most trailing sentences whose text fits in it
   (never all of them: every chunk adds a sentence).
4. A sentence over `chunk_size` is cut at words, packed the same way, and a word still too long
   into token windows (as `reference/fixed.py`); those parts are chunks of their own.

The compact splitter cuts after `.!?` or `。！？` and at blank lines, but not after a few abbreviations
("Dr.", "e.g.", "U.S.") or a single initial. `chunking/segment.py` also knows: a lowercase word that
continues the sentence ("3 p.m. and"), "Fig. 3", "U.S." or "etc." ending one before "The", list numbers,
ellipses, headings and list items on lines of their own, emoji after the end mark, quotes after "。".
With `split=chunking.segment.split_sentences` the spans are `chunking/sentence.py`'s (tests: the corpus).
The engine is faster: one encoding of the text estimates every piece, and a chunk's real count encodes
only its edge words. Judging pieces by those estimates, at tiny sizes it can pack a word that is too
long alone ("indirectly," is 4 tokens alone, 2 after "or") where this file cuts it. It also takes other
units and fraction overlaps. Taught in notebook 02.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable

import tiktoken

Span = tuple[int, int]
ABBREVIATIONS = frozenset("mr mrs ms dr prof st vs cf e.g i.e u.s u.k".split())
NEWLINE = r"(?:\r\n|\r(?!\n)|\n)"  # CRLF is one line break: a lone "\r\n" is never a blank line
SENTENCE_END = re.compile(
    r"(?<![.!?])[.!?]+[\"')\]”’]*(?=\s|$)"  # the look-behind: a long run of "!" is tried once, not per mark
    rf"|[。！？]+[」』）\"'”’]*|{NEWLINE}(?:[ \t\f\v]*{NEWLINE})+"
)


def split_sentences(text: str) -> list[Span]:
    """Sentence spans of `text`, trimmed of whitespace.

    >>> split_sentences("Dr. Smith came. He sat down!")
    [(0, 15), (16, 28)]
    """
    cuts = [m.end() for m in SENTENCE_END.finditer(text) if not _after_abbreviation(text, m)]
    return _between(text, cuts)


def chunk(
    text: str, chunk_size: int, *, chunk_overlap: int = 0, split: Callable[[str], list[Span]] = split_sentences
) -> list[Span]:
    """Spans of whole sentences packed up to `chunk_size` tokens.

    >>> chunk("One. Two. Three.", 4)
    [(0, 9), (10, 16)]
    """
    _check(text, chunk_size, chunk_overlap)

    def cut(start: int, end: int) -> list[Span]:  # a sentence too long: its words, then token windows
        words = [(start + m.start(), start + m.end()) for m in re.finditer(r"\S+", text[start:end])]
        windows = functools.partial(_token_windows, text, size=chunk_size, overlap=chunk_overlap)
        return pack(text, words, chunk_size, chunk_overlap, windows)

    return pack(text, split(text), chunk_size, chunk_overlap, cut)


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


def _after_abbreviation(text: str, end_mark: re.Match) -> bool:
    """Does this "." end an abbreviation or a single initial rather than a sentence?"""
    if not end_mark.group().startswith("."):
        return False
    before = text[max(0, end_mark.start() - 20) : end_mark.start()].split()  # bounded: no quadratic scan
    word = before[-1].lstrip("([\"'“‘") if before else ""
    return word.lower() in ABBREVIATIONS or (len(word) == 1 and word.isupper())


def _between(text: str, cuts: list[int]) -> list[Span]:
    """The non-empty pieces between consecutive cuts, trimmed of whitespace."""
    spans, previous = [], 0
    for cut in [*cuts, len(text)]:
        piece = text[previous:cut]
        if piece.strip():
            spans.append((previous + len(piece) - len(piece.lstrip()), previous + len(piece.rstrip())))
        previous = cut
    return spans


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
    for name, value in (("chunk_size", chunk_size), ("chunk_overlap", chunk_overlap)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} must be an int, got {value!r}")
    if chunk_size <= 0:
        raise ValueError(f"chunk_size must be > 0, got {chunk_size!r}")
    if not 0 <= chunk_overlap < chunk_size:
        raise ValueError(f"chunk_overlap must be >= 0 and < chunk_size={chunk_size}, got {chunk_overlap!r}")
