"""Where the end-to-end time goes: the embedding model's backends side by side, and the cold runs.

1. Throughput: chunks/s of all-MiniLM-L6-v2 on each backend (`torch`: sentence-transformers, the
   plain path; `onnx`: the default; `onnx-int8`) at each batch size, on the same chunks, taken in
   turns (a, b, c, a, b, c, …) so a change in the machine's load hits them alike; embedding cache off.
2. Vectors: the smallest cosine between each backend's vectors and torch's on those chunks; and the
   work: each backend's GFLOP/s (the model's arithmetic on those chunks over its time) beside this
   machine's float32 matrix-multiply speed, which bounds what any float32 backend can reach.
3. Recall: `recursive-200` on the bundled corpus and its 192 questions (top 5), once per backend —
   what int8's moved vectors cost in retrieval.
4. Cold runs (`--cold`): `chunking demo`, and every notebook under nbval, each in a fresh process
   with an empty embedding cache (a new `$CHUNKING_CACHE_DIR` holding only the exported models), on
   torch and on ONNX: the wall-clock times a user waits the first time.

    python benchmarks/embedding.py [--texts 64] [--batch-sizes 8,16,32] [--repeat 3] [--cold]
(`benchmarks/bench.py` runs 1–3 in `make bench`, and 4 with `--cold`.)
"""

from __future__ import annotations

import argparse
import functools
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
BACKENDS = ("torch", "onnx", "onnx-int8")


def throughput(texts: list[str], batch_sizes: list[int], repeat: int, *, timer) -> dict:
    """{"speeds": {(backend, batch): chunks/s}, "cosine": {backend: min cosine to torch}, ...}; `timer` is
    bench.py's `interleaved` (median seconds of each call, taken in turns)."""
    from chunking.embed import Embedder

    models = {b: Embedder(backend=b, cache=False).model for b in BACKENDS}
    for model in models.values():
        model.encode(["load and warm up"])
    calls = {(b, size): functools.partial(models[b].encode, texts, batch_size=size)
             for size in batch_sizes for b in BACKENDS}
    seconds, outputs = timer(calls, repeat)
    speeds = {key: len(texts) / value for key, value in seconds.items()}
    first = batch_sizes[0]
    plain = _unit(outputs[("torch", first)])
    cosine = {b: float((_unit(outputs[(b, first)]) * plain).sum(axis=1).min()) for b in BACKENDS}
    work = model_flops(models["torch"], texts)
    return {"speeds": speeds, "cosine": cosine, "texts": len(texts), "sizes": list(batch_sizes),
            "gflops": {key: work / value / 1e9 for key, value in seconds.items()}, "peak": sgemm_peak()}


def model_flops(model, texts: list[str]) -> float:
    """Floating-point operations the transformer does for `texts`, one at a time (no padding): per layer,
    the four attention projections and the two feed-forward matrices on every word-piece (2·h·(4h + 2i)
    each) and the attention scores and mixing (2·2·L²·h for L pieces). The embeddings, norms, activations
    and pooling add under 2%, and are left out."""
    config = model[0].auto_model.config
    layers, h, i = config.num_hidden_layers, config.hidden_size, config.intermediate_size
    window = model.max_seq_length
    lengths = [min(window, len(ids)) for ids in model.tokenizer(texts)["input_ids"]]
    return float(sum(layers * (2 * n * h * (4 * h + 2 * i) + 4 * n * n * h) for n in lengths))


def sgemm_peak(repeat: int = 20) -> float:
    """This machine's float32 matrix-multiply speed in GFLOP/s, on every core (numpy's BLAS): the best of
    `repeat` products shaped like the model's feed-forward layer (2,048 word-pieces × 384 by 384 × 1,536)."""
    rng = np.random.default_rng(0)
    a = rng.random((2048, 384), dtype=np.float32)
    b = rng.random((384, 1536), dtype=np.float32)
    best = float("inf")
    for _ in range(repeat + 1):
        start = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - start)
    return 2 * 2048 * 384 * 1536 / best / 1e9


def recall(backends: tuple[str, ...] = BACKENDS) -> dict[str, float]:
    """Mean recall@5 of `recursive-200` on the bundled corpus and questions, per backend."""
    from chunking import compare, datasets, store
    from chunking.embed import Embedder
    from chunking.evaluate import load_questions
    from chunking.load import load_corpus

    documents = {d.doc_id: d.text for d in load_corpus(datasets.corpus_dir())}
    questions = load_questions(datasets.questions_path())
    config = next(c for c in compare.DEFAULT_CONFIGS if c.name == "recursive-200")
    found = {}
    for backend in backends:
        client = store.connect(":memory:", use_env=False)
        result = compare.run(documents, questions, [config], embedder=Embedder(backend=backend), client=client)
        found[backend] = float(result.rows[0]["recall"])
    return found


def cold_runs(backends: tuple[str, ...] = ("torch", "onnx")) -> dict[tuple[str, str], float]:
    """Seconds of `chunking demo` and of all notebooks under nbval, each with an empty embedding cache."""
    from chunking.cache import default_cache_dir

    exports = default_cache_dir() / "onnx"
    python = sys.executable
    commands = {"make demo": [python, "-m", "chunking", "demo", "--out", "{tmp}/demo"],
                "notebooks": [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval", "notebooks"]}
    seconds = {}
    for backend in backends:
        for name, command in commands.items():
            with tempfile.TemporaryDirectory() as tmp:
                if exports.is_dir():  # the exported models stay: only the embedding cache is empty
                    shutil.copytree(exports, Path(tmp) / "cache" / "onnx")
                env = {**os.environ, "CHUNKING_CACHE_DIR": f"{tmp}/cache", "CHUNKING_BACKEND": backend}
                start = time.perf_counter()
                done = subprocess.run([part.format(tmp=tmp) for part in command], cwd=ROOT, env=env,
                                      capture_output=True, text=True)
                seconds[(name, backend)] = time.perf_counter() - start
                if done.returncode != 0:
                    raise RuntimeError(f"{name} on {backend} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
                print(f"[embedding] cold {name} on {backend}: {seconds[(name, backend)]:.0f} s", file=sys.stderr)
    return seconds


def _unit(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float64)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=64)
    parser.add_argument("--batch-sizes", default="8,16,32")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cold", action="store_true")
    args = parser.parse_args()
    from chunking import chunk, datasets
    from chunking.load import load_corpus

    text = "\n\n".join(d.text for d in load_corpus(datasets.corpus_dir()))
    texts = [c.text for c in chunk(text, "recursive", chunk_size=200)][: args.texts]
    from bench import interleaved

    result = throughput(texts, [int(b) for b in args.batch_sizes.split(",")], args.repeat, timer=interleaved)
    for (backend, size), speed in result["speeds"].items():
        print(f"{backend:10} batch {size:3}: {speed:6.1f} chunks/s")
    print("min cosine to torch:", result["cosine"])
    print("recall@5, recursive-200:", recall())
    if args.cold:
        print(cold_runs())


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    main()
