"""Compare chunking configurations end to end: chunk → embed → index → ask → measure.

1. Each configuration (a strategy and its options) chunks every document of the corpus.
2. The chunks are embedded (cached on disk), counted in the model's word-pieces (how many pass
   its 256-piece window and lose their tail), and indexed into one Qdrant collection that holds
   the whole corpus — retrieval is never told which document to look in.
3. Every question is embedded and the top `k` chunks retrieved; `evaluate.span_metrics` scores
   them against the reference spans, and `recall_at_budget` caps the retrieved tokens so that
   big chunks do not win by size alone.
4. Each configuration becomes one row: means with bootstrap confidence intervals, and the
   costs (chunks, sizes in tokens and word-pieces, truncation, chunking and embedding time).

It runs the same questions against every configuration; it does not tune anything.
Taught in notebook 11; `make demo` and `python -m chunking evaluate` run it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from chunking import STRATEGIES, chunk, store
from chunking.evaluate import Question, recall_at_budget, span_metrics, summarize
from chunking.tokens import count_tokens_many
from chunking.types import Chunk

METRICS = ("recall", "precision", "iou", "precision_omega", "hit", "reciprocal_rank", "recall_at_budget",
           "retrieved_tokens")
K = 5
BUDGET = 1000  # retrieved tokens


@dataclass(frozen=True)
class Config:
    """One configuration to compare: a name, a strategy, and its options."""

    name: str
    strategy: str
    options: Mapping[str, object] = field(default_factory=dict)


DEFAULT_CONFIGS = (
    Config("fixed-200", "fixed", {"chunk_size": 200}),
    Config("fixed-200-overlap-50", "fixed", {"chunk_size": 200, "chunk_overlap": 50}),
    Config("sentence-200", "sentence", {"chunk_size": 200}),
    Config("paragraph-200", "paragraph", {"chunk_size": 200}),
    Config("paragraph-uncapped", "paragraph", {"chunk_size": None}),
    Config("markdown-200", "markdown", {"chunk_size": 200}),
    Config("sliding-200-0.25", "sliding", {"chunk_size": 200, "chunk_overlap": 0.25}),
    Config("recursive-200", "recursive", {"chunk_size": 200}),
    Config("recursive-400", "recursive", {"chunk_size": 400}),
)


@dataclass
class Result:
    """Everything one comparison produced."""

    rows: list[dict]
    per_question: list[dict]
    chunks: dict[str, list[Chunk]]


def run(
    documents: Mapping[str, str],
    questions: Sequence[Question],
    configs: Sequence[Config],
    *,
    embedder,
    client,
    corpus: str = "corpus",
    k: int = K,
    budget: int = BUDGET,
    progress: Callable[[str], None] | None = None,
) -> Result:
    """Evaluate every configuration on the same questions; one row per configuration."""
    for config in configs:
        if config.strategy not in STRATEGIES:
            raise ValueError(f"config {config.name!r}: strategy must be one of {sorted(STRATEGIES)}, "
                             f"got {config.strategy!r}")
    query_vectors = embedder.embed([q.question for q in questions])
    rows, per_question, all_chunks = [], [], {}
    for config in configs:
        if progress:
            progress(config.name)
        chunks, costs = build_index(documents, config, embedder=embedder, client=client, corpus=corpus)
        name = store.collection_name(corpus, config.strategy, dict(config.options))
        spans_by_doc: dict[str, list[tuple[int, int]]] = {}
        for c in chunks:
            spans_by_doc.setdefault(c.doc_id, []).append((c.start, c.end))
        scores = [
            score_question(q, store.search(client, name, v, k=k), spans_by_doc, budget)
            for q, v in zip(questions, query_vectors)
        ]
        per_question += [{"config": config.name, "question": q.question, "doc": q.references[0].doc,
                          "kind": q.kind, **s} for q, s in zip(questions, scores)]
        rows.append({"config": config.name, "strategy": config.strategy, **costs, **summarize(scores, METRICS)})
        all_chunks[config.name] = chunks
    return Result(rows, per_question, all_chunks)


def build_index(documents: Mapping[str, str], config: Config, *, embedder, client, corpus: str):
    """Chunk, embed and index one configuration; return its chunks and cost columns."""
    started = time.perf_counter()
    chunks = [c for doc_id, text in documents.items()
              for c in chunk(text, config.strategy, doc_id=doc_id, **config.options)]
    chunk_seconds = time.perf_counter() - started
    started = time.perf_counter()
    vectors = embedder.embed([c.embed_text for c in chunks])
    embed_seconds = time.perf_counter() - started
    name = store.collection_name(corpus, config.strategy, dict(config.options))
    store.ensure_collection(client, name, vectors.shape[1])
    store.index(client, name, chunks, vectors)
    tokens = count_tokens_many([c.text for c in chunks])
    pieces = embedder.count_pieces([c.embed_text for c in chunks]) or [0] * len(chunks)
    window = embedder.max_pieces or max(pieces, default=0)
    costs = {
        "chunks": len(chunks),
        "mean_tokens": float(np.mean(tokens)), "max_tokens": int(max(tokens)),
        "mean_pieces": float(np.mean(pieces)), "max_pieces": int(max(pieces)),
        "truncated": float(np.mean([p > window for p in pieces])),
        "chunk_seconds": chunk_seconds, "embed_seconds": embed_seconds,
    }
    return chunks, costs


def per_document(per_question: Sequence[Mapping], metrics: Sequence[str] = ("recall", "iou", "hit")) -> list[dict]:
    """Mean metrics per (configuration, document of the first reference), in first-seen order."""
    groups: dict[tuple[str, str], list[Mapping]] = {}
    for row in per_question:
        groups.setdefault((row["config"], row["doc"]), []).append(row)
    return [
        {"config": config, "doc": doc, "questions": len(rows),
         **{m: float(np.mean([r[m] for r in rows])) for m in metrics}}
        for (config, doc), rows in groups.items()
    ]


def score_question(
    question: Question, hits: Sequence[store.Hit], spans_by_doc: Mapping[str, Sequence[tuple[int, int]]],
    budget: int,
) -> dict:
    """Span metrics of one question's hits (and, from all chunk spans, the best possible: Ω)."""
    references = [(r.doc, r.start, r.end) for r in question.references]
    retrieved = [(h.chunk.doc_id, h.chunk.start, h.chunk.end) for h in hits]
    scores = span_metrics(references, retrieved, spans_by_doc)
    tokens = count_tokens_many([h.chunk.text for h in hits])
    scores["recall_at_budget"] = recall_at_budget(references, retrieved, tokens, budget)
    scores["retrieved_tokens"] = float(sum(tokens))
    return scores
