"""Fixed-size chunking: equal windows of tokens, characters, or any length unit.

1. Bind the unit's sizer to the text: for tokens it encodes the whole text once (cl100k_base)
   and knows every token boundary that falls on a character edge.
2. Cut windows of `chunk_size` units; each next window starts `chunk_overlap` units before the
   previous one ended ("Text chunking strategies"' `chunk_by_char` is `unit="characters"`).
3. With `word_safe_overlap`, a window that would start inside a word starts at the next word
   edge instead ("Stop Blaming Your LLM…"), so no chunk begins with "…ompany".
4. Token windows end only on character edges, and each is counted again on its own: a cut-out
   text can need a token more than in context, then the window is shortened. A single token
   that alone needs more than `chunk_size` is cut at code points.
The cutting itself is `chunking.windows.windows`: it asks the sizer where the unit has edges and
how long a window is. `chunking/reference/fixed.py` is the plain version to copy.

It is content-blind: windows may end mid-word or mid-sentence, and they are not trimmed (the
only exception to trimming in the package); windows of pure whitespace are skipped. A single
code point needing more than `chunk_size` gets a chunk of its own. Taught in notebook 01.
"""

from __future__ import annotations

from chunking.options import check_flag, check_text, resolve_sizes
from chunking.sizers import Unit, resolve_unit
from chunking.types import Chunk, make_chunks
from chunking.windows import windows

STRATEGY = "fixed"


def chunk(
    text: str,
    *,
    chunk_size: int = 200,
    chunk_overlap: int | float = 0,
    unit: Unit = "tokens",
    word_safe_overlap: bool = False,
    doc_id: str = "",
) -> list[Chunk]:
    """Split `text` into windows of at most `chunk_size` units overlapping by `chunk_overlap`.

    >>> [c.text for c in chunk("abcdefghij", chunk_size=4, chunk_overlap=1, unit="characters")]
    ['abcd', 'defg', 'ghij']
    """
    text = check_text(text)
    size, overlap = resolve_sizes(chunk_size, chunk_overlap)
    word_safe = check_flag("word_safe_overlap", word_safe_overlap)
    spans = windows(resolve_unit(unit).bind(text), 0, len(text), size, overlap, word_safe=word_safe)
    return make_chunks(text, spans, strategy=STRATEGY, doc_id=doc_id)
