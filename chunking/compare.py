"""Compare chunking configurations end to end: chunk → embed → index → ask → measure.

1. Each configuration (a strategy and its options) chunks every document of the corpus.
2. The chunks are embedded — each on its own (cached on disk), or late (`late.embed_late`) —
   counted in the model's word-pieces (how many pass its 256-piece window and lose their tail),
   and indexed into one Qdrant collection that holds the whole corpus, with BM25 sparse vectors
   for hybrid retrieval. Retrieval is never told which document to look in.
3. Every question is embedded and the top `k` chunks retrieved: dense, hybrid (dense + BM25,
   fused by RRF), or parents (search children, hand over de-duplicated parents).
   `evaluate.span_metrics` scores what is handed over against the reference spans, and
   `recall_at_budget` caps the retrieved tokens so that big chunks do not win by size alone.
4. Each configuration becomes one row: means with bootstrap confidence intervals, and the
   costs (chunks, sizes in tokens and word-pieces, truncation, chunking and embedding time).

Every configuration is checked in full before any runs (`check_configs`): its strategy runs on a
short probe text with stand-in models (`check_options`), so a bad third configuration fails in
milliseconds, named, not after two others have embedded. It runs the same questions against
every configuration; it does not tune anything.
Taught in notebook 12; `make demo` and `python -m chunking evaluate` run it.
"""

from __future__ import annotations

import time
import warnings
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from chunking import bm25, indexing, late, parent_child, retrieval, store
from chunking.embed import model_record
from chunking.evaluate import Question, recall_at_budget, span_metrics, summarize, verify_questions
from chunking.options import check_int
from chunking.registry import STRATEGIES, check_strategy, chunk, takes
from chunking.types import Chunk

METRICS = ("recall", "precision", "iou", "precision_omega", "hit", "reciprocal_rank", "recall_at_budget",
           "retrieved_tokens")
K = 5
BUDGET = 1000  # retrieved tokens


EMBEDDINGS = ("chunk", "late")
RETRIEVALS = ("dense", "hybrid", "parents")
# What `check_options` chunks: a heading, two paragraphs, three sentences — every strategy's steps run on it.
PROBE_TEXT = "# Probe\n\nA first sentence here. A second one follows.\n\nAnother paragraph ends it.\n"
# Options build_index sets itself, and why a configuration may not.
RESERVED = {"doc_id": "each chunk's is its document's", "embedder": "run's embedder is the one used"}


@dataclass(frozen=True)
class Config:
    """One configuration to compare: a strategy, its options, how chunks are embedded and retrieved."""

    name: str
    strategy: str
    options: Mapping[str, object] = field(default_factory=dict)
    embedding: str = "chunk"  # "chunk": each chunk on its own; "late": pooled from the whole document
    retrieval: str = "dense"  # "dense", "hybrid" (dense + BM25, RRF), "parents" (parent_child only)

    def check(self, *, where: str | None = None) -> None:
        """Raise what running this configuration would raise for its fields and options, before it runs.

        A TypeError or ValueError naming the configuration (`where`, default `config 'name'`), the field
        or option, and the value: the strategy's own checks, run by `check_options` (no model, no store).
        """
        try:
            _check_fields(self)
            check_options(self.strategy, self.options)
        except (TypeError, ValueError) as error:
            raise type(error)(f"{where or f'config {self.name!r}'}: {error}") from None

    @property
    def collection_options(self) -> dict:
        return {**self.options, "embedding": self.embedding, "retrieval": self.retrieval}


