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
import os
import re
import sys
import unicodedata
import warnings
from pathlib import Path

from chunking import arguments
from chunking.arguments import DEFAULT_STORE
from chunking.configs import configs as _configs
from chunking.configs import flag_options as _flag_options
from chunking.configs import strategy_configs as _strategy_configs
from chunking.indexing import BATCH
from chunking.options import one_line, resolve_sizes
from chunking.registry import chunk_document, chunk_documents, takes

EMBED_BATCH = BATCH  # chunks `index` chunks, embeds and writes at a time (the one pipeline's batch)
PREVIEW_CHARS = 70
# Shown escaped in tables: control characters (ANSI escapes could drive the terminal) and bidi
# overrides (they reorder what is shown). JSON output escapes C0 controls by itself.
UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# A usage error names the flag the user typed, not the parameter it becomes: `--unit sentences`, not
# `unit='sentences'`.
FLAGS = {"min_chunk_size": "--min-chunk-size", "chunk_size": "--chunk-size", "chunk_overlap": "--chunk-overlap"}
PARAMETER = re.compile(r"(?<![\w-])(" + "|".join(FLAGS) + r")(?!\w)")
UNIT_VALUE = re.compile(r"(?<![\w-])unit=(['\"]?)([\w-]+)\1|(?<![\w-])unit(?= must)")


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
    from chunking import indexing, store
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
        seen: set[str] = set()
        with _progress(len(documents), "document") as bar:

            def advance(batch: list) -> None:
                seen.update(c.doc_id for c in batch)
                bar.update(len(seen) - 1 - bar.n)  # the batch's last document may go on in the next

            chunks = chunk_documents(documents, args.strategy, **options)
            report = indexing.index_chunks(client, args.collection, chunks, lambda fresh: _embed(embedder, fresh),
                                           batch_size=EMBED_BATCH, documents=[d.doc_id for d in documents],
                                           progress=advance)
            bar.update(len(documents) - bar.n)
        points = client.count(args.collection, exact=True).count
    finally:
        client.close()
    _print_indexed(args, len(documents), report.chunks, where, report.written, report.stale, points)
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
    from chunking.datasets import corpus_dir, questions_path

    args.corpus, args.questions, args.config, args.strategies = corpus_dir(), questions_path(), None, None
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
    return embedder.embed([c.embed_text for c in chunks])


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
        from chunking.embed import WordPieces

        options["unit"] = WordPieces((embedder or _embedder(args)).tokenizer)
    return options


def _parser() -> argparse.ArgumentParser:
    return arguments.parser({"chunk": run_chunk, "index": run_index, "search": run_search,
                             "evaluate": run_evaluate, "demo": run_demo})
