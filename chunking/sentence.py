"""Sentence chunking: whole sentences packed up to a size, or N sentences per chunk.

1. Split the text into sentences with exact offsets (`segment.split_sentences`, which
   handles "Dr. Smith", "e.g.", "3.14", ellipses, quotes, list items and CJK `。！？`).
2. Pack consecutive sentences greedily while the chunk stays within `chunk_size` ("Text
   Chunking Strategies for RAG" and "Stop Blaming Your LLM…"); `chunk_overlap` carries the
   previous chunk's trailing sentences that fit within it (the latter carries one).
3. With `unit="sentences"`, `chunk_size=5, chunk_overlap=1` gives "Text chunking strategies"'
   five sentences per chunk with a one-sentence overlap — without its trailing duplicate chunk.
4. A sentence longer than `chunk_size` is cut at words (then windows) into chunks of its own:
   the bound always holds.

Chunk sizes vary with sentence lengths; it does not look at paragraphs or meaning.
`chunking/reference/sentence.py` is the plain version to copy. Taught in notebook 02.
"""

from __future__ import annotations

from chunking.options import check_text, resolve_minimum, resolve_sizes
from chunking.packing import fallback, merge_small, pack
from chunking.segment import split_sentences
from chunking.sizers import Unit, resolve_unit
from chunking.types import Chunk, make_chunks

STRATEGY = "sentence"
FALLBACK = ("words",)  # below a sentence: words, then windows


def chunk(
    text: str,
    *,
    chunk_size: int = 200,
    chunk_overlap: int | float = 0,
    unit: Unit = "tokens",
    min_chunk_size: int | None = None,
    doc_id: str = "",
) -> list[Chunk]:
    """Pack whole sentences into chunks of at most `chunk_size` units.

    `min_chunk_size` (in the unit) merges a chunk measuring less into a neighbour when the merged
    text still fits `chunk_size`.

    >>> text = "Dr. Smith arrived. He sat down. It was 3.14 p.m. exactly."
    >>> [c.text for c in chunk(text, chunk_size=2, chunk_overlap=1, unit="sentences")]
    ['Dr. Smith arrived. He sat down.', 'He sat down. It was 3.14 p.m. exactly.']
    """
    text = check_text(text)
    size, overlap = resolve_sizes(chunk_size, chunk_overlap)
    bound = resolve_unit(unit, sentences=True).bind(text)
    minimum = resolve_minimum(min_chunk_size, size)
    spans = pack(split_sentences(text), bound, size, overlap, fallback(bound, size, overlap, FALLBACK))
    if minimum:
        spans = merge_small(spans, bound, size, minimum)
    return make_chunks(text, spans, strategy=STRATEGY, doc_id=doc_id)
