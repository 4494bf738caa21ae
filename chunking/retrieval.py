"""Retrieval beyond one nearest-neighbour list: parents for children (parent-child chunking).

1. `index_parents` writes the children's vectors and keeps their parents' texts: "payload" copies
   the parent text into every child's payload (one query, a bigger index); "lookup" stores the
   parent id and the parents in a vectorless collection beside (`parents_collection`: a second read,
   a small index).
2. `search_parents` gives the `k` best distinct parents for a query vector: "payload" reads ranked
   children (widening the read until it holds `k` parents) and keeps each parent's best child;
   "lookup" asks Qdrant for the best child of each parent (`search_groups`) and fetches the texts.
   Both give the same parents in the same order.
3. `index_size` and `context_tokens` measure the trade-off: what the index holds, what the LLM reads.
Children come from `chunking.parent_child`; the store is `chunking.store`. Taught in notebook 08.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from chunking import indexing, store
from chunking.options import check_int
from chunking.parent_child import PARENT_STRATEGY
from chunking.types import Chunk

STORAGE_MODES = ("payload", "lookup")
PARENTS_SUFFIX = "-parents"  # the lookup mode's collection of parent texts


@dataclass(frozen=True)
class ParentHit:
    """One retrieved parent, with the score and the child that matched best."""

    parent: Chunk
    score: float
    child: Chunk


def index_parents(
    client, collection: str, children: Sequence[Chunk], vectors: np.ndarray, parent_chunks: Sequence[Chunk],
    *, mode: str = "payload",
) -> int:
    """Index the children's vectors; store parent texts as `mode` says. Returns the points written."""
    _check_mode(mode)
    by_id = {p.id: p for p in parent_chunks}
    if missing := [c.index for c in children if c.metadata.get("parent_id") not in by_id]:
        raise ValueError(f"parent_chunks lacks the parent of children with index {missing[:5]}")
    store.ensure_collection(client, collection, np.asarray(vectors).shape[1])
    embed = indexing.given(children, vectors)
    if mode == "payload":  # the parent text rides along in every child's payload
        children = [dataclasses.replace(c, metadata={**c.metadata, "parent_text": by_id[c.metadata["parent_id"]].text})
                    for c in children]
        return indexing.index_chunks(client, collection, children, embed).written
    used = list({c.metadata["parent_id"]: by_id[c.metadata["parent_id"]] for c in children}.values())
    written = store.put_payloads(client, parents_collection(collection), used)  # fetched by id, never searched
    return indexing.index_chunks(client, collection, children, embed).written + written


def search_parents(
    client, collection: str, vector: np.ndarray, *, k: int = 5, mode: str = "payload", candidates: int = 50,
    doc_id: str | None = None,
) -> list[ParentHit]:
    """The `k` best distinct parents for a query vector, best first (ties by document and offset).

    "payload" reads `candidates` children (more if they hold fewer than `k` parents) and keeps each
    parent's best; "lookup" asks Qdrant for the best child of each of the best `k` parents, then
    fetches those parents' texts. Both give the same parents in the same order.
    """
    _check_mode(mode)
    check_int("k", k)
    check_int("candidates", candidates, k)
    if mode == "payload":
        hits = _best_child_per_parent(client, collection, vector, k, candidates, doc_id)
        found = [ParentHit(_parent_from_payload(h.chunk), h.score, _without_parent_text(h.chunk)) for h in hits]
    else:
        groups = store.search_groups(client, collection, vector, group_by="metadata.parent_id", k=k, doc_id=doc_id)
        best = {h.chunk.metadata["parent_id"]: h for h in groups}
        parents_by_id = store.fetch(client, parents_collection(collection), list(best))
        found = [ParentHit(parent, best[i].score, best[i].chunk) for i, parent in parents_by_id.items()]
    return sorted(found, key=lambda h: store.rank_key(h.score, h.parent))


def parents_collection(collection: str) -> str:
    """Name of the collection holding the parent texts in "lookup" mode."""
    return collection + PARENTS_SUFFIX


def index_size(client, collection: str) -> dict[str, int]:
    """Points and payload characters (as JSON) of a collection and its parents collection, if any."""
    return store.sizes(client, [collection, parents_collection(collection)])


def context_tokens(hits: Sequence[ParentHit]) -> int:
    """Tokens handed to the LLM: the sum of the retrieved parents' cl100k_base tokens."""
    return sum(h.parent.token_count for h in hits)


def _best_child_per_parent(client, collection, vector, k, candidates, doc_id) -> list[store.Hit]:
    """Read ranked children, widening the read until it holds `k` parents or the collection runs out."""
    while True:
        hits = store.search(client, collection, vector, k=candidates, doc_id=doc_id)
        best: dict[str, store.Hit] = {}
        for hit in hits:
            best.setdefault(hit.chunk.metadata["parent_id"], hit)
        if len(best) >= k or len(hits) < candidates:
            return list(best.values())[:k]
        candidates *= 2


def _parent_from_payload(child: Chunk) -> Chunk:
    m = child.metadata
    return Chunk(text=m["parent_text"], start=m["parent_start"], end=m["parent_end"], index=m["parent_index"],
                 strategy=PARENT_STRATEGY, doc_id=child.doc_id)


def _without_parent_text(child: Chunk) -> Chunk:
    return dataclasses.replace(child, metadata={k: v for k, v in child.metadata.items() if k != "parent_text"})


def _check_mode(mode: object) -> None:
    if mode not in STORAGE_MODES:
        raise ValueError(f"mode must be one of {STORAGE_MODES}, got {mode!r}")