def check_configs(configs: Sequence[Config]) -> None:
    """Check every configuration in full (`Config.check`), and that their names (which name collections
    and rows) are distinct; one error lists every problem, each naming `configs[i] ('name')`."""
    if isinstance(configs, (str, Config)) or not isinstance(configs, Sequence):
        raise TypeError(f"configs must be a sequence of Config objects, got {type(configs).__name__}")
    if not configs:
        raise ValueError("configs is empty: give at least one configuration")
    problems: list[Exception] = []
    for i, config in enumerate(configs):
        if not isinstance(config, Config):
            problems.append(TypeError(f"configs[{i}] must be a Config, got {type(config).__name__}: {config!r:.60}"))
            continue
        try:
            config.check(where=f"configs[{i}] ({config.name!r})")
        except (TypeError, ValueError) as error:
            problems.append(error)
    named = [(i, c.name) for i, c in enumerate(configs) if isinstance(c, Config)]
    for name, n in Counter(name for _, name in named).items():
        if n > 1:
            where = " and ".join(f"configs[{i}]" for i, other in named if other == name)
            problems.append(ValueError(f"configuration names must be distinct: {where} are all named {name!r}"))
    if problems:
        raise problems[0] if len(problems) == 1 else ValueError(
            f"{len(problems)} problems in configs: " + "; ".join(map(str, problems)))


def check_options(strategy: str, options: Mapping[str, object]) -> None:
    """Raise what `chunk(text, strategy, **options)` would raise for these options; load no model.

    The strategy itself chunks `PROBE_TEXT`, with a stand-in embedder (fixed vectors) where it takes
    one and a stand-in LLM where `provider="llm"` would call one (the default LLM's settings are
    still read from the environment and checked, without a request): every check the strategy makes —
    option names, values, ranges, units, sizes that must fit together — is the one a real run makes,
    not a copy that could drift from it. A few milliseconds (the tokens unit's first use loads its
    encoding once).
    """
    check_strategy(strategy, options)  # the name first: `takes` needs a known strategy
    options = dict(options)
    if takes(strategy, "embedder"):
        options["embedder"] = _StandInEmbedder()
    llm = options.get("llm")
    if takes(strategy, "llm") and options.get("provider") == "llm" and (
            llm is None or callable(getattr(llm, "contextualize", None))):
        if llm is None:  # the default is configured from the environment: a missing model is known now
            from chunking.llm import ChatContextualizer

            ChatContextualizer(cache=False)
        options["llm"] = _StandInLLM()  # never a paid call; a malformed llm is kept for the strategy to refuse
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a deprecation is said once, by the real run
        chunk(PROBE_TEXT, strategy, **options)


@dataclass
class Index:
    """One configuration's indexed corpus: its collection, chunks, and what retrieval needs."""

    name: str
    chunks: list[Chunk]
    handed_over: dict[str, list[tuple[int, int]]]  # spans a search can return, per document (for Ω)
    encoder: bm25.BM25Encoder | None = None


