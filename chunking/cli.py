"""Command line: `python -m chunking chunk FILE…` and `python -m chunking demo`.

`chunk` prints each chunk of each file as JSON lines (offsets, text, metadata) or a table.
`demo` chunks every document in a corpus folder with every strategy and prints, per
strategy, the number of chunks and their mean and largest size in cl100k tokens.
Exit codes: 0 success, 2 bad usage, 1 runtime error (one line on stderr).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from chunking import STRATEGIES, chunk
from chunking.tokens import count_tokens_many

DEFAULT_CORPUS = Path(__file__).resolve().parent.parent / "data" / "corpus"
EXAMPLES = """examples:
  python -m chunking chunk notes.md --strategy markdown --chunk-size 200
  python -m chunking chunk a.txt b.txt --strategy fixed --chunk-overlap 0.25 --format table
  python -m chunking demo
"""


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except (OSError, UnicodeDecodeError, ValueError, TypeError) as error:
        print(f"chunking: error: {error}", file=sys.stderr)
        return 1


def run_chunk(args: argparse.Namespace) -> int:
    options = _options(args)
    for path in args.files:
        text = read_text(path)
        for c in chunk(text, args.strategy, doc_id=path.name, **options):
            if args.format == "jsonl":
                row = {"doc": path.name, "index": c.index, "start": c.start, "end": c.end, "text": c.text}
                if c.context:
                    row["context"] = c.context
                row.update({k: list(v) if isinstance(v, tuple) else v for k, v in c.metadata.items()})
                print(json.dumps(row, ensure_ascii=False))
            else:
                preview = c.text[:60].replace("\n", "⏎")
                print(f"{path.name}\t{c.index}\t{c.start}\t{c.end}\t{preview}")
    return 0


def run_demo(args: argparse.Namespace) -> int:
    paths = sorted(p for p in args.corpus.glob("*") if p.is_file())
    if not paths:
        raise ValueError(f"no documents in corpus folder {str(args.corpus)!r}")
    docs = {p.name: read_text(p) for p in paths}
    print(f"{len(docs)} documents, {sum(len(t) for t in docs.values()):,} characters, "
          f"chunk_size={args.chunk_size} tokens, chunk_overlap={args.chunk_overlap}\n")
    print(f"{'strategy':<12}{'chunks':>8}{'mean tokens':>13}{'max tokens':>12}")
    for strategy in STRATEGIES:
        options = _options(args) if strategy != "sliding" else {**_options(args), "chunk_overlap": 0.25}
        chunks = [c for name, text in docs.items() for c in chunk(text, strategy, doc_id=name, **options)]
        sizes = count_tokens_many([c.text for c in chunks])
        print(f"{strategy:<12}{len(chunks):>8}{sum(sizes) / len(sizes):>13.1f}{max(sizes):>12}")
    return 0


def read_text(path: Path) -> str:
    """Read a UTF-8 text file, naming the file if it cannot be decoded."""
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"{str(path)!r} is not valid UTF-8 (byte {error.start})") from None


def _options(args: argparse.Namespace) -> dict:
    overlap = float(args.chunk_overlap) if "." in args.chunk_overlap else int(args.chunk_overlap)
    return {"chunk_size": args.chunk_size, "chunk_overlap": overlap}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="chunking", description="Chunk text for retrieval, with exact offsets.",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(required=True, metavar="COMMAND")

    def sizes(p: argparse.ArgumentParser) -> None:
        p.add_argument("--chunk-size", type=int, default=200, help="size bound in tokens (default 200)")
        p.add_argument("--chunk-overlap", default="0", help="overlap: tokens, or a fraction like 0.25")

    c = commands.add_parser("chunk", help="chunk files and print the chunks")
    c.add_argument("files", nargs="+", type=Path, metavar="FILE")
    c.add_argument("--strategy", choices=sorted(STRATEGIES), default="recursive")
    c.add_argument("--format", choices=("jsonl", "table"), default="jsonl")
    sizes(c)
    c.set_defaults(run=run_chunk)

    d = commands.add_parser("demo", help="chunk the bundled corpus with every strategy")
    d.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    sizes(d)
    d.set_defaults(run=run_demo)
    return parser
