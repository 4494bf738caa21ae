"""BM25 as sparse vectors for Qdrant, and hybrid search (dense + BM25, fused by rank).

1. `tokenize` lowercases (NFKC, casefold) and cuts words as runs of letters, digits and combining
   marks, so "हिन्दी" and "café" stay whole; `ef_search` keeps its underscore; "E-4471" gives `e`, `4471`.
   Runs of Chinese or Japanese characters (no spaces between words) become overlapping character
   bigrams. A short English stopword list is dropped. No stemming: in hybrid search BM25's job is the
   exact term (an error code, a name, a version); the dense vector already matches inflections.
2. `BM25Encoder.fit` learns the average document length; `encode_documents` gives each term its
   saturated frequency `tf·(k1+1) / (tf + k1·(1 − b + b·dl/avgdl))`. IDF is not computed here:
   the store's sparse slot has Qdrant's `Modifier.IDF`, which applies it from live collection
   statistics. `encode_query` weighs each distinct query term 1.
3. A term's index is the first 4 bytes of its blake2b hash (a uint32), stable across runs and
   machines with no vocabulary to store; terms that collide are summed, so indices are unique.
4. `hybrid_search` fuses a dense and a BM25 prefetch with reciprocal rank fusion (Qdrant's RRF);
   `sparse_search` ranks by BM25 alone. Both ask `chunking.store`, which talks to Qdrant.

It does not segment Thai, Lao or Khmer (a run stays one token) or know phrases. Taught in notebook 10.

>>> encoder = BM25Encoder().fit(["the cat sat", "a dog"])
>>> encoder.encode_query("Cat cat sat?") == encoder.encode_query("sat cat")
True
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence

import numpy as np

from chunking import store
from chunking.models import check_texts
from chunking.options import check_number
from chunking.terms import tokenize

Sparse = tuple[list[int], list[float]]  # (indices, values), indices unique

def term_index(term: str) -> int:
    """A term's sparse index: the first 4 bytes of blake2b(term), a uint32 stable everywhere."""
    return int.from_bytes(hashlib.blake2b(term.encode("utf-8"), digest_size=4).digest(), "little")


class BM25Encoder:
    """Sparse BM25 term weights (IDF left to Qdrant): fit on the corpus, then encode."""

    def __init__(self, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = check_number("k1", k1, 0), check_number("b", b, 0, 1)
        self.avgdl: float | None = None

    def fit(self, texts: Sequence[str]) -> BM25Encoder:
        """Learn the average document length (in tokens) of `texts`; returns self."""
        lengths = [len(tokenize(t)) for t in check_texts(texts, " (use encode_query for one string)")]
        self.avgdl = float(np.mean(lengths)) if lengths and any(lengths) else 1.0
        return self

    def encode_documents(self, texts: Sequence[str]) -> list[Sparse]:
        """One sparse vector per text: each term's saturated frequency, length-normalised."""
        if self.avgdl is None:
            raise ValueError("BM25Encoder is not fitted: call fit(texts) before encode_documents")
        vectors = []
        for text in check_texts(texts, " (use encode_query for one string)"):
            counts = Counter(tokenize(text))
            norm = self.k1 * (1 - self.b + self.b * sum(counts.values()) / self.avgdl)
            vectors.append(_sparse({t: tf * (self.k1 + 1) / (tf + norm) for t, tf in counts.items()}))
        return vectors

    def encode_query(self, text: str) -> Sparse:
        """The query's distinct terms, each with weight 1 (Qdrant multiplies in the IDF)."""
        return _sparse(dict.fromkeys(tokenize(text), 1.0))

    def __repr__(self) -> str:
        return f"BM25Encoder(k1={self.k1}, b={self.b}, avgdl={self.avgdl})"


def hybrid_search(
    client, name: str, dense_vector, sparse_query: Sparse, *, k: int = 5, prefetch_k: int = 50,
    doc_id: str | None = None,
) -> list[store.Hit]:
    """The `k` best chunks by reciprocal rank fusion of the dense and BM25 top `prefetch_k` (`store.hybrid_search`)."""
    return store.hybrid_search(client, name, dense_vector, sparse_query, k=k, prefetch_k=prefetch_k, doc_id=doc_id)


def sparse_search(client, name: str, sparse_query: Sparse, *, k: int = 5, doc_id: str | None = None) -> list[store.Hit]:
    """The `k` best chunks by BM25 alone; a query with no terms finds nothing (`store.sparse_search`)."""
    return store.sparse_search(client, name, sparse_query, k=k, doc_id=doc_id)


def _sparse(weights: dict[str, float]) -> Sparse:
    """Term weights as (indices, values), sorted by index; colliding terms summed."""
    merged: dict[int, float] = {}
    for term, weight in weights.items():
        index = term_index(term)
        merged[index] = merged.get(index, 0.0) + weight
    indices = sorted(merged)
    return indices, [merged[i] for i in indices]