DEFAULT_CONFIGS = (
    Config("fixed-200", "fixed", {"chunk_size": 200}),
    Config("fixed-200-overlap-50", "fixed", {"chunk_size": 200, "chunk_overlap": 50}),
    Config("sentence-200", "sentence", {"chunk_size": 200}),
    Config("paragraph-200", "paragraph", {"chunk_size": 200}),
    Config("paragraph-uncapped", "paragraph", {"chunk_size": None}),
    Config("markdown-200", "markdown", {"chunk_size": 200}),
    Config("sliding-200-0.25", "sliding", {"chunk_size": 200, "overlap_fraction": 0.25}),
    Config("recursive-200", "recursive", {"chunk_size": 200}),
    Config("recursive-400", "recursive", {"chunk_size": 400}),
    Config("semantic-200", "semantic", {"chunk_size": 200}),
    Config("parent-child-128-in-512", "parent_child", {"chunk_size": 128, "parent_size": 512}, retrieval="parents"),
    Config("contextual-heading-200", "contextual", {"chunk_size": 200, "provider": "heading"}),
    Config("contextual-summary-200", "contextual", {"chunk_size": 200, "provider": "summary"}),
    Config("recursive-200-hybrid", "recursive", {"chunk_size": 200}, retrieval="hybrid"),
    Config("contextual-heading-200-hybrid", "contextual", {"chunk_size": 200, "provider": "heading"},
           retrieval="hybrid"),
    Config("recursive-200-late", "recursive", {"chunk_size": 200}, embedding="late"),
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
    """Evaluate every configuration on the same questions; one row per configuration.

    Everything is checked before the first configuration runs: the configurations, `k`, `budget`,
    and every question's references against `documents`."""
    check_configs(configs)
    check_int("k", k)
    check_int("budget", budget, 0)
    if not questions:
        raise ValueError("questions is empty: there is nothing to evaluate")
    verify_questions(questions, documents)
    query_vectors = embedder.embed([q.question for q in questions])
    rows, per_question, all_chunks = [], [], {}
    for config in configs:
        if progress:
            progress(config.name)
        index, costs = build_index(documents, config, embedder=embedder, client=client, corpus=corpus)
        scores = [
            score_question(q, retrieve(client, index, config, q.question, v, k), index.handed_over, budget)
            for q, v in zip(questions, query_vectors)
        ]
        per_question += [{"config": config.name, "question": q.question, "doc": q.references[0].doc,
                          "kind": q.kind, **s} for q, s in zip(questions, scores)]
        rows.append({"config": config.name, "strategy": config.strategy, **costs, **summarize(scores, METRICS)})
        all_chunks[config.name] = index.chunks
    return Result(rows, per_question, all_chunks)


def build_index(documents: Mapping[str, str], config: Config, *, embedder, client, corpus: str):
    """Chunk, embed and index one configuration; return its `Index` and cost columns."""
    options = dict(config.options)
    if takes(config.strategy, "embedder"):
        options["embedder"] = embedder  # model-based strategies share the comparison's embedder
    started = time.perf_counter()
    chunks = [c for doc_id, text in documents.items() for c in chunk(text, config.strategy, doc_id=doc_id, **options)]
    chunk_seconds = time.perf_counter() - started
    embed_seconds = 0.0

    def embed(fresh: list[Chunk]) -> np.ndarray:
        nonlocal embed_seconds
        started = time.perf_counter()
        vectors = embed_chunks(documents, fresh, config.embedding, embedder)
        embed_seconds += time.perf_counter() - started
        return vectors

    # the model is part of the name: two embedders of one size must never share a collection
    name = store.collection_name(corpus, config.strategy, {**config.collection_options, "model": embedder.name})
    store.ensure_collection(client, name, lambda: embedder.dim, model=model_record(embedder))
    encoder, handed_over = None, _spans_by_doc(chunks)
    if config.retrieval == "parents":
        parents = [p for doc_id, text in documents.items()
                   for p in parent_child.parents(text, [c for c in chunks if c.doc_id == doc_id])]
        retrieval.index_parents(client, name, chunks, embed(chunks), parents, mode="payload")
        handed_over = _spans_by_doc(parents)
    else:
        sparse = None
        if config.retrieval == "hybrid":
            encoder = bm25.BM25Encoder().fit([c.embed_text for c in chunks])
            sparse = lambda fresh: encoder.encode_documents([c.embed_text for c in fresh])  # noqa: E731
        indexing.index_chunks(client, name, chunks, embed, sparse=sparse, documents=list(documents))
    tokens = [c.token_count for c in chunks]  # cached on each chunk: the CLI's size plot reuses it
    counter = getattr(embedder, "count_pieces", None)  # optional: an EmbeddingModel need not know its pieces
    pieces = (counter and counter([c.embed_text for c in chunks])) or [0] * len(chunks)
    window = embedder.max_pieces or max(pieces, default=0)
    costs = {
        "chunks": len(chunks),
        "mean_tokens": float(np.mean(tokens)), "max_tokens": int(max(tokens)),
        "mean_pieces": float(np.mean(pieces)), "max_pieces": int(max(pieces)),
        "truncated": float(np.mean([p > window for p in pieces])),
        "chunk_seconds": chunk_seconds, "embed_seconds": embed_seconds,
    }
    return Index(name, chunks, handed_over, encoder), costs


def embed_chunks(documents: Mapping[str, str], chunks: Sequence[Chunk], embedding: str, embedder) -> np.ndarray:
    """Each chunk's vector: its `embed_text` on its own, or (late) pooled from its whole document."""
    if embedding == "chunk":
        return embedder.embed([c.embed_text for c in chunks])
    by_doc: dict[str, list[int]] = {}
    for i, c in enumerate(chunks):
        by_doc.setdefault(c.doc_id, []).append(i)
    vectors = np.zeros((len(chunks), embedder.dim), dtype=np.float32)
    for doc_id, positions in by_doc.items():
        vectors[positions] = late.embed_late(documents[doc_id], [chunks[i] for i in positions], embedder=embedder)
    return vectors


def retrieve(client, index: Index, config: Config, question: str, vector: np.ndarray, k: int) -> list[Chunk]:
    """What one question hands to the LLM: the top `k` chunks, or the top `k` distinct parents."""
    if config.retrieval == "parents":
        return [hit.parent for hit in retrieval.search_parents(client, index.name, vector, k=k, mode="payload")]
    if config.retrieval == "hybrid":
        hits = bm25.hybrid_search(client, index.name, vector, index.encoder.encode_query(question), k=k)
    else:
        hits = store.search(client, index.name, vector, k=k)
    return [hit.chunk for hit in hits]


def _spans_by_doc(chunks: Sequence[Chunk]) -> dict[str, list[tuple[int, int]]]:
    spans: dict[str, list[tuple[int, int]]] = {}
    for c in chunks:
        spans.setdefault(c.doc_id, []).append((c.start, c.end))
    return spans


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
    question: Question, retrieved_chunks: Sequence[Chunk], spans_by_doc: Mapping[str, Sequence[tuple[int, int]]],
    budget: int,
) -> dict:
    """Span metrics of what one question retrieved (and, from all retrievable spans, the best: Ω)."""
    references = [(r.doc, r.start, r.end) for r in question.references]
    retrieved = [(c.doc_id, c.start, c.end) for c in retrieved_chunks]
    scores = span_metrics(references, retrieved, spans_by_doc)
    tokens = [c.token_count for c in retrieved_chunks]
    scores["recall_at_budget"] = recall_at_budget(references, retrieved, tokens, budget)
    scores["retrieved_tokens"] = float(sum(tokens))
    return scores


