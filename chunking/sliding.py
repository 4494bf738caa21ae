"""Sliding-window chunking: windows of whole sentences that overlap by a fraction.

1. Split the text into sentences (a sentence longer than `chunk_size` is first cut at
   words, so every window can hold at least one piece).
2. A window takes consecutive sentences while it stays within `chunk_size`.
3. The next window starts `max(1, round(n * (1 - f)))` sentences later, where `n` is the
   number of sentences in the window and `f` the overlap fraction (`chunk_overlap=0.25`).
   "Text Chunking Strategies for RAG" computed `f` as `Overlap / MaxChunkSize` in integer
   arithmetic, which is 0 for any overlap smaller than the size: its windows never overlapped.
   Here `f` is a float.
4. An int `chunk_overlap` is an absolute amount in the unit (then this equals `sentence`
   with overlap); `window="tokens"` slides over tokens instead (then it equals `fixed`).

Overlap buys recall at the price of more chunks and duplicated text in the index.
`chunking/reference/sliding.py` is the plain version to copy. Taught in notebook 05.
"""

from __future__ import annotations

from chunking import sentence
from chunking.options import check_text, resolve_sizes
from chunking.packing import Measure, Splitter, fallback
from chunking.segment import Span, split_sentences
from chunking.sizers import Bound, resolve_unit
from chunking.types import Chunk, make_chunks

STRATEGY = "sliding"
WINDOWS = ("sentences", "tokens")


def chunk(
    text: str,
    *,
    chunk_size: int = 200,
    chunk_overlap: int | float = 0.25,
    unit="tokens",
    window: str = "sentences",
    doc_id: str = "",
) -> list[Chunk]:
    """Overlapping windows of whole sentences (or of tokens with `window="tokens"`).

    >>> text = "One. Two. Three. Four. Five."
    >>> [c.text for c in chunk(text, chunk_size=4, chunk_overlap=0.5, unit="sentences")]
    ['One. Two. Three. Four.', 'Three. Four. Five.']
    """
    text = check_text(text)
    size, overlap = resolve_sizes(chunk_size, chunk_overlap)
    if window not in WINDOWS:
        raise ValueError(f"window must be one of {WINDOWS}, got {window!r}")
    if window == "tokens":
        spans = resolve_unit("tokens").bind(text).windows(0, len(text), size, overlap)
        return make_chunks(text, spans, strategy=STRATEGY, doc_id=doc_id)
    if not isinstance(chunk_overlap, float):
        chunks = sentence.chunk(text, chunk_size=size, chunk_overlap=overlap, unit=unit, doc_id=doc_id)
        return make_chunks(text, [(c.start, c.end) for c in chunks], strategy=STRATEGY, doc_id=doc_id)
    bound = resolve_unit(unit, sentences=True).bind(text)
    split = fallback(bound, size, 0, sentence.FALLBACK)
    pieces = []
    for piece, n in zip(sentences := split_sentences(text), bound.estimate(sentences)):
        pieces += [piece] if n <= size else split(piece)
    spans = slide(pieces, bound, size, chunk_overlap, split)
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
