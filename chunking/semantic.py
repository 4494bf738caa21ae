"""Semantic chunking: cut where the meaning of neighbouring sentences shifts, within a hard size bound.

1. Split into sentences (`segment.split_sentences`); embed each once, in one batched call. With
   `similarity_window=w`, a boundary compares the mean vectors of the w sentences on each side.
2. A boundary's distance is 1 − cosine similarity; it is a breakpoint above a threshold: fixed, a
   percentile, mean + k·std, Q3 + k·IQR, a percentile of the gradient, or searched for `target_size`.
3. Sentences between breakpoints are packed up to `chunk_size` as in `sentence` (oversize ones cut at
   words): the bound holds in any unit. Overlap never crosses a breakpoint; `min_chunk_size` merges
   a sliver into its closer neighbour when the bound allows.
4. Each chunk's metadata says why it ended ("breakpoint", "size", "end"), at what distance, and the threshold.

Cost: one embedding per sentence and a model load. Published comparisons often find it no better
than well-tuned fixed-size chunking; `make demo` measures it here. It does not embed windows of text,
read headings, or join topics that are not neighbours. Taught in notebook 07.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from chunking.models import EmbeddingModel, check_embedder, distances
from chunking.options import check_int, check_number, check_text, resolve_minimum, resolve_sizes
from chunking.packing import fallback, merge_small, pack
from chunking.sizers import Bound, Unit, resolve_unit
from chunking.types import Chunk, Span, make_chunks

STRATEGY = "semantic"
FALLBACK = ("words",)  # below a sentence: words, then fixed windows
MODES = ("fixed", "percentile", "std", "iqr", "gradient", "target")
# The threshold's meaning per mode: a distance, a percentile, or a multiple of the spread.
DEFAULT_THRESHOLDS = {"fixed": 0.25, "percentile": 95.0, "std": 1.5, "iqr": 1.5, "gradient": 95.0}
THRESHOLD_RANGES = {"fixed": (0.0, 2.0), "percentile": (0.0, 100.0), "gradient": (0.0, 100.0)}


def chunk(
    text: str,
    *,
    chunk_size: int = 200,
    chunk_overlap: int | float = 0,
    unit: Unit = "tokens",
    threshold_type: str = "percentile",
    threshold: float | None = None,
    similarity_window: int = 1,
    min_chunk_size: int | None = None,
    target_size: int | None = None,
    embedder: EmbeddingModel | None = None,
    doc_id: str = "",
) -> list[Chunk]:
    """Cut `text` between sentences whose meaning differs most; no chunk exceeds `chunk_size` units.

    `threshold` by `threshold_type`: "fixed", a distance (default 0.25, i.e. similarity 0.75);
    "percentile" and "gradient", a percentile (95); "std" and "iqr", a multiple of the spread (1.5);
    "target" searches it, given `target_size` in the unit. `similarity_window` is how many sentences
    on each side of a boundary are compared. `embedder` is required (`chunking.embed.Embedder()` is the
    bundled MiniLM; `chunking.chunk(text, "semantic")` passes it for you).

    >>> from chunking.embed import Embedder
    >>> topic = Embedder(lambda texts: [[t.startswith("Cats"), not t.startswith("Cats")] for t in texts], cache=False)
    >>> text = "Cats purr. Cats nap. Stocks fell. Stocks rose."
    >>> [(c.text, c.metadata["end_reason"]) for c in chunk(text, threshold_type="fixed", embedder=topic)]
    [('Cats purr. Cats nap.', 'breakpoint'), ('Stocks fell. Stocks rose.', 'end')]
    """
    text = check_text(text)
    size, overlap = resolve_sizes(chunk_size, chunk_overlap)
    bound = resolve_unit(unit, sentences=True).bind(text)
    _check_threshold(threshold_type, threshold, target_size)
    min_chunk_size = resolve_minimum(min_chunk_size, size)
    if threshold_type == "target":
        _check_count("target_size", target_size, size)
    check_int("similarity_window", similarity_window)
    check_embedder(embedder)  # after the options: a bad one is named whether or not a model is given
    sentences, dist = distances(text, similarity_window=similarity_window, embedder=embedder)
    if not sentences:
        return []

    def build(ends: np.ndarray) -> list[Span]:  # the chunks that a set of breakpoints gives
        spans = _pack_groups(sentences, ends, bound=bound, size=size, overlap=overlap)
        if min_chunk_size:
            spans = merge_small(spans, bound, size, min_chunk_size, _boundary_distances(spans, sentences, dist))
        return spans

    def mean_size(ends: np.ndarray) -> float:  # what "target" steers
        return float(np.mean(bound.estimate(build(ends))))

    ends, used = breakpoints(dist, threshold_type=threshold_type, threshold=threshold, target_size=target_size,
                             mean_size=mean_size)
    spans = build(ends)
    metadata = _end_metadata(spans, sentences, dist, ends, used)
    return make_chunks(text, spans, strategy=STRATEGY, doc_id=doc_id, metadata=metadata)


def breakpoints(
    dist: np.ndarray,
    *,
    threshold_type: str = "percentile",
    threshold: float | None = None,
    target_size: int | None = None,
    mean_size: Callable[[np.ndarray], float] | None = None,
) -> tuple[np.ndarray, float]:
    """Indices `i` where a chunk ends after sentence `i`, and the threshold used (NaN if unknown).

    Every mode but "target" marks the boundaries whose score is above the threshold; the score is
    the distance, or for "gradient" `np.gradient(dist)` (so that threshold is on the gradient).
    "target" bisects over the distances for the threshold whose `mean_size(indices)` is closest to
    `target_size`; `chunk` supplies `mean_size` (the mean size of the chunks those indices give).

    >>> breakpoints(np.array([0.1, 0.6, 0.2]), threshold_type="fixed")
    (array([1]), 0.25)
    """
    mode = threshold_type
    threshold = _check_threshold(mode, threshold, target_size)
    dist = np.asarray(dist, dtype=np.float64)
    if mode == "target":
        if mean_size is None:
            raise ValueError("threshold_type='target' needs mean_size, a function of the breakpoint indices")
        return _search_threshold(dist, target_size, mean_size)
    if dist.size == 0:
        return np.zeros(0, dtype=np.int64), threshold if mode == "fixed" else math.nan
    score = dist
    if mode == "gradient":  # a single distance has no gradient: nothing rises
        score = np.gradient(dist) if dist.size > 1 else np.zeros_like(dist)
    if mode in ("percentile", "gradient"):
        threshold = float(np.percentile(score, threshold))
    elif mode == "std":
        threshold = float(dist.mean() + threshold * dist.std())
    elif mode == "iqr":
        q1, q3 = np.percentile(dist, [25, 75])
        threshold = float(q3 + threshold * (q3 - q1))
    return np.flatnonzero(score > threshold), threshold


def _search_threshold(
    dist: np.ndarray, target: int, mean_size: Callable[[np.ndarray], float]
) -> tuple[np.ndarray, float]:
    """Bisect over the distinct distances (a higher threshold: fewer, larger chunks); keep the closest."""
    if dist.size == 0:
        return np.zeros(0, dtype=np.int64), math.nan
    candidates = np.unique(dist)  # the largest as threshold gives no breakpoint at all
    tried: dict[int, tuple[np.ndarray, float]] = {}

    def mean_at(k: int) -> float:
        if k not in tried:
            ends = np.flatnonzero(dist > candidates[k])
            tried[k] = (ends, mean_size(ends))
        return tried[k][1]

    lo, hi = 0, len(candidates) - 1
    while hi - lo > 1 and mean_at(lo) < target < mean_at(hi):
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if mean_at(mid) < target else (lo, mid)
    best = min({lo, hi, *tried}, key=lambda k: (abs(mean_at(k) - target), k))
    return tried[best][0], float(candidates[best])


def _pack_groups(sentences: list[Span], ends: np.ndarray, *, bound: Bound, size: int, overlap: int) -> list[Span]:
    """Pack each run of sentences between breakpoints on its own; overlap stays inside a run."""
    split = fallback(bound, size, overlap, FALLBACK)
    cuts = [0, *(ends + 1).tolist(), len(sentences)]
    spans: list[Span] = []
    for first, stop in zip(cuts, cuts[1:]):
        spans += pack(sentences[first:stop], bound, size, overlap, split)
    return spans


def _boundary_distances(spans: list[Span], sentences: list[Span], dist: np.ndarray) -> list[float | None]:
    """The distance at each chunk's end: None inside a sentence (a size cut) or at the text's end."""
    before = {end: i for i, (_, end) in enumerate(sentences[:-1])}  # sentence end -> boundary after it
    return [float(dist[before[end]]) if end in before else None for _, end in spans]


def _end_metadata(
    spans: list[Span], sentences: list[Span], dist: np.ndarray, ends: np.ndarray, threshold: float
) -> list[dict]:
    """Why each chunk ended (at a breakpoint, for size, or at the end of the text) and at what distance."""
    cuts = {sentences[i][1] for i in ends.tolist()}
    used = None if math.isnan(threshold) else round(threshold, 4)
    metadata = []
    for (_, end), distance in zip(spans, _boundary_distances(spans, sentences, dist)):
        reason = "end" if end == sentences[-1][1] else "breakpoint" if end in cuts else "size"
        distance = None if distance is None else round(distance, 4)
        metadata.append({"end_reason": reason, "distance": distance, "threshold": used})
    return metadata


def _check_threshold(mode: str, threshold: object, target_size: object) -> float | None:
    """Validate the mode and its threshold; return the threshold with its default filled in."""
    if not isinstance(mode, str) or mode not in MODES:
        raise ValueError(f"threshold_type must be one of {MODES}, got {mode!r}")
    if mode == "target":
        if threshold is not None:
            raise ValueError(f"threshold is searched with threshold_type='target'; leave it None, got {threshold!r}")
        _check_count("target_size", target_size, None)  # the mean chunk size to aim for, in the unit
        return None
    if target_size is not None:
        raise ValueError(f"target_size is only for threshold_type='target', got target_size={target_size!r}")
    if threshold is None:
        return DEFAULT_THRESHOLDS[mode]
    return check_number(f"threshold for threshold_type={mode!r}", threshold, *THRESHOLD_RANGES.get(mode, ()))


def _check_count(name: str, value: object, size: int | None, *, optional: bool = False) -> None:
    """A positive int (at most `size`, the chunk size, when given), or None when optional."""
    if value is not None or not optional:
        check_int(name if size is None else f"{name} (at most chunk_size)", value, 1, size)
