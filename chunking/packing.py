"""Greedy packing: merge consecutive pieces (sentences, paragraphs, blocks) into chunks.

1. Estimate every piece's length at once: exact for characters (the span's extent) and
   sentences (a count), from one encoding of the whole text for tokens, and by calling the
   length function for any other unit.
2. A piece estimated longer than `size` is cut by the caller's `split`, and its parts become
   chunks of their own: packing never merges across the boundary of an oversize piece.
3. Grow a chunk piece by piece while the estimated length fits.
4. Measure the chunk's real text; while it is too long, give back its last piece (a single
   piece that is still too long goes to `split`). So the bound holds on what each chunk
   really is, not on an estimate.
5. With `overlap`, the next chunk starts with the previous chunk's trailing pieces whose
   length totals at most `overlap`; every chunk still adds at least one new piece.

It does not cut pieces itself and does not look at their content.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import accumulate

from chunking.segment import Span
from chunking.tokens import Length, count_tokens_in_spans

Splitter = Callable[[Span], list[Span]]
EXACT = ("characters", "sentences")  # units whose estimate is the true length


def pack(
    text: str, pieces: list[Span], length: Length, size: int, overlap: int, split: Splitter
) -> list[Span]:
    """Chunks of consecutive `pieces`, each at most `size` long in `length`'s unit."""
    chunks: list[Span] = []
    run: list[Span] = []
    run_sizes: list[int] = []
    for piece, n in zip(pieces, estimate_lengths(text, pieces, length)):
        if n <= size:
            run.append(piece)
            run_sizes.append(n)
            continue
        chunks += _pack_run(text, run, run_sizes, length, size, overlap, split)
        chunks += split(piece)
        run, run_sizes = [], []
    return chunks + _pack_run(text, run, run_sizes, length, size, overlap, split)


def estimate_lengths(text: str, pieces: list[Span], length: Length) -> list[int]:
    """Each piece's length in the unit: exact, or (tokens) estimated from the whole text."""
    if length.name == "characters":
        return [e - s for s, e in pieces]
    if length.name == "sentences":
        return [1] * len(pieces)
    if length.name == "tokens":
        return count_tokens_in_spans(text, pieces)
    return length.many([text[s:e] for s, e in pieces])


class Measure:
    """Lengths of runs of consecutive pieces: estimated in O(1), checked on the real text."""

    def __init__(self, text: str, pieces: list[Span], sizes: list[int], length: Length, size: int) -> None:
        self.text, self.pieces, self.length, self.size = text, pieces, length, size
        self.prefix = [0, *accumulate(sizes)]

    def estimate(self, i: int, j: int) -> int:
        """Estimated length of the chunk spanning pieces[i..j] (exact for characters, sentences)."""
        if self.length.name == "characters":
            return self.pieces[j][1] - self.pieces[i][0]
        return self.prefix[j + 1] - self.prefix[i]

    def fits(self, i: int, j: int) -> bool:
        """Does the real text spanning pieces[i..j] fit within the size?"""
        if self.length.name in EXACT:
            return self.estimate(i, j) <= self.size
        return self.length(self.text[self.pieces[i][0] : self.pieces[j][1]]) <= self.size


def _pack_run(
    text: str, pieces: list[Span], sizes: list[int], length: Length, size: int, overlap: int, split: Splitter
) -> list[Span]:
    """Pack pieces estimated to fit; see the module docstring, steps 3 to 5."""
    measure = Measure(text, pieces, sizes, length, size)
    estimate, fits = measure.estimate, measure.fits
    chunks: list[Span] = []
    first, new = 0, 0  # the chunk's first piece; the first piece no chunk holds yet
    while new < len(pieces):
        last = new
        while first < last and estimate(first, last) > size:
            first += 1
        while last + 1 < len(pieces) and estimate(first, last + 1) <= size:
            last += 1
        while not fits(first, last) and first < last:
            if last > new:
                last -= 1
            else:
                first += 1
        if first == last and not fits(first, last):
            chunks += split(pieces[first])  # the estimate was a little short
        else:
            chunks.append((pieces[first][0], pieces[last][1]))
        chunk_first, new = first, last + 1
        first = new
        while overlap and first - 1 > chunk_first and estimate(first - 1, last) <= overlap:
            first -= 1
    return chunks
