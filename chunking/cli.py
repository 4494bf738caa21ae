"""Command line: `chunking chunk | index | search | evaluate | demo` (the same as `python -m chunking`).

- `chunk` prints the chunks of files (or of every supported file directly in a folder) as JSON lines
  or a table.
- `index` loads, chunks, embeds (all-MiniLM-L6-v2, offline, cached on disk; on ONNX Runtime unless
  `--backend torch`) and upserts the chunks
  into a Qdrant collection. Point ids are uuid5s of (document, strategy, offsets), so a re-run writes
  the same points; chunks that a re-indexed document no longer has are deleted after the new ones are
  written. An interrupted run is completed by running it again.
- `search` embeds a question and prints the best chunks of a collection.
- `evaluate` compares configurations on a corpus folder and a questions file (chunk, embed, index,
  retrieve, score; writes CSVs and plots); `demo` is `evaluate` on the bundled corpus and questions.

For `index` and `search` the store is `--url`, else `--path`, else `$QDRANT_URL`, else the folder
`.qdrant` in the working directory: a flag wins over the environment. `evaluate` and `demo` keep
their collections in memory unless `--store DIR` or `$QDRANT_URL` says otherwise. The API key is
read from `$QDRANT_API_KEY` only.
Exit codes: 0 success, 2 bad usage, 1 runtime error, 130 interrupted; one line on stderr, no traceback.
What the arguments alone decide (sizes, a --unit or --min-chunk-size the strategy refuses, unknown
--strategies) is checked before any file is read: exit 2 with the usage line, naming the flag. Every
entry of a `--config` file is checked in full before any configuration runs; a bad one is input, like a
bad questions file: exit 1, naming the file, the line where the entry starts and the entry.
Progress bars go to stderr only when it is a terminal; the library itself never prints.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import unicodedata
import warnings
from pathlib import Path

from chunking.embed import BACKENDS
from chunking.options import one_line, resolve_sizes
from chunking.registry import STRATEGIES, chunk_document, chunk_documents, takes
from chunking.sizers import UNITS

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = ROOT / "data" / "corpus"
DEFAULT_QUESTIONS = ROOT / "data" / "eval" / "questions.jsonl"
DEFAULT_STORE = Path(".qdrant")
DEFAULT_COLLECTION = "chunks"
DEFAULT_TIMEOUT = 30.0  # seconds for each request to a Qdrant server (store.TIMEOUT)
EMBED_BATCH = 256  # chunks `index` chunks, embeds and writes at a time (the embedder batches again inside)
PREVIEW_CHARS = 70
# Shown escaped in tables: control characters (ANSI escapes could drive the terminal) and bidi
# overrides (they reorder what is shown). JSON output escapes C0 controls by itself.
UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# A usage error names the flag the user typed, not the parameter it becomes: `--unit sentences`, not
# `unit='sentences'` (sliding's `overlap_fraction` is a fractional --chunk-overlap).
FLAGS = {"min_chunk_size": "--min-chunk-size", "chunk_size": "--chunk-size", "chunk_overlap": "--chunk-overlap",
         "overlap_fraction": "--chunk-overlap"}
PARAMETER = re.compile(r"(?<![\w-])(" + "|".join(FLAGS) + r")(?!\w)")
JSON_GAP = re.compile(r"[ \t\n\r]*,?[ \t\n\r]*")  # between two elements of a JSON list
UNIT_VALUE = re.compile(r"(?<![\w-])unit=(['\"]?)([\w-]+)\1|(?<![\w-])unit(?= must)")
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


class Failure(Exception):
    """A runtime error the command line reports in one line (exit 1)."""


def main(argv: list[str] | None = None) -> int:
    """Run one command; return its exit code (argparse itself exits with 2 on bad usage)."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        _check_usage(args)
    except (TypeError, ValueError) as error:  # known from the arguments alone: bad usage, before any work
        args.parser.error(_flags(one_line(error)))
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _warning  # a damaged cache, text a Word file's reader left out: one line each
            code = args.run(args)
        sys.stdout.flush()
        return code
    except KeyboardInterrupt:
        print(f"chunking: interrupted{getattr(args, 'resume', '')}", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (`| head`): stop quietly, like other tools
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except (Failure, OSError, ValueError, TypeError, RuntimeError) as error:  # UnicodeError is a ValueError
        _error(error)
        return 1
    except Exception as error:
        if not type(error).__module__.startswith(("qdrant_client", "httpx", "grpc")):
            raise
        _error(f"Qdrant: {type(error).__name__}: {error}")
        return 1


def _check_usage(args: argparse.Namespace) -> None:
    """Raise what the arguments alone make wrong, before any file is read: sizes that do not fit together,
    an option the strategy refuses (its own checks, run by `compare.check_options` on a probe text with
    no model), a flag of another mode, and --strategies that are unknown, repeated or refuse the sizes."""
    from chunking.compare import check_options

    if hasattr(args, "chunk_size"):
        resolve_sizes(args.chunk_size, args.chunk_overlap)
    if getattr(args, "engine", "ray") != "ray" and (args.workers is not None or args.ray_address is not None):
        raise ValueError(f"--{'workers' if args.workers is not None else 'ray-address'} is an option of --engine ray")
    if hasattr(args, "strategy"):  # chunk and index
        options = _flag_options(args, args.strategy)
        if options.get("unit") == "pieces":  # the model's pieces need the model: checked as any unit but sentences
            options["unit"] = "characters"
        try:
            check_options(args.strategy, options)
        except (TypeError, ValueError) as error:
            raise type(error)(f"--strategy {args.strategy}: {error}") from None
    if getattr(args, "strategies", None) is not None:
        _strategy_configs(args)


def _flags(message: str) -> str:
    """A message about parameters, in the flags that set them."""
    message = PARAMETER.sub(lambda m: FLAGS[m.group(1)], message)
    return UNIT_VALUE.sub(lambda m: f"--unit {m.group(2)}" if m.group(2) else "--unit", message)


def run_chunk(args: argparse.Namespace) -> int:
    """Print every chunk of every document, as JSON lines or a table."""
    options = _options(args, args.strategy)
    for document in _documents(args.paths, args.recursive, args.metadata):
        for c in chunk_document(document, args.strategy, **options):
            if args.format == "jsonl":
                print(json.dumps(_row(c), ensure_ascii=False))
            else:
                print(f"{_printable(c.doc_id)}\t{c.index}\t{c.start}\t{c.end}\t{_preview(c.text)}")
    return 0


def run_index(args: argparse.Namespace) -> int:
    """Chunk, embed and upsert the documents; write only what changed, remove their stale chunks."""
    from chunking import store
    from chunking.embed import model_record

    if args.engine == "ray":
        return _index_on_ray(args)
    documents = _documents(args.paths, args.recursive, args.metadata)
    client, where = _connect(args.url, args.path, DEFAULT_STORE, timeout=args.timeout)
    try:
        embedder = _embedder(args)
        options = _options(args, args.strategy, embedder)
        if takes(args.strategy, "embedder"):
            options["embedder"] = embedder  # model-based strategies share the index's embedder
        try:
            store.ensure_collection(client, args.collection, lambda: embedder.dim, model=model_record(embedder),
                                    recreate=args.recreate)
        except ValueError as error:
            raise Failure(f"{str(error).replace('recreate=True', '--recreate')} (at {where})") from None
        # In batches: memory stays flat in the number of files, and each batch is in the store before
        # the next is embedded, so an interrupted run keeps what it wrote and a re-run embeds the rest.
        keep, seen, written = set(), set(), 0
        with _progress(len(documents), "document") as bar:
            for batch in _batches(chunk_documents(documents, args.strategy, **options), EMBED_BATCH):
                keep.update(c.id for c in batch)
                fresh = [batch[i] for i in store.changed(client, args.collection, batch)]  # unchanged: no work
                if fresh:
                    store.index(client, args.collection, fresh, _embed(embedder, fresh))
                written += len(fresh)
                seen.update(c.doc_id for c in batch)
                bar.update(len(seen) - 1 - bar.n)  # the batch's last document may go on in the next
            bar.update(len(documents) - bar.n)
        stale = store.remove_stale(client, args.collection, [d.doc_id for d in documents], keep)
        points = client.count(args.collection, exact=True).count
    finally:
        client.close()
    _print_indexed(args, len(documents), len(keep), where, written, stale, points)
    return 0


def _print_indexed(args: argparse.Namespace, documents: int, chunks: int, where: str, written: int, stale: int,
                   points: int) -> None:
    print(f"indexed {_count(documents, 'document')} as {_count(chunks, 'chunk')} ({args.strategy}, "
          f"{args.chunk_size} {args.unit}, overlap {args.chunk_overlap}) into collection {args.collection!r} at "
          f"{where}: {written} written, {stale} stale removed, {points} in the collection")


def _index_on_ray(args: argparse.Namespace) -> int:
    """`index --engine ray`: the same points, written by Ray Data workers (`chunking.ray_index`)."""
    import importlib.util

    if importlib.util.find_spec("ray") is None:
        raise Failure("--engine ray needs Ray Data, which is not installed: pip install 'chunking[ray]'")
    from chunking import ray_index

    files = _files(args.paths, args.recursive)
    url, folder = _location(args.url, args.path, DEFAULT_STORE)
    options = _options(args, args.strategy)
    embedder = _embedder(args)  # the backend is chosen (and the model exported) once, here, with any warning
    try:
        report = ray_index.index_files(
            files, args.collection, strategy=args.strategy, options=options, metadata=args.metadata, url=url,
            path=folder, timeout=args.timeout, recreate=args.recreate, model=args.model, backend=embedder.backend,
            workers=args.workers, address=args.ray_address)
    except ValueError as error:
        raise Failure(f"{str(error).replace('recreate=True', '--recreate')} (at {url or folder})") from None
    where = f"{url or folder} on Ray ({_count(report.workers, 'worker')})"
    _print_indexed(args, report.documents, report.chunks, where, report.written, report.stale, report.points)
    return 0


def run_search(args: argparse.Namespace) -> int:
    """Print the `k` chunks closest to the query, best first."""
    from chunking import store
    from chunking.embed import model_record

    client, where = _connect(args.url, args.path, DEFAULT_STORE, create=False, timeout=args.timeout)
    try:
        try:
            size = store.dense_size(client, args.collection)  # before loading the model: fail fast
        except ValueError as error:
            raise Failure(f"{error} (at {where}; make one with `chunking index`)") from None
        if not client.count(args.collection, exact=True).count:
            raise Failure(f"collection {args.collection!r} at {where} holds no points (emptied, or its files were "
                          "removed); index into it again with `chunking index`")
        embedder = _embedder(args)
        try:
            store.check_model(client, args.collection, model_record(embedder))  # before loading the model
        except ValueError as error:
            raise Failure(f"{str(error).replace('recreate', '`chunking index --recreate`')} (at {where})") from None
        vector = embedder.embed_query(args.query)
        if len(vector) != size:
            raise Failure(f"collection {args.collection!r} at {where} holds vectors of size {size}, but the "
                          f"query's has {len(vector)}: it was indexed with another model")
        hits = store.search(client, args.collection, vector, k=args.k)
    finally:
        client.close()
    if args.format == "jsonl":
        for rank, hit in enumerate(hits, 1):
            print(json.dumps({"rank": rank, "score": hit.score, **_row(hit.chunk)}, ensure_ascii=False))
        return 0
    rows = [[str(rank), f"{hit.score:.3f}", _printable(hit.chunk.doc_id), str(hit.chunk.start),
             str(hit.chunk.end), _preview(hit.chunk.text)] for rank, hit in enumerate(hits, 1)]
    print(_table(["rank", "score", "doc", "start", "end", "text"], rows))
    return 0


def run_evaluate(args: argparse.Namespace) -> int:
    """Compare configurations on a corpus and questions; print the table, write CSVs and plots."""
    from chunking import compare, display
    from chunking.evaluate import load_questions, verify_questions
    from chunking.load import load_corpus

    configs = _configs(args)  # first: a bad entry of a --config file fails before anything is loaded
    questions = load_questions(args.questions)
    documents = {d.doc_id: d.text for d in load_corpus(args.corpus)}
    verify_questions(questions, documents)
    for folder in filter(None, (args.out, getattr(args, "snapshot", None))):  # before the run, not after it
        folder.mkdir(parents=True, exist_ok=True)
    # In memory unless asked: local Qdrant commits each point to disk alone (~15 ms a point here),
    # which made the warm demo spend most of its minute writing collections it never reopens.
    client, _ = _connect(None, args.store, None, timeout=args.timeout)
    print(f"{len(documents)} documents, {sum(map(len, documents.values())):,} characters, "
          f"{len(questions)} questions, {len(configs)} configurations, top k={args.k}", flush=True)
    try:
        with _progress(len(configs), "config") as bar:
            result = compare.run(
                documents, questions, configs, embedder=_embedder(args, cache=not args.no_cache), client=client,
                corpus=args.corpus.resolve().name, k=args.k, budget=args.budget, progress=_steps(bar),
            )
            bar.update(bar.total - bar.n)  # the last configuration is done too
    finally:
        client.close()
    print("\n" + display.format_table(result.rows))
    _write_csv(args.out / "results.csv", result.rows)
    _write_csv(args.out / "per_question.csv", result.per_question)
    _write_csv(args.out / "per_document.csv", compare.per_document(result.per_question))
    display.plot_recall_vs_tokens(result.rows, args.out / "recall_vs_tokens.png")
    sizes = {name: [c.token_count for c in chunks] for name, chunks in result.chunks.items()}  # counted in compare
    display.plot_chunk_sizes(sizes, args.out / "chunk_sizes.png")
    print(f"\nwrote {args.out}/: results.csv, per_document.csv, per_question.csv, recall_vs_tokens.png, "
          "chunk_sizes.png")
    if getattr(args, "snapshot", None):
        _write_snapshot(args.snapshot, result)
    return 0


def run_demo(args: argparse.Namespace) -> int:
    """`evaluate` on the bundled corpus and questions with the default configurations."""
    args.corpus, args.questions, args.config, args.strategies = DEFAULT_CORPUS, DEFAULT_QUESTIONS, None, None
    return run_evaluate(args)


def _documents(paths: list[Path], recursive: bool = False, metadata: dict | None = None) -> list:
    """Each file of `_files`, loaded."""
    from chunking.load import load_document

    return [load_document(path, doc_id=doc_id, metadata=metadata) for path, doc_id in _files(paths, recursive)]


def _files(paths: list[Path], recursive: bool = False) -> list[tuple[Path, str]]:
    """Each file, and each supported file in each folder (and its subfolders, with `recursive`), with
    its document id: its path below the folder given, or a file's name; one id, one file."""
    from chunking.documents import readable_name
    from chunking.load import corpus_files

    files: dict[str, Path] = {}
    for path in paths:
        if not path.exists():
            raise Failure(f"{str(path)!r} does not exist")
        for file, doc_id in corpus_files(path, recursive=recursive) if path.is_dir() else [(path, readable_name(path))]:
            known = files.setdefault(doc_id, file)
            if known.resolve() != file.resolve():
                raise Failure(f"two documents have the id {doc_id!r} ({str(known)!r} and {str(file)!r}): ids are "
                              "file names (paths below a folder given), so rename one or give their folders instead")
    return [(file, doc_id) for doc_id, file in files.items()]


def _connect(url: str | None, path: Path | None, default: Path | None, *, create: bool = True, timeout: float):
    """(client, where): `url`, else `path`, else $QDRANT_URL, else the folder `default` (None: in memory).

    `timeout` is each server request's deadline in seconds (`store.connect`)."""
    from chunking import store

    url, folder = _location(url, path, default, create=create)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if url:
            client, where = store.connect(url=url, timeout=timeout), url
        elif folder is None:
            client, where = store.connect(":memory:", use_env=False), "memory"
        else:
            client, where = store.connect(folder, use_env=False), str(folder)  # a folder flag beats $QDRANT_URL
    for warning in caught:  # e.g. a client/server version mismatch: one line each, not a stack
        _warning(warning.message, warning.category, warning.filename, warning.lineno)
    return client, where


def _location(url: str | None, path: Path | None, default: Path | None, *, create: bool = True
              ) -> tuple[str | None, Path | None]:
    """(url, None) for a server: `url`, else $QDRANT_URL unless `path` is given; else (None, folder):
    `path`, else `default`, checked; (None, None) when both are None (in memory)."""
    from chunking import store

    url = url or (None if path else os.environ.get(store.URL_ENV))
    if url or (path is None and default is None):
        return url or None, None
    folder = (path or default).resolve()
    _check_store_folder(folder, create)
    return None, folder


def _check_store_folder(folder: Path, create: bool) -> None:
    """Refuse to turn an unrelated folder into a store, or to create one just to search it."""
    if folder.exists() and not folder.is_dir():
        raise Failure(f"the Qdrant store {str(folder)!r} is a file, not a folder")
    if not folder.exists() and not create:
        raise Failure(f"no Qdrant store at {str(folder)!r}; run `chunking index` first, or pass --path or --url")
    if folder.is_dir() and any(folder.iterdir()) and not (folder / "meta.json").exists():
        raise Failure(f"{str(folder)!r} is not a Qdrant folder (no meta.json); pass a new or empty folder")


def _embedder(args: argparse.Namespace, cache: bool = True):
    """The model of `--model` (a sentence-transformers folder), else the bundled MiniLM, run by `--backend`."""
    from chunking.embed import Embedder, default_embedder

    backend = getattr(args, "backend", None)
    if getattr(args, "model", None) is None and backend is None and cache:
        embedder = default_embedder()
    else:
        embedder = Embedder(getattr(args, "model", None), backend=backend, cache=cache)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            _ = embedder.backend  # chosen now (exporting the model once, if it must), so a fallback says why here
        except ValueError as error:
            raise Failure(str(error)) from None
    for warning in caught:
        _warning(warning.message, warning.category, warning.filename, warning.lineno)
    return embedder


def _embed(embedder, chunks: list):
    """Every chunk's vector (of its `embed_text`); shape (len(chunks), dim)."""
    import numpy as np

    if not chunks:
        return np.zeros((0, embedder.dim), dtype=np.float32)
    return embedder.embed([c.embed_text for c in chunks])


def _batches(items, size: int):
    """Lists of up to `size` items, in order, taken lazily from any iterable."""
    batch = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _progress(total: int, unit: str):
    """A progress bar on stderr when it is a terminal; a silent stand-in otherwise."""
    from tqdm import tqdm

    return tqdm(total=total, unit=unit, file=sys.stderr, disable=not sys.stderr.isatty(), dynamic_ncols=True)


def _steps(bar):
    """A `progress(name)` callback: each call finishes the step before and names the next."""
    started = []

    def step(name: str) -> None:
        if started:
            bar.update(1)
        started.append(name)
        bar.set_description(name)

    return step


def _row(c) -> dict:
    """A chunk as one JSON object: document, offsets, text, context, and its metadata under `metadata`
    (the strategy's, the document's title, source, kind and pages, and `--metadata`), as in the payload."""
    row = {"doc": c.doc_id, "index": c.index, "start": c.start, "end": c.end, "text": c.text}
    if c.context:
        row["context"] = c.context
    row["metadata"] = {k: list(v) if isinstance(v, tuple) else v for k, v in c.metadata.items()}
    return row


def _preview(text: str, limit: int = PREVIEW_CHARS) -> str:
    text = text.replace("\n", "⏎").replace("\t", " ")
    return _printable(text[:limit] + ("…" if len(text) > limit else ""))


def _printable(text: str) -> str:
    return UNPRINTABLE.sub(lambda m: f"\\u{ord(m.group()):04x}" if ord(m.group()) > 0xff
                           else f"\\x{ord(m.group()):02x}", text)


def _table(header: list[str], rows: list[list[str]]) -> str:
    """Left-aligned columns; the last one is not padded."""
    widths = [max(_width(r[i]) for r in [header, *rows]) for i in range(len(header) - 1)]
    return "\n".join("  ".join([*(v + " " * (w - _width(v)) for v, w in zip(r, widths)), r[-1]])
                     for r in [header, *rows])


def _width(text: str) -> int:
    """Terminal columns: wide (CJK) characters take two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _warning(message, category, filename, lineno, file=None, line=None) -> None:
    print(f"chunking: warning: {one_line(message)}", file=sys.stderr)


def _error(error: object) -> None:
    message = one_line(error)
    print(f"chunking: error: {message}", file=sys.stderr)


def _write_snapshot(folder: Path, result) -> None:
    """The results without timings (which change every run), for committing beside the docs."""
    from chunking import compare

    folder.mkdir(parents=True, exist_ok=True)
    timeless = [{k: v for k, v in row.items() if not k.endswith("_seconds")} for row in result.rows]
    _write_csv(folder / "results.csv", timeless)
    _write_csv(folder / "per_document.csv", compare.per_document(result.per_question))
    _write_csv(folder / "per_question.csv", result.per_question)
    print(f"wrote a timing-free snapshot to {folder}/")


def _configs(args: argparse.Namespace) -> list:
    """The configurations to compare: a --config file's, --strategies at the sizes given, or the defaults."""
    from chunking.compare import DEFAULT_CONFIGS

    if args.config:
        return _file_configs(args.config)
    if args.strategies is not None:
        return _strategy_configs(args)
    return list(DEFAULT_CONFIGS)


def _strategy_configs(args: argparse.Namespace) -> list:
    """--strategies at --chunk-size and --chunk-overlap, each checked in full; errors name the flags."""
    from chunking.compare import Config

    names = [s.strip() for s in args.strategies.split(",") if s.strip()]
    unknown = [n for n in names if n not in STRATEGIES]
    if not names or unknown:
        raise ValueError(f"--strategies must name strategies from {sorted(STRATEGIES)}, got "
                         f"{unknown or repr(args.strategies)}")
    if twice := sorted({n for n in names if names.count(n) > 1}):
        raise ValueError(f"--strategies names {twice} more than once")
    configs = [Config(f"{n}-{args.chunk_size}", n, _flag_options(args, n),  # parent_child retrieves parents only
                      retrieval="parents" if n == "parent_child" else "dense") for n in names]
    for config in configs:
        config.check(where=f"--strategies {config.strategy}")
    return configs


def _file_configs(path: Path) -> list:
    """A --config file's configurations, every entry checked in full before any runs: each problem names
    the file, the line where its entry starts and the entry (index and name); all are reported at once."""
    configs, problems, named = [], [], []  # named: (name, line) of every entry that has a name
    for i, (line, entry) in enumerate(_read_config(path)):
        name = entry.get("name") if isinstance(entry, dict) else None
        named += [(name, line)] if isinstance(name, str) else []
        where = f"{path}:{line}: entry {i}" + (f" ({name!r})" if isinstance(name, str) else "")
        try:
            configs.append(_config(entry, where))
        except (TypeError, ValueError) as error:
            problems.append(str(error))
    names = [name for name, _ in named]
    for name in sorted({n for n in names if names.count(n) > 1}):
        at = " and ".join(f"line {line}" for other, line in named if other == name)
        problems.append(f"{path}: configuration names must be distinct, got [{name!r}] more than once (at {at})")
    if problems:
        raise ValueError(problems[0] if len(problems) == 1 else f"{len(problems)} problems: " + "; ".join(problems))
    return configs


def _config(entry: object, where: str):
    """One configuration from a config file's entry (name, strategy, and optionally options, embedding,
    retrieval), checked in full (`Config.check`); errors begin with `where`."""
    from chunking.compare import Config

    keys = ("name", "strategy", "options", "embedding", "retrieval")
    if not isinstance(entry, dict) or not {"name", "strategy"} <= entry.keys():
        raise ValueError(f"{where}: must be an object with 'name' and 'strategy' (and optionally 'options', "
                         f"'embedding', 'retrieval'), got {entry!r:.80}")
    if unknown := sorted(set(entry) - set(keys)):
        raise ValueError(f"{where}: unknown key(s) {unknown}; the keys are {list(keys)}")
    if not isinstance(entry.get("options", {}), dict):
        raise ValueError(f"{where}: options must be an object, got {entry['options']!r:.60}")
    config = Config(**{key: entry[key] for key in keys if key in entry})
    config.check(where=where)
    return config


def _read_config(path: Path) -> list[tuple[int, object]]:
    """A JSON (or YAML) list of configurations, each with the line where it starts; a syntax or
    decoding error names the file and the line."""
    from chunking.load import read_text

    raw = read_text(path)
    entries = _yaml_entries(raw, path) if path.suffix.lower() in (".yml", ".yaml") else _json_entries(raw, path)
    if not entries:
        raise ValueError(f"{str(path)!r} must hold a non-empty list of {{'name', 'strategy', 'options'}} objects")
    return entries


def _json_entries(raw: str, path: Path) -> list[tuple[int, object]]:
    """The elements of a JSON list, each with its first line (found by decoding them one by one)."""
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as error:
        raise ValueError(f"{str(path)!r} is not valid JSON at line {error.lineno}, column {error.colno}: "
                         f"{error.msg}") from None
    if not isinstance(data, list):
        return []
    decoder, entries, at = json.JSONDecoder(), [], raw.index("[") + 1
    for _ in data:  # the document is valid: each element follows whitespace and, after the first, a comma
        start = JSON_GAP.match(raw, at).end()
        entry, at = decoder.raw_decode(raw, start)
        entries.append((raw.count("\n", 0, start) + 1, entry))  # lines as JSONDecodeError counts them
    return entries


def _yaml_entries(raw: str, path: Path) -> list[tuple[int, object]]:
    """The items of a YAML list, each with its first line (from the composed node's mark)."""
    import yaml

    loader = yaml.SafeLoader(raw)  # safe: no tags that build Python objects
    try:
        node = loader.get_single_node()
        data = None if node is None else loader.construct_document(node)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(error, "problem", None) or error
        raise ValueError(f"{str(path)!r} is not valid YAML{where}: {problem}") from None
    finally:
        loader.dispose()
    if not isinstance(data, list):
        return []
    return [(item.start_mark.line + 1, entry) for item, entry in zip(node.value, data)]


def _write_csv(path: Path, rows: list[dict]) -> None:
    import csv

    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]) if rows else [])
        writer.writeheader()
        writer.writerows(rows)


