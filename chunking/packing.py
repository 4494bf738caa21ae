"""Greedy packing: merge consecutive pieces (sentences, paragraphs, blocks) into chunks.

1. Estimate every piece at once (the sizer's `estimate`: for tokens, from one encoding of the
   whole text). A piece longer than `size` is cut by the caller's `split`, and its parts become
   chunks of their own: packing never merges across the boundary of an oversize piece.
2. Grow a chunk piece by piece while the estimates added up fit.
3. Settle on the real length of the chunk's text (the sizer's `count`): give back pieces while
   it is too long, take more while the next piece still fits — one piece, then two, four… then
   halving, so a bad estimate costs a few counts, not one per piece. Each chunk is the longest
   run of whole pieces whose real text fits (for a length that grows with the text), and only
   runs counted to fit become chunks: the bound holds whatever the unit.
4. With `overlap`, the next chunk starts with the previous chunk's trailing pieces whose real
   length totals at most `overlap`; every chunk still adds at least one new piece.
`descend` is the fallback every strategy shares: cut a piece too long at the next level
(paragraphs, lines, sentences, words…), pack its parts, and below the last level, windows.
`merge_small` is the option `min_chunk_size` of the packing strategies: a chunk measuring less is
merged into a neighbour when the merged text still fits.
It does not look at the pieces' content; the sizer measures, the caller finds the pieces.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from itertools import accumulate

from chunking.segment import LEVELS, SentenceEnds
from chunking.sizers import Bound, first_fitting, last_fitting
from chunking.types import Span, shift, trim
from chunking.windows import windows

Splitter = Callable[[Span], list[Span]]
Level = Callable[[str], list[Span]]  # a text's pieces, as spans of it


def pack(pieces: list[Span], bound: Bound, size: int, overlap: int, split: Splitter) -> list[Span]:
    """Chunks of consecutive `pieces` of `bound.text`, each at most `size` in the bound sizer's unit."""
    measure = Measure(pieces, bound, size)
    chunks: list[Span] = []
    run_start = 0  # the first piece of the current run of pieces that fit
    for i, n in enumerate(measure.sizes):
        if n > size and (n > 2 * size or not measure.fits(i, i)):  # far over: no need to count
            chunks += _pack_run(measure, run_start, i, overlap, split)
            chunks += split(pieces[i])
            run_start = i + 1
    return chunks + _pack_run(measure, run_start, len(pieces), overlap, split)


def descend(bound: Bound, start: int, end: int, size: int, overlap: int, levels: Sequence[str | Level]) -> list[Span]:
    """Chunk spans of `text[start:end]`: cut at the first level that occurs, pack the parts, cut a
    part still too long at the next level; below the last level, the sizer's windows."""
    start, end = trim(bound.text, start, end)
    if start >= end:
        return []
    if not levels:
        return windows(bound, start, end, size, overlap, trim=True)
    if levels[0] == "sentences" and bound.additive and not overlap:  # the same spans, fewer sentence ends confirmed
        return _pack_sentences(bound, start, end, size, fallback(bound, size, overlap, levels[1:]))
    level = LEVELS[levels[0]] if isinstance(levels[0], str) else levels[0]
    pieces = shift(level(bound.text[start:end]), start)
    if len(pieces) == 1:  # this level does not occur here: go one finer
        return descend(bound, start, end, size, overlap, levels[1:])
    return pack(pieces, bound, size, overlap, fallback(bound, size, overlap, levels[1:]))


def merge_small(
    spans: Sequence[Span], bound: Bound, size: int, minimum: int, gaps: Sequence[float | None] | None = None,
    *, prefer_next: bool = False,
) -> list[Span]:
    """Merge each span measuring under `minimum` into a neighbour when the merged span fits `size`.

    The neighbour tried first is the one across the closer boundary: `gaps[i]` is how far apart the
    text is across the boundary after span `i` (semantic chunking passes embedding distances; None
    means a cut inside a sentence, the closest of all); without `gaps`, the previous span first (the
    next with `prefer_next`; so also on a tie). A
    merged span still too small keeps merging. Linear: every merge removes a span, and each step
    measures one merged span, which fits `size`.
    """
    gaps = list(gaps) if gaps is not None else [0.0] * len(spans)
    merged: list[Span] = []
    merged_gaps: list[float | None] = []  # the boundary after each merged span
    i = 0
    while i < len(spans):
        current, gap = spans[i], gaps[i]
        i += 1
        while bound.count(*current) < minimum:
            # (closeness, tie-break, side): a cut inside a sentence (gap None) is the closest of all
            sides = [(-1.0 if merged_gaps[-1] is None else merged_gaps[-1], prefer_next, 0)] if merged else []
            sides += [(-1.0 if gap is None else gap, not prefer_next, 1)] if i < len(spans) else []
            for *_, side in sorted(sides):
                candidate = (merged[-1][0], current[1]) if side == 0 else (current[0], spans[i][1])
                if bound.count(*candidate) <= size:
                    if side == 0:
                        merged.pop()
                        merged_gaps.pop()
                    else:
                        gap = gaps[i]
                        i += 1
                    current = candidate
                    break
            else:
                break  # fits with neither neighbour: stays small
        merged.append(current)
        merged_gaps.append(gap)
    return merged


