"""The command line's arguments: the parser of `chunking chunk | index | search | evaluate | demo`.

`parser(runs)` builds it, given the function that runs each command (`chunking.cli`'s). Each flag's
value is checked by its type here (a positive int, a fraction, a URL, a model folder, a JSON object),
so a bad value is a usage error (exit 2) naming the flag, before any work. The examples each
`--help` shows are `EXAMPLES`.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable
from pathlib import Path

from chunking.embed import BACKENDS
from chunking.registry import STRATEGIES
from chunking.sizers import UNITS

DEFAULT_STORE = Path(".qdrant")
DEFAULT_COLLECTION = "chunks"
DEFAULT_TIMEOUT = 30.0  # seconds for each request to a Qdrant server (store.TIMEOUT)
OVERVIEW = """examples:
  chunking chunk notes.md --strategy markdown --format table
  chunking index docs/ --chunk-size 200
  chunking search "How often are backups taken?"
  chunking evaluate --corpus docs/ --questions q.jsonl --strategies fixed,recursive
  chunking demo

`chunking` and `python -m chunking` are the same command; `chunking COMMAND --help` shows its
options and more examples. Exit codes: 0 success, 1 runtime error, 2 bad usage, 130 interrupted.
"""
EXAMPLES = {
    "chunk": """examples:
  chunking chunk notes.md --strategy markdown --chunk-size 200
  chunking chunk docs/ --strategy sentence --format table
  chunking chunk a.txt b.txt --strategy fixed --unit characters --chunk-size 1000 --chunk-overlap 0.25
""",
    "index": """examples:
  chunking index data/corpus                              # into ./.qdrant, collection "chunks"
  chunking index docs/ notes.md --strategy markdown --collection notes
  chunking index docs/ --chunk-size 300 --recreate          # drop the collection and index anew
  chunking index docs/ --url http://localhost:6333          # a Qdrant server; key from $QDRANT_API_KEY

Re-running adds no duplicates: point ids come from (document, strategy, offsets), and the old
chunks of each re-indexed document are removed. Documents are identified by file name.
""",
    "search": """examples:
  chunking search "How often are backups taken?"
  chunking search "Which port does the daemon use?" --collection notes --k 3 --format jsonl
  chunking search "refund policy" --path /data/qdrant
""",
    "evaluate": """examples:
  chunking evaluate --corpus data/corpus --questions data/eval/questions.jsonl \\
      --strategies fixed,recursive --chunk-size 200 --k 5 --out out/eval
  chunking evaluate --corpus docs/ --questions q.jsonl --config configs.json
""",
    "demo": """examples:
  chunking demo
  chunking demo --snapshot docs/results     # also write the timing-free CSVs the docs show
