"""Vector store: Qdrant embedded in the process by default, a server or cluster by URL.

1. `connect()` opens Qdrant: at `QDRANT_URL` (with `QDRANT_API_KEY`) when that is set, else
   embedded local mode — in memory (`":memory:"`: notebooks, `chunking demo`) or in a folder
   (`chunking index`, `evaluate --store`).
2. One collection per (corpus, strategy configuration): `collection_name` hashes the options.
   Each point has a named dense vector (`"dense"`, cosine) and a sparse slot (`"bm25"`, with
   Qdrant's IDF modifier) that hybrid retrieval fills.
3. `index` upserts chunks in batches. The point id is the chunk's uuid5 (document, strategy,
   offsets), so indexing the same chunks twice leaves the same points — re-runs and interrupted
   runs are idempotent. The payload holds the offsets and text, and the chunk's metadata (heading
   path, parent span, the document's title, source and pages, your own keys) under `metadata`.
4. `search` returns `Hit`s (the chunk rebuilt from its payload, and the score), best first,
   ties broken by document and offset; an optional filter keeps one document. `hybrid_search`
   fuses the dense and the BM25 top lists by RRF (`chunking.bm25` makes the sparse vectors);
   `search_groups` keeps the best hit per value of a payload field (parent-child's parents).
5. A collection without vectors holds payloads to fetch by id (`put_payloads`, `fetch`).
This is the only module that talks to Qdrant: another vector store means another module like it.

Local mode is brute force and meant for up to ~20k points; past that, point `QDRANT_URL` at a
server — the code does not change. Taught in notebooks 00 and 14.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import math
import os
import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from chunking import deadline
from chunking.options import check_int, check_number, one_line
from chunking.types import Chunk

DENSE = "dense"
SPARSE = "bm25"
URL_ENV, KEY_ENV = "QDRANT_URL", "QDRANT_API_KEY"
BATCH_SIZE = 256
Sparse = tuple[list[int], list[float]]  # a sparse vector: sorted term indices and their weights
TIMEOUT = 30.0  # seconds a request to a Qdrant server may take, first byte sent to last byte read
# What a local folder's writes fail with when the disk is full or the folder is not writable
WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EACCES, errno.EPERM})


@dataclass(frozen=True)
class Hit:
    """One search result: the chunk and its similarity score."""

    chunk: Chunk
    score: float


def connect(
    location: str | Path | None = None, *, url: str | None = None, timeout: float = TIMEOUT, use_env: bool = True
):
    """A Qdrant client: `url` or `$QDRANT_URL` if given, else local (`":memory:"` or a folder).

    With `use_env=False` the environment is not consulted: an explicit folder stays a folder.
    For a server, `timeout` is each request's deadline in seconds, from sending it to reading the
    last byte of the answer: a server that answers a byte at a time cannot hold a call forever
    (the HTTP client's own timeouts restart with every byte that arrives).
    """
    from qdrant_client import QdrantClient

    if check_number("timeout", timeout, 0) == 0:  # seconds
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    url = url or (os.environ.get(URL_ENV) if use_env else None)
    if url:
        client = QdrantClient(url=url, api_key=os.environ.get(KEY_ENV), timeout=math.ceil(timeout),
                              transport=deadline.httpx_transport(url, timeout))
        try:
            client.get_collections()
        except Exception as error:  # the client raises many kinds; all mean "not reachable"
            cause = error.__cause__ or error.__context__ or error
            raise ConnectionError(f"cannot reach Qdrant at {url!r}: {one_line(cause, 200)}") from None
        return client
    if location is None or str(location) == ":memory:":
        return QdrantClient(":memory:")
    try:
        return QdrantClient(path=str(location))
    except RuntimeError as error:
        if "already accessed" in str(error):
            raise RuntimeError(
                f"the Qdrant folder {str(location)!r} is open in another process; close it there, "
                "use another folder, or run a Qdrant server and set QDRANT_URL"
            ) from None
        raise _damaged(location, error) from None
    except Exception as error:  # a truncated meta.json or storage.sqlite: json, sqlite3, pickle errors…
        raise _damaged(location, error) from None


def collection_name(corpus: str, strategy: str, options: Mapping[str, object]) -> str:
    """A stable collection name for one corpus and one strategy configuration."""
    digest = hashlib.sha1(json.dumps(options, sort_keys=True, default=str).encode()).hexdigest()[:10]
    return f"{corpus}-{strategy}-{digest}"


def ensure_collection(
    client, name: str, dim: int | Callable[[], int], *, model: Mapping[str, str] | None = None,
    recreate: bool = False
) -> None:
    """Create the collection, or check that an existing one has the same vectors.

    `model` (`chunking.embed.model_record`: name and fingerprint) is recorded in the collection's
    metadata; an existing collection written by another model is an error (see `check_model`), one
    written before models were recorded adopts it. A mismatch is an error, and nothing is deleted
    unless `recreate=True`. `dim` may be a function, asked only when it is needed: a collection that
    records this very model holds its vectors, so re-indexing into it loads no model to learn the size.
    """
    from qdrant_client import models

    exists = client.collection_exists(name)
    if exists and not recreate and model is not None and check_model(client, name, model) is not None:
        return  # written by this model
    dim = dim() if callable(dim) else dim
    if exists:
        vectors = client.get_collection(name).config.params.vectors
        dense = vectors.get(DENSE) if isinstance(vectors, dict) else None
        same = dense is not None and dense.size == dim and dense.distance == models.Distance.COSINE
        if same and not recreate:
            if model is not None and check_model(client, name, model) is None:
                with writing(name):
                    client.update_collection(name, metadata=dict(model))
            return
        if not recreate:
            found = f"size={dense.size}, distance={dense.distance}" if dense else f"{vectors!r:.80}"
            raise ValueError(
                f"collection {name!r} exists with different vectors ({found}; wanted size={dim}, "
                "cosine); pass recreate=True to replace it"
            )
        client.delete_collection(name)
    with writing(name):
        client.create_collection(
            name,
            vectors_config={DENSE: models.VectorParams(size=dim, distance=models.Distance.COSINE)},
            sparse_vectors_config={SPARSE: models.SparseVectorParams(modifier=models.Modifier.IDF)},
            metadata=dict(model) if model is not None else None,
        )


def check_model(client, name: str, model: Mapping[str, str]) -> Mapping[str, str] | None:
    """The model record of collection `name`, after checking that `model` is the same model: the
    same fingerprint where both have one, else the same name. Vectors of two models are not
    comparable even when their sizes agree, so another model is a ValueError naming both. None when
    the collection records no model (written before models were recorded, or by a server that
    keeps no collection metadata)."""
    stored = client.get_collection(name).config.metadata or {}
    if "model" not in stored:
        return None
    both = stored.get("model_sha256") and model.get("model_sha256")
    same = stored["model_sha256"] == model["model_sha256"] if both else stored["model"] == model.get("model")
    if not same:
        raise ValueError(f"collection {name!r} was written by model {_described(stored)}, not by "
                         f"{_described(model)}: use the same model, or index again with recreate")
    return stored


def _described(record: Mapping[str, str]) -> str:
    sha = record.get("model_sha256")
    return f"{record.get('model')!r}" + (f" (sha256 {sha}…)" if sha else "")


def dense_size(client, name: str) -> int:
    """The size of a collection's dense vectors; a missing collection names the ones there are."""
    if not client.collection_exists(name):
        names = sorted(c.name for c in client.get_collections().collections)
        there = f"the collections there are {', '.join(map(repr, names))}" if names else "there are no collections"
        raise ValueError(f"no collection {name!r}; {there}")
    vectors = client.get_collection(name).config.params.vectors
    if not isinstance(vectors, dict) or DENSE not in vectors:
        raise ValueError(f"collection {name!r} was not made by chunking (no {DENSE!r} vector)")
    return vectors[DENSE].size


def changed(client, name: str, chunks: Sequence[Chunk]) -> list[int]:
    """Positions of the chunks whose point is missing or has another payload: only those need writing.

    Worth asking before `index` into a folder: local Qdrant commits every point to disk on its own.
    """
    stored = {}
    for lo in range(0, len(chunks), 1000):
        ids = [c.id for c in chunks[lo : lo + 1000]]
        stored.update({str(p.id): p.payload for p in client.retrieve(name, ids, with_payload=True)})
    return differing(stored, chunks)


def differing(stored: Mapping[str, Mapping], chunks: Sequence[Chunk]) -> list[int]:
    """Positions of the chunks whose point is not in `stored` (point id -> payload) as they are."""
    return [i for i, c in enumerate(chunks) if stored.get(c.id) != payload(c)]


def payloads(client, name: str, doc_ids: Sequence[str]) -> dict[str, dict]:
    """Point id -> payload of every point of these documents (`differing` compares chunks with them)."""
    found, offset = {}, None
    while doc_ids:
        points, offset = client.scroll(name, scroll_filter=_of_documents(doc_ids), limit=1000, offset=offset,
                                       with_payload=True)
        found.update({str(p.id): p.payload for p in points})
        if offset is None:
            break
    return found


def remove_stale(client, name: str, doc_ids: Sequence[str], keep: set[str]) -> int:
    """Delete the points of these documents whose ids are not in `keep` (an edited file's old chunks)."""
    from qdrant_client import models

    if not doc_ids:
        return 0
    # A collection that is mostly these documents is read whole and sorted here: reading it costs at most
    # twice reading theirs (they have `keep`'s points at least), where local Qdrant would match every
    # point against the list of documents one by one (1,000 files: 0.5 M comparisons, 0.6 s).
    whole = client.count(name, exact=True).count <= 2 * len(keep)
    wanted, stale, offset = set(doc_ids), [], None
    while True:
        points, offset = client.scroll(name, scroll_filter=None if whole else _of_documents(doc_ids), limit=1000,
                                       offset=offset, with_payload=["doc_id"] if whole else False)
        stale += [p.id for p in points if str(p.id) not in keep and (not whole or p.payload.get("doc_id") in wanted)]
        if offset is None:
            break
    if stale:
        with writing(name):
            client.delete(name, points_selector=models.PointIdsList(points=stale), wait=True)
    return len(stale)


def index(
    client,
    name: str,
    chunks: Sequence[Chunk],
    vectors: np.ndarray,
    *,
    sparse: Sequence[tuple[list[int], list[float]]] | None = None,
    batch_size: int = BATCH_SIZE,
) -> int:
    """Upsert chunks with their dense (and optional sparse) vectors; return the points written."""
    from qdrant_client import models

    if len(chunks) != len(vectors):
        raise ValueError(f"got {len(chunks)} chunks but {len(vectors)} vectors")
    for lo in range(0, len(chunks), batch_size):
        points = []
        for i in range(lo, min(lo + batch_size, len(chunks))):
            vector: dict = {DENSE: np.asarray(vectors[i], dtype=np.float32).tolist()}
            if sparse is not None and (terms := _sparse_vector(sparse[i])):
                vector[SPARSE] = terms
            points.append(models.PointStruct(id=chunks[i].id, vector=vector, payload=payload(chunks[i])))
        with writing(name):
            client.upsert(name, points=points, wait=True)
    return len(chunks)


def search(client, name: str, vector: np.ndarray, *, k: int = 5, doc_id: str | None = None) -> list[Hit]:
    """The `k` chunks most similar to `vector`, best first; `doc_id` keeps one document."""
    check_int("k", k)
    response = client.query_points(
        name, query=np.asarray(vector, dtype=np.float32).tolist(), using=DENSE, limit=k,
        query_filter=document_filter(doc_id), with_payload=True,
    )
    return ranked(response.points)


def _of_documents(doc_ids: Sequence[str]):
    """A filter for the points of these documents."""
    from qdrant_client import models

    return models.Filter(must=[models.FieldCondition(key="doc_id", match=models.MatchAny(any=list(doc_ids)))])


def document_filter(doc_id: str | None):
    """A payload filter keeping one document, or None."""
    if doc_id is None:
        return None
    from qdrant_client import models

    return models.Filter(must=[models.FieldCondition(key="doc_id", match=models.MatchValue(value=doc_id))])


def ranked(points) -> list[Hit]:
    """Hits from scored points, best first, equal scores ordered by document and offset."""
    hits = [Hit(chunk_from_payload(p.payload), float(p.score)) for p in points]
    return sorted(hits, key=lambda h: rank_key(h.score, h.chunk))


def rank_key(score: float, chunk: Chunk) -> tuple:
    """Best first; scores equal to 6 decimals (they wobble in the last bits) by document and offset."""
    return -round(score, 6), chunk.doc_id, chunk.start


def hybrid_search(
    client, name: str, dense_vector, sparse: Sparse, *, k: int = 5, prefetch_k: int = 50, doc_id: str | None = None
) -> list[Hit]:
    """The `k` best chunks by reciprocal rank fusion (RRF) of the dense and the sparse top `prefetch_k`."""
    from qdrant_client import models

    check_int("k", k)
    check_int("prefetch_k", prefetch_k, k)
    dense = np.asarray(dense_vector, dtype=np.float32).tolist()
    prefetch = [models.Prefetch(query=dense, using=DENSE, limit=prefetch_k)]
    if query := _sparse_vector(sparse):  # a query of stopwords only has no sparse side
        prefetch.append(models.Prefetch(query=query, using=SPARSE, limit=prefetch_k))
    response = client.query_points(name, prefetch=prefetch, query=models.FusionQuery(fusion=models.Fusion.RRF),
                                   limit=k, query_filter=document_filter(doc_id), with_payload=True)
    return ranked(response.points)


def sparse_search(client, name: str, sparse: Sparse, *, k: int = 5, doc_id: str | None = None) -> list[Hit]:
    """The `k` best chunks by the sparse vectors alone; a query with no terms finds nothing."""
    check_int("k", k)
    if not (query := _sparse_vector(sparse)):
        return []
    response = client.query_points(name, query=query, using=SPARSE, limit=k, query_filter=document_filter(doc_id),
                                   with_payload=True)
    return ranked(response.points)


def search_groups(
    client, name: str, vector: np.ndarray, *, group_by: str, k: int = 5, doc_id: str | None = None
) -> list[Hit]:
    """The best hit of each of the `k` best groups (chunks sharing the payload field `group_by`, e.g.
    "metadata.parent_id")."""
    check_int("k", k)
    groups = client.query_points_groups(
        name, query=np.asarray(vector, dtype=np.float32).tolist(), using=DENSE, group_by=group_by, limit=k,
        group_size=1, query_filter=document_filter(doc_id), with_payload=True,
    ).groups
    return [ranked(g.hits)[0] for g in groups]


def put_payloads(client, name: str, chunks: Sequence[Chunk], *, batch_size: int = BATCH_SIZE) -> int:
    """Store chunks as payloads without vectors (fetched by id, never searched); returns how many."""
    from qdrant_client import models

    with writing(name):
        if not client.collection_exists(name):
            client.create_collection(name, vectors_config={})
        for lo in range(0, len(chunks), batch_size):
            points = [models.PointStruct(id=c.id, vector={}, payload=payload(c)) for c in chunks[lo : lo + batch_size]]
            client.upsert(name, points=points, wait=True)
    return len(chunks)


def fetch(client, name: str, ids: Sequence[str]) -> dict[str, Chunk]:
    """The chunks stored under these point ids, by id (ids not found are left out)."""
    return {str(r.id): chunk_from_payload(r.payload) for r in client.retrieve(name, ids=list(ids), with_payload=True)} \
        if ids else {}


def sizes(client, names: Sequence[str]) -> dict[str, int]:
    """Points, and payload characters as JSON, of the collections among `names` that exist."""
    points = chars = 0
    for name in names:
        if not client.collection_exists(name):
            continue
        offset = None
        while True:
            records, offset = client.scroll(name, limit=1000, offset=offset, with_payload=True, with_vectors=False)
            points += len(records)
            chars += sum(len(json.dumps(r.payload, ensure_ascii=False)) for r in records)
            if offset is None:
                break
    return {"points": points, "payload_chars": chars}


PAYLOAD_KEYS = ("doc_id", "start", "end", "index", "text", "strategy", "context")


def payload(chunk: Chunk) -> dict:
    """What Qdrant stores beside the vectors: enough to rebuild the chunk exactly.

    The chunk's own fields at the top, its metadata (a heading path, the document's title, pages,
    your keys…) under `metadata`, so no metadata key can overwrite `text` or an offset. Filter on
    it as `metadata.<key>`.
    """
    metadata = {k: list(v) if isinstance(v, tuple) else v for k, v in chunk.metadata.items()}
    data = {
        "doc_id": chunk.doc_id, "start": chunk.start, "end": chunk.end, "index": chunk.index,
        "text": chunk.text, "strategy": chunk.strategy, "context": chunk.context, "metadata": metadata,
    }
    if _unencodable(json.dumps(data, ensure_ascii=False)):  # refused here, not found when a search reads it back
        field = next(k for k, v in data.items() if _unencodable(json.dumps(v, ensure_ascii=False)))
        raise ValueError(f"chunk {chunk.index} of document {chunk.doc_id!r}: its {field} holds a lone surrogate, "
                         "which is not valid Unicode and cannot be stored")
    return data


def _unencodable(text: str) -> bool:
    """Does `text` hold a lone surrogate (which UTF-8, JSON lines and Qdrant cannot take)?"""
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
        return False
    except UnicodeEncodeError:
        return True


def chunk_from_payload(data: Mapping) -> Chunk:
    """The chunk a payload was made from (lists back to tuples). Payloads written before metadata had
    a key of its own kept it at the top level; those are read too."""
    if isinstance(data.get("metadata"), Mapping):
        extra = data["metadata"]
    else:
        extra = {k: v for k, v in data.items() if k not in PAYLOAD_KEYS}
    metadata = {k: tuple(v) if isinstance(v, list) else v for k, v in extra.items()}
    return Chunk(
        text=data["text"], start=data["start"], end=data["end"], index=data["index"],
        strategy=data["strategy"], doc_id=data["doc_id"], context=data.get("context", ""), metadata=metadata,
    )


@contextlib.contextmanager
def writing(name: str) -> Iterator[None]:
    """Writes to collection `name`: a local folder's full disk or refused write (SQLite's or the file
    system's error, deep inside qdrant-client) becomes one RuntimeError saying so and what to do."""
    try:
        yield
    except (sqlite3.Error, OSError) as error:
        if isinstance(error, OSError) and error.errno not in WRITE_ERRNOS:
            raise
        raise RuntimeError(f"cannot write to collection {name!r} ({type(error).__name__}: {one_line(error, 160)}): "
                           "free disk space or make the Qdrant folder writable, then run again (what was written "
                           "before stays)") from None


def _damaged(location: str | Path, error: BaseException) -> RuntimeError:
    return RuntimeError(f"the Qdrant folder {str(location)!r} cannot be opened, it looks damaged "
                        f"({type(error).__name__}: {one_line(error, 200)}); index into a new folder, or delete it")


def _sparse_vector(sparse: Sparse):
    """A Qdrant SparseVector from (indices, values), or None when there are no terms."""
    from qdrant_client import models

    if not (isinstance(sparse, (tuple, list)) and len(sparse) == 2):
        raise TypeError(f"a sparse vector must be (indices, values) as bm25 encodes it, got {sparse!r:.80}")
    indices, values = sparse
    if len(indices) != len(values):
        raise ValueError(f"a sparse vector has {len(indices)} indices but {len(values)} values")
    if not indices:
        return None
    return models.SparseVector(indices=[int(i) for i in indices], values=[float(v) for v in values])
