"""Command line: `python -m chunking chunk | evaluate | demo`.

`chunk` prints each chunk of each file as JSON lines (offsets, text, metadata) or a table.
`evaluate` compares chunking configurations on a corpus folder and a questions file: chunk,
embed, index into Qdrant, retrieve, score; prints the table and writes CSVs and plots.
`demo` is `evaluate` on the bundled corpus and questions with the default configurations.
Exit codes: 0 success, 2 bad usage, 1 runtime error (one line on stderr).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from chunking import STRATEGIES, chunk
from chunking.tokens import count_tokens_many

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = ROOT / "data" / "corpus"
DEFAULT_QUESTIONS = ROOT / "data" / "eval" / "questions.jsonl"
EXAMPLES = """examples:
  python -m chunking chunk notes.md --strategy markdown --chunk-size 200
  python -m chunking chunk a.txt b.txt --strategy fixed --chunk-overlap 0.25 --format table
  python -m chunking evaluate --corpus data/corpus --questions data/eval/questions.jsonl \\
      --strategies fixed,recursive --chunk-size 200 --k 5 --out out/eval
  python -m chunking evaluate --corpus docs/ --questions q.jsonl --config configs.json
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
    from chunking.load import load_document

    options = _options(args)
    for path in args.files:
        text = load_document(path).text
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


def run_evaluate(args: argparse.Namespace) -> int:
    from chunking import compare, display, store
    from chunking.embed import Embedder
    from chunking.evaluate import load_questions, verify_questions
    from chunking.load import load_corpus

    documents = {d.doc_id: d.text for d in load_corpus(args.corpus)}
    questions = load_questions(args.questions)
    verify_questions(questions, documents)
    configs = _configs(args)
    args.out.mkdir(parents=True, exist_ok=True)
    client = store.connect(args.store or args.out / "qdrant")
    bar = _progress(len(configs))
    print(f"{len(documents)} documents, {sum(map(len, documents.values())):,} characters, "
          f"{len(questions)} questions, {len(configs)} configurations, top k={args.k}", flush=True)
    result = compare.run(
        documents, questions, configs, embedder=Embedder(cache=not args.no_cache), client=client,
        corpus=args.corpus.resolve().name, k=args.k, budget=args.budget, progress=bar,
    )
    client.close()
    print("\n" + display.format_table(result.rows))
    _write_csv(args.out / "results.csv", result.rows)
    _write_csv(args.out / "per_question.csv", result.per_question)
    _write_csv(args.out / "per_document.csv", compare.per_document(result.per_question))
    display.plot_recall_vs_tokens(result.rows, args.out / "recall_vs_tokens.png")
    sizes = {name: count_tokens_many([c.text for c in chunks]) for name, chunks in result.chunks.items()}
    display.plot_chunk_sizes(sizes, args.out / "chunk_sizes.png")
    print(f"\nwrote {args.out}/: results.csv, per_document.csv, per_question.csv, recall_vs_tokens.png, "
          "chunk_sizes.png")
    if getattr(args, "snapshot", None):
        _write_snapshot(args.snapshot, result)
    return 0


def _write_snapshot(folder: Path, result) -> None:
    """The results without timings (which change every run), for committing beside the docs."""
    from chunking import compare

    folder.mkdir(parents=True, exist_ok=True)
    timeless = [{k: v for k, v in row.items() if not k.endswith("_seconds")} for row in result.rows]
    _write_csv(folder / "results.csv", timeless)
    _write_csv(folder / "per_document.csv", compare.per_document(result.per_question))
    _write_csv(folder / "per_question.csv", result.per_question)
    print(f"wrote a timing-free snapshot to {folder}/")


def run_demo(args: argparse.Namespace) -> int:
    args.corpus, args.questions, args.config, args.strategies = DEFAULT_CORPUS, DEFAULT_QUESTIONS, None, None
    return run_evaluate(args)


def _configs(args: argparse.Namespace) -> list:
    from chunking.compare import DEFAULT_CONFIGS, Config

    if args.config:
        return [Config(c["name"], c["strategy"], c.get("options", {})) for c in _read_config(args.config)]
    if not args.strategies:
        return list(DEFAULT_CONFIGS)
    names = [s.strip() for s in args.strategies.split(",") if s.strip()]
    unknown = [n for n in names if n not in STRATEGIES]
    if unknown:
        raise ValueError(f"--strategies must name strategies from {sorted(STRATEGIES)}, got {unknown}")
    return [Config(f"{n}-{args.chunk_size}", n, _options(args)) for n in names]


def _read_config(path: Path) -> list[dict]:
    """A JSON (or YAML) list of {"name", "strategy", "options": {...}} configurations."""
    raw = path.read_text(encoding="utf-8")
    if path.suffix in (".yml", ".yaml"):
        import yaml

        data = yaml.safe_load(raw)
    else:
        data = json.loads(raw)
    if not isinstance(data, list) or not all(isinstance(c, dict) and "name" in c and "strategy" in c for c in data):
        raise ValueError(f"{str(path)!r} must hold a list of {{'name', 'strategy', 'options'}} objects")
    return data


def _write_csv(path: Path, rows: list[dict]) -> None:
    import csv

    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]) if rows else [])
        writer.writeheader()
        writer.writerows(rows)


def _progress(total: int):
    """A progress bar on a terminal, nothing otherwise."""
    if not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    bar = tqdm(total=total, unit="config", file=sys.stderr)
    return lambda name: (bar.set_description(name), bar.update(1))


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

    def evaluation(p: argparse.ArgumentParser, out: str) -> None:
        p.add_argument("--k", type=int, default=5, help="chunks retrieved per question (default 5)")
        p.add_argument("--budget", type=int, default=1000, help="token budget for recall_at_budget")
        p.add_argument("--out", type=Path, default=Path(out), help=f"output folder (default {out})")
        p.add_argument("--store", type=Path, help="Qdrant folder (default OUT/qdrant; QDRANT_URL wins)")
        p.add_argument("--no-cache", action="store_true", help="do not read or write the embedding cache")

    e = commands.add_parser("evaluate", help="compare chunking configurations on a corpus and questions")
    e.add_argument("--corpus", type=Path, required=True, help="folder of .txt/.md/.html/.pdf documents")
    e.add_argument("--questions", type=Path, required=True, help="questions.jsonl (see data/README.md)")
    e.add_argument("--strategies", help="comma-separated strategies (default: the standard set)")
    e.add_argument("--config", type=Path, help="JSON/YAML list of {name, strategy, options}")
    sizes(e)
    evaluation(e, "out/evaluate")
    e.set_defaults(run=run_evaluate)

    d = commands.add_parser("demo", help="evaluate every strategy on the bundled corpus and questions")
    sizes(d)
    evaluation(d, "out/demo")
    d.add_argument("--snapshot", type=Path, help="also write timing-free CSVs here (docs/results)")
    d.set_defaults(run=run_demo)
    return parser
