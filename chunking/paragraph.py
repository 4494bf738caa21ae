"""Paragraph chunking: blank-line boundaries, capped (packed) or uncapped.

1. Split the text into paragraphs at blank (whitespace-only) lines, CRLF included.
2. Capped (the default, seed 000): pack consecutive paragraphs while the chunk stays within
   `chunk_size`; a paragraph longer than that is cut into sentences (then words), which
   become chunks of their own.
3. Uncapped (`chunk_size=None`, seed 003): exactly one chunk per paragraph, however long.
   This is the one deliberate exception to the size bound in the package: the author's
   paragraph is the unit, and a monster paragraph will be truncated by the embedder.

It trusts the author's blank lines; text without them is one paragraph (then capped mode
falls back to sentences). Taught in notebook 03.
"""

from __future__ import annotations

from chunking import recursive
from chunking.packing import pack
from chunking.segment import split_paragraphs
from chunking.tokens import Unit, check_text, resolve_sizes, resolve_unit
from chunking.types import Chunk, make_chunks

STRATEGY = "paragraph"
FALLBACK = ("sentences", "words")


def chunk(
    text: str,
    *,
    chunk_size: int | None = 200,
    chunk_overlap: int | float = 0,
    unit: Unit = "tokens",
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
    length = resolve_unit(unit)
    spans = pack(
        text, paragraphs, length, size, overlap,
        lambda p: recursive.split(text, *p, length, size, overlap, FALLBACK),
    )
    return make_chunks(text, spans, strategy=STRATEGY, doc_id=doc_id)