def _options(args: argparse.Namespace, strategy: str, embedder=None) -> dict:
    """The strategy's options from the flags, `--unit pieces` as the model's own word-pieces."""
    options = _flag_options(args, strategy)
    if options.get("unit") == "pieces":  # the model's own word-pieces, [CLS] and [SEP] included
        from chunking.sizers import WordPieces

        options["unit"] = WordPieces((embedder or _embedder(args)).tokenizer)
    return options


def _flag_options(args: argparse.Namespace, strategy: str) -> dict:
    """The strategy's options as the flags give them (`--unit pieces` as "pieces"); for sliding, a
    fraction (0.25) is its `overlap_fraction`. A flag of no use to the strategy is a ValueError."""
    overlap = args.chunk_overlap
    if strategy == "sliding" and isinstance(overlap, float):
        options = {"chunk_size": args.chunk_size, "overlap_fraction": overlap}
    else:
        options = {"chunk_size": args.chunk_size, "chunk_overlap": overlap}
    if getattr(args, "unit", "tokens") != "tokens":  # evaluate's collection names hash these options
        options["unit"] = args.unit
    if getattr(args, "min_chunk_size", None) is not None:
        if not takes(strategy, "min_chunk_size"):
            which = sorted(s for s in STRATEGIES if takes(s, "min_chunk_size"))
            raise ValueError(f"--min-chunk-size is an option of {', '.join(which)}, not of {strategy}")
        options["min_chunk_size"] = args.min_chunk_size
    return options


