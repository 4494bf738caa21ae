"""Sliding-window chunking: windows of whole sentences that overlap by a fraction.

1. Split the text into sentences (a sentence longer than `chunk_size` is first cut at
   words, so every window can hold at least one piece).
2. A window takes consecutive sentences while it stays within `chunk_size`.
3. The next window starts `max(1, round(n * (1 - f)))` sentences later, where `n` is the
   number of sentences in the window and `f` is `overlap_fraction` (0.25 by default).
   "Text Chunking Strategies for RAG" computed `f` as `Overlap / MaxChunkSize` in integer
   arithmetic, which is 0 for any overlap smaller than the size: its windows never overlapped.
   Here `f` is a float.
4. `chunk_overlap` means what it means everywhere — an amount in the unit, or a float fraction
   of `chunk_size` — and then each window carries the previous one's trailing sentences within
   that amount (the `sentence` strategy with overlap). Windows of units rather than sentences
   are the `fixed` strategy.

Overlap buys recall at the price of more chunks and duplicated text in the index.
`chunking/reference/sliding.py` is the plain version to copy. Taught in notebook 05.
"""

from __future__ import annotations

from chunking.options import check_number, check_text, resolve_sizes
from chunking.packing import Measure, Splitter, fallback, pack
from chunking.segment import split_sentences
from chunking.sizers import Bound, Unit, resolve_unit
from chunking.types import Chunk, Span, make_chunks

STRATEGY = "sliding"
OVERLAP_FRACTION = 0.25
FALLBACK = ("words",)  # below a sentence: words, then windows


def chunk(
    text: str,
    *,
    chunk_size: int = 200,
    chunk_overlap: int | float = 0,
    unit: Unit = "tokens",
    overlap_fraction: float | None = None,
    doc_id: str = "",
) -> list[Chunk]:
    """Windows of whole sentences, each repeating about `overlap_fraction` of its sentences in the
    next (default 0.25); or, with `chunk_overlap`, carrying at most that much of the previous one's
    trailing sentences. Give one of the two.

    >>> text = "One. Two. Three. Four. Five."
    >>> [c.text for c in chunk(text, chunk_size=4, overlap_fraction=0.5, unit="sentences")]
    ['One. Two. Three. Four.', 'Three. Four. Five.']
    """
    text = check_text(text)
    size, overlap = resolve_sizes(chunk_size, chunk_overlap)
    fraction = _fraction(overlap_fraction, overlap)
    bound = resolve_unit(unit, sentences=True).bind(text)
    split = fallback(bound, size, overlap, FALLBACK)
    if overlap:
        spans = pack(split_sentences(text), bound, size, overlap, split)
        return make_chunks(text, spans, strategy=STRATEGY, doc_id=doc_id)
    pieces = []
    for piece, n in zip(sentences := split_sentences(text), bound.estimate(sentences)):
        pieces += [piece] if n <= size else split(piece)
    spans = slide(pieces, bound, size, fraction, split)
    return make_chunks(text, spans, strategy=STRATEGY, doc_id=doc_id)


def slide(pieces: list[Span], bound: Bound, size: int, fraction: float, split: Splitter) -> list[Span]:
    """Windows over `pieces`, each advancing by the non-overlapping share of the last one.

    A window that would end before the previous one did (possible only for a unit that does not
    grow with the text) is not kept: the window starts after the previous one's end instead.
    """
    measure = Measure(pieces, bound, size)
    estimate, fits = measure.estimate, measure.fits
    spans: list[Span] = []
    first, previous = 0, -1  # previous: the last piece of the window before
    while first < len(pieces):
        last = first
        while last + 1 < len(pieces) and estimate(first, last + 1) <= size:
            last += 1
        if last > first and not fits(first, last):
            last = max(first, measure.last_fit(first, first, last - 1, down=True))
        last = measure.last_fit(first, last, len(pieces) - 1)
        if last < previous:
            first = previous + 1
            continue
        if first == last and not fits(first, last):
            spans += split(pieces[first])  # the estimate was a little short
        else:
            spans.append((pieces[first][0], pieces[last][1]))
        if last == len(pieces) - 1:
            break
        previous = last
        first += max(1, round((last - first + 1) * (1 - fraction)))
    return spans


def _fraction(overlap_fraction: object, overlap: int) -> float:
    """The share of each window's sentences the next repeats: 0 when `chunk_overlap` is given instead."""
    if overlap_fraction is not None and overlap:
        raise ValueError(f"give overlap_fraction (a share of each window's sentences) or chunk_overlap (an amount in "
                         f"the unit), not both; got overlap_fraction={overlap_fraction!r} and a chunk_overlap of "
                         f"{overlap}")
    if overlap:
        return 0.0
    fraction = OVERLAP_FRACTION if overlap_fraction is None else overlap_fraction
    if check_number("overlap_fraction", fraction, 0, 1) == 1:
        raise ValueError(f"overlap_fraction must be below 1 (each window must move on), got {fraction!r}")
    return float(fraction)
