"""Chunking many documents in worker processes: what `chunk_documents(..., workers=N)` runs.

Chunking is pure Python, so one process uses one core whatever its threads do. Given `workers`,
documents go to that many fresh processes in batches of about `BATCH_CHARS` characters, and their
chunks come back in document order. At most two batches per worker are out at a time, so a stream
of documents is read as it is chunked and memory stays flat. On Linux the workers are forked
(ready at once, with the package already imported); elsewhere they are spawned, which imports the
package anew in each, and — as Python's `multiprocessing` always does when it spawns — imports your
script too, so a script there must guard its work with `if __name__ == "__main__":`.

Worth it for strategies that count tokens, from a few thousand documents (10,000 documents of ~2,000
characters: see `benchmarks/many_documents.py` on the benchmarks page). A worker sends back each chunk's
offsets and metadata, not its text, which this process has. By characters, chunking costs less than
sending the documents and rebuilding their chunks, so on two cores one process is faster.

The chunks are the ones `chunk_document` makes in this process (`tests/test_documents.py` holds the
two paths to the same chunks). Strategies given a model (`embedder`) are not sent: a model is
loaded once per process, and semantic chunking is embedding-bound, not chunking-bound.
"""

from __future__ import annotations

import collections
import concurrent.futures
import multiprocessing
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping

from chunking.documents import Document
from chunking.types import Chunk, new_chunk

BATCH_CHARS = 1 << 18  # characters of documents per task: ~0.1 s of chunking, against ~1 ms to send them


def chunk_in_processes(documents: Iterable[Document], strategy: str, options: Mapping, workers: int,
                       chunk_document: Callable[..., list[Chunk]]) -> Iterator[Chunk]:
    """The chunks of `documents`, in order, chunked by `workers` processes with `chunk_document`
    (`chunking.registry.chunk_document`, passed in: it is what calls this)."""
    context = multiprocessing.get_context("fork" if sys.platform == "linux" else "spawn")
    pool = concurrent.futures.ProcessPoolExecutor(workers, mp_context=context)
    pending: collections.deque = collections.deque()
    try:
        for batch in _batches(documents):
            pending.append((batch, pool.submit(chunk_batch, chunk_document, batch, strategy, dict(options))))
            if len(pending) >= 2 * workers:
                yield from _rebuilt(*pending.popleft())
        while pending:
            yield from _rebuilt(*pending.popleft())
    finally:  # also when the caller stops reading early, or a batch failed: nothing left running
        pool.shutdown(wait=True, cancel_futures=True)


def chunk_batch(chunk_document: Callable[..., list[Chunk]], batch: list[Document], strategy: str,
                options: dict) -> list[list[tuple]]:
    """In a worker: the chunks of each document of the batch, as records without their text (the
    parent has the text; sending it back would cost more than chunking it)."""
    return [[(c.start, c.end, c.index, c.strategy, c.context, dict(c.metadata))
             for c in chunk_document(document, strategy, **options)] for document in batch]


def _rebuilt(batch: list[Document], done: concurrent.futures.Future) -> Iterator[Chunk]:
    """The chunks of a batch, from the worker's records and the documents' text."""
    for document, records in zip(batch, done.result()):
        text, doc_id = document.text, document.doc_id
        for start, end, index, name, context, metadata in records:
            yield new_chunk(text[start:end], start, end, index, name, doc_id, context, metadata)


def _batches(documents: Iterable[Document]) -> Iterator[list[Document]]:
    batch, size = [], 0
    for document in documents:
        if not isinstance(document, Document):
            raise TypeError(f"documents must hold chunking.Document objects (see load_document), "
                            f"got {type(document).__name__}")
        batch.append(document)
        size += len(document.text)
        if size >= BATCH_CHARS:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch
