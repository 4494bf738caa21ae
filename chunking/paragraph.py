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

from chunking.options import check_text, resolve_sizes
from chunking.packing import fallback, pack
from chunking.segment import split_paragraphs
from chunking.sizers import resolve_unit
from chunking.types import Chunk, make_chunks

STRATEGY = "paragraph"
FALLBACK = ("sentences", "words")


def chunk(
    text: str,
    *,
    chunk_size: int | None = 200,
    chunk_overlap: int | float = 0,
    unit="tokens",
    doc_id: str = "",
) -> list[Chunk]:
    """Chunks of whole paragraphs; `chunk_size=None` gives one uncapped chunk per paragraph.

    >>> [c.text for c in chunk("One.\\n\\nTwo.\\n \\nThree.", chunk_size=None)]
    ['One.', 'Two.', 'Three.']
    """
    text = check_text(text)
    paragraphs = split_paragraphs(text)
    if chunk_size is None:
        if chunk_overlap:
            raise ValueError(f"chunk_overlap must be 0 when chunk_size is None, got {chunk_overlap!r}")
        return make_chunks(text, paragraphs, strategy=STRATEGY, doc_id=doc_id)
    size, overlap = resolve_sizes(chunk_size, chunk_overlap)
    bound = resolve_unit(unit).bind(text)
    spans = pack(paragraphs, bound, size, overlap, fallback(bound, size, overlap, FALLBACK))
    return make_chunks(text, spans, strategy=STRATEGY, doc_id=doc_id)
