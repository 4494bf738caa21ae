"""What a strategy asks of a model: the embedding protocol, and distances between neighbouring sentences.

1. `EmbeddingModel`: a `name` that identifies the model, its `dim`, its window `max_pieces` in
   word-pieces (None when unknown), and `embed(texts)` giving L2-normalised float32 vectors in input
   order. `TokenEmbedder` adds what late chunking needs: `token_vectors(text)`, every word-piece's
   vector and character span.
2. `check_embedder(embedder)` refuses anything that is not one, looking its members up without
   running them (a property such as `dim` may load a model). A strategy is always given its model:
   `chunking.embed.Embedder` is the bundled MiniLM, and `chunking.chunk(text, "semantic")` passes it.
3. `distances(text, embedder=...)` embeds every sentence once and gives the cosine distance across
   each boundary between neighbours (with `similarity_window`, between the mean vectors of the
   sentences on each side): what semantic chunking and semantic parents cut by.
4. `plan_windows(n, window, overlap)` plans the overlapping windows a model reads over n word-pieces
   (late chunking): where each window starts and ends, and which pieces it keeps.
Nothing here loads a model; that is `chunking.embed`'s. Taught in notebook 07.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from chunking.options import check_int, check_text
from chunking.segment import split_sentences
from chunking.types import Span

MEMBERS = ("name", "dim", "max_pieces", "embed")  # what an `EmbeddingModel` has
OVERLAP_PIECES = 64  # word-pieces shared by neighbouring windows of a token embedder


class EmbeddingModel(Protocol):
    """What the package asks of an embedder (chunking, retrieval, comparison, the command line)."""

    name: str  # identifies the model: it is part of cache keys and collection names

    @property
    def dim(self) -> int: ...

    @property
    def max_pieces(self) -> int | None: ...  # the window in word-pieces, specials included; None: unknown

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...  # (len(texts), dim), L2-normalised


class TokenEmbedder(EmbeddingModel, Protocol):
    """An embedder that also gives each word-piece's contextual vector and character span (late chunking)."""

    def token_vectors(self, text: str, *, window_pieces: int | None = None, overlap_pieces: int = OVERLAP_PIECES,
                      **options) -> tuple[np.ndarray, np.ndarray]: ...  # (n, dim), (n, 2)

    def token_spans(self, text: str) -> np.ndarray: ...  # (n, 2)


def check_embedder(embedder: object, *, tokens: bool = False) -> EmbeddingModel:
    """`embedder` if it is an `EmbeddingModel` (a `TokenEmbedder` with `tokens`), else a TypeError saying
    what to pass."""
    if embedder is None:
        raise TypeError("embedder is required: pass an EmbeddingModel such as chunking.embed.Embedder() (the "
                        "bundled all-MiniLM-L6-v2), or call chunking.chunk(...), which passes that one")
    missing = object()
    if any(inspect.getattr_static(embedder, m, missing) is missing for m in MEMBERS) or not callable(embedder.embed):
        raise TypeError(f"embedder must be an EmbeddingModel (name, dim, max_pieces and embed(texts)), such as "
                        f"chunking.embed.Embedder over a model folder or a callable; got "
                        f"{type(embedder).__name__}: {embedder!r:.60}")
    if tokens and (not callable(getattr(embedder, "token_vectors", None)) or getattr(embedder, "model", True) is None):
        raise TypeError(f"embedder must give token vectors and their offsets (token_vectors(text)), such as "
                        f"chunking.embed.Embedder over a sentence-transformers model; got {embedder!r:.60}")
    return embedder


def check_texts(texts: object, hint: str = "") -> list[str]:
    """`texts` as a list if it is a sequence of `str` (a single `str` is refused: it is not a list of texts)."""
    if isinstance(texts, str) or not isinstance(texts, Sequence) or not all(isinstance(t, str) for t in texts):
        raise TypeError(f"texts must be a sequence of str{hint}, got {type(texts).__name__}: {texts!r:.60}")
    return list(texts)


def distances(text: str, *, embedder: EmbeddingModel, similarity_window: int = 1) -> tuple[list[Span], np.ndarray]:
    """Sentence spans of `text` and the cosine distance across each of their n − 1 boundaries.

    Every sentence is embedded exactly once, in one call; `similarity_window=w` averages the unit vectors of
    the w sentences on each side of a boundary (vector arithmetic, no further model calls).
    Fewer than two sentences need no model: the distances are then empty.
    """
    text = check_text(text)
    window = check_int("similarity_window", similarity_window)
    check_embedder(embedder)  # a wrong embedder fails before any work, even on one sentence
    sentences = split_sentences(text)
    if len(sentences) < 2:
        return sentences, np.zeros(0)
    vectors = np.asarray(embedder.embed([text[s:e] for s, e in sentences]), dtype=np.float64)
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    n = len(sentences)
    cumulative = np.vstack([np.zeros(vectors.shape[1]), np.cumsum(vectors, axis=0)])
    nxt = np.arange(1, n)  # dist[i] is the boundary before sentence nxt[i] = i + 1
    left = cumulative[nxt] - cumulative[np.maximum(nxt - window, 0)]
    right = cumulative[np.minimum(nxt + window, n)] - cumulative[nxt]
    # Sums point the same way as means, and cosine ignores length: no need to divide.
    norms = np.maximum(np.linalg.norm(left, axis=1) * np.linalg.norm(right, axis=1), 1e-12)
    return sentences, np.clip(1.0 - np.einsum("ij,ij->i", left, right) / norms, 0.0, 2.0)


def plan_windows(n: int, window: int, overlap: int) -> list[tuple[int, int, int, int]]:
    """Windows `(start, end, keep_from, keep_to)` over n pieces; the kept ranges tile `[0, n)`.

    Windows step by `window - overlap`; the last one is moved back to end at n, so every window
    is full (no padding) and neighbours share at least `overlap` pieces. Windows are equally
    wide, so the one whose centre is nearest a piece gives it the most context on both sides:
    the cut between neighbours is halfway through their overlap (ties go to the earlier window).
    """
    if n == 0:
        return []
    starts = [*range(0, n - window, window - overlap), max(n - window, 0)]
    ends = [min(s + window, n) for s in starts]
    cuts = [0, *((e + s + 1) // 2 for e, s in zip(ends, starts[1:])), n]
    return [(s, e, cuts[k], cuts[k + 1]) for k, (s, e) in enumerate(zip(starts, ends))]
