"""Fixed-size chunking: equal windows of characters, tokens, or any length unit.

1. Measure the text in the unit: characters directly; tokens by encoding the whole text
   once (cl100k_base) and keeping every token's byte boundary.
2. Cut windows of `chunk_size` units; each next window starts `chunk_overlap` units before
   the previous one ended (seed 001's `chunk_by_char` is `unit="characters"`).
3. With `word_safe_overlap`, a window that would start inside a word starts at the next word
   instead (seed 003), so no chunk begins with "…ompany".
4. Token windows are mapped back to character offsets; a boundary that falls inside a
   multi-byte character moves to that character's start, so no character is ever cut.

It is content-blind: windows may end mid-word or mid-sentence, and they are not trimmed
(the only exception to trimming in the package); windows of pure whitespace are skipped.
A single character needing more tokens than `chunk_size` gets a chunk of its own.
Taught in notebook 01.
"""

from __future__ import annotations

import numpy as np

from chunking.counting import TokenCounter
from chunking.packing import last_fitting
from chunking.segment import Span
from chunking.tokens import Length, Unit, check_flag, check_text, resolve_sizes, resolve_unit
from chunking.types import Chunk, make_chunks

STRATEGY = "fixed"
_ASCII_SPACE = frozenset(b" \t\n\r\x0b\x0c")


def chunk(
    text: str,
    *,
    chunk_size: int = 200,
    chunk_overlap: int | float = 0,
    unit: Unit = "tokens",
    word_safe_overlap: bool = False,
    doc_id: str = "",
) -> list[Chunk]:
    """Split `text` into windows of at most `chunk_size` units overlapping by `chunk_overlap`.

    >>> [c.text for c in chunk("abcdefghij", chunk_size=4, chunk_overlap=1, unit="characters")]
    ['abcd', 'defg', 'ghij']
    """
    text = check_text(text)
    size, overlap = resolve_sizes(chunk_size, chunk_overlap)
    word_safe = check_flag("word_safe_overlap", word_safe_overlap)
    spans = windows(text, 0, len(text), resolve_unit(unit), size, overlap, word_safe)
    return make_chunks(text, spans, strategy=STRATEGY, doc_id=doc_id)


def windows(
    text: str, start: int, end: int, length: Length, size: int, overlap: int = 0, word_safe: bool = False
) -> list[Span]:
    """Fixed windows over `text[start:end]`, as spans of `text`; whitespace-only ones dropped."""
    if length.name == "characters":
        spans = _character_windows(text, start, end, size, overlap, word_safe)
    elif length.name == "tokens":
        spans = _token_windows(text, start, end, size, overlap, word_safe)
    else:
        spans = _measured_windows(text, start, end, length, size, overlap, word_safe)
    return [(s, e) for s, e in spans if not text[s:e].isspace()]


def _character_windows(
    text: str, start: int, end: int, size: int, overlap: int, word_safe: bool
) -> list[Span]:
    spans = []
    pos = start
    while pos < end:
        stop = min(pos + size, end)
        spans.append((pos, stop))
        if stop == end:
            break
        pos = _next_start(text, stop - overlap, stop, word_safe) if overlap else stop
    return spans


def _token_windows(
    text: str, start: int, end: int, size: int, overlap: int, word_safe: bool
) -> list[Span]:
    """Windows of `size` tokens: encode once, cut at token boundaries that are character boundaries."""
    counter = TokenCounter(text, start, end)
    chars = counter.chars
    # A cut text can re-encode to a token more than it had in context: check each window exactly.
    fits = lambda i, j: counter.count(chars[i], chars[j]) <= size  # noqa: E731
    word_start = _word_starts(text[start:end].encode("utf-8"), counter.bytes) if word_safe else None
    spans = []
    for i, j in _plan(len(chars) - 1, size, overlap, counter.aligned, word_start, fits):
        # `_plan` verified every window but one token, or one character's tokens, which is all it can
        # cut at; cut out alone, that can need more (ज्ञान: "ान" is one token in context, two alone)
        if (j - i == 1 or not counter.aligned[i + 1]) and not fits(i, j):
            spans += _code_point_windows(text, int(chars[i]), int(chars[j]), counter.count, size)
        else:
            spans.append((int(chars[i]), int(chars[j])))
    return spans


