"""Sliding-window chunking: windows of whole sentences that overlap by a fraction.

1. Split the text into sentences (a sentence longer than `chunk_size` is first cut at
   words, so every window can hold at least one piece).
2. A window takes consecutive sentences while it stays within `chunk_size`.
3. The next window starts `max(1, round(n * (1 - f)))` sentences later, where `n` is the
   number of sentences in the window and `f` the overlap fraction (`chunk_overlap=0.25`).
   Seed 000 computed `f` as `Overlap / MaxChunkSize` in integer arithmetic, which is 0 for
   any overlap smaller than the size: its windows never overlapped. Here `f` is a float.
4. An int `chunk_overlap` is an absolute amount in the unit (then this equals `sentence`
   with overlap); `window="tokens"` slides over tokens instead (then it equals `fixed`).

Overlap buys recall at the price of more chunks and duplicated text in the index.
Taught in notebook 05.
"""

from __future__ import annotations

from chunking import fixed, recursive, sentence
from chunking.segment import Span, split_sentences
from chunking.tokens import Length, Unit, check_text, resolve_sizes, resolve_unit
from chunking.types import Chunk, make_chunks

STRATEGY = "sliding"
WINDOWS = ("sentences", "tokens")


def chunk(
    text: str,
    *,
    chunk_size: int = 200,
    chunk_overlap: int | float = 0.25,
    unit: Unit = "tokens",
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
        spans = fixed.windows(text, 0, len(text), resolve_unit("tokens"), size, overlap)
        return make_chunks(text, spans, strategy=STRATEGY, doc_id=doc_id)
    if not isinstance(chunk_overlap, float):
        chunks = sentence.chunk(text, chunk_size=size, chunk_overlap=overlap, unit=unit, doc_id=doc_id)
        return make_chunks(text, [(c.start, c.end) for c in chunks], strategy=STRATEGY, doc_id=doc_id)
    length = resolve_unit(unit, sentences=True)
    pieces = []
    for s, e in split_sentences(text):
        fits = length.name == "sentences" or length(text[s:e]) <= size
        pieces += [(s, e)] if fits else recursive.split(text, s, e, length, size, 0, sentence.FALLBACK)
    spans = slide(text, pieces, length, size, chunk_overlap)
    return make_chunks(text, spans, strategy=STRATEGY, doc_id=doc_id)


def slide(text: str, pieces: list[Span], length: Length, size: int, fraction: float) -> list[Span]:
    """Windows over `pieces` (each fitting alone), advancing by the non-overlapping share."""
    spans: list[Span] = []
    first = 0
    while first < len(pieces):
        last = first
        while last + 1 < len(pieces) and _fits(text, pieces, first, last + 1, length, size):
            last += 1
        spans.append((pieces[first][0], pieces[last][1]))
        if last == len(pieces) - 1:
            break
        count = last - first + 1
        first += max(1, round(count * (1 - fraction)))
    return spans


def _fits(text: str, pieces: list[Span], i: int, j: int, length: Length, size: int) -> bool:
    if length.name == "sentences":
        return j - i + 1 <= size
    return length(text[pieces[i][0] : pieces[j][1]]) <= size
