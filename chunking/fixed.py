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

from chunking.segment import Span
from chunking.tokens import (
    Length,
    Unit,
    check_text,
    encode,
    resolve_sizes,
    resolve_unit,
    token_byte_offsets,
)
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
    spans = windows(text, 0, len(text), resolve_unit(unit), size, overlap, word_safe_overlap)
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


def _character_windows(text: str, start: int, end: int, size: int, overlap: int, word_safe: bool) -> list[Span]:
    spans = []
    pos = start
    while pos < end:
        stop = min(pos + size, end)
        spans.append((pos, stop))
        if stop == end:
            break
        pos = _next_start(text, stop - overlap, stop, word_safe) if overlap else stop
    return spans


def _token_windows(text: str, start: int, end: int, size: int, overlap: int, word_safe: bool) -> list[Span]:
    """Windows of `size` tokens: encode once, cut the id array, map byte offsets to characters."""
    piece = text[start:end]
    data = piece.encode("utf-8")
    bounds = token_byte_offsets(encode(piece))
    n = len(bounds) - 1
    token_windows = []
    i = 0
    while i < n:
        j = min(i + size, n)
        token_windows.append((i, j))
        if j == n:
            break
        nxt = j - overlap
        while word_safe and overlap and nxt < j and not _starts_word(data, int(bounds[nxt])):
            nxt += 1
        i = nxt if overlap else j
    byte_spans = [(int(bounds[i]), int(bounds[j])) for i, j in token_windows]
    return _bytes_to_chars(piece, data, byte_spans, start)


def _measured_windows(
    text: str, start: int, end: int, length: Length, size: int, overlap: int, word_safe: bool
) -> list[Span]:
    """Windows for any length callable: binary-search the longest prefix that fits."""
    spans = []
    pos = start
    while pos < end:
        stop = _longest_fit(lambda e, a=pos: length(text[a:e]) <= size, pos + 1, end)
        spans.append((pos, stop))
        if stop == end:
            break
        fits_overlap = lambda n, b=stop: length(text[b - n : b]) <= overlap  # noqa: E731
        back = _longest_fit(fits_overlap, 0, stop - pos - 1) if overlap else 0
        pos = _next_start(text, stop - back, stop, word_safe)
    return spans


def _next_start(text: str, candidate: int, stop: int, word_safe: bool) -> int:
    """Where the next window starts: `candidate`, or with `word_safe` the next word start."""
    if word_safe:
        while candidate < stop and not (text[candidate - 1].isspace() or text[candidate].isspace()):
            candidate += 1
    return candidate


def _starts_word(data: bytes, at: int) -> bool:
    return at == 0 or at >= len(data) or data[at] in _ASCII_SPACE or data[at - 1] in _ASCII_SPACE


def _longest_fit(fits, low: int, high: int) -> int:
    """Largest x in [low, high] with fits(x), assuming fits is monotone; `low` if none fit."""
    if fits(high):
        return high
    while low < high:
        mid = (low + high + 1) // 2
        if fits(mid):
            low = mid
        else:
            high = mid - 1
    return low


def _bytes_to_chars(piece: str, data: bytes, byte_spans: list[Span], offset: int) -> list[Span]:
    """Map UTF-8 byte spans to character spans; a cut inside a character moves to its start."""
    if piece.isascii():  # bytes are characters
        return [(s + offset, e + offset) for s, e in byte_spans]
    is_start = (np.frombuffer(data, dtype=np.uint8) & 0xC0) != 0x80
    positions = sorted({b for span in byte_spans for b in span})
    chars, count, previous = {}, 0, 0
    for b in positions:
        count += int(np.count_nonzero(is_start[previous:b]))
        previous = b
        # inside a character: the count includes that character's start; step back to it
        chars[b] = count - 1 if b < len(data) and not is_start[b] else count
    spans = []
    for s, e in byte_spans:
        cs, ce = chars[s], chars[e]
        if ce <= cs:  # a window inside one character: give the character its own chunk
            ce = cs + 1
        if spans and ce <= spans[-1][1] - offset:
            continue  # adds nothing the previous window did not cover
        spans.append((cs + offset, ce + offset))
    return spans
