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
5. A `Document` is what a chunk comes from: id, text, title, kind, where its pages start, and your
   own metadata (`check_metadata`: JSON values, valid Unicode, never a key the package sets).
   Reading files into documents is `chunking.load`'s; nothing here reads a file.

It does not store embeddings or scores; those belong to the store and evaluation layers.
Taught in notebook 00.
"""

from __future__ import annotations

import bisect
import functools
import json
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from types import MappingProxyType
from typing import Any

from chunking.options import check_text, one_line

NAMESPACE = uuid.UUID("6b1f2c1e-9a0e-5d2e-8a43-63686b6e6b73")  # fixed: ids must never change
PREVIEW_CHARS = 40
NO_METADATA: Mapping[str, Any] = MappingProxyType({})  # shared by every chunk without metadata

PAGE_SEPARATOR = "\n\n"  # between the pages of a PDF (`chunking.load`), where `Document.pages` counts from
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


def with_metadata(chunk: Chunk, metadata: Mapping[str, Any]) -> Chunk:
    """`dataclasses.replace(chunk, metadata=metadata)`, built as `make_chunks` builds its chunks."""
    return new_chunk(chunk.text, chunk.start, chunk.end, chunk.index, chunk.strategy, chunk.doc_id, chunk.context,
                     metadata)


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


# --- the document a chunk comes from ------------------------------------------------------------------

# What `Document.chunk_metadata` sets itself; your own metadata uses other keys.
DOCUMENT_KEYS = ("title", "source", "kind", "page_start", "page_end")


@dataclass(frozen=True)
class Document:
    """One loaded document: chunk offsets are offsets into `text`.

    `pages` holds where each page starts in `text` (PDF; empty otherwise); `metadata` is your own,
    JSON-ready, and reaches every chunk made by `chunking.chunk_document` and its Qdrant payload.
    """

    doc_id: str
    text: str
    title: str
    path: Path | None = None
    kind: str = "text"  # text | markdown | html | pdf | docx
    pages: tuple[int, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        for name in ("doc_id", "title"):
            check_text(getattr(self, name), name)  # they reach every chunk, its id and its payload
        object.__setattr__(self, "metadata", MappingProxyType(check_metadata(self.metadata)))
        object.__setattr__(self, "pages", tuple(self.pages))

    def __reduce__(self):
        """Pickled as its fields, the metadata as a plain dict (pickle cannot take the frozen view)."""
        return Document, (self.doc_id, self.text, self.title, self.path, self.kind, self.pages, dict(self.metadata))

    def page_range(self, start: int, end: int) -> tuple[int, int] | None:
        """The first and last page (1-based) whose text `text[start:end]` overlaps; None without pages.

        The blank line between two pages is on neither, and an empty page holds no text: a span that
        starts in a separator starts on the next page with text, one that ends in it ends on the page
        before. A span of separators alone is on the page after them.
        """
        if not self.pages:
            return None
        starts, ends, numbers = self._pages_with_text
        if not numbers:
            return 1, 1
        first = numbers[min(bisect.bisect_right(ends, start), len(numbers) - 1)]  # its text ends after start
        last = bisect.bisect_left(starts, max(end, start + 1)) - 1  # the last whose text starts before end
        return first, max(first, numbers[last] if last >= 0 else first)

    @functools.cached_property
    def _pages_with_text(self) -> tuple[list[int], list[int], list[int]]:
        """Where the text of each page that has some starts and ends, and its number (1-based)."""
        ends = [*(s - len(PAGE_SEPARATOR) for s in self.pages[1:]), len(self.text)]
        filled = [(s, e, n) for n, (s, e) in enumerate(zip(self.pages, ends), 1) if e > s]
        return [s for s, _, _ in filled], [e for _, e, _ in filled], [n for _, _, n in filled]

    def chunk_metadata(self, start: int, end: int) -> dict[str, Any]:
        """What a chunk of `text[start:end]` carries of its document: title, source path, kind, its
        pages (PDF), then the document's own metadata."""
        meta: dict[str, Any] = {"title": self.title, "kind": self.kind}
        if self.path is not None:
            meta["source"] = readable_name(self.path, self.path.as_posix())
        if pages := self.page_range(start, end):
            meta["page_start"], meta["page_end"] = pages
        return {**meta, **self.metadata}

    def __repr__(self) -> str:
        title = self.title if len(self.title) <= PREVIEW_CHARS else self.title[: PREVIEW_CHARS - 1] + "…"
        chars = len(self.text)
        pages = f", pages={len(self.pages)}" if self.pages else ""
        meta = f", metadata={dict(self.metadata)!r}" if self.metadata else ""
        return f"Document(doc_id={self.doc_id!r}, kind={self.kind!r}, title={title!r}, chars={chars}{pages}{meta})"


def check_metadata(metadata: object, name: str = "metadata") -> dict[str, Any]:
    """Your metadata as a plain dict: str keys other than `DOCUMENT_KEYS`, JSON values (it goes into
    JSON lines and Qdrant payloads), so it can never overwrite what the package sets."""
    if not isinstance(metadata, Mapping):
        raise TypeError(f"{name} must be a mapping of str keys to JSON values, got {type(metadata).__name__}")
    for key, value in metadata.items():
        if not isinstance(key, str) or not key:
            raise ValueError(f"{name} keys must be non-empty str, got {key!r}")
        if key in DOCUMENT_KEYS:
            raise ValueError(f"{name} key {key!r} is set from the document itself (one of {DOCUMENT_KEYS}); "
                             "use another name")
        try:
            as_json = json.dumps({key: value}, allow_nan=False, ensure_ascii=False)
        except (TypeError, ValueError) as error:
            raise ValueError(f"{name}[{key!r}] must be a JSON value (str, number, bool, None, list, dict), "
                             f"got {one_line(error)}") from None
        try:
            as_json.encode("utf-8")  # JSON lines and the store are UTF-8: a lone surrogate cannot be written
        except UnicodeEncodeError as error:
            raise ValueError(f"{name}[{key!r}] holds a lone surrogate {as_json[error.start]!r}: not valid Unicode; "
                             "decode its source with errors='replace'") from None
    return dict(metadata)


def readable_name(path: Path, name: str | None = None) -> str:
    """A file's name (or `name`, a path made from it) as valid text: bytes that are not UTF-8 (kept by
    the OS as lone surrogates) become U+FFFD, so it can go into a chunk id, JSON and a vector store."""
    return (path.name if name is None else name).encode("utf-8", "surrogateescape").decode("utf-8", "replace")
