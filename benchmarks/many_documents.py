"""Many small documents: documents per second for each structural strategy, beside the peers' batch paths.

Most real corpora are many documents of a few kilobytes, not one long text, so what a document costs
beyond its characters (checking options, a tokenizer pass, building chunk objects) weighs more than
speed per character. The corpus here: `--documents` documents (default 10,000) of about `--chars`
characters (default 2,000), cut at whitespace from the bundled docs and the `prose` shape of
`shapes.py`, every copy after the first varied as `bench.py` varies its copies (exact copies would
flatter the chunkers that memoise by content).

- ours: `chunking.chunk_documents`, in one process and with `workers` = the cores (`chunking.parallel`).
- the peers, through their own many-texts paths where they have one: chonkie `chunk_batch` (its
  multiprocessing), semchunk's chunker called on the list with `processes` = the cores, semantic-text-
  splitter `chunk_all_indices` (Rust threads), LangChain `create_documents`.

Each case runs `--repeat` times in turns (every case once before any runs again), on a freshly built
chunker; the median is reported.

    python benchmarks/many_documents.py [--documents 10000] [--chars 2000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import inspect
import io
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import bench  # noqa: E402
import shapes  # noqa: E402

from chunking import chunk_documents  # noqa: E402
from chunking.documents import Document  # noqa: E402

CORES = os.cpu_count() or 1
TASKS = {  # our task name -> (strategy, options)
    bench.FIXED: ("fixed", {"chunk_size": 512}),
    bench.FIXED_CHARS: ("fixed", {"chunk_size": 1000, "unit": "characters"}),
    bench.SENTENCE: ("sentence", {"chunk_size": 512}),
    "paragraph, 512 tokens": ("paragraph", {"chunk_size": 512}),
    "markdown, 512 tokens": ("markdown", {"chunk_size": 512}),
    "sliding, 512 tokens, overlap 0.25": ("sliding", {"chunk_size": 512, "overlap_fraction": 0.25}),
    bench.RECURSIVE: ("recursive", {"chunk_size": 512}),
    bench.RECURSIVE_CHARS: ("recursive", {"chunk_size": 1000, "unit": "characters"}),
}


def documents(count: int, chars: int) -> list[str]:
    """`count` texts of about `chars` characters, each cut at whitespace; copies after the first varied."""
    base = shapes.docs() + "\n\n" + shapes.prose()
    pieces, start = [], 0
    while start < len(base):
        end = min(len(base), start + chars)
        space = base.rfind(" ", start + chars // 2, end) if end < len(base) else -1
        end = space if space > start else end
        pieces.append(base[start:end].strip())
        start = end
    pieces = [p for p in pieces if p]
    texts, copy = [], 0
    while len(texts) < count:
        texts += pieces if copy == 0 else [bench.vary(p, seed=copy * 100_003 + k) for k, p in enumerate(pieces)]
        copy += 1
    return texts[:count]


def ours(strategy: str, options: dict, workers: int = 1) -> Callable[[list[str]], list]:
    def run(texts: list[str]) -> list:
        docs = [Document(f"doc-{k}", text, "") for k, text in enumerate(texts)]
        return list(chunk_documents(docs, strategy, workers=workers, **options))

    return run


def peers() -> dict[str, list[tuple[str, Callable[[], Callable[[list[str]], object]]]]]:
    """Task -> [(peer, build)]: each build returns a function of the list of texts."""

    def chonkie(cls_name: str, chunk_size: int | None = None, **options):
        def build():
            chunker = bench.made_chonkie(cls_name, chunk_size, **options)
            quiet = {"show_progress": False} if "show_progress" in inspect.signature(chunker.chunk_batch).parameters \
                else {}
            return lambda texts: chunker.chunk_batch(texts, **quiet)

        return build

    def semchunk(counter, chunk_size: int):
        def build():
            chunker = bench.made_semchunk(counter, chunk_size)
            return lambda texts: chunker(texts, processes=CORES, offsets=True)[0]  # (chunks, offsets) per text

        return build

    def splitter(model: str | None, chunk_size: int):
        return lambda: bench.made_text_splitter(model, chunk_size).chunk_all_indices

    def langchain(cls_name: str, chunk_size: int | None = None):
        return lambda: bench.made_langchain(cls_name, chunk_size).create_documents

    return {
        bench.FIXED: [("chonkie TokenChunker chunk_batch", chonkie("TokenChunker")),
                      ("LangChain TokenTextSplitter create_documents", langchain("TokenTextSplitter"))],
        bench.SENTENCE: [("chonkie SentenceChunker chunk_batch", chonkie("SentenceChunker", chunk_overlap=0))],
        bench.RECURSIVE: [
            ("chonkie RecursiveChunker chunk_batch", chonkie("RecursiveChunker")),
            (f"semchunk, {CORES} processes", semchunk(None, 512)),
            ("semantic-text-splitter chunk_all_indices", splitter("gpt-4", 512)),
            ("LangChain RecursiveCharacterTextSplitter create_documents", langchain("RecursiveCharacterTextSplitter")),
        ],
        bench.RECURSIVE_CHARS: [
            ("chonkie RecursiveChunker chunk_batch", chonkie("RecursiveChunker", chunk_size=1000)),
            (f"semchunk, {CORES} processes", semchunk(len, 1000)),
            ("semantic-text-splitter chunk_all_indices", splitter(None, 1000)),
            ("LangChain RecursiveCharacterTextSplitter create_documents",
             langchain("RecursiveCharacterTextSplitter", 1000)),
        ],
    }


def run(count: int = 10_000, chars: int = 2_000, repeat: int = 3) -> list[dict]:
    """One row per (task, chunker): documents per second (median of `repeat`), and chunks made."""
    texts = documents(count, chars)
    cases = []
    for task, (strategy, options) in TASKS.items():
        cases.append((task, "chunking", lambda s=strategy, o=options: ours(s, o)))
        if CORES > 1:
            cases.append((task, f"chunking, workers={CORES}", lambda s=strategy, o=options: ours(s, o, CORES)))
        cases += [(task, name, build) for name, build in peers().get(task, [])]
    seconds: dict[int, list[float]] = {k: [] for k in range(len(cases))}
    made: dict[int, int] = {}
    errors: dict[int, str] = {}
    for k, (_, _, build) in enumerate(cases):  # warm-up: imports, tokenizer files, worker start-up paths
        try:
            with contextlib.redirect_stderr(io.StringIO()):
                build()(texts[:50])
        except Exception as error:
            errors[k] = f"{type(error).__name__}: {' '.join(str(error).split())[:160]}"
    for _ in range(repeat):
        for k, (_, _, build) in enumerate(cases):
            if k in errors:
                continue
            chunker = build()
            gc.collect()
            with contextlib.redirect_stderr(io.StringIO()):  # chonkie's TokenChunker draws a progress bar
                started = time.perf_counter()
                out = chunker(texts)
                seconds[k].append(time.perf_counter() - started)
            made[k] = sum(len(x) for x in out) if out and isinstance(out[0], list) else len(out)
    rows = []
    for k, (task, name, _) in enumerate(cases):
        row = {"task": task, "chunker": name, "documents": count, "chars": sum(map(len, texts)) // count}
        if k in errors:
            row["error"] = errors[k]
        else:
            row.update(docs_per_s=count / statistics.median(seconds[k]), chunks=made[k])
        rows.append(row)
    return rows


def markdown(rows: list[dict]) -> str:
    """The table, and per task our speed against the fastest peer's."""
    lines = ["| task | chunker | documents/s | chunks | ours ÷ fastest peer |", "|---|---|---|---|---|"]
    for task in dict.fromkeys(r["task"] for r in rows):
        group = [r for r in rows if r["task"] == task]
        best = max((r.get("docs_per_s", 0) for r in group if not r["chunker"].startswith("chunking")), default=0)
        for r in group:
            if "error" in r:
                lines.append(f"| {task} | {r['chunker']} | failed: {r['error']} | | |")
                continue
            ours_row = r["chunker"].startswith("chunking")
            ratio = f"{r['docs_per_s'] / best:.2f}×" if ours_row and best else ""
            lines.append(f"| {task} | {r['chunker']} | {r['docs_per_s']:,.0f} | {r['chunks']:,} | {ratio} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=int, default=10_000)
    parser.add_argument("--chars", type=int, default=2_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rows = run(args.documents, args.chars, args.repeat)
    print(markdown(rows))
    load = os.getloadavg()[0]
    print(f"\n{args.documents:,} documents of about {args.chars:,} characters, {CORES} cores, median of {args.repeat}; "
          f"load average {load:.2f} at the end (1 minute)")


if __name__ == "__main__":
    main()
