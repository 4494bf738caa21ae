"""Fixed-size chunking, the plain version: equal windows of tokens or characters.

1. Characters: each window is `chunk_size` characters; the next one starts `chunk_overlap`
   characters before the previous one ended.
2. Tokens: encode the whole text once (cl100k_base) and add up the tokens' byte lengths: that
   gives every token boundary as a byte offset; those on a character edge become character offsets.
3. Cut windows of `chunk_size` tokens. A cut inside a multi-byte character (a token that ends
   mid-emoji) moves back to the character's start, so no character is ever cut: the naive
   `enc.decode(ids[i:i + chunk_size])` splits such a character and decodes its halves as U+FFFD.
4. Cut out alone, a window can encode to more tokens than it had in context: it shrinks a token
   at a time until it fits. One token (or one character) that still does not fit is cut at code
   points; a code point that alone needs more than `chunk_size` tokens is a chunk of its own.
5. Windows are not trimmed (the strategy is content-blind); windows of pure whitespace are dropped.

It gives the spans of `chunking/fixed.py` (the tests check the corpus). The engine does more for
speed and options: it encodes long texts in parts on threads, maps bytes to characters with numpy,
counts a window's tokens without encoding it again, and takes fraction overlaps,
`word_safe_overlap` and any callable as the unit. In a text over 64K characters with a stretch of
4,096 characters and no space before a letter, its parallel encoding cuts that stretch where one
encoding would not, so its windows from there on can be shifted by a token. Taught in notebook 01.
"""

from __future__ import annotations

import itertools

import tiktoken

UNITS = ("tokens", "characters")


def chunk(text: str, chunk_size: int, *, chunk_overlap: int = 0, unit: str = "tokens") -> list[tuple[int, int]]:
    """Spans of windows of `chunk_size` units, each starting `chunk_overlap` units before the last one ended.

    >>> chunk("abcdefghij", 4, chunk_overlap=1, unit="characters")
    [(0, 4), (3, 7), (6, 10)]
    """
    _check(text, chunk_size, chunk_overlap, unit)
    if unit == "characters":
        spans = _character_windows(len(text), chunk_size, chunk_overlap)
    else:
        spans = _token_windows(text, chunk_size, chunk_overlap)
    return [(s, e) for s, e in spans if not text[s:e].isspace()]


def _character_windows(length: int, size: int, overlap: int) -> list[tuple[int, int]]:
    spans, start = [], 0
    while start < length:
        end = min(start + size, length)
        spans.append((start, end))
        if end == length:
            break
        start = end - overlap
    return spans


def _token_windows(text: str, size: int, overlap: int) -> list[tuple[int, int]]:
    enc = tiktoken.get_encoding("cl100k_base")
    fits = lambda a, b: len(enc.encode_ordinary(text[a:b])) <= size  # noqa: E731
    cuts = _token_cuts(text, enc)
    spans, i, n = [], 0, len(cuts) - 1
    while i < n:
        j = min(i + size, n)
        # back to a character edge, then a token at a time (and back to an edge) while it does not fit
        while j > i and (cuts[j] is None or j > i + 1 and not fits(cuts[i], cuts[j])):
            j -= 1
        if j == i:  # no edge inside: the window is one whole character, however many tokens
            j = next(k for k in range(i + 1, n + 1) if cuts[k] is not None)
        a, b = cuts[i], cuts[j]
        if (j == i + 1 or cuts[i + 1] is None) and not fits(a, b):  # only these can still be too long
            spans += _code_point_windows(a, b, fits)
        else:
            spans.append((a, b))
        if j == n:
            break
        i = max(j - overlap, i + 1)  # the overlap never reaches back to the window's own start
        while cuts[i] is None:
            i += 1
    return spans


def _token_cuts(text: str, enc: tiktoken.Encoding) -> list[int | None]:
    """The character offset of every token boundary; None for a boundary inside a character."""
    char_at, at = {0: 0}, 0  # byte offset of each character edge -> its character offset
    for k, ch in enumerate(text, 1):
        at += len(ch.encode("utf-8"))
        char_at[at] = k
    sizes = (len(enc.decode_single_token_bytes(t)) for t in enc.encode_ordinary(text))
    return [char_at.get(b) for b in itertools.accumulate(sizes, initial=0)]


def _code_point_windows(start: int, end: int, fits) -> list[tuple[int, int]]:
    """The few code points of one token or character, each window as many as fit (one at least)."""
    spans = []
    while start < end:
        stop = start + 1
        while stop < end and fits(start, stop + 1):
            stop += 1
        spans.append((start, stop))
        start = stop
    return spans


def _check(text: object, chunk_size: object, chunk_overlap: object, unit: object) -> None:
    if not isinstance(text, str):
        raise TypeError(f"text must be str, got {type(text).__name__}: {text!r:.60}")
    for name, value in (("chunk_size", chunk_size), ("chunk_overlap", chunk_overlap)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} must be an int, got {value!r}")
    if chunk_size <= 0:
        raise ValueError(f"chunk_size must be > 0, got {chunk_size!r}")
    if not 0 <= chunk_overlap < chunk_size:
        raise ValueError(f"chunk_overlap must be >= 0 and < chunk_size={chunk_size}, got {chunk_overlap!r}")
    if unit not in UNITS:
        raise ValueError(f"unit must be one of {UNITS}, got {unit!r}")
