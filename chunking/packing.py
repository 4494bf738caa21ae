"""Greedy packing: merge consecutive pieces (sentences, paragraphs, blocks) into chunks.

1. Measure every piece at once: exact for characters (the span's extent) and sentences (a
   count); for tokens, the tokens of one encoding of the whole text that end inside each
   piece (see `chunking.counting`); by calling the length function for any other unit.
2. A piece longer than `size` is cut by the caller's `split`, and its parts become chunks
   of their own: packing never merges across the boundary of an oversize piece.
3. Grow a chunk piece by piece while the pieces' lengths added up fit (for tokens an
   estimate: a piece cut out alone can encode to a token more or less).
4. Settle on the real length of the chunk's text: give back pieces while it is too long,
   take more while the next piece still fits — one piece, then two, four… (then halving), so a
   bad estimate costs a few checks, not one per piece. Each chunk is the longest run of whole
   pieces whose real text fits (for a length that grows with the text), and the bound holds on
   what each chunk really is, whatever the unit: only runs checked to fit become chunks.
5. With `overlap`, the next chunk starts with the previous chunk's trailing pieces whose
   real length totals at most `overlap`; every chunk still adds at least one new piece.

It does not cut pieces itself and does not look at their content.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import accumulate

from chunking.segment import Span
from chunking.tokens import Length

Splitter = Callable[[Span], list[Span]]
EXACT = ("characters",)  # the unit whose estimate is the true length (sentences re-split: see `exact`)


def pack(
    text: str, pieces: list[Span], length: Length, size: int, overlap: int, split: Splitter
) -> list[Span]:
    """Chunks of consecutive `pieces`, each at most `size` long in `length`'s unit."""
    measure = Measure(text, pieces, length, size)
    chunks: list[Span] = []
    run_start = 0  # the first piece of the current run of pieces that fit
    for i, n in enumerate(measure.sizes):
        if n > size and (n > 2 * size or not measure.fits(i, i)):  # far over: no need to measure exactly
            chunks += _pack_run(measure, run_start, i, overlap, split)
            chunks += split(pieces[i])
            run_start = i + 1
    return chunks + _pack_run(measure, run_start, len(pieces), overlap, split)


def estimate_lengths(text: str, pieces: list[Span], length: Length) -> list[int]:
    """Each piece's length in the unit: exact, or (tokens) estimated from one encoding of the
    region the pieces cover, kept in `length.memo` for later calls on the same region."""
    if length.name == "characters":
        return [e - s for s, e in pieces]
    if length.name == "sentences":
        return [1] * len(pieces)
    if length.name == "tokens":
        if not pieces:
            return []
        region = length.memo.counter(text, min(s for s, _ in pieces), max(e for _, e in pieces))
        return region.estimate(pieces)  # as `count_tokens_in_spans`, without encoding the region again
    return length.many([text[s:e] for s, e in pieces])


class Measure:
    """Lengths of runs of consecutive pieces: estimated in O(1), checked on the real text.

    For tokens one encoding of the whole text serves every level of a recursive split: each
    piece is estimated from it, and a chunk's exact count encodes at most its first and last
    word (see `chunking.counting`).
    """

    def __init__(self, text: str, pieces: list[Span], length: Length, size: int) -> None:
        self.text, self.pieces, self.length, self.size = text, pieces, length, size
        self.tokens = length.memo.counter(text) if length.name == "tokens" and pieces else None
        self.sizes = self.tokens.estimate(pieces) if self.tokens else estimate_lengths(text, pieces, length)
        self.prefix = [0, *accumulate(self.sizes)]

    def estimate(self, i: int, j: int) -> int:
        """Estimated length of the chunk spanning pieces[i..j] (exact for characters, sentences)."""
        if self.length.name == "characters":
            return self.pieces[j][1] - self.pieces[i][0]
        return self.prefix[j + 1] - self.prefix[i]

    def exact(self, i: int, j: int) -> int:
        """The real length of the text spanning pieces[i..j] (sentences too: cut out on its own, a
        run of sentences may split differently, as a title-like line no longer follows a long one)."""
        if self.length.name in EXACT:
            return self.estimate(i, j)
        if self.tokens:
            return self.tokens.count(self.pieces[i][0], self.pieces[j][1])
        return self.length(self.text[self.pieces[i][0] : self.pieces[j][1]])

    def fits(self, i: int, j: int) -> bool:
        """Does the real text spanning pieces[i..j] fit within the size?"""
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


def _pack_run(measure: Measure, begin: int, stop: int, overlap: int, split: Splitter) -> list[Span]:
    """Pack pieces[begin:stop], each estimated to fit; see the module docstring, steps 3 to 5."""
    estimate, fits, pieces, size = measure.estimate, measure.fits, measure.pieces, measure.size
    chunks: list[Span] = []
    first, new = begin, begin  # the chunk's first piece; the first piece no chunk holds yet
    while new < stop:
        last = new
        while first < last and estimate(first, last) > size:
            first += 1
        while last + 1 < stop and estimate(first, last + 1) <= size:
            last += 1
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


def last_fitting(fits: Callable[[int], bool], low: int, high: int, *, down: bool = False) -> int:
    """The largest x in [low, high] with fits(x), probing from one end in steps that double.

    Upwards, `fits(low)` is taken as known: probes go low + 1, low + 3, low + 7… With `down` they go
    high, high - 1, high - 3, high - 7…, and `low - 1` means nothing fits. Then halving between the
    last good and the first bad probe. So an estimate off by a piece costs two or three probes, and
    one off by many costs O(log) probes, not one per piece. For a `fits` that is not monotone the
    answer is a value seen to fit, perhaps not the largest.
    """
    if down:
        bad, step = high + 1, 1
        while not fits(probe := max(bad - step, low)):
            if probe == low:
                return low - 1
            step = 1 if bad > high else step * 2
            bad = probe
        good = probe
    else:
        good, bad, step = low, high + 1, 1
        while good + step < bad and fits(good + step):
            good, step = good + step, step * 2
        bad = min(bad, good + step)
    while bad - good > 1:
        middle = (good + bad) // 2
        good, bad = (middle, bad) if fits(middle) else (good, middle)
    return good


def first_fitting(fits: Callable[[int], bool], low: int, high: int) -> int:
    """The smallest x in [low, high] with fits(x), probing up from `low` as `last_fitting` does;
    `high` when nothing smaller fits (whether or not `high` itself does)."""
    if low >= high or fits(low):
        return min(low, high)
    bad, step = low, 1
    while bad + step < high and not fits(bad + step):
        bad, step = bad + step, step * 2
    good = min(bad + step, high)
    while good - bad > 1:
        middle = (good + bad) // 2
        bad, good = (bad, middle) if fits(middle) else (middle, good)
    return good
