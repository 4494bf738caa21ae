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
   `sparse_search` ranks by BM25 alone.

It does not segment Thai, Lao or Khmer (a run stays one token) or know phrases. Taught in notebook 09.

>>> encoder = BM25Encoder().fit(["the cat sat", "a dog"])
>>> encoder.encode_query("Cat cat sat?") == encoder.encode_query("sat cat")
True
"""

from __future__ import annotations

import functools
import hashlib
import re
import sys
import unicodedata
from collections import Counter
from collections.abc import Sequence

import numpy as np

from chunking import store

Sparse = tuple[list[int], list[float]]  # (indices, values), indices unique

STOPWORDS = frozenset(
    "a about above after again against all am an and any are as at be because been before being below between "
    "both but by can could did do does doing down during each few for from further had has have having he her "
    "here hers herself him himself his how i if in into is it its itself just me more most my myself no nor not "
    "of off on once only or other our ours ourselves out over own same she should so some such than that the "
    "their theirs them themselves then there these they this those through to too under until up very was we "
    "were what when where which while who whom why will with would you your yours yourself yourselves".split()
)
# Kana and CJK ideographs: scripts written without spaces between words.
CJK = "\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
_CJK_RUN = re.compile(f"([{CJK}]+)|([^{CJK}]+)")


def tokenize(text: str) -> list[str]:
    """Lowercase word tokens of `text`, stopwords dropped, CJK runs as character bigrams.

    >>> tokenize("The E-4471 error: ef_search is 64, not 128!")
    ['e', '4471', 'error', 'ef_search', '64', '128']
    >>> tokenize("抹茶の点て方")
    ['抹茶', '茶の', 'の点', '点て', 'て方']
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be str, got {type(text).__name__}")
    tokens = []
    for word in _word_pattern().findall(unicodedata.normalize("NFKC", text).casefold()):
        for cjk, other in _CJK_RUN.findall(word):
            if cjk:
                tokens += [cjk[i : i + 2] for i in range(len(cjk) - 1)] or [cjk]
            elif (other := other.strip("_")) and other not in STOPWORDS:
                tokens.append(other)
    return tokens


def term_index(term: str) -> int:
    """A term's sparse index: the first 4 bytes of blake2b(term), a uint32 stable everywhere."""
    return int.from_bytes(hashlib.blake2b(term.encode("utf-8"), digest_size=4).digest(), "little")


class BM25Encoder:
    """Sparse BM25 term weights (IDF left to Qdrant): fit on the corpus, then encode."""

    def __init__(self, k1: float = 1.2, b: float = 0.75) -> None:
        if isinstance(k1, bool) or not isinstance(k1, (int, float)) or k1 < 0:
            raise ValueError(f"k1 must be a number >= 0, got {k1!r}")
        if isinstance(b, bool) or not isinstance(b, (int, float)) or not 0 <= b <= 1:
            raise ValueError(f"b must be a number in [0, 1], got {b!r}")
        self.k1, self.b = float(k1), float(b)
        self.avgdl: float | None = None

    def fit(self, texts: Sequence[str]) -> BM25Encoder:
        """Learn the average document length (in tokens) of `texts`; returns self."""
        lengths = [len(tokenize(t)) for t in _check_texts(texts)]
        self.avgdl = float(np.mean(lengths)) if lengths and any(lengths) else 1.0
        return self

    def encode_documents(self, texts: Sequence[str]) -> list[Sparse]:
        """One sparse vector per text: each term's saturated frequency, length-normalised."""
        if self.avgdl is None:
            raise ValueError("BM25Encoder is not fitted: call fit(texts) before encode_documents")
        vectors = []
        for text in _check_texts(texts):
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
    """The `k` best chunks by reciprocal rank fusion of the dense and BM25 top `prefetch_k`."""
    from qdrant_client import models

    _check_limits(k, prefetch_k)
    dense = np.asarray(dense_vector, dtype=np.float32).tolist()
    prefetch = [models.Prefetch(query=dense, using=store.DENSE, limit=prefetch_k)]
    if sparse := _sparse_vector(sparse_query):  # a query of stopwords only has no BM25 side
        prefetch.append(models.Prefetch(query=sparse, using=store.SPARSE, limit=prefetch_k))
    response = client.query_points(
        name, prefetch=prefetch, query=models.FusionQuery(fusion=models.Fusion.RRF), limit=k,
        query_filter=store.document_filter(doc_id), with_payload=True,
    )
    return store.ranked(response.points)


def sparse_search(client, name: str, sparse_query: Sparse, *, k: int = 5, doc_id: str | None = None) -> list[store.Hit]:
    """The `k` best chunks by BM25 alone; a query with no terms finds nothing."""
    _check_limits(k, k)
    if not (sparse := _sparse_vector(sparse_query)):
        return []
    response = client.query_points(
        name, query=sparse, using=store.SPARSE, limit=k, query_filter=store.document_filter(doc_id),
        with_payload=True,
    )
    return store.ranked(response.points)


def _sparse(weights: dict[str, float]) -> Sparse:
    """Term weights as (indices, values), sorted by index; colliding terms summed."""
    merged: dict[int, float] = {}
    for term, weight in weights.items():
        index = term_index(term)
        merged[index] = merged.get(index, 0.0) + weight
    indices = sorted(merged)
    return indices, [merged[i] for i in indices]


def _sparse_vector(sparse_query: Sparse):
    """A Qdrant SparseVector, or None when the query has no terms."""
    from qdrant_client import models

    if not (isinstance(sparse_query, (tuple, list)) and len(sparse_query) == 2):
        raise TypeError(f"sparse_query must be (indices, values) as encode_query returns, got {sparse_query!r:.80}")
    indices, values = sparse_query
    if len(indices) != len(values):
        raise ValueError(f"sparse_query has {len(indices)} indices but {len(values)} values")
    if not indices:
        return None
    return models.SparseVector(indices=[int(i) for i in indices], values=[float(v) for v in values])


def _check_limits(k: int, prefetch_k: int) -> None:
    for label, value in (("k", k), ("prefetch_k", prefetch_k)):
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError(f"{label} must be a positive int, got {value!r}")
    if prefetch_k < k:
        raise ValueError(f"prefetch_k must be >= k={k}, got {prefetch_k!r}")


def _check_texts(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, str) or not all(isinstance(t, str) for t in texts):
        raise TypeError("texts must be a sequence of str (use encode_query for one string)")
    return list(texts)


@functools.cache
def _word_pattern() -> re.Pattern:
    """Runs of letters, digits, underscores and combining marks (Python's \\w alone splits "हिन्दी")."""
    marks, start = [], None
    for code in range(sys.maxunicode + 2):
        is_mark = code <= sys.maxunicode and unicodedata.category(chr(code))[0] == "M"
        if is_mark and start is None:
            start = code
        elif not is_mark and start is not None:
            marks.append(f"{re.escape(chr(start))}-{re.escape(chr(code - 1))}")
            start = None
    return re.compile(f"[^\\W_][\\w{''.join(marks)}]*")
