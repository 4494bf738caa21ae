"""The chunk: an exact span of its source, and the checks every strategy must pass.

1. A `Chunk` is a half-open character span `[start, end)` of one source string, and
   `source[chunk.start:chunk.end] == chunk.text` always holds. Trimming whitespace moves
   the offsets; it never edits the text.
2. Text that is not in the source (a heading path, generated context) lives in `context`;
   `embed_text` is what an embedder sees. Offsets stay true either way.
3. `id` is a uuid5 of (document id, strategy, start, end): re-indexing the same chunk gives
   the same vector-store point, so indexing is idempotent. Nothing here is random.
4. `make_chunks` turns a strategy's spans into chunks; `check_chunks` verifies offsets,
   order, indices, emptiness, coverage and (optionally) the size bound.
5. `collector_paused` holds off Python's cyclic garbage collector while a chunker allocates.

It does not store embeddings or scores; those belong to the store and evaluation layers.
Taught in notebook 00.
"""

from __future__ import annotations

import gc
import re
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import Any

NAMESPACE = uuid.UUID("6b1f2c1e-9a0e-5d2e-8a43-63686b6e6b73")  # fixed: ids must never change
PREVIEW_CHARS = 40
_SURROGATE = re.compile("[\ud800-\udfff]")
NO_METADATA: Mapping[str, Any] = MappingProxyType({})  # shared by every chunk without metadata

Span = tuple[int, int]


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
    if not isinstance(doc_id, str):
        raise TypeError(f"doc_id must be str, got {type(doc_id).__name__}: {doc_id!r:.60}")
    if not doc_id.isascii() and (bad := _SURROGATE.search(doc_id)):
        raise ValueError(f"doc_id holds a lone surrogate {bad.group()!r} at offset {bad.start()}: not valid "
                         f"Unicode (it could not go into an id, JSON or a vector store), got {doc_id!r:.60}")
    chunks = []
    for i, (start, end) in enumerate(spans):
        chunks.append(
            Chunk(
                text=source[start:end],
                start=start,
                end=end,
                index=i,
                strategy=strategy,
                doc_id=doc_id,
                context=context[i] if context else "",
                metadata=metadata[i] if metadata else {},
            )
        )
    return chunks


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for a bulk allocation (spans, chunks, parse trees).

    A chunker allocates many small objects that form no cycles and mostly live on. The collector
    would rescan them, and every other object in the process, again and again as the pile grows:
    10 MB chunked about 10% slower per MB than 1 MB in a process with big libraries loaded.
    The switch is process-wide; it is restored to what it was, so a caller's `gc.disable()` holds.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def check_chunks(
    source: str,
    chunks: Sequence[Chunk],
    *,
    chunk_size: int | None = None,
    length: Callable[[str], int] | None = None,
    coverage: bool = True,
) -> None:
    """Raise `ValueError` listing every broken invariant; return `None` when all hold.

    Checks: `source[start:end] == text`; `0 <= start < end <= len(source)`; starts and ends
    non-decreasing; indices `0..n-1`; no whitespace-only chunk; with `coverage`, every
    non-whitespace character of `source` inside some chunk; with `chunk_size` and `length`,
    `length(text) <= chunk_size` for every chunk but one of a single code point (the documented
    exception: a code point that alone measures more than `chunk_size` gets a chunk of its own).
    """
    problems = []
    for i, c in enumerate(chunks):
        if c.index != i:
            problems.append(f"chunk {i}: index is {c.index}, expected {i}")
        if not 0 <= c.start < c.end <= len(source):
            problems.append(f"chunk {i}: span ({c.start}, {c.end}) is empty or outside 0..{len(source)}")
        elif source[c.start : c.end] != c.text:
            problems.append(f"chunk {i}: text differs from source[{c.start}:{c.end}]")
        if not c.text.strip():
            problems.append(f"chunk {i}: text is whitespace only")
        if i and (c.start < chunks[i - 1].start or c.end < chunks[i - 1].end):
            problems.append(f"chunk {i}: span ({c.start}, {c.end}) is out of order")
        if chunk_size is not None and length is not None and len(c.text) > 1 and (n := length(c.text)) > chunk_size:
            problems.append(f"chunk {i}: length {n} exceeds chunk_size={chunk_size}")
    if coverage and (lost := _first_lost_character(source, chunks)) is not None:
        problems.append(f"character {lost} ({source[lost]!r}) is in no chunk")
    if problems:
        shown = "; ".join(problems[:10]) + (f"; … {len(problems) - 10} more" if len(problems) > 10 else "")
        raise ValueError(f"{len(problems)} chunk invariant(s) broken: {shown}")


def _first_lost_character(source: str, chunks: Sequence[Chunk]) -> int | None:
    """Offset of the first non-whitespace character no chunk covers, or None."""
    covered_to = 0
    for c in sorted(chunks, key=lambda c: c.start):
        if c.start > covered_to and source[covered_to : c.start].strip():
            gap = source[covered_to : c.start]
            return covered_to + len(gap) - len(gap.lstrip())
        covered_to = max(covered_to, c.end)
    tail = source[covered_to:]
    if tail.strip():
        return covered_to + len(tail) - len(tail.lstrip())
    return None
