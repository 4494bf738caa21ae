"""Sliding-window chunking: windows of whole sentences that overlap by a fraction.

1. Split the text into sentences (a sentence longer than `chunk_size` is first cut at
   words, so every window can hold at least one piece).
2. A window takes consecutive sentences while it stays within `chunk_size`.
3. The next window starts `max(1, round(n * (1 - f)))` sentences later, where `n` is the
   number of sentences in the window and `f` is `overlap_fraction` (0.25 by default).
   "Text Chunking Strategies for RAG" computed `f` as `Overlap / MaxChunkSize` in integer
   arithmetic, which is 0 for any overlap smaller than the size: its windows never overlapped.
   Here `f` is a float.
4. `chunk_overlap` means what it means everywhere — an amount in the unit — and then the
   windows carry the previous window's trailing sentences within it (that is `sentence` with
   overlap); `over="tokens"` slides windows of `chunk_size` in the unit instead, tokens by default
   (that is `fixed`).

Overlap buys recall at the price of more chunks and duplicated text in the index.
`chunking/reference/sliding.py` is the plain version to copy. Taught in notebook 05.
"""

from __future__ import annotations

import warnings

from chunking import sentence
from chunking.options import check_number, check_text, renamed, resolve_sizes
from chunking.packing import Measure, Splitter, fallback
from chunking.segment import split_sentences
from chunking.sizers import Bound, Sentences, resolve_unit
from chunking.types import Chunk, Span, make_chunks
from chunking.windows import windows

STRATEGY = "sliding"
OVER = ("sentences", "tokens")
OVERLAP_FRACTION = 0.25


def chunk(
    text: str,
    *,
    chunk_size: int = 200,
    overlap_fraction: float | None = None,
    chunk_overlap: int | float = 0,
    unit="tokens",
    over: str = "sentences",
    doc_id: str = "",
    window: str | None = None,
) -> list[Chunk]:
    """Windows of whole sentences (or of tokens with `over="tokens"`), each repeating about
    `overlap_fraction` of itself in the next (default 0.25); or, with `chunk_overlap`, carrying
    at most that many units of trailing sentences. Give one of the two.

    >>> text = "One. Two. Three. Four. Five."
    >>> [c.text for c in chunk(text, chunk_size=4, overlap_fraction=0.5, unit="sentences")]
    ['One. Two. Three. Four.', 'Three. Four. Five.']
    """
    text = check_text(text)
    over = renamed("window", "over", window, over, "sentences")
    if not isinstance(over, str) or over not in OVER:
        raise ValueError(f"over must be one of {OVER}, got {over!r}")
    fraction, chunk_overlap = _overlaps(overlap_fraction, chunk_overlap)
    size, overlap = resolve_sizes(chunk_size, chunk_overlap)
    if over == "tokens":  # windows of `chunk_size` in the unit (tokens by default): fixed-size chunking
        sizer = resolve_unit(unit, sentences=True)
        if isinstance(sizer, Sentences):
            raise ValueError("unit='sentences' slides windows of whole sentences: use it with over='sentences', "
                             "not over='tokens'")
        overlap = overlap or int(fraction * size)
        spans = windows(sizer.bind(text), 0, len(text), size, overlap)
        return make_chunks(text, spans, strategy=STRATEGY, doc_id=doc_id)
    if overlap:
        chunks = sentence.chunk(text, chunk_size=size, chunk_overlap=overlap, unit=unit, doc_id=doc_id)
        return make_chunks(text, [(c.start, c.end) for c in chunks], strategy=STRATEGY, doc_id=doc_id)
    bound = resolve_unit(unit, sentences=True).bind(text)
    split = fallback(bound, size, 0, sentence.FALLBACK)
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


def _overlaps(overlap_fraction: object, chunk_overlap: object) -> tuple[float, int | float]:
    """(the fraction, the overlap in units): one of the two is used, the other is 0."""
    if isinstance(chunk_overlap, float) and overlap_fraction is None:  # 0.0 too: it meant "no overlap"
        if not 0 <= chunk_overlap < 1:  # named as given, not as what it is renamed to
            raise ValueError(f"chunk_overlap as a float is a fraction and must be in [0, 1), got {chunk_overlap!r}")
        warnings.warn(f"a float chunk_overlap in sliding is deprecated (it will mean a fraction of chunk_size, as in "
                      f"every strategy, in the next minor version); use overlap_fraction={chunk_overlap!r}",
                      DeprecationWarning, stacklevel=3)
        overlap_fraction, chunk_overlap = chunk_overlap, 0
    if overlap_fraction is not None and chunk_overlap:
        raise ValueError(f"give overlap_fraction (a share of each window's sentences) or chunk_overlap (an amount in "
                         f"the unit), not both; got {overlap_fraction!r} and {chunk_overlap!r}")
    if chunk_overlap:
        return 0.0, chunk_overlap
    fraction = OVERLAP_FRACTION if overlap_fraction is None else overlap_fraction
    if check_number("overlap_fraction", fraction, 0, 1) == 1:
        raise ValueError(f"overlap_fraction must be below 1 (each window must move on), got {fraction!r}")
    return float(fraction), 0
