"""Parent-child retrieval on the bundled corpus: parent modes and sizes, both storage modes.

For each parent mode and size, 128-token children are embedded (all-MiniLM-L6-v2, cached on disk)
and indexed into an in-memory Qdrant once per storage mode. Each of the 192 questions retrieves the
top 5 distinct parents, scored on the parent spans: character recall, IoU and hit, recall within a
1000-token budget, and the tokens handed to the LLM. Also printed: the index's points and payload
characters, the median query time, and how many questions got different parents in the two modes
(should be 0). A "children" row retrieves the top 5 children themselves, for comparison.

    python benchmarks/parent_child_modes.py [--parent-sizes 512,1024] [--modes sections,windows] [--k 5]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from chunking import parent_child, retrieval, store
from chunking.embed import default_embedder
from chunking.evaluate import load_questions, recall_at_budget, span_metrics
from chunking.load import load_corpus

DATA = Path(__file__).resolve().parent.parent / "data"
CHUNK_SIZE = 128
BUDGET = 1000
COLUMNS = ("config", "storage", "children", "parents", "recall", "iou", "hit", f"recall@{BUDGET}", "llm_tokens",
           "points", "payload_chars", "query_ms", "differ")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--parent-sizes", default="512,1024")
    parser.add_argument("--modes", default="sections,windows")
    parser.add_argument("--k", type=int, default=5)
    args = parser.parse_args()
    documents = {d.doc_id: d.text for d in load_corpus(DATA / "corpus")}
    questions = load_questions(DATA / "eval" / "questions.jsonl")
    embedder = default_embedder()
    queries = embedder.embed([q.question for q in questions])
    client = store.connect(":memory:")
    print("| " + " | ".join(COLUMNS) + " |\n|" + "---|" * len(COLUMNS))
    for mode in args.modes.split(","):
        for size in map(int, args.parent_sizes.split(",")):
            for row in run_config(client, documents, questions, queries, embedder, mode, size, args.k):
                print("| " + " | ".join(_cell(row[c]) for c in COLUMNS) + " |", flush=True)


def run_config(client, documents, questions, queries, embedder, mode: str, size: int, k: int) -> list[dict]:
    """Chunk, embed and index one configuration in both storage modes; one row per mode plus children."""
    children, parents = [], []
    for doc_id, text in documents.items():
        mine = parent_child.chunk(text, chunk_size=CHUNK_SIZE, parent_size=size, parent_mode=mode, doc_id=doc_id)
        children += mine
        parents += parent_child.parents(text, mine)
    vectors = embedder.embed([c.embed_text for c in children])
    config = f"{mode}-{CHUNK_SIZE}/{size}"
    rows, found = [], {}
    for storage in retrieval.STORAGE_MODES:
        name = f"pc-{mode}-{size}-{storage}"
        retrieval.index_parents(client, name, children, vectors, parents, mode=storage)
        scores, times, found[storage] = [], [], []
        for question, vector in zip(questions, queries):
            started = time.perf_counter()
            hits = retrieval.search_parents(client, name, vector, k=k, mode=storage)
            times.append(time.perf_counter() - started)
            found[storage].append([h.parent.id for h in hits])
            spans = [(h.parent.doc_id, h.parent.start, h.parent.end) for h in hits]
            scores.append(score(question, spans, [h.parent.token_count for h in hits]))
        rows.append({"config": config, "storage": storage, "children": len(children), "parents": len(parents),
                     **mean(scores), **retrieval.index_size(client, name),
                     "query_ms": 1000 * statistics.median(times), "differ": ""})
    rows[-1]["differ"] = sum(a != b for a, b in zip(found["payload"], found["lookup"]))
    scores, times = [], []
    for question, vector in zip(questions, queries):  # the baseline: the children themselves
        started = time.perf_counter()
        hits = store.search(client, f"pc-{mode}-{size}-lookup", vector, k=k)
        times.append(time.perf_counter() - started)
        spans = [(h.chunk.doc_id, h.chunk.start, h.chunk.end) for h in hits]
        scores.append(score(question, spans, [h.chunk.token_count for h in hits]))
    rows.append({"config": config, "storage": "children", "children": len(children), "parents": "", **mean(scores),
                 "points": "", "payload_chars": "", "query_ms": 1000 * statistics.median(times), "differ": ""})
    return rows


def score(question, spans, tokens) -> dict:
    references = question.spans
    metrics = span_metrics(references, spans)
    return {"recall": metrics["recall"], "iou": metrics["iou"], "hit": metrics["hit"],
            f"recall@{BUDGET}": recall_at_budget(references, spans, tokens, BUDGET), "llm_tokens": sum(tokens)}


def mean(rows: list[dict]) -> dict:
    return {key: statistics.fmean(row[key] for row in rows) for key in rows[0]}


def _cell(value) -> str:
    if isinstance(value, float):
        return f"{value:.1f}" if value >= 10 else f"{value:.3f}"
    return f"{value:,}" if isinstance(value, int) else str(value)


if __name__ == "__main__":
    main()
