"""The one indexing pipeline: chunks in, points in a Qdrant collection out, only the changes written.

    chunks (a stream, in batches)
      -> skip those whose point the store holds with the same payload     `fresh`
      -> embed the rest, upsert them                                      `write`
    then remove the points of these documents that no chunk has any more  (`chunking.store.remove_stale`)

`index_chunks` runs all of it: `chunking index` (the CLI), `chunking.compare.build_index` and
`chunking.retrieval.index_parents` call it with their own `embed` (a function of the chunks to
write: a model's `embed` of their `embed_text`, late pooling over the whole document, or vectors
computed already). `chunking.ray_index` runs the same steps spread over Ray actors: `fresh` and the
embedding in the model actors, `write` in the writer actors, `remove_stale` in the driver.

In batches of `BATCH` chunks, so memory stays flat in the size of the corpus, and each batch is in
the store before the next is embedded: an interrupted run keeps what it wrote, and a re-run embeds
only the rest. A second run over unchanged documents embeds and writes nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from chunking import store
from chunking.types import Chunk

BATCH = 256  # chunks chunked, embedded and written at a time (the embedder batches again inside)
Embed = Callable[[list[Chunk]], np.ndarray]  # the vectors of these chunks, one row each
SparseEncode = Callable[[list[Chunk]], list]  # their sparse vectors (`chunking.bm25`), one each


@dataclass(frozen=True)
class Indexed:
    """What one run did: the chunks the documents have now, those written, and the stale points removed."""

    chunks: int
    written: int
    stale: int


def index_chunks(
    client,
    collection: str,
    chunks: Iterable[Chunk],
    embed: Embed,
    *,
    sparse: SparseEncode | None = None,
    documents: Sequence[str] | None = None,
    batch_size: int = BATCH,
    progress: Callable[[list[Chunk]], None] | None = None,
) -> Indexed:
    """Write the `chunks` the collection lacks (embedded by `embed`) and, given the ids of the
    `documents` they come from, remove those documents' points that no chunk has any more.

    The collection must exist (`chunking.store.ensure_collection`). `progress` is called with each
    batch once it is in the store.
    """
    keep: set[str] = set()
    written = 0
    for batch in batches(chunks, batch_size):
        keep.update(c.id for c in batch)
        written += write(client, collection, fresh(client, collection, batch), embed, sparse=sparse)
        if progress is not None:
            progress(batch)
    stale = store.remove_stale(client, collection, list(documents), keep) if documents is not None else 0
    return Indexed(len(keep), written, stale)


def fresh(client, collection: str, chunks: Sequence[Chunk]) -> list[Chunk]:
    """The chunks whose point is missing from the collection or holds another payload."""
    return [chunks[i] for i in store.changed(client, collection, chunks)]


def write(client, collection: str, chunks: list[Chunk], embed: Embed, *, sparse: SparseEncode | None = None) -> int:
    """Embed `chunks` and upsert them (with their sparse vectors, if `sparse`); return the points written."""
    if not chunks:
        return 0
    vectors = embed(chunks)
    return store.index(client, collection, chunks, vectors, sparse=sparse(chunks) if sparse else None)


def given(chunks: Sequence[Chunk], vectors: np.ndarray) -> Embed:
    """An `Embed` that looks up vectors computed already: row i belongs to `chunks[i]`."""
    if len(chunks) != len(vectors):
        raise ValueError(f"got {len(chunks)} chunks but {len(vectors)} vectors")
    row = {c.id: i for i, c in enumerate(chunks)}
    return lambda wanted: np.asarray(vectors)[[row[c.id] for c in wanted]]


def batches(items: Iterable, size: int) -> Iterator[list]:
    """Lists of up to `size` items, in order, taken lazily from any iterable."""
    batch = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch
