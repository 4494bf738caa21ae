"""Recursive chunking: split at the coarsest separator that works, merge back up to size.

1. Split the text at the first separator level: paragraphs (blank lines), then lines, then
   sentences, then words. A separator is a level name, a literal string (which ends the piece
   before it), or a compiled regex (each match starts a new piece: `re.compile(r"(?m)^PART ")`).
2. Pack the pieces greedily into chunks of at most `chunk_size` (with `chunk_overlap`).
3. A piece still too long is split again at the next level, and its parts are packed among
   themselves, so a chunk never straddles a boundary coarser than the one it was cut at.
4. Below the last level, windows in the unit cut what remains (a 1 MB "word").
Steps 1–4 are `chunking.packing.descend`, which every strategy uses to cut a piece too long;
this module gives it the separators. `chunking/reference/recursive.py` is the plain version.

Structure is respected as far as size allows; sentences break only as a last resort.
It knows nothing of markdown syntax (see `markdown`) or meaning (see `semantic`).
Taught in notebook 06.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from chunking.options import check_text, resolve_minimum, resolve_sizes
from chunking.packing import Level, descend, merge_small
from chunking.segment import LEVELS
from chunking.sizers import Unit, resolve_unit
from chunking.types import Chunk, Span, make_chunks, trim

STRATEGY = "recursive"
SEPARATORS = ("paragraphs", "lines", "sentences", "words")


def chunk(
    text: str,
    *,
    chunk_size: int = 200,
    chunk_overlap: int | float = 0,
    unit: Unit = "tokens",
    separators: Sequence[str | re.Pattern] = SEPARATORS,
    min_chunk_size: int | None = None,
    doc_id: str = "",
) -> list[Chunk]:
    """Split `text` at the coarsest separators that keep chunks within `chunk_size`.

    `min_chunk_size` (in the unit) merges a chunk measuring less into a neighbour when the merged
    text still fits `chunk_size`.

    >>> [c.text for c in chunk("One. Two.\\n\\nThree four five.", chunk_size=12, unit="characters")]
    ['One. Two.', 'Three four', 'five.']
    """
    text = check_text(text)
    size, overlap = resolve_sizes(chunk_size, chunk_overlap)
    levels = [level(s) for s in _checked(separators)]
    minimum = resolve_minimum(min_chunk_size, size)
    bound = resolve_unit(unit).bind(text)
    spans = descend(bound, 0, len(text), size, overlap, levels)
    if minimum:
        spans = merge_small(spans, bound, size, minimum)
    return make_chunks(text, spans, strategy=STRATEGY, doc_id=doc_id)


def level(separator: str | re.Pattern) -> str | Level:
    """A separator as a level of `descend`: a level name as it is; a literal string ends each piece
    (the piece keeps it); each match of a regex starts a new piece."""
    if isinstance(separator, str) and separator in LEVELS:
        return separator

    def cut(text: str) -> list[Span]:
        if isinstance(separator, re.Pattern):
            cuts = [m.start() for m in separator.finditer(text) if m.start() > 0]
        else:
            cuts, found = [], text.find(separator)
            while found != -1:
                cuts.append(found + len(separator))
                found = text.find(separator, found + len(separator))
        spans = [trim(text, a, b) for a, b in zip([0, *cuts], [*cuts, len(text)])]
        return [s for s in spans if s[0] < s[1]]

    return cut


def _checked(separators: object) -> Sequence[str | re.Pattern]:
    if not isinstance(separators, Sequence) or isinstance(separators, str) or not all(
        isinstance(s, re.Pattern) or s and isinstance(s, str) for s in separators
    ):
        raise ValueError(f"separators must be a sequence of non-empty strings or compiled regexes, got {separators!r}")
    return separators