def _model_folder(value: str) -> Path:
    """--model: a folder holding a sentence-transformers model (its modules.json or config.json)."""
    folder = Path(value)
    if not folder.is_dir():
        raise argparse.ArgumentTypeError(f"{value!r} is not a folder (a sentence-transformers model folder)")
    if not any((folder / name).is_file() for name in ("modules.json", "config.json")):
        raise argparse.ArgumentTypeError(f"{value!r} holds no modules.json or config.json: not a "
                                         "sentence-transformers model folder")
    return folder


def _metadata(value: str) -> dict:
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


def _positive_int(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {value!r}") from None
    if number <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {value!r}")
    return number


def _overlap(value: str) -> int | float:
    """An int in the unit, or a fraction of the chunk size written with a point (0.25)."""
    try:
        return float(value) if "." in value else int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number or a fraction like 0.25, got {value!r}") from None


def _seconds(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    if not 0 < number < math.inf:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {value!r}")
    return number


def _url(value: str) -> str:
    if not value.startswith(("http://", "https://")):
        raise argparse.ArgumentTypeError(f"must start with http:// or https://, got {value!r}")
    return value


def _query(value: str) -> str:
    if not value.strip():
        raise argparse.ArgumentTypeError("must not be empty")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="chunking", description="Chunk text for retrieval, with exact offsets.",
        epilog=OVERVIEW,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(required=True, metavar="COMMAND")

    def command(name: str, summary: str, run) -> argparse.ArgumentParser:
        p = commands.add_parser(name, help=summary, description=summary[0].upper() + summary[1:] + ".",
                                epilog=EXAMPLES[name], formatter_class=argparse.RawDescriptionHelpFormatter)
        p.set_defaults(run=run, parser=p)  # the command's own usage line on a bad option value
        return p

    def sizes(p: argparse.ArgumentParser, unit: bool = False) -> None:
        p.add_argument("--chunk-size", type=_positive_int, default=200, help="size bound in the unit (default 200)")
        p.add_argument("--chunk-overlap", type=_overlap, default=0,
                       help="overlap: a number in the unit, or a fraction like 0.25 of the chunk size (for sliding: "
                            "of each window's sentences) (default 0)")
        if unit:
            p.add_argument("--unit", choices=(*UNITS, "pieces"), default="tokens",
                           help="length unit: cl100k tokens (default), characters, or sentences (sentence, "
                                "sliding)")

    def inputs(p: argparse.ArgumentParser) -> None:
        p.add_argument("paths", nargs="+", type=Path, metavar="FILE_OR_DIR",
                       help=".txt .md .html .pdf .docx files, or folders of them")
        p.add_argument("--recursive", action="store_true", help="read folders' subfolders too")
        p.add_argument("--metadata", type=_metadata, metavar="JSON",
                       help='a JSON object added to every chunk\'s metadata, e.g. \'{"team": "ops"}\'')
        p.add_argument("--strategy", choices=sorted(STRATEGIES), default="recursive",
                       help="chunking strategy (default recursive)")
        sizes(p, unit=True)
        p.add_argument("--min-chunk-size", type=_positive_int, metavar="N",
                       help="merge a chunk smaller than N (in the unit) into a neighbour it fits with")

    def location(p: argparse.ArgumentParser) -> None:
        p.add_argument("--collection", default=DEFAULT_COLLECTION,
                       help=f"collection name (default {DEFAULT_COLLECTION!r})")
        where = p.add_mutually_exclusive_group()
        where.add_argument("--path", type=Path, help=f"local Qdrant folder (default ./{DEFAULT_STORE}, "
                                                     "unless $QDRANT_URL is set)")
        where.add_argument("--url", type=_url, help="Qdrant server URL (default $QDRANT_URL); the API key is "
                                                    "read from $QDRANT_API_KEY")
        timeout(p)

    def timeout(p: argparse.ArgumentParser) -> None:
        p.add_argument("--timeout", type=_seconds, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                       help=f"a Qdrant server's deadline for each request (default {DEFAULT_TIMEOUT:g})")

    def model(p: argparse.ArgumentParser) -> None:
        p.add_argument("--model", type=_model_folder, metavar="PATH",
                       help="a local sentence-transformers folder (default: the bundled all-MiniLM-L6-v2)")
        p.add_argument("--backend", choices=BACKENDS, default=None,
                       help="where the model runs: onnx (ONNX Runtime, same vectors, about 1.5x as fast on a "
                            "CPU), torch (sentence-transformers), onnx-int8 (faster, vectors moved) or auto "
                            "(onnx where it can run; the default, or $CHUNKING_BACKEND)")

    c = command("chunk", "chunk files and print the chunks", run_chunk)
    inputs(c)
    model(c)
    c.add_argument("--format", choices=("jsonl", "table"), default="jsonl",
                   help="JSON lines with offsets and metadata (default), or doc/index/start/end/preview")

    i = command("index", "chunk, embed and store files in a Qdrant collection", run_index)
    inputs(i)
    model(i)
    location(i)
    i.add_argument("--recreate", action="store_true",
                   help="delete the collection first (needed when it holds other vectors)")
    i.add_argument("--engine", choices=("local", "ray"), default="local",
                   help="local: this process (default); ray: Ray Data workers on this machine's cores, or on "
                        "a Ray cluster (--ray-address); needs the ray extra")
    i.add_argument("--workers", type=_positive_int, metavar="N",
                   help="with --engine ray: model workers (default: one per CPU of the Ray cluster)")
    i.add_argument("--ray-address", metavar="ADDRESS",
                   help='with --engine ray: a running Ray cluster, e.g. "auto" or "ray://head:10001" (default '
                        "$RAY_ADDRESS, else a Ray of this machine's cores started for the run)")
    i.set_defaults(resume="; run the same command again to finish (nothing is duplicated)")

    s = command("search", "print the chunks of a collection closest to a question", run_search)
    s.add_argument("query", type=_query, metavar="QUERY", help="the question, in your own words")
    s.add_argument("--k", type=_positive_int, default=5, help="chunks to print (default 5)")
    s.add_argument("--format", choices=("table", "jsonl"), default="table",
                   help="rank, score, doc, offsets and a preview (default), or JSON lines with the full text")
    location(s)
    model(s)

    def evaluation(p: argparse.ArgumentParser, out: str) -> None:
        sizes(p)
        p.add_argument("--k", type=_positive_int, default=5, help="chunks retrieved per question (default 5)")
        p.add_argument("--budget", type=_positive_int, default=1000, help="token budget for recall_at_budget")
        p.add_argument("--out", type=Path, default=Path(out), help=f"output folder (default {out})")
        p.add_argument("--store", type=Path,
                       help="keep the collections in this Qdrant folder (default: $QDRANT_URL if set, else in memory)")
        p.add_argument("--no-cache", action="store_true", help="do not read or write the embedding cache")
        model(p)
        timeout(p)

    e = command("evaluate", "compare chunking configurations on a corpus and questions", run_evaluate)
    e.add_argument("--corpus", type=Path, required=True, help="folder of .txt/.md/.html/.pdf documents")
    e.add_argument("--questions", type=Path, required=True, help="questions.jsonl (see data/README.md)")
    which = e.add_mutually_exclusive_group()  # a --config file names its own strategies
    which.add_argument("--strategies", help="comma-separated strategies (default: the standard set)")
    which.add_argument("--config", type=Path, help="JSON/YAML list of {name, strategy, options}")
    evaluation(e, "out/evaluate")

    d = command("demo", "evaluate every strategy on the bundled corpus and questions", run_demo)
    evaluation(d, "out/demo")
    d.add_argument("--snapshot", type=Path, help="also write timing-free CSVs here (docs/results)")
    return parser
