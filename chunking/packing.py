"""Greedy packing: merge consecutive pieces (sentences, paragraphs, blocks) into chunks.

1. Measure every piece once (a batch call for tokens).
2. A piece longer than `size` is cut by the caller's `split` and its parts become chunks of
   their own: packing never merges across the boundary of an oversize piece.
3. Grow a chunk piece by piece while the estimated length fits: exact for characters (the
   span's extent) and sentences (the piece count), the sum of piece lengths otherwise.
4. Measure the chunk's real text; while it is too long, give back its last piece. So the
   bound holds on what the chunk really is, not on an estimate.
5. With `overlap`, the next chunk starts with the previous chunk's trailing pieces whose
   length totals at most `overlap`; every chunk still adds at least one new piece.

It does not cut pieces itself and does not look at their content.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import accumulate

from chunking.segment import Span
from chunking.tokens import Length

Splitter = Callable[[Span], list[Span]]


def pack(
    text: str, pieces: list[Span], length: Length, size: int, overlap: int, split: Splitter
) -> list[Span]:
    """Chunks of consecutive `pieces`, each at most `size` long in `length`'s unit."""
    chunks: list[Span] = []
    run: list[Span] = []
    run_sizes: list[int] = []
    for piece, n in zip(pieces, _measure(text, pieces, length)):
        if n <= size:
            run.append(piece)
            run_sizes.append(n)
            continue
        chunks += _pack_run(text, run, run_sizes, length, size, overlap)
        chunks += split(piece)
        run, run_sizes = [], []
    return chunks + _pack_run(text, run, run_sizes, length, size, overlap)


def _pack_run(
    text: str, pieces: list[Span], sizes: list[int], length: Length, size: int, overlap: int
) -> list[Span]:
    """Pack pieces that each fit; see the module docstring, steps 3 to 5."""
    estimate = _estimator(pieces, sizes, length)
    chunks = []
    first, new = 0, 0  # the chunk's first piece; the first piece no chunk holds yet
    while new < len(pieces):
        last = new
        while first < last and estimate(first, last) > size:
            first += 1
        while last + 1 < len(pieces) and estimate(first, last + 1) <= size:
            last += 1
        while first < last and length.name not in _EXACT and length(_cover(text, pieces, first, last)) > size:
            if last > new:
                last -= 1
            else:
                first += 1
        chunks.append((pieces[first][0], pieces[last][1]))
        chunk_first, new = first, last + 1
        first = new
        while overlap and first - 1 > chunk_first and estimate(first - 1, last) <= overlap:
            first -= 1
    return chunks


_EXACT = ("characters", "sentences")  # units whose estimate is the true length


def _measure(text: str, pieces: list[Span], length: Length) -> list[int]:
    if length.name == "characters":
        return [e - s for s, e in pieces]
    if length.name == "sentences":
        return [1] * len(pieces)
    return length.many([text[s:e] for s, e in pieces])


def _estimator(pieces: list[Span], sizes: list[int], length: Length) -> Callable[[int, int], int]:
    """Length of the chunk spanning pieces[i..j]: exact where cheap, else a sum of pieces."""
    if length.name == "characters":
        return lambda i, j: pieces[j][1] - pieces[i][0]
    if length.name == "sentences":
        return lambda i, j: j - i + 1
    prefix = [0, *accumulate(sizes)]
    return lambda i, j: prefix[j + 1] - prefix[i]


def _cover(text: str, pieces: list[Span], i: int, j: int) -> str:
    return text[pieces[i][0] : pieces[j][1]]
