"""Contextual retrieval on the bundled corpus: how many top-20 retrieval failures does context remove?

Anthropic's "Introducing Contextual Retrieval" (2024) counts a question as failed when none of its top-20
chunks holds the answer, and reports failures falling by 35% with contextual embeddings and by 49% with
contextual embeddings plus contextual BM25. This asks the same of the 192 questions in `data/eval`, with
all-MiniLM-L6-v2 and 200-token chunks of two base strategies (recursive, markdown):

    (a)  plain dense                 the base strategy as is (markdown already embeds its heading path)
    (a0) markdown, no path, dense    markdown with include_heading_path=False: no context at all
    (b)  heading, dense              contextual, provider "heading"
    (c)  summary, dense              contextual, provider "summary"
    (d)  heading, hybrid             (b) plus BM25 over embed_text, fused with the dense ranking by RRF
    (e)  summary, hybrid             (c) plus BM25 over embed_text, RRF
    (f)  plain, hybrid               (a) plus BM25 over its own embed_text (context's share of (d))
    (g), (h) with --llm              provider "llm" (an OpenAI-compatible endpoint, `chunking.llm`), dense and hybrid

A question fails when no top-20 chunk overlaps a reference span (`span_metrics(...)["hit"]`); recall@5 is
the character recall of the top 5 (as in `make demo`). "ja" counts failures on the Japanese guide, which
MiniLM cannot read, so no context fixes them. "fixed / broken" count questions that (a) failed
and this row finds, and the reverse; p is McNemar's exact test on that pair (with ~20 failures in 192,
a few questions either way is noise).

    python benchmarks/contextual_failures.py [--k 20] [--chunk-size 200] [--llm]
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np

from chunking import bm25, chunk, store
from chunking.embed import Embedder
from chunking.evaluate import load_questions, span_metrics
from chunking.load import load_corpus
from chunking.tokens import count_tokens

ROOT = Path(__file__).resolve().parent.parent
BASES = ("recursive", "markdown")
ROWS = (  # label, name, provider (None: the base strategy alone), base options, hybrid
    ("a", "plain dense", None, {}, False),
    ("a0", "no path, dense", None, {"include_heading_path": False}, False),
    ("b", "heading, dense", "heading", {}, False),
    ("c", "summary, dense", "summary", {}, False),
    ("d", "heading, hybrid", "heading", {}, True),
    ("e", "summary, hybrid", "summary", {}, True),
    ("f", "plain, hybrid", None, {}, True),
)
JAPANESE = "kyoto_tea_guide_ja.md"  # MiniLM reads no Japanese: its questions fail whatever the context
LLM_ROWS = (("g", "llm, dense", "llm", {}, False), ("h", "llm, hybrid", "llm", {}, True))
ANTHROPIC = {"b": "-35%", "d": "-49%"}  # contextual embeddings; plus contextual BM25


def build(documents, base, provider, options, chunk_size, embedder, client):
    """Chunk the corpus one way, embed `embed_text`, index dense and BM25 vectors; return a searcher's parts."""
    chunks = []
    for doc in documents:
        if provider is None:
            chunks += chunk(doc.text, base, chunk_size=chunk_size, doc_id=doc.doc_id, **options)
        else:
            chunks += chunk(doc.text, "contextual", base=base, provider=provider, title=doc.title,
                                       chunk_size=chunk_size, doc_id=doc.doc_id, **options)
    texts = [c.embed_text for c in chunks]
    vectors = embedder.embed(texts)
    encoder = bm25.BM25Encoder().fit(texts)
    name = f"{base}-{provider}-{'-'.join(map(str, options.values()))}"
    store.ensure_collection(client, name, vectors.shape[1], recreate=True)
    store.index(client, name, chunks, vectors, sparse=encoder.encode_documents(texts))
    pieces = embedder.count_pieces(texts)
    costs = {"chunks": len(chunks), "truncated": float(np.mean([p > embedder.max_pieces for p in pieces])),
             "context_tokens": float(np.mean([count_tokens(c.context) for c in chunks]))}
    return name, encoder, costs


def evaluate(questions, query_vectors, client, name, encoder, hybrid, k):
    """Per question: (hit in the top k, character recall of the top 5)."""
    scores = []
    for question, vector in zip(questions, query_vectors):
        if hybrid:
            hits = bm25.hybrid_search(client, name, vector, encoder.encode_query(question.question), k=k)
        else:
            hits = store.search(client, name, vector, k=k)
        retrieved = [(h.chunk.doc_id, h.chunk.start, h.chunk.end) for h in hits]
        scores.append((span_metrics(question.spans, retrieved)["hit"],
                       span_metrics(question.spans, retrieved[:5])["recall"] if retrieved else 0.0))
    return scores


def mcnemar(fixed: int, broken: int) -> float:
    """Exact two-sided McNemar p-value: could the questions fixed and broken be a fair coin's split?"""
    n = fixed + broken
    tail = sum(math.comb(n, i) for i in range(min(fixed, broken) + 1)) / 2**n if n else 1.0
    return min(1.0, 2 * tail)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--k", type=int, default=20)
    parser.add_argument("--chunk-size", type=int, default=200)
    parser.add_argument("--llm", action="store_true", help="add LLM-context rows ($CHUNKING_LLM_MODEL, chunking.llm)")
    args = parser.parse_args()
    documents = load_corpus(ROOT / "data" / "corpus")
    questions = load_questions(ROOT / "data" / "eval" / "questions.jsonl")
    embedder, client = Embedder(), store.connect(":memory:")
    query_vectors = embedder.embed([q.question for q in questions])
    print(f"{len(questions)} questions, {len(documents)} documents, {args.chunk_size}-token chunks, top {args.k}\n")
    print("| base | row | chunks | truncated | context tokens | failures | failure rate | vs (a) "
          "| fixed / broken | p | Anthropic | recall@5 |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for base in BASES:
        built, baseline = {}, None
        for label, title, provider, options, hybrid in ROWS + (LLM_ROWS if args.llm else ()):
            if options and base != "markdown":
                continue
            key = (provider, tuple(options.items()))
            if key not in built:
                built[key] = build(documents, base, provider, options, args.chunk_size, embedder, client)
            name, encoder, costs = built[key]
            scores = evaluate(questions, query_vectors, client, name, encoder, hybrid, args.k)
            failed = [hit == 0 for hit, _ in scores]
            baseline = baseline or failed
            cells = [base, f"({label}) {title}", costs["chunks"], f"{costs['truncated']:.3f}",
                     f"{costs['context_tokens']:.1f}", *compared(failed, baseline, questions),
                     ANTHROPIC.get(label, ""), f"{np.mean([recall for _, recall in scores]):.3f}"]
            print("| " + " | ".join(map(str, cells)) + " |", flush=True)


def compared(failed: list[bool], baseline: list[bool], questions) -> list[str]:
    """Failures (Japanese ones apart), failure rate, change vs (a), fixed / broken vs (a), McNemar p."""
    japanese = sum(f and q.references[0].doc == JAPANESE for f, q in zip(failed, questions))
    fixed = sum(a and not b for a, b in zip(baseline, failed))
    broken = sum(b and not a for a, b in zip(baseline, failed))
    change = (sum(failed) - sum(baseline)) / sum(baseline) if sum(baseline) else 0.0
    return [f"{sum(failed)} ({japanese} ja)", f"{np.mean(failed):.3f}",
            "—" if failed is baseline else f"{change:+.0%}", f"{fixed} / {broken}", f"{mcnemar(fixed, broken):.2f}"]


if __name__ == "__main__":
    main()
