"""The chunk: an exact span of its source, with what is not source text kept beside it.

1. A `Chunk` is a half-open character span `[start, end)` of one source string, and
   `source[chunk.start:chunk.end] == chunk.text` always holds. Trimming whitespace moves
   the offsets; it never edits the text.
2. Text that is not in the source (a heading path, generated context) lives in `context`;
   `embed_text` is what an embedder sees. Offsets stay true either way.
3. `id` is a uuid5 of (document id, strategy, start, end): re-indexing the same chunk gives
   the same vector-store point, so indexing is idempotent. Nothing here is random.
4. `make_chunks` turns a strategy's spans into chunks (`chunking.checks.check_chunks` verifies
   offsets, order, indices, emptiness, coverage and the size bound).
5. `trim` and `shift` move spans: past whitespace, and into the coordinates of a larger text.

It does not store embeddings or scores; those belong to the store and evaluation layers.
Taught in notebook 00.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import Any

from chunking.options import check_text

NAMESPACE = uuid.UUID("6b1f2c1e-9a0e-5d2e-8a43-63686b6e6b73")  # fixed: ids must never change
PREVIEW_CHARS = 40
NO_METADATA: Mapping[str, Any] = MappingProxyType({})  # shared by every chunk without metadata

Span = tuple[int, int]
_NOT_SPACE = re.compile(r"\S")
_TAIL = 16  # trailing whitespace is stripped from a short tail first (see `trim`)


@dataclass(frozen=True, eq=True)
class Chunk:
    """One chunk: `text == source[start:end]`, plus what is not source text beside it."""

    text: str
    start: int
    end: int
    index: int
    strategy: str = ""
    doc_id: str = ""
    context: str = ""
    metadata: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        # Freeze the metadata too, so a chunk can be shared without being changed.
        frozen = MappingProxyType(dict(self.metadata)) if self.metadata else NO_METADATA
        object.__setattr__(self, "metadata", frozen)

    def __reduce__(self):
        """Pickled as its fields, the metadata as a plain dict (pickle cannot take the frozen view):
        how chunks come back from worker processes (`chunking.parallel`)."""
        return Chunk, (self.text, self.start, self.end, self.index, self.strategy, self.doc_id, self.context,
                       dict(self.metadata))

    @property
    def embed_text(self) -> str:
        """What the embedder sees: the context (if any) above the source text."""
        return f"{self.context}\n\n{self.text}" if self.context else self.text

    @property
    def id(self) -> str:
        """Deterministic point id: uuid5 of document id, strategy and offsets."""
        return str(uuid.uuid5(NAMESPACE, f"{self.doc_id}\x1f{self.strategy}\x1f{self.start}\x1f{self.end}"))

    @cached_property
    def token_count(self) -> int:
        """Length of `text` in cl100k_base tokens (counted on first use)."""
        from chunking.tokens import count_tokens

        return count_tokens(self.text)

    def __len__(self) -> int:
        return self.end - self.start

    def __repr__(self) -> str:
        preview = self.text if len(self.text) <= PREVIEW_CHARS else self.text[: PREVIEW_CHARS - 1] + "…"
        extra = f", context={self.context[:PREVIEW_CHARS]!r}" if self.context else ""
        meta = f", metadata={dict(self.metadata)!r}" if self.metadata else ""
        return f"Chunk(index={self.index}, span=({self.start}, {self.end}), text={preview!r}{extra}{meta})"


def make_chunks(
    source: str,
    spans: Iterable[Span],
    *,
    strategy: str,
    doc_id: str = "",
    metadata: Sequence[Mapping[str, Any]] | None = None,
    context: Sequence[str] | None = None,
) -> list[Chunk]:
    """Build chunks from `(start, end)` spans of `source`, numbering them in order."""
    check_text(doc_id, "doc_id")  # it goes into every id, JSON line and payload: valid Unicode only
    return [new_chunk(source[start:end], start, end, i, strategy, doc_id, context[i] if context else "",
                      metadata[i] if metadata else None)
            for i, (start, end) in enumerate(spans)]


def new_chunk(text: str, start: int, end: int, index: int, strategy: str, doc_id: str, context: str,
              metadata: Mapping[str, Any] | None) -> Chunk:
    """`Chunk(text=text, start=start, ...)`, built without the frozen dataclass's `__init__`, which sets
    each field through `object.__setattr__`: under half the time (a megabyte of prose is a thousand
    chunks, 10,000 small documents thirty thousand). tests/test_api.py checks it builds what
    `Chunk(...)` builds."""
    chunk = object.__new__(Chunk)
    chunk.__dict__.update(text=text, start=start, end=end, index=index, strategy=strategy, doc_id=doc_id,
                          context=context, metadata=MappingProxyType(dict(metadata)) if metadata else NO_METADATA)
    return chunk


def trim(text: str, start: int, end: int) -> Span:
    """Shrink `[start, end)` past leading and trailing whitespace (may become empty: `(end, end)`)."""
    if start >= end or not (text[start].isspace() or text[end - 1].isspace()):
        return start, end
    first = _NOT_SPACE.search(text, start, end)  # in C, and no copy of the piece
    if first is None:
        return end, end
    start = first.start()
    if not text[end - 1].isspace():
        return start, end
    near = max(start, end - _TAIL)  # trailing whitespace is short, as a rule: strip a short tail first
    tail = text[near:end].rstrip()
    return (start, near + len(tail)) if tail else (start, start + len(text[start:near].rstrip()))


def shift(spans: list[Span], offset: int) -> list[Span]:
    """Spans of a substring, moved to the coordinates of the text it came from."""
    return [(s + offset, e + offset) for s, e in spans]
