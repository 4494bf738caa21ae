"""Paragraph chunking: blank-line boundaries, capped (packed) or uncapped.

1. Split the text into paragraphs at blank (whitespace-only) lines, CRLF included.
2. Capped (the default, as in "Text Chunking Strategies for RAG"): pack consecutive paragraphs
   while the chunk stays within `chunk_size`; a paragraph longer than that is cut into
   sentences (then words), which become chunks of their own.
3. Uncapped (`chunk_size=None`, as in "Stop Blaming Your LLM…"): exactly one chunk per
   paragraph, however long. This is the one deliberate exception to the size bound in the
   package: the author's paragraph is the unit, and a monster paragraph will be truncated by the
   embedder.

It trusts the author's blank lines; text without them is one paragraph (then capped mode
falls back to sentences). `chunking/reference/paragraph.py` is the plain version to copy.
Taught in notebook 03.
"""

from __future__ import annotations

import sys

from chunking.options import check_text, resolve_minimum, resolve_sizes
from chunking.packing import fallback, merge_small, pack
from chunking.segment import split_paragraphs
from chunking.sizers import Unit, resolve_unit
from chunking.types import Chunk, make_chunks

STRATEGY = "paragraph"
FALLBACK = ("sentences", "words")


def chunk(
    text: str,
    *,
    chunk_size: int | None = 200,
    chunk_overlap: int | float = 0,
    unit: Unit = "tokens",
    min_chunk_size: int | None = None,
    doc_id: str = "",
) -> list[Chunk]:
    """Chunks of whole paragraphs; `chunk_size=None` gives one uncapped chunk per paragraph.

    `min_chunk_size` (in the unit) merges a chunk measuring less into a neighbour when the merged
    text still fits `chunk_size`. Uncapped, a short paragraph (a heading line, say) joins the one
    after it (or, at the end, the one before).

    >>> [c.text for c in chunk("One.\\n\\nTwo.\\n \\nThree.", chunk_size=None)]
    ['One.', 'Two.', 'Three.']
    """
    text = check_text(text)
    sizer = resolve_unit(unit)  # checked even when nothing is measured: a bad unit is never silent
    paragraphs = split_paragraphs(text)
    if chunk_size is None:
        if chunk_overlap:
            raise ValueError(f"chunk_overlap must be 0 when chunk_size is None, got {chunk_overlap!r}")
        if minimum := resolve_minimum(min_chunk_size, None):
            # No cap: a short paragraph always joins a neighbour, the next one first (a heading line
            # belongs with the text under it).
            paragraphs = merge_small(paragraphs, sizer.bind(text), sys.maxsize, minimum, prefer_next=True)
        return make_chunks(text, paragraphs, strategy=STRATEGY, doc_id=doc_id)
    size, overlap = resolve_sizes(chunk_size, chunk_overlap)
    minimum = resolve_minimum(min_chunk_size, size)
    bound = sizer.bind(text)
    spans = pack(paragraphs, bound, size, overlap, fallback(bound, size, overlap, FALLBACK))
    if minimum:
        spans = merge_small(spans, bound, size, minimum)
    return make_chunks(text, spans, strategy=STRATEGY, doc_id=doc_id)
