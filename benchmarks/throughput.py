"""Throughput of every structural strategy on 1 MB and 10 MB of English text, beside tiktoken.

Text is the bundled English documents repeated to size (or `--text FILE`). Each measurement
is the median of `--repeat` runs in this one process; the tiktoken encode floor is timed in
the same run. Prints a markdown table: MB/s, chunks, and the ratio to 1 MB throughput.

    python benchmarks/throughput.py [--sizes 1,10] [--repeat 3] [--text FILE]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from chunking import chunk, get_encoding

CORPUS = Path(__file__).resolve().parent.parent / "data" / "corpus"
CASES = {
    "tiktoken encode (floor)": None,
    "fixed, 512 tokens": ("fixed", {"chunk_size": 512}),
    "fixed, 1000 characters": ("fixed", {"chunk_size": 1000, "unit": "characters"}),
    "sentence, 512 tokens": ("sentence", {"chunk_size": 512}),
    "paragraph, 512 tokens": ("paragraph", {"chunk_size": 512}),
    "markdown, 512 tokens": ("markdown", {"chunk_size": 512}),
    "sliding, 512 tokens, 0.25": ("sliding", {"chunk_size": 512, "chunk_overlap": 0.25}),
    "recursive, 512 tokens": ("recursive", {"chunk_size": 512}),
    "recursive, 1000 characters": ("recursive", {"chunk_size": 1000, "unit": "characters"}),
}


def english_text(megabytes: float, source: Path | None) -> str:
    if source:
        base = source.read_text(encoding="utf-8")
    else:
        english = [p for p in sorted(CORPUS.glob("*")) if p.suffix in (".md", ".txt") and "_ja" not in p.stem]
        base = "\n\n".join(p.read_text(encoding="utf-8") for p in english)
    target = int(megabytes * 1_000_000)
    return (base * (target // len(base) + 1))[:target]


def timed(function, repeat: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main() -> None:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=formatter)
    parser.add_argument("--sizes", default="1,10", help="text sizes in MB, comma-separated")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--text", type=Path, help="a UTF-8 file to use instead of the bundled documents")
    args = parser.parse_args()
    sizes = [float(s) for s in args.sizes.split(",")]
    get_encoding()  # load once, outside the timings
    rows = {name: [] for name in CASES}
    for mb in sizes:
        text = english_text(mb, args.text)
        for name, case in CASES.items():
            if case is None:
                seconds, _ = timed(lambda t=text: get_encoding().encode_ordinary(t), args.repeat)
                count = "—"
            else:
                seconds, chunks = timed(lambda t=text, c=case: chunk(t, c[0], **c[1]), args.repeat)
                count = len(chunks)
            rows[name].append((len(text) / 1e6 / seconds, count))
    header = " | ".join(f"{mb:g} MB: MB/s (chunks)" for mb in sizes)
    print(f"| case | {header} | 10 MB / 1 MB |\n|---|" + "---|" * len(sizes) + "---|")
    for name, results in rows.items():
        cells = " | ".join(f"{speed:.2f} ({count})" for speed, count in results)
        ratio = f"{results[-1][0] / results[0][0]:.2f}" if len(results) > 1 else "—"
        print(f"| {name} | {cells} | {ratio} |")


if __name__ == "__main__":
    main()
