"""Late chunking: embed the document first, then pool each chunk's share of its token vectors.

1. Ask the embedder for the vector of every word-piece of the whole document and its character
   span (`token_vectors`: the one thing late chunking needs beyond the embedder interface).
   `chunking.embed.Embedder` runs the transformer over windows of at most `window_pieces` pieces,
   neighbours sharing `overlap_pieces`, each with its own [CLS]/[SEP]; a piece seen twice keeps the
   vector from the window where it sits farther from the edge (`chunking.models.plan_windows`).
2. Per chunk, mean-pool the vectors of the pieces overlapping `[start, end)`; L2-normalise.
   A chunk holding no piece (NULs, zero-width characters: the tokenizer drops them) is
   embedded on its own instead.
3. The pooled vectors go to the embedder's on-disk cache, keyed by the model, the whole document,
   the span and the windows (`Embedder.late_keys`): the same chunks of the same document are not
   computed twice. (Any other token embedder is simply not cached.)

Why: a chunk embedded alone cannot tell what "It" or "the dam" refers to; here every chunk's
vector is computed with its neighbours in view. It is an embedding mode, not a strategy: chunks
from any strategy choose the boundaries. The limit: MiniLM reads 256 pieces, so "the whole
document" is really overlapping 256-piece windows — a few hundred words of context at most, not
the 8k tokens of jina-embeddings-v2 in the late-chunking paper. `chunking/reference/late.py` is
the pooling step alone, to copy. Taught in notebook 11.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from chunking.models import OVERLAP_PIECES, TokenEmbedder, check_embedder
from chunking.options import check_text
from chunking.types import Chunk


def embed_late(
    text: str,
    chunks: Sequence[Chunk],
    *,
    embedder: TokenEmbedder | None = None,
    window_pieces: int | None = None,
    overlap_pieces: int = OVERLAP_PIECES,
    batch_size: int | None = None,
) -> np.ndarray:
    """One L2-normalised vector per chunk, in order, shape `(len(chunks), dim)`.

    `chunks` are spans of `text` from any strategy (they may overlap); `window_pieces` (default: the
    model's window minus [CLS]/[SEP]) and `overlap_pieces` are in the model's word-pieces; `batch_size`
    windows go through the model at a time (default: the embedder's). A piece cut by a chunk boundary
    counts for both chunks. `embedder` is required (`chunking.embed.Embedder()` is the bundled MiniLM).

    >>> from chunking import chunk
    >>> from chunking.embed import Embedder
    >>> text = "The mill stood by the quay. It ground corn for six centuries."
    >>> embed_late(text, chunk(text, "sentence", chunk_size=1, unit="sentences"), embedder=Embedder(cache=False)).shape
    (2, 384)
    """
    text = check_text(text)
    _check_chunks(text, chunks)
    check_embedder(embedder, tokens=True)
    caching = callable(getattr(embedder, "late_keys", None))
    spans = [(c.start, c.end) for c in chunks]
    keys = embedder.late_keys(text, spans, window_pieces, overlap_pieces) if caching else []
    found = embedder.cached(keys) if caching else {}
    if chunks and len(found) == len(set(keys)):
        return np.stack([found[k] for k in keys])
    batches = {} if batch_size is None else {"batch_size": batch_size}
    vectors, spans = embedder.token_vectors(text if chunks else "", window_pieces=window_pieces,
                                            overlap_pieces=overlap_pieces, **batches)
    pooled, unseen = pool(vectors, spans, chunks)
    if unseen:  # chunks of NULs, zero-width characters or stray accents hold no piece: embed each alone
        pooled[unseen] = embedder.embed([chunks[i].embed_text for i in unseen])
    if caching:
        embedder.keep(dict(zip(keys, pooled)))
    return pooled


def token_spans(text: str, *, embedder: TokenEmbedder | None = None) -> list[tuple[int, int]]:
    """Character span of every word-piece of `text`, in order, special tokens excluded.

    >>> from chunking.embed import Embedder
    >>> token_spans("Late chunking", embedder=Embedder(cache=False))
    [(0, 4), (5, 10), (10, 13)]
    """
    text = check_text(text)
    return [(int(a), int(b)) for a, b in check_embedder(embedder, tokens=True).token_spans(text)]


def pool(vectors: np.ndarray, spans: np.ndarray, chunks: Sequence[Chunk]) -> tuple[np.ndarray, list[int]]:
    """Mean of the vectors of the pieces overlapping each chunk, L2-normalised; and the chunks with none."""
    out = np.zeros((len(chunks), vectors.shape[1]), dtype=np.float32)
    unseen = []
    for i, c in enumerate(chunks):
        # Piece spans are in order: the first piece ending after `start` to the last starting before `end`.
        first = int(np.searchsorted(spans[:, 1], c.start, side="right"))
        stop = int(np.searchsorted(spans[:, 0], c.end, side="left"))
        if stop <= first:
            unseen.append(i)
            continue
        mean = vectors[first:stop].mean(axis=0)
        out[i] = mean / max(float(np.linalg.norm(mean)), 1e-12)
    return out, unseen


def _check_chunks(text: str, chunks: Sequence[Chunk]) -> None:
    for i, c in enumerate(chunks):
        if not 0 <= c.start <= c.end <= len(text) or text[c.start : c.end] != c.text:
            raise ValueError(f"chunk {i}: span ({c.start}, {c.end}) is not a span of text whose slice equals "
                             f"chunk.text {c.text[:40]!r}")