def _plan(n, size, overlap, aligned, word_start, fits=None) -> list[tuple[int, int]]:
    """Token windows (i, j) whose ends are character boundaries; `fits` re-checks each one."""
    windows = []
    i = 0
    while i < n:
        j = min(i + size, n)
        while j > i and not aligned[j]:
            j -= 1
        while fits and j > i + 1 and not fits(i, j):
            j -= 1
            while j > i and not aligned[j]:
                j -= 1
        if j <= i:  # one character needs more than `size` tokens: it gets a chunk of its own
            j = i + 1
            while not aligned[j]:
                j += 1
        windows.append((i, j))
        if j == n:
            break
        nxt = max(j - overlap, i + 1) if overlap else j
        while nxt < j and not (aligned[nxt] and (word_start is None or word_start[nxt])):
            nxt += 1
        i = nxt
    return windows


def _measured_windows(
    text: str, start: int, end: int, length: Length, size: int, overlap: int, word_safe: bool
) -> list[Span]:
    """Windows for any length callable: the longest prefix that fits, by doubling then halving.

    The unit reads O(log w) prefixes of about a window's length w each, not the rest of the text.
    Nothing assumes it grows with the text (WordPiece reads a 101-character word as one `[UNK]`):
    every window is one seen to fit, and a window that would end before the previous one did
    (its overlap measured longer than it was) starts where the previous one ended instead.
    """
    spans: list[Span] = []
    pos = start
    while pos < end:
        stop = _measured_end(text, pos, end, length, size)
        if spans and stop <= spans[-1][1]:
            pos = spans[-1][1]
            stop = _measured_end(text, pos, end, length, size)
        spans.append((pos, stop))
        if stop == end:
            break
        back = last_fitting(lambda k, b=stop: length(text[b - k : b]) <= overlap, 0, stop - pos - 1) if overlap else 0
        pos = _next_start(text, stop - back, stop, word_safe)
    return spans


def _measured_end(text: str, pos: int, end: int, length: Length, size: int) -> int:
    """Where the window from `pos` ends: the longest prefix seen to fit (one code point at least)."""
    fits = lambda e: length(text[pos:e]) <= size  # noqa: E731
    return last_fitting(fits, pos + 1, end) if fits(pos + 1) else pos + 1


def _code_point_windows(text: str, start: int, end: int, count, size: int) -> list[Span]:
    """Cut the few characters of `text[start:end]` by code points, each window as long as fits
    (`count(a, b)` measures `text[a:b]`).

    Only for what token boundaries cannot cut (a token or one character: 128 bytes at most), so
    the quadratic scan stays small. A code point that alone needs more than `size` is a window.
    """
    spans = []
    while start < end:
        stop = start + 1
        while stop < end and count(start, stop + 1) <= size:
            stop += 1
        spans.append((start, stop))
        start = stop
    return spans


def _next_start(text: str, candidate: int, stop: int, word_safe: bool) -> int:
    """Where the next window starts: `candidate`, or with `word_safe` the next word start."""
    if word_safe:  # move to the first character of the next word
        while candidate < stop and not (text[candidate - 1].isspace() and not text[candidate].isspace()):
            candidate += 1
    return candidate


def _word_starts(data: bytes, bounds: np.ndarray) -> np.ndarray:
    """Does each token boundary sit at a word edge (ASCII whitespace on either side)?"""
    space = np.isin(np.frombuffer(data, dtype=np.uint8), list(_ASCII_SPACE))
    starts = np.ones(len(bounds), dtype=bool)
    inner = (bounds > 0) & (bounds < len(data))
    starts[inner] = space[bounds[inner]] | space[bounds[inner] - 1]
    return starts
