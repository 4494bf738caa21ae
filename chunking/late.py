"""Late chunking: embed the document first, then pool each chunk's share of its token vectors.

1. Tokenise the whole document once (fast tokenizer): offsets give each word-piece its characters.
2. Run the transformer over macro-windows of at most `window` pieces, neighbours sharing `overlap`,
   each with its own [CLS]/[SEP]; a piece seen twice keeps the vector from the window where it
   sits farther from the edge, so every piece is used exactly once.
3. Per chunk, mean-pool the vectors of the pieces overlapping `[start, end)`; L2-normalise.
   A chunk holding no piece (NULs, zero-width characters: the tokenizer drops them) is
   embedded on its own instead.

Why: a chunk embedded alone cannot tell what "It" or "the dam" refers to; here every chunk's
vector is computed with its neighbours in view. It is an embedding mode, not a strategy: chunks
from any strategy choose the boundaries. The limit: MiniLM reads 256 pieces, so "the whole
document" is really overlapping 256-piece windows — a few hundred words of context at most, not
the 8k tokens of jina-embeddings-v2 in the late-chunking paper. Not cached. Taught in notebook 10.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from chunking.embed import Embedder, resolve_embedder
from chunking.options import check_text
from chunking.types import Chunk

OVERLAP = 64  # word-pieces shared by neighbouring windows
BATCH_SIZE = 8  # windows per forward pass


def embed_late(
    text: str,
    chunks: Sequence[Chunk],
    *,
    embedder: Embedder | None = None,
    window: int | None = None,
    overlap: int = OVERLAP,
    batch_size: int = BATCH_SIZE,
) -> np.ndarray:
    """One L2-normalised vector per chunk, in order, shape `(len(chunks), dim)`.

    `chunks` are spans of `text` from any strategy (they may overlap); `window` (default: the
    model's window minus [CLS]/[SEP]) and `overlap` are in the model's word-pieces. A piece cut
    by a chunk boundary counts for both chunks.

    >>> from chunking import chunk
    >>> text = "The mill stood by the quay. It ground corn for six centuries."
    >>> embed_late(text, chunk(text, "sentence", chunk_size=1, unit="sentences"), embedder=Embedder(cache=False)).shape
    (2, 384)
    """
    text = check_text(text)
    _check_chunks(text, chunks)
    embedder = resolve_embedder(embedder)
    model = _model(embedder)
    window = _check_options(model, window, overlap, batch_size)
    if not chunks:
        return np.zeros((0, _dim(model)), dtype=np.float32)
    ids, spans = _encode(model, text)
    vectors, unseen = _pool(_token_vectors(model, ids, window, overlap, batch_size), spans, chunks)
    if unseen:  # chunks of NULs, zero-width characters or stray accents hold no piece: embed each alone
        vectors[unseen] = embedder.embed([chunks[i].embed_text for i in unseen])
    return vectors


def token_spans(text: str, *, embedder: Embedder | None = None) -> list[tuple[int, int]]:
    """Character span of every word-piece of `text`, in order, special tokens excluded.

    Characters the tokenizer normalises away (control characters, combining accents,
    zero-width spaces) belong to no piece.

    >>> token_spans("Late chunking", embedder=Embedder(cache=False))
    [(0, 4), (5, 10), (10, 13)]
    """
    text = check_text(text)
    _, spans = _encode(_model(resolve_embedder(embedder)), text)
    return [(int(a), int(b)) for a, b in spans]


def _model(embedder: Embedder):
    if getattr(embedder, "model", None) is None:
        raise TypeError(f"embedder must wrap a sentence-transformers model (late chunking needs token vectors), "
                        f"got {embedder!r:.60}")
    return embedder.model


def _dim(model) -> int:
    """Width of the transformer's token vectors (= MiniLM's sentence vectors: pooling adds no layer)."""
    return int(model[0].auto_model.config.hidden_size)


def _check_options(model, window: int | None, overlap: int, batch_size: int) -> int:
    """Validate the options against the model; return the window in word-pieces."""
    most = model.max_seq_length - model.tokenizer.num_special_tokens_to_add()
    window = most if window is None else window
    if isinstance(window, bool) or not isinstance(window, int) or not 1 <= window <= most:
        raise ValueError(f"window must be an int in 1..{most} (the model's window minus special tokens), "
                         f"got {window!r}")
    if isinstance(overlap, bool) or not isinstance(overlap, int) or not 0 <= overlap < window:
        raise ValueError(f"overlap must be an int with 0 <= overlap < window={window}, got {overlap!r}")
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
        raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
    return window


def _check_chunks(text: str, chunks: Sequence[Chunk]) -> None:
    for i, c in enumerate(chunks):
        if not 0 <= c.start <= c.end <= len(text) or text[c.start : c.end] != c.text:
            raise ValueError(f"chunk {i}: span ({c.start}, {c.end}) is not a span of text whose slice equals "
                             f"chunk.text {c.text[:40]!r}")


def _encode(model, text: str) -> tuple[list[int], np.ndarray]:
    """Word-piece ids of the whole text and their character spans, shape (n, 2)."""
    tokenizer = model.tokenizer
    if not tokenizer.is_fast:
        raise ValueError(f"late chunking needs a fast tokenizer (offset mapping), got {type(tokenizer).__name__}")
    encoded = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, truncation=False)
    return list(encoded["input_ids"]), np.asarray(encoded["offset_mapping"], dtype=np.int64).reshape(-1, 2)


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


def _token_vectors(model, ids: list[int], window: int, overlap: int, batch_size: int) -> np.ndarray:
    """Contextual vector of every piece, shape (n, dim), each taken from the window that keeps it."""
    import torch

    tokenizer, transformer = model.tokenizer, model[0].auto_model
    out = np.zeros((len(ids), _dim(model)), dtype=np.float32)
    plan = plan_windows(len(ids), window, overlap)
    transformer.eval()  # no dropout: the same text always gives the same vectors
    for b in range(0, len(plan), batch_size):
        batch = plan[b : b + batch_size]
        rows = [[tokenizer.cls_token_id, *ids[s:e], tokenizer.sep_token_id] for s, e, _, _ in batch]
        width = max(map(len, rows))
        input_ids = torch.tensor([r + [tokenizer.pad_token_id] * (width - len(r)) for r in rows], device=model.device)
        mask = torch.tensor([[1] * len(r) + [0] * (width - len(r)) for r in rows], device=model.device)
        with torch.inference_mode():
            hidden = transformer(input_ids=input_ids, attention_mask=mask).last_hidden_state.float().cpu().numpy()
        for row, (s, _, keep_from, keep_to) in zip(hidden, batch):
            out[keep_from:keep_to] = row[1 + keep_from - s : 1 + keep_to - s]  # +1 skips [CLS]
    return out


def _pool(vectors: np.ndarray, spans: np.ndarray, chunks: Sequence[Chunk]) -> tuple[np.ndarray, list[int]]:
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