def fallback(bound: Bound, size: int, overlap: int, levels: Sequence[str | Level]) -> Splitter:
    """The `split` for `pack`: an oversize piece descends through `levels`, then windows."""
    return lambda piece: descend(bound, *piece, size, overlap, levels)


class Measure:
    """Lengths of runs of consecutive pieces: estimated in O(1), counted on the real text."""

    def __init__(self, pieces: list[Span], bound: Bound, size: int) -> None:
        self.pieces, self.bound, self.size = pieces, bound, size
        self.sizes = bound.estimate(pieces)
        self.prefix = [0, *accumulate(self.sizes)]

    def estimate(self, i: int, j: int) -> int:
        """Estimated length of the chunk spanning pieces[i..j]."""
        return self.prefix[j + 1] - self.prefix[i]

    def last_within(self, first: int, low: int, high: int) -> int:
        """The largest j in [low, high] with estimate(first, j) <= size (estimates are >= 0, so the prefix
        sums ascend: one bisection, not a step per piece); `low` when none larger is within."""
        return max(low, bisect_right(self.prefix, self.prefix[first] + self.size, low + 1, high + 2) - 2)

    def exact(self, i: int, j: int) -> int:
        """The real length of the text spanning pieces[i..j], cut out on its own."""
        return self.bound.count(self.pieces[i][0], self.pieces[j][1])

    def fits(self, i: int, j: int) -> bool:
        return self.exact(i, j) <= self.size

    def last_fit(self, first: int, low: int, high: int, *, down: bool = False) -> int:
        """The largest j in [low, high] with fits(first, j), searched as `last_fitting` does."""
        return last_fitting(lambda j: self.fits(first, j), low, high, down=down)

    def first_fit(self, last: int, low: int) -> int:
        """The smallest i in [low, last] with fits(i, last); `last` when none smaller fits."""
        return first_fitting(lambda i: self.fits(i, last), low, last)

    def overlap_start(self, first: int, last: int, overlap: int) -> int:
        """Where the chunk after pieces[first..last] starts: with the most trailing pieces whose real
        length is at most `overlap` (never all of them: every chunk adds a piece)."""
        return last + 1 - last_fitting(lambda k: self.exact(last + 1 - k, last) <= overlap, 0, last - first)


def _pack_sentences(bound: Bound, start: int, end: int, size: int, split: Splitter) -> list[Span]:
    """`pack` of the sentences of `text[start:end]` (trimmed), for a unit whose length is end - start,
    without overlap: the same chunks, but each sentence end confirmed only where a chunk may stop.

    Each chunk is the longest run of whole sentences from its first one that fits: the last confirmed
    end at most `size` after the chunk's start, found by confirming candidates down from there. None:
    the first sentence is longer than `size`, and runs to the first confirmed end after it (`split` cuts
    it) — so a text of one sentence is `split` whole, as `descend` does when a level does not occur.
    """
    text = bound.text[start:end]
    marks, chunks, previous = SentenceEnds(text), [], 0  # previous: the last cut made
    while (first := trim(text, previous, len(text))[0]) < len(text):
        if len(text) - first <= size:
            chunks.append((start + first, start + len(text)))
            break
        stop = marks.last_within(first, first + size)
        if stop is None:  # the first sentence alone is too long: to its own end
            cut = marks.next_cut(first)
            chunks += split((start + first, start + trim(text, first, cut)[1]))
        else:
            cut, last = stop
            chunks.append((start + first, start + last))
        previous = cut
    return chunks


def _pack_run(measure: Measure, begin: int, stop: int, overlap: int, split: Splitter) -> list[Span]:
    """Pack pieces[begin:stop], each estimated to fit; see the module docstring, steps 2 to 4."""
    fits, pieces = measure.fits, measure.pieces
    chunks: list[Span] = []
    first, new = begin, begin  # the chunk's first piece; the first piece no chunk holds yet
    while new < stop:
        last = measure.last_within(first, new, stop - 1)
        if not fits(first, last):  # the estimate was short: give back new pieces, then overlap
            last = measure.last_fit(first, new, last - 1, down=True) if last > new else new - 1
            if last < new:
                last, first = new, measure.first_fit(new, first + 1)
        last = measure.last_fit(first, last, stop - 1)  # the estimate was long: take more
        if first == last and not fits(first, last):
            chunks += split(pieces[first])
        else:
            chunks.append((pieces[first][0], pieces[last][1]))
        new = last + 1
        first = measure.overlap_start(first, last, overlap) if overlap else new
    return chunks