""",
}


def parser(runs: dict[str, Callable[[argparse.Namespace], int]]) -> argparse.ArgumentParser:
    """The whole parser; `runs` maps each command ("chunk", "index", …) to the function that runs it."""
    top = argparse.ArgumentParser(prog="chunking", description="Chunk text for retrieval, with exact offsets.",
                                  epilog=OVERVIEW, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = top.add_subparsers(required=True, metavar="COMMAND")

    def command(name: str, summary: str) -> argparse.ArgumentParser:
        p = commands.add_parser(name, help=summary, description=summary[0].upper() + summary[1:] + ".",
                                epilog=EXAMPLES[name], formatter_class=argparse.RawDescriptionHelpFormatter)
        p.set_defaults(run=runs[name], parser=p)  # the command's own usage line on a bad option value
        return p

    _chunk_flags(command("chunk", "chunk files and print the chunks"))
    _index_flags(command("index", "chunk, embed and store files in a Qdrant collection"))
    _search_flags(command("search", "print the chunks of a collection closest to a question"))
    e = command("evaluate", "compare chunking configurations on a corpus and questions")
    e.add_argument("--corpus", type=Path, required=True, help="folder of .txt/.md/.html/.pdf documents")
    e.add_argument("--questions", type=Path, required=True, help="questions.jsonl (see data/README.md)")
    which = e.add_mutually_exclusive_group()  # a --config file names its own strategies
    which.add_argument("--strategies", help="comma-separated strategies (default: the standard set)")
    which.add_argument("--config", type=Path, help="JSON/YAML list of {name, strategy, options}")
    _evaluation(e, "out/evaluate")
    d = command("demo", "evaluate every strategy on the bundled corpus and questions")
    _evaluation(d, "out/demo")
    d.add_argument("--snapshot", type=Path, help="also write timing-free CSVs here (docs/results)")
    return top


def _chunk_flags(p: argparse.ArgumentParser) -> None:
    _inputs(p)
    _model(p)
    p.add_argument("--format", choices=("jsonl", "table"), default="jsonl",
                   help="JSON lines with offsets and metadata (default), or doc/index/start/end/preview")


def _index_flags(p: argparse.ArgumentParser) -> None:
    _inputs(p)
    _model(p)
    _location(p)
    p.add_argument("--recreate", action="store_true",
                   help="delete the collection first (needed when it holds other vectors)")
    p.add_argument("--engine", choices=("local", "ray"), default="local",
                   help="local: this process (default); ray: Ray Data workers on this machine's cores, or on "
                        "a Ray cluster (--ray-address); needs the ray extra")
    p.add_argument("--workers", type=positive_int, metavar="N",
                   help="with --engine ray: model workers (default: one per CPU of the Ray cluster)")
    p.add_argument("--ray-address", metavar="ADDRESS",
                   help='with --engine ray: a running Ray cluster, e.g. "auto" or "ray://head:10001" (default '
                        "$RAY_ADDRESS, else a Ray of this machine's cores started for the run)")
    p.set_defaults(resume="; run the same command again to finish (nothing is duplicated)")


def _search_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("query", type=query, metavar="QUERY", help="the question, in your own words")
    p.add_argument("--k", type=positive_int, default=5, help="chunks to print (default 5)")
    p.add_argument("--format", choices=("table", "jsonl"), default="table",
                   help="rank, score, doc, offsets and a preview (default), or JSON lines with the full text")
    _location(p)
    _model(p)


def _sizes(p: argparse.ArgumentParser, unit: bool = False) -> None:
    p.add_argument("--chunk-size", type=positive_int, default=200, help="size bound in the unit (default 200)")
    p.add_argument("--chunk-overlap", type=overlap, default=0,
                   help="overlap: a number in the unit, or a fraction like 0.25 of the chunk size (default 0; "
                        "sliding then repeats a quarter of each window's sentences)")
    if unit:
        p.add_argument("--unit", choices=(*UNITS, "pieces"), default="tokens",
                       help="length unit: cl100k tokens (default), characters, or sentences (sentence, "
                            "sliding)")


def _inputs(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="+", type=Path, metavar="FILE_OR_DIR",
                   help=".txt .md .html .pdf .docx files, or folders of them")
    p.add_argument("--recursive", action="store_true", help="read folders' subfolders too")
    p.add_argument("--metadata", type=metadata, metavar="JSON",
                   help='a JSON object added to every chunk\'s metadata, e.g. \'{"team": "ops"}\'')
    p.add_argument("--strategy", choices=sorted(STRATEGIES), default="recursive",
                   help="chunking strategy (default recursive)")
    _sizes(p, unit=True)
    p.add_argument("--min-chunk-size", type=positive_int, metavar="N",
                   help="merge a chunk smaller than N (in the unit) into a neighbour it fits with")


def _location(p: argparse.ArgumentParser) -> None:
    p.add_argument("--collection", default=DEFAULT_COLLECTION, help=f"collection name (default {DEFAULT_COLLECTION!r})")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--path", type=Path, help=f"local Qdrant folder (default ./{DEFAULT_STORE}, "
                                                 "unless $QDRANT_URL is set)")
    where.add_argument("--url", type=url, help="Qdrant server URL (default $QDRANT_URL); the API key is "
                                               "read from $QDRANT_API_KEY")
    _timeout(p)


def _timeout(p: argparse.ArgumentParser) -> None:
    p.add_argument("--timeout", type=seconds, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                   help=f"a Qdrant server's deadline for each request (default {DEFAULT_TIMEOUT:g})")


def _model(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", type=model_folder, metavar="PATH",
                   help="a local sentence-transformers folder (default: the bundled all-MiniLM-L6-v2)")
    p.add_argument("--backend", choices=BACKENDS, default=None,
                   help="where the model runs: onnx (ONNX Runtime, same vectors, about 1.5x as fast on a "
                        "CPU), torch (sentence-transformers), onnx-int8 (faster, vectors moved) or auto "
                        "(onnx where it can run; the default, or $CHUNKING_BACKEND)")


def _evaluation(p: argparse.ArgumentParser, out: str) -> None:
    _sizes(p)
    p.add_argument("--k", type=positive_int, default=5, help="chunks retrieved per question (default 5)")
    p.add_argument("--budget", type=positive_int, default=1000, help="token budget for recall_at_budget")
    p.add_argument("--out", type=Path, default=Path(out), help=f"output folder (default {out})")
    p.add_argument("--store", type=Path,
                   help="keep the collections in this Qdrant folder (default: $QDRANT_URL if set, else in memory)")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the embedding cache")
    _model(p)
    _timeout(p)


def model_folder(value: str) -> Path:
    """--model: a folder holding a sentence-transformers model (its modules.json or config.json)."""
    folder = Path(value)
    if not folder.is_dir():
        raise argparse.ArgumentTypeError(f"{value!r} is not a folder (a sentence-transformers model folder)")
    if not any((folder / name).is_file() for name in ("modules.json", "config.json")):
        raise argparse.ArgumentTypeError(f"{value!r} holds no modules.json or config.json: not a "
                                         "sentence-transformers model folder")
    return folder


def metadata(value: str) -> dict:
    """--metadata: a JSON object of your own keys (checked like `load_document`'s `metadata`)."""
    from chunking.documents import check_metadata

    try:
        data = json.loads(value)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"not JSON: {error} in {value[:80]!r}") from None
    if not isinstance(data, dict):
        raise argparse.ArgumentTypeError(f"must be a JSON object like '{{\"team\": \"ops\"}}', got {value[:80]!r}")
    try:
        return check_metadata(data, "--metadata")
    except (TypeError, ValueError) as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def positive_int(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {value!r}") from None
    if number <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {value!r}")
    return number


def overlap(value: str) -> int | float:
    """An int in the unit, or a fraction of the chunk size written with a point (0.25)."""
    try:
        return float(value) if "." in value else int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number or a fraction like 0.25, got {value!r}") from None


def seconds(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    if not 0 < number < math.inf:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {value!r}")
    return number


def url(value: str) -> str:
    if not value.startswith(("http://", "https://")):
        raise argparse.ArgumentTypeError(f"must start with http:// or https://, got {value!r}")
    return value


def query(value: str) -> str:
    if not value.strip():
        raise argparse.ArgumentTypeError("must not be empty")
    return value
