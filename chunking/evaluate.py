"""Span-level retrieval metrics: how much of the answer the retrieved chunks hold, in characters.

1. Every span is a half-open character span `[start, end)`; a located span is `(doc, start, end)`,
   and two spans overlap only within the same doc.
2. N = the reference characters some retrieved chunk covers, each counted once. recall = N / Σ|ref|;
   precision = N / Σ|chunk| (chunks that overlap each other count twice);
   IoU = N / (Σ|chunk| + the reference characters no retrieved chunk covers).
3. Precision_Ω = the precision the chunking allows at best: all corpus chunks that overlap a
   reference, unioned, against the reference characters they hold.
4. `recall_at_budget` cuts the ranked list at a token budget (the chunk that crosses it keeps a
   proportional prefix), so big chunks cannot win recall by size alone.
5. `bootstrap_ci` and `summarize` give each metric's mean with a percentile-bootstrap interval.

Definitions follow Chroma's "Evaluating Chunking Strategies for Retrieval" (Smith & Troynikov, 2024),
so numbers compare with its tables; one difference: a chunk that only touches a reference (zero
characters shared) is not counted in Precision_Ω. It does not embed, retrieve, count tokens or round.
The questions and their file format are `chunking.questions`'s (`Question`, `load_questions`, …,
importable from here too). Taught in notebook 00.
"""

from __future__ import annotations

import bisect
import statistics
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from chunking.options import check_int
from chunking.questions import LocatedSpan, Question, Reference, Span, load_questions, verify_questions  # noqa: F401


def span_metrics(
    references: Sequence[LocatedSpan],
    retrieved: Sequence[LocatedSpan],
    corpus_chunks: Mapping[str, Sequence[Span]] | None = None,
) -> dict[str, float]:
    """Recall, precision, IoU, hit and reciprocal rank of one ranked retrieval, from character spans.

    `retrieved` is in rank order. With `corpus_chunks` (every chunk's `(start, end)` per doc, retrieved
    or not), `precision_omega` is added. No retrieved chunks gives zeros, not a division error.
    Σ|ref| is a plain sum, as in the report's code: references that overlap each other cap recall below 1.

    >>> m = span_metrics([("a", 0, 10)], [("a", 5, 15), ("a", 0, 10)])  # [5, 10) retrieved twice
    >>> m["recall"], m["precision"], m["iou"], m["reciprocal_rank"]
    (1.0, 0.5, 0.5, 1.0)
    """
    refs = _located(references, "references")
    if not refs:
        raise ValueError("references is empty: a question needs at least one reference span")
    chunks = _located(retrieved, "retrieved")
    merged_refs = {doc: _merge(spans) for doc, spans in _by_doc(refs).items()}
    found = _covered(merged_refs, chunks)  # N: each reference character once
    ref_total = _total(refs)  # a plain sum, not a union
    chunk_total = _total(chunks)  # a plain sum: overlapping chunks count twice
    uncovered = sum(map(_length, merged_refs.values())) - found  # references unioned first
    rank = _first_hit(merged_refs, chunks)
    metrics = {
        "recall": found / ref_total,
        "precision": found / chunk_total if chunk_total else 0.0,
        "iou": found / (chunk_total + uncovered),  # > 0: at least |∪ references|
        "hit": 1.0 if rank else 0.0,
        "reciprocal_rank": 1 / rank if rank else 0.0,
    }
    if corpus_chunks is not None:
        metrics["precision_omega"] = _precision_omega(merged_refs, corpus_chunks)
    return metrics


def recall_at_budget(
    references: Sequence[LocatedSpan],
    retrieved: Sequence[LocatedSpan],
    token_counts: Sequence[int],
    budget: int,
) -> float:
    """Recall of the ranked chunks that fit in `budget` tokens; the chunk that crosses it counts in part.

    Whole chunks are kept while the running token total stays `<= budget`; the first chunk that would
    pass it keeps its first `len * remaining // tokens` characters; the rest are dropped.

    >>> recall_at_budget([("a", 0, 100)], [("a", 0, 100)], [50], budget=25)
    0.5
    """
    chunks = _located(retrieved, "retrieved")
    if len(token_counts) != len(chunks):
        raise ValueError(f"token_counts has {len(token_counts)} entries but retrieved has {len(chunks)}")
    for i, tokens in enumerate(token_counts):
        check_int(f"token_counts[{i}]", tokens, 0)
    check_int("budget (tokens)", budget, 0)
    return span_metrics(references, _within_budget(chunks, token_counts, budget))["recall"]


def bootstrap_ci(
    values: Sequence[float], *, n_resamples: int = 1000, confidence: float = 0.95, seed: int = 0
) -> tuple[float, float]:
    """Percentile-bootstrap interval for the mean of `values`; the same seed gives the same interval.

    >>> bootstrap_ci([0.5, 0.5, 0.5])
    (0.5, 0.5)
    """
    data = np.asarray(values, dtype=float)
    if data.ndim != 1 or data.size == 0:
        raise ValueError(f"values must be a non-empty sequence of numbers, got {len(data)} value(s)")
    if not np.isfinite(data).all():
        raise ValueError(f"values must be finite, got {data[~np.isfinite(data)][0]!r}")
    check_int("n_resamples", n_resamples)
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1 (exclusive), got {confidence!r}")
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, data.size, size=(n_resamples, data.size))].mean(axis=1)
    tail = (1 - confidence) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return float(low), float(high)