def _check_fields(config: Config) -> None:
    """The fields of a configuration, and the options `build_index` sets itself."""
    if not isinstance(config.name, str) or not config.name.strip():
        raise ValueError(f"name must be a non-empty str, got {config.name!r}")
    if not isinstance(config.options, Mapping):
        raise TypeError(f"options must be a mapping, got {config.options!r:.60}")
    if not isinstance(config.strategy, str) or config.strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {sorted(STRATEGIES)}, got {config.strategy!r}")
    if config.embedding not in EMBEDDINGS:
        raise ValueError(f"embedding must be one of {EMBEDDINGS}, got {config.embedding!r}")
    if config.retrieval not in RETRIEVALS or (config.retrieval == "parents") != (config.strategy == "parent_child"):
        raise ValueError(f"retrieval must be one of {RETRIEVALS} ('parents' exactly for parent_child), "
                         f"got {config.retrieval!r}")
    if reserved := [name for name in RESERVED if name in config.options]:
        raise ValueError(f"options must not set {reserved[0]!r} ({RESERVED[reserved[0]]}), "
                         f"got {reserved[0]}={config.options[reserved[0]]!r:.60}")


class _StandInEmbedder:
    """An `EmbeddingModel` that loads nothing: `check_options` needs vectors of the right shape, not meaning."""

    name = "stand-in"
    dim = 2
    max_pieces = None

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        angles = np.arange(len(texts), dtype=np.float64)  # each text its own direction: some distances > 0
        return np.stack([np.cos(angles), np.sin(angles)], axis=1).astype(np.float32)


class _StandInLLM:
    """A contextualizer that calls no model."""

    def contextualize(self, document: str, chunk: str) -> str:
        return ""
