"""Sliding-window chunking, the plain version: windows of whole sentences overlapping by a fraction.

1. Split the text into sentences; a sentence over `chunk_size` tokens is cut first into runs of
   words packed up to the size (a word still too long into token windows), so that every window
   can hold at least one piece.
2. A window takes consecutive pieces while its text `text[first_start:last_end]`, encoded alone
   (cl100k_base), has at most `chunk_size` tokens.
3. The next window starts `max(1, round(n * (1 - f)))` pieces later, where `n` is the number of
   pieces in the window and `f` the fraction `overlap_fraction`. The article "Text Chunking Strategies
   for RAG" (C#) computed `f = overlap / size` in integer arithmetic, which is 0 for any overlap
   smaller than the size: its windows never overlapped.
4. A window that would end before the previous one did is skipped (token counts are not monotone).

The sentence splitter is `reference/sentence.py`'s compact one; with
`split=chunking.segment.split_sentences` the spans are `chunking/sliding.py`'s (tests: the corpus).
The engine judges a sentence too long by an estimate from one encoding of the whole text, this
file by the sentence's own count: they can differ for a sentence of about `chunk_size` tokens
("반갑습니다!" is 6 tokens alone, 5 in context). The engine also takes an absolute overlap (then it
is sentence packing) and windows of tokens (then it is fixed). Taught in notebook 05.
"""

from __future__ import annotations

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
    """Sentence spans: cut after end marks followed by whitespace and at blank lines, not after "Dr." or "J."."""
    cuts = []
    for m in SENTENCE_END.finditer(text):
        before = text[max(0, m.start() - 20) : m.start()].split()  # bounded look-back: no quadratic scan
        word = before[-1].lstrip("([\"'“‘") if before else ""
        if not m.group().startswith(".") or not (word.lower() in ABBREVIATIONS or len(word) == 1 and word.isupper()):
            cuts.append(m.end())
    return _between(text, cuts)


def chunk(
    text: str, chunk_size: int, *, overlap_fraction: float = 0.25, split: Callable[[str], list[Span]] = split_sentences
) -> list[Span]:
    """Spans of windows of whole sentences, each sharing about `overlap_fraction` of its sentences with the next.

    >>> chunk("One. Two. Three. Four.", 4, overlap_fraction=0.5)
    [(0, 9), (5, 16), (10, 22)]
    """
    _check(text, chunk_size, overlap_fraction)
    fits = _fits(text, chunk_size)
    pieces: list[Span] = []
    for start, end in split(text):
        pieces += [(start, end)] if fits(start, end) else _pack_words(text, start, end, chunk_size)
    spans, first, previous = [], 0, -1  # previous: the last piece of the window before
    while first < len(pieces):
        last = first  # a piece that alone does not fit is one code point too big: a window of its own
        while last + 1 < len(pieces) and fits(pieces[first][0], pieces[last + 1][1]):
            last += 1
        if last < previous:  # it would end before the window before did (", Coastal Observation" is
            first = previous + 1  # 3 tokens, "Coastal Observation" 4): start after that one's end instead
            continue
        spans.append((pieces[first][0], pieces[last][1]))
        if last == len(pieces) - 1:
            break
        previous, first = last, first + max(1, round((last - first + 1) * (1 - overlap_fraction)))
    return spans


def _fits(text: str, size: int) -> Callable[[int, int], bool]:
    enc = tiktoken.get_encoding("cl100k_base")
    return lambda start, end: len(enc.encode_ordinary(text[start:end])) <= size


def _pack_words(text: str, start: int, end: int, size: int) -> list[Span]:
    """A sentence too long, as the longest runs of whole words that fit (a word too long: token windows)."""
    fits, spans = _fits(text, size), []
    words = [(start + m.start(), start + m.end()) for m in re.finditer(r"\S+", text[start:end])]
    i = 0
    while i < len(words):
        if not fits(*words[i]):
            spans += _token_windows(text, *words[i], size)
            i += 1
            continue
        j = i
        while j + 1 < len(words) and fits(words[i][0], words[j + 1][1]):
            j += 1
        spans.append((words[i][0], words[j][1]))
        i = j + 1
    return spans


def _between(text: str, cuts: list[int]) -> list[Span]:
    """The non-empty pieces between consecutive cuts, trimmed of whitespace."""
    spans, previous = [], 0
    for cut in [*cuts, len(text)]:
        piece = text[previous:cut]
        if piece.strip():
            spans.append((previous + len(piece) - len(piece.lstrip()), previous + len(piece.rstrip())))
        previous = cut
    return spans


def _token_windows(text: str, start: int, end: int, size: int) -> list[Span]:
    """Windows of `size` tokens over one long word, cut at character edges: `reference/fixed.py`."""
    enc, fits = tiktoken.get_encoding("cl100k_base"), _fits(text, size)
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
        i = j
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


def _check(text: object, chunk_size: object, overlap_fraction: object) -> None:
    if not isinstance(text, str):
        raise TypeError(f"text must be str, got {type(text).__name__}: {text!r:.60}")
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int):
        raise TypeError(f"chunk_size must be an int, got {chunk_size!r}")
    if chunk_size <= 0:
        raise ValueError(f"chunk_size must be > 0, got {chunk_size!r}")
    if not isinstance(overlap_fraction, float):
        raise TypeError(f"overlap_fraction must be a float fraction of the window, got {overlap_fraction!r}")
    if not 0.0 <= overlap_fraction < 1.0:
        raise ValueError(f"overlap_fraction must be in [0, 1), got {overlap_fraction!r}")
