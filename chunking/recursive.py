"""Recursive chunking: split at the coarsest separator that works, merge back up to size.

1. Split the text at the first separator level: paragraphs (blank lines), then lines, then
   sentences, then words. A separator is a level name, a literal string (which ends the piece
   before it), or a compiled regex (each match starts a new piece: `re.compile(r"(?m)^PART ")`).
2. Pack the pieces greedily into chunks of at most `chunk_size` (with `chunk_overlap`).
3. A piece still too long is split again at the next level, and its parts are packed among
   themselves, so a chunk never straddles a boundary coarser than the one it was cut at.
4. Below the last level, fixed windows in the unit cut what remains (a 1 MB "word").

Structure is respected as far as size allows; sentences break only as a last resort.
It knows nothing of markdown syntax (see `markdown`) or meaning (see `semantic`).
Taught in notebook 06.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from chunking import fixed
from chunking.packing import pack
from chunking.segment import (
    Span,
    shift,
    split_lines,
    split_paragraphs,
    split_sentences,
    split_words,
    trim,
)
from chunking.tokens import Length, Unit, check_text, resolve_sizes, resolve_unit
from chunking.types import Chunk, make_chunks

STRATEGY = "recursive"
LEVELS = {
    "paragraphs": split_paragraphs,
    "lines": split_lines,
    "sentences": split_sentences,
    "words": split_words,
}
SEPARATORS = ("paragraphs", "lines", "sentences", "words")


def chunk(
    text: str,
    *,
    chunk_size: int = 200,
    chunk_overlap: int | float = 0,
    unit: Unit = "tokens",
    separators: Sequence[str | re.Pattern] = SEPARATORS,
    doc_id: str = "",
) -> list[Chunk]:
    """Split `text` at the coarsest separators that keep chunks within `chunk_size`.

    >>> [c.text for c in chunk("One. Two.\\n\\nThree four five.", chunk_size=12, unit="characters")]
    ['One. Two.', 'Three four', 'five.']
    """
    text = check_text(text)
    size, overlap = resolve_sizes(chunk_size, chunk_overlap)
    if not isinstance(separators, Sequence) or isinstance(separators, str) or not all(
        isinstance(s, re.Pattern) or s and isinstance(s, str) for s in separators
    ):
        raise ValueError(f"separators must be a sequence of non-empty strings or compiled regexes, got {separators!r}")
    spans = split(text, 0, len(text), resolve_unit(unit), size, overlap, tuple(separators))
    return make_chunks(text, spans, strategy=STRATEGY, doc_id=doc_id)


def split(
    text: str, start: int, end: int, length: Length, size: int, overlap: int = 0,
    separators: Sequence[str] = SEPARATORS,
) -> list[Span]:
    """Chunk spans of `text[start:end]` (which may be too long) using `separators` in order."""
    start, end = trim(text, start, end)
    if start >= end:
        return []
    if not separators:
        return fixed.windows(text, start, end, length, size, overlap)
    pieces = pieces_at(text, start, end, separators[0])
    rest = separators[1:]
    if len(pieces) == 1:  # this separator does not occur here: go one level finer
        return split(text, start, end, length, size, overlap, rest)
    return pack(text, pieces, length, size, overlap, lambda p: split(text, *p, length, size, overlap, rest))


def pieces_at(text: str, start: int, end: int, separator: str | re.Pattern) -> list[Span]:
    """Spans of `text[start:end]` cut at a level, after a literal separator, or before a regex match."""
    piece = text[start:end]
    if isinstance(separator, re.Pattern):
        cuts = [m.start() for m in separator.finditer(piece) if m.start() > 0]
    elif separator in LEVELS:
        return shift(LEVELS[separator](piece), start)
    else:
        cuts, found = [], piece.find(separator)
        while found != -1:
            cuts.append(found + len(separator))
            found = piece.find(separator, found + len(separator))
    spans = [trim(piece, a, b) for a, b in zip([0, *cuts], [*cuts, len(piece)])]
    return shift([s for s in spans if s[0] < s[1]], start)
