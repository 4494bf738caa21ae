"""Windows: cutting a text into pieces of at most `size` units, and planning model windows.

1. `windows(bound, start, end, size, overlap)` cuts `bound.text[start:end]` into windows of at most
   `size` units of the bound sizer, each next one starting `overlap` units before the previous one
   ended: only where the unit has edges (`Bound.cuts`: any character, token boundaries on character
   edges), each window counted to prove it fits, a code point too big alone a window alone. It is
   the fixed strategy, and every strategy's last resort below words.
Taught in notebook 01.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence

import numpy as np

from chunking.sizers import Bound, last_fitting
from chunking.types import Span
from chunking.types import trim as trim_span

_NOT_SPACE = re.compile(r"\S")


def windows(bound: Bound, start: int, end: int, size: int, overlap: int = 0, *, word_safe: bool = False,
            trim: bool = False) -> list[Span]:
    """Windows over `bound.text[start:end]` of at most `size` units, each next one starting `overlap`
    units before the previous one ended (at a word edge with `word_safe`); whitespace-only
    windows are dropped, and with `trim` the rest are trimmed of whitespace (a window that then
    measures more — "indirectly," is 4 tokens, " indirectly," 2 — is cut again). Each window
    is counted; a code point too big alone is a window alone.

    A unit that does not grow with the text (WordPiece reads a 101-character word as one
    `[UNK]`) can measure an overlap longer than the window it came from: a window that would
    not end past the previous one starts where the previous one ended instead.
    """
    offsets, units = bound.cuts(start, end)
    spans: list[Span] = []
    i, previous = 0, -1  # the window's first cut; the last cut of the window before
    while i < len(offsets) - 1:
        j = _window_end(bound, offsets, units, i, size)
        if j is None:  # not even the next cut fits: the characters up to it, by code points
            spans += _code_point_windows(bound, offsets[i], offsets[i + 1], size)
            i, previous = i + 1, i + 1
            continue
        if j <= previous:
            i = previous
            continue
        spans.append((int(offsets[i]), int(offsets[j])))
        if j == len(offsets) - 1:
            break
        i, previous = _next_start(bound, offsets, units, i, j, overlap, word_safe), j
    spans = [(s, e) for s, e in spans if not bound.text[s:e].isspace()]
    return _trimmed(bound, spans, size) if trim else spans


def _trimmed(bound: Bound, spans: list[Span], size: int) -> list[Span]:
    trimmed = []
    for s, e in spans:
        t = trim_span(bound.text, s, e)
        trimmed += [t] if t == (s, e) or bound.count(*t) <= size else windows(bound, *t, size, trim=True)
    return trimmed


def _window_end(bound: Bound, offsets: Sequence[int], units, i: int, size: int) -> int | None:
    """The last cut after `i` whose window from cut `i` fits: at most `size` units on by the
    units (then counted, and moved back while too long), or searched by counting."""
    def fits(k: int) -> bool:
        return bound.count(offsets[i], offsets[k]) <= size

    last = len(offsets) - 1
    if units is None:
        return last_fitting(fits, i + 1, last) if fits(i + 1) else None
    j = max(i + 1, _last_within(units, units[i] + size))
    if fits(j):
        return j
    j = last_fitting(fits, i + 1, j - 1, down=True) if j > i + 1 else i
    return j if j > i else None


def _next_start(bound: Bound, offsets: Sequence[int], units, i: int, j: int, overlap: int, word_safe: bool) -> int:
    """The cut the window after cuts (i, j) starts at: `overlap` units before j, but after i."""
    k = j
    if overlap and units is not None:
        k = _first_at_least(units, units[j] - overlap)
    elif overlap:
        k = j - last_fitting(lambda m: bound.count(offsets[j - m], offsets[j]) <= overlap, 0, j - i - 1)
    k = max(k, i + 1)
    if word_safe:
        k = _word_edge(bound, offsets, k, j)
    return k


def _word_edge(bound: Bound, offsets: Sequence[int], k: int, j: int) -> int:
    """From cut k (before cut j): the first cut not inside a word — or, if whitespace follows it
    and a cut lies where the next word begins, that one. So a character window starts at the
    word itself, and a token window at the space its first token begins with."""
    text = bound.text
    while k < j and _inside_word(text, offsets[k]):
        k += 1
    word = _NOT_SPACE.search(text, offsets[k], offsets[j]) if k < j else None  # bounded: no rescans
    m = _first_at_least(offsets, word.start()) if word else j
    return m if m < j and offsets[m] == word.start() else k


def _code_point_windows(bound: Bound, start: int, end: int, size: int) -> list[Span]:
    """The few characters between two neighbouring cuts (a token, or one character's tokens:
    128 bytes at most), cut by code points, each window as long as fits."""
    spans = []
    while start < end:
        stop = start + 1
        while stop < end and bound.count(start, stop + 1) <= size:
            stop += 1
        spans.append((start, stop))
        start = stop
    return spans


def _inside_word(text: str, at: int) -> bool:
    return 0 < at < len(text) and not text[at - 1].isspace() and not text[at].isspace()


def _last_within(units: Sequence[int], limit: int) -> int:
    """The index of the last unit count <= limit (units ascend)."""
    if isinstance(units, np.ndarray):
        return int(units.searchsorted(units.dtype.type(limit), "right")) - 1
    return bisect.bisect_right(units, limit) - 1


def _first_at_least(units: Sequence[int], value: int) -> int:
    """The index of the first unit count >= value (units ascend)."""
    if isinstance(units, np.ndarray):
        return int(units.searchsorted(units.dtype.type(max(value, 0)), "left"))
    return bisect.bisect_left(units, value)