def summarize(
    rows: Sequence[Mapping[str, float]],
    metrics: Sequence[str],
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> dict[str, float]:
    """Each metric's mean over `rows` (one per question) and its bootstrap interval, `{m}_low`/`{m}_high`.

    >>> summarize([{"recall": 1.0}, {"recall": 1.0}], ["recall"])
    {'recall': 1.0, 'recall_low': 1.0, 'recall_high': 1.0}
    """
    if isinstance(metrics, str):
        raise TypeError(f"metrics must be a sequence of metric names, got the string {metrics!r}")
    if not rows:
        raise ValueError("rows is empty: nothing to summarize")
    summary = {}
    for name in metrics:
        missing = [i for i, row in enumerate(rows) if name not in row]
        if missing:
            raise ValueError(f"metric {name!r} is missing from rows {missing[:10]}")
        values = [float(row[name]) for row in rows]
        summary[name] = statistics.fmean(values)
        summary[f"{name}_low"], summary[f"{name}_high"] = bootstrap_ci(
            values, n_resamples=n_resamples, confidence=confidence, seed=seed
        )
    return summary


# --- the metrics' steps --------------------------------------------------------------------------


def _covered(merged_refs: Mapping[str, list[Span]], chunks: Sequence[LocatedSpan]) -> int:
    """N: reference characters inside some chunk of the same doc, each counted once."""
    chunks_by_doc = _by_doc(chunks)
    return sum(
        _length(_intersect(refs, _merge(chunks_by_doc.get(doc, [])))) for doc, refs in merged_refs.items()
    )


def _first_hit(merged_refs: Mapping[str, list[Span]], chunks: Sequence[LocatedSpan]) -> int:
    """1-based rank of the first chunk sharing a character with a reference; 0 if none does."""
    for rank, (doc, start, end) in enumerate(chunks, 1):
        if doc in merged_refs and _overlaps(merged_refs[doc], start, end):
            return rank
    return 0


def _precision_omega(
    merged_refs: Mapping[str, list[Span]], corpus_chunks: Mapping[str, Sequence[Span]]
) -> float:
    """|∪(C ∩ E)| / |∪C ∪ (E not covered by C)| over every corpus chunk C that overlaps a reference."""
    held = total = 0
    for doc, refs in merged_refs.items():
        touching = _merge(span for span in _corpus_spans(corpus_chunks, doc) if _overlaps(refs, *span))
        inside = _length(_intersect(refs, touching))
        held += inside
        total += _length(touching) + _length(refs) - inside  # the chunks, plus the references they miss
    return held / total


def _within_budget(
    chunks: Sequence[LocatedSpan], token_counts: Sequence[int], budget: int
) -> list[LocatedSpan]:
    """The ranked chunks cut at `budget` tokens: whole ones, then a prefix of the one that crosses it."""
    kept, used = [], 0
    for (doc, start, end), tokens in zip(chunks, token_counts):
        if used + tokens <= budget:
            kept.append((doc, start, end))
            used += tokens
            continue
        keep = (end - start) * (budget - used) // tokens  # tokens > 0 here: it pushed the total past budget
        if keep:
            kept.append((doc, start, start + keep))
        break
    return kept


# --- interval arithmetic on sorted spans ----------------------------------------------------------


def _merge(spans: Iterable[Span]) -> list[Span]:
    """Sorted, disjoint spans covering the same characters (touching spans joined)."""
    merged: list[Span] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _intersect(a: list[Span], b: list[Span]) -> list[Span]:
    """Characters in both of two merged span lists, as a merged list (one sweep)."""
    both, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        start, end = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if start < end:
            both.append((start, end))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return both


def _overlaps(merged: list[Span], start: int, end: int) -> bool:
    """Does `[start, end)` share at least one character with a merged span list?"""
    i = bisect.bisect_right(merged, start, key=lambda span: span[1])  # first span ending after `start`
    return i < len(merged) and merged[i][0] < end


def _length(merged: list[Span]) -> int:
    return sum(end - start for start, end in merged)


def _total(spans: Sequence[LocatedSpan]) -> int:
    return sum(end - start for _, start, end in spans)


def _by_doc(spans: Iterable[LocatedSpan]) -> dict[str, list[Span]]:
    grouped: dict[str, list[Span]] = {}
    for doc, start, end in spans:
        grouped.setdefault(doc, []).append((start, end))
    return grouped


# --- input checks ---------------------------------------------------------------------------------


def _located(spans: Sequence[LocatedSpan], name: str) -> list[LocatedSpan]:
    """Check `(doc, start, end)` spans; return them with plain ints."""
    checked = []
    for i, span in enumerate(spans):
        if not (isinstance(span, (tuple, list)) and len(span) == 3 and isinstance(span[0], str)):
            raise TypeError(f"{name}[{i}] must be a (doc, start, end) tuple, got {span!r}")
        checked.append((span[0], *_offsets(span[1:], f"{name}[{i}]")))
    return checked


def _corpus_spans(corpus_chunks: Mapping[str, Sequence[Span]], doc: str) -> list[Span]:
    if doc not in corpus_chunks:
        raise ValueError(f"corpus_chunks has no entry for doc {doc!r}, which a reference is in")
    return [_offsets(span, f"corpus_chunks[{doc!r}][{i}]") for i, span in enumerate(corpus_chunks[doc])]


def _offsets(span: Sequence[int], where: str) -> Span:
    if not (isinstance(span, (tuple, list)) and len(span) == 2 and all(map(_is_int, span))):
        raise TypeError(f"{where} offsets must be two ints (start, end), got {span!r}")
    start, end = int(span[0]), int(span[1])
    if not 0 <= start < end:
        raise ValueError(f"{where} needs 0 <= start < end, got start={start}, end={end}")
    return start, end


def _is_int(value: object) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)
