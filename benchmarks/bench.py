"""Speed, memory and correctness of every structural strategy, beside tiktoken and the production chunkers.

1. Text: the bundled English documents (or `--text FILE`) repeated to each size in `--sizes`, in millions
   of characters ("MB" below); each copy after the first has some words swapped (`vary`), so a chunker
   that memoises by content does not find every later sentence in its cache.
2. Speed: the median of `--repeat` runs in this one process, after a warm-up call, of tiktoken's encode
   (the floor: on one thread, and on the threads `chunking` encodes long texts on), every structural
   strategy of `chunking`, and the peers of the `bench` extra when installed, on the same text with
   the same settings (cl100k tokens, overlap 0, offsets asked for where a peer offers them). Each run
   gets a freshly built splitter, so no memo cache carries over; a case's sizes take turns within
   each round, so a change in the machine's load hits them alike.
3. Checks, outside the timing, on every output: offsets true (`text[start:end] == chunk`, from the
   chunker's own offsets, else a forward `find`) and the size bound (cl100k tokens or characters).
4. Memory: each case once more at the first size, in a fresh subprocess: the larger of the RSS growth
   during one call (sees C and Rust allocations) and tracemalloc's peak (sees Python's, even where
   they reuse memory the process already held).
5. Semantic: `semantic` on `--semantic-kb` of text against embedding every sentence once with MiniLM
   (embedding cache off), timed in turns; MiniLM's chunks/s by batch size, sorted by length or not;
   and its backends side by side (`benchmarks/embedding.py`: torch, ONNX, int8 — speed, vectors,
   recall; with `--cold`, `chunking demo` and the notebooks timed cold on torch and on ONNX); and
   `chunking index` on many small files (`benchmarks/many_files.py`, `--many-files`).
6. Shapes (`--shapes`, default all; none with `--quick`): recursive by characters and by tokens beside the
   peers on other shapes of real text (`benchmarks/shapes.py`: long-paragraph prose, lines without blank
   lines, tables of numbers, code, chat, the docs), each repeated to every size as in 1; in each round
   every case takes its turn on a shape, so ratios between cases are steadier than their MB/s.
7. Output: markdown tables on stdout; with `--out DIR` (default docs/) also DIR/benchmarks.md and
   DIR/benchmarks.png; `--readme` refreshes the summary in README.md.

It runs offline (network calls raise at once), tunes nothing, and reports a peer that fails instead of
stopping. It does not run the peers' semantic chunkers. `make bench` installs the peers and runs it.

    python benchmarks/bench.py [--sizes 1,10] [--repeat 5] [--text FILE] [--semantic-kb 150] [--shapes all|none|a,b]
                               [--quick]
"""

from __future__ import annotations

import argparse
import ctypes
import datetime
import functools
import gc
import importlib.metadata
import importlib.util
import json
import os
import platform
import random
import re
import shlex
import socket
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chunking import chunk, get_encoding
from chunking.sizers import Tokens
from chunking.tokens import PART_CHARS, seam_cuts

ROOT = Path(__file__).resolve().parent.parent
THREADS = Tokens().threads  # what the default tokens sizer encodes long texts on
CORPUS = ROOT / "data" / "corpus"
README = ROOT / "README.md"
SUMMARY_START, SUMMARY_END = "<!-- bench-summary -->", "<!-- /bench-summary -->"
FLOOR = "tiktoken encode (the floor)"
FIXED, FIXED_CHARS = "fixed, 512 tokens", "fixed, 1000 characters"
SENTENCE, RECURSIVE, RECURSIVE_CHARS = "sentence, 512 tokens", "recursive, 512 tokens", "recursive, 1000 characters"
QUICK = {"sizes": "0.2", "repeat": 1, "memory": False, "semantic_kb": 2.0, "batch_sizes": "16", "torch_threads": 1,
         "recall": False, "many_files": "0", "pathological_sizes": "1000,10000",
         "pathological_families": "dots,html-open-tags", "shapes": "none", "many_documents": 0}
PEER_MODULES = {  # distribution → import name
    "langchain-text-splitters": "langchain_text_splitters",
    "chonkie": "chonkie",
    "semchunk": "semchunk",
    "semantic-text-splitter": "semantic_text_splitter",
    "llama-index-core": "llama_index.core",
}
WARM_UP = 10_000  # characters: one call on these first, so one-time set-up (lazy imports) is not counted
EMBED_TEXTS = 64  # chunks for the embedding throughput
VARIABLE_WORD = re.compile(r"\b[a-z]{4,}\b(?!\.)")  # words `vary` may swap
VARIABLE_DIGIT = re.compile(r"[0-9]")  # and digits
DIGITS = "0123456789"
Piece = tuple[int | None, int | None, str]  # a chunk's (start, end) where the chunker says, and its text


@dataclass(frozen=True)
class Case:
    """One timed call: `build()` imports and constructs (untimed) and returns the call to time."""

    task: str
    name: str
    build: Callable[[], Callable[[str], Any]]
    pieces: Callable[[Any], list[Piece]] | None = None  # None: the floor, which makes no chunks
    unit: str = "tokens"
    size: int = 512
    package: str = "chunking"

    @property
    def key(self) -> str:
        return f"{self.task} | {self.name}"


@dataclass(frozen=True)
class Check:
    """What the checker found in one output: wrong offsets, and sizes against the bound."""

    chunks: int
    bad_offsets: int
    over_bound: int
    max_size: int

    def __add__(self, other: Check) -> Check:
        return Check(self.chunks + other.chunks, self.bad_offsets + other.bad_offsets,
                     self.over_bound + other.over_bound, max(self.max_size, other.max_size))


@dataclass
class Row:
    """One line of the table: a case's speed and chunk count per size, its checks, its memory, or why not."""

    case: Case
    speed: dict[float, float] = field(default_factory=dict)  # size → MB/s
    chunks: dict[float, int] = field(default_factory=dict)
    check: Check | None = None  # over all sizes
    memory: float | None = None  # extra MB at the first size
    error: str = ""


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    get_encoding()  # cl100k built offline and registered, before any peer asks tiktoken for it
    if args.memory_case:
        print(json.dumps(memory_case(args.memory_case, build_text(args.sizes[0], args.text, args.exact_copies))))
        return
    load_before = os.getloadavg()
    texts = {mb: build_text(mb, args.text, args.exact_copies) for mb in args.sizes}
    rows = [Row(case) for case in cases(peers=args.peers)]
    for row in rows:
        row.error = missing(row.case)
    run_speed(rows, texts, args.repeat)
    if args.memory:
        run_memory(rows, args)
    semantic = run_semantic(args) if args.semantic_kb > 0 else {"skipped": "--semantic-kb 0"}
    hostile = run_pathological(args) if args.pathological_sizes else []
    if args.many_files and "skipped" not in semantic:
        semantic["many_files"] = sibling("many_files").run(args.many_files)
    shaped = run_shapes(args) if args.shapes else []
    many = sibling("many_documents").run(args.many_documents, repeat=args.repeat) if args.many_documents else []
    report = Report(args, rows, semantic, machine(load_before, texts[args.sizes[0]], args), hostile, shaped, many)
    print(report.markdown(page=False))
    if args.out:
        report.write(args.out)
    if args.readme:
        replace_summary(README, report.summary())


# --- pathological input --------------------------------------------------------------------------------


@functools.cache
def sibling(name: str):
    """benchmarks/NAME.py, by path (pysbd installs a top-level package named `benchmarks`)."""
    spec = importlib.util.spec_from_file_location(f"chunking_{name}", Path(__file__).parent / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def pathological():
    return sibling("pathological")


def run_pathological(args: argparse.Namespace) -> list[dict]:
    """Every pathological family through every target at `--pathological-sizes`, timed once each."""
    module = pathological()
    families = args.pathological_families or list(module.DEFAULT_FAMILIES)
    families = list(module.FAMILIES) if families == ["all"] else families
    progress(f"pathological input: {len(families)} families at {args.pathological_sizes} characters")
    return module.run(families, list(module.targets()), tuple(args.pathological_sizes))


MANY_DOCUMENTS_NOTE = (
    "Documents per second on many documents of about 2,000 characters (`benchmarks/many_documents.py`; its "
    "docstring says how they are made): ours through `chunk_documents` in one process and with `workers` = the "
    "cores, the peers through their own many-texts paths (chonkie's `chunk_batch`, semchunk with a process per "
    "core, semantic-text-splitter's `chunk_all_indices` on Rust threads, LangChain's `create_documents`). "
    "Target (issue 18): at least the fastest peer that has the strategy.")


# --- shapes of text -------------------------------------------------------------------------------------


def shapes():
    return sibling("shapes")


SHAPE_TASKS = (RECURSIVE_CHARS, RECURSIVE)


def run_shapes(args: argparse.Namespace) -> list[tuple[str, list[Row]]]:
    """Each shape at every size: the recursive cases, ours and the peers', timed in turns (see `in_turns`)."""
    found = []
    for name in args.shapes:
        base = shapes().base(name)
        texts = {mb: build_text(mb, exact=args.exact_copies, base=base) for mb in args.sizes}
        rows = [Row(case) for case in cases(peers=args.peers) if case.task in SHAPE_TASKS]
        for row in rows:
            row.error = missing(row.case)
        progress(f"shape {name}: {len(base):,} characters repeated to {', '.join(f'{mb:g}' for mb in args.sizes)} MB")
        in_turns(rows, texts, args.repeat)
        found.append((name, rows))
    return found


def in_turns(rows: list[Row], texts: dict[float, str], repeat: int) -> None:
    """Like `run_speed`, but in each round every case runs once at each size before any runs again, so a
    change in the machine's load hits every case alike; a case that raises is reported and dropped."""
    times: dict[int, dict[float, list[float]]] = {}
    outputs: dict[int, dict[float, Any]] = {}
    for k, row in enumerate(rows):
        if not row.error:
            try:
                row.case.build()(next(iter(texts.values()))[:WARM_UP])
                times[k], outputs[k] = {mb: [] for mb in texts}, {}
            except Exception as error:
                row.error = f"failed: {type(error).__name__}: {' '.join(str(error).split())[:200]}"
    for _ in range(repeat):
        for mb, text in texts.items():
            for k in list(times):
                run = rows[k].case.build()
                outputs[k][mb] = None
                gc.collect()
                start = time.perf_counter()
                try:
                    outputs[k][mb] = run(text)
                except Exception as error:
                    rows[k].error = f"failed: {type(error).__name__}: {' '.join(str(error).split())[:200]}"
                    del times[k]
                    continue
                times[k][mb].append(time.perf_counter() - start)
    for k, by_size in times.items():
        row = rows[k]
        for mb, text in texts.items():
            row.speed[mb] = len(text) / 1e6 / statistics.median(by_size[mb])
            pieces = row.case.pieces(outputs[k][mb])
            found = check(text, pieces, unit=row.case.unit, bound=row.case.size)
            row.chunks[mb], row.check = len(pieces), found if row.check is None else row.check + found
        progress(f"  {row.case.key}: " + ", ".join(f"{row.speed[mb]:.2f} MB/s at {mb:g} MB" for mb in texts))


# --- the cases ------------------------------------------------------------------------------------------


def cases(peers: bool = True) -> list[Case]:
    """The floor, ours, and (with `peers`) every peer case, in table order: grouped by task, ours first."""
    ours = [
        Case(FLOOR, "tiktoken encode_ordinary", lambda: get_encoding().encode_ordinary, package="tiktoken"),
        Case(FLOOR, f"tiktoken encode_ordinary_batch, {THREADS} threads, parts cut at seams", threaded_floor,
             package="tiktoken"),
        our_case(FIXED, "fixed", chunk_size=512),
        our_case(FIXED_CHARS, "fixed", chunk_size=1000, unit="characters"),
        our_case(SENTENCE, "sentence", chunk_size=512),
        our_case("paragraph, 512 tokens", "paragraph", chunk_size=512),
        our_case("markdown, 512 tokens", "markdown", chunk_size=512),
        our_case("sliding, 512 tokens, overlap 0.25", "sliding", chunk_size=512, overlap_fraction=0.25),
        our_case(RECURSIVE, "recursive", chunk_size=512),
        our_case(RECURSIVE_CHARS, "recursive", chunk_size=1000, unit="characters"),
    ]
    order = [case.task for case in ours]
    everything = ours + (peer_cases() if peers else [])
    return sorted(everything, key=lambda case: order.index(case.task))  # stable: ours stay first


def threaded_floor() -> Callable[[str], Any]:
    """tiktoken on the threads `chunking` uses, on parts cut at the same seams."""
    encoding = get_encoding()

    def encode(text: str) -> list[list[int]]:
        cuts = seam_cuts(text, len(text) // PART_CHARS)
        return encoding.encode_ordinary_batch([text[a:b] for a, b in zip(cuts, cuts[1:])], num_threads=THREADS)

    return encode


def our_case(task: str, strategy: str, **options) -> Case:
    def build():
        return lambda text: chunk(text, strategy, **options)

    pieces = lambda chunks: [(c.start, c.end, c.text) for c in chunks]  # noqa: E731
    return Case(task, "chunking", build, pieces, options.get("unit", "tokens"), options["chunk_size"])


def peer_cases() -> list[Case]:
    """The peers on our tasks, configured as their documentation shows, with cl100k where they count tokens."""
    lc, ck, sc, sts = "langchain-text-splitters", "chonkie", "semchunk", "semantic-text-splitter"
    documents = lambda docs: [(d.metadata["start_index"], None, d.page_content) for d in docs]  # noqa: E731
    chonkie_pieces = lambda chunks: [(c.start_index, c.end_index, c.text) for c in chunks]  # noqa: E731
    semchunk_pieces = lambda out: [(s, e, c) for c, (s, e) in zip(*out)]  # noqa: E731
    indices = lambda out: [(start, None, c) for start, c in out]  # noqa: E731
    chars = {"unit": "characters", "size": 1000}
    return [
        Case(FIXED, "LangChain TokenTextSplitter", langchain_splitter("TokenTextSplitter"), documents, package=lc),
        Case(FIXED, "chonkie TokenChunker", chonkie_chunker("TokenChunker"), chonkie_pieces, package=ck),
        Case(RECURSIVE_CHARS, "LangChain RecursiveCharacterTextSplitter",
             langchain_splitter("RecursiveCharacterTextSplitter", chunk_size=1000), documents, **chars, package=lc),
        Case(RECURSIVE_CHARS, "chonkie RecursiveChunker", chonkie_chunker("RecursiveChunker", chunk_size=1000),
             chonkie_pieces, **chars, package=ck),
        Case(RECURSIVE_CHARS, "semchunk", semchunk_chunker(len, 1000), semchunk_pieces, **chars, package=sc),
        Case(RECURSIVE_CHARS, "semantic-text-splitter", text_splitter(None, 1000), indices, **chars, package=sts),
        Case(RECURSIVE, "semchunk", semchunk_chunker(None, 512), semchunk_pieces, package=sc),
        Case(RECURSIVE, "LangChain RecursiveCharacterTextSplitter",
             langchain_splitter("RecursiveCharacterTextSplitter"), documents, package=lc),
        Case(RECURSIVE, "semantic-text-splitter (tiktoken-rs)", text_splitter("gpt-4", 512), indices, package=sts),
        Case(RECURSIVE, "chonkie RecursiveChunker", chonkie_chunker("RecursiveChunker"), chonkie_pieces, package=ck),
        Case(SENTENCE, "chonkie SentenceChunker", chonkie_chunker("SentenceChunker", chunk_overlap=0), chonkie_pieces,
             package=ck),
        Case(SENTENCE, "LlamaIndex SentenceSplitter", llamaindex_sentences, package="llama-index-core",
             pieces=lambda nodes: [(n.start_char_idx, n.end_char_idx, n.text) for n in nodes]),
    ]


def langchain_splitter(cls_name: str, chunk_size: int | None = None):
    """A LangChain splitter with start indices; sized in cl100k tokens unless `chunk_size` is in characters."""

    def build():
        splitter = made_langchain(cls_name, chunk_size)
        return lambda text: splitter.create_documents([text])

    return build


def made_langchain(cls_name: str, chunk_size: int | None = None):
    """The LangChain splitter object itself (`many_documents.py` calls it on many texts)."""
    import langchain_text_splitters

    cls = getattr(langchain_text_splitters, cls_name)
    options = {"chunk_overlap": 0, "add_start_index": True}
    if chunk_size is not None:
        return cls(chunk_size=chunk_size, **options)
    if cls_name == "TokenTextSplitter":
        return cls(encoding_name="cl100k_base", chunk_size=512, **options)
    return cls.from_tiktoken_encoder(encoding_name="cl100k_base", chunk_size=512, **options)


def chonkie_chunker(cls_name: str, chunk_size: int | None = None, **options):
    """A chonkie chunker: characters when `chunk_size` is given, else our cl100k `Encoding` object
    (the name "cl100k_base" makes chonkie fetch a tokenizer from the Hugging Face hub)."""
    return lambda: made_chonkie(cls_name, chunk_size, **options).chunk


def made_chonkie(cls_name: str, chunk_size: int | None = None, **options):
    import chonkie

    sizing = {"chunk_size": chunk_size} if chunk_size else {"tokenizer": get_encoding(), "chunk_size": 512}
    return getattr(chonkie, cls_name)(**sizing, **options)


def semchunk_chunker(counter: Callable[[str], int] | None, chunk_size: int):
    def build():
        chunker = made_semchunk(counter, chunk_size)  # memoizes: built fresh per run
        return lambda text: chunker(text, offsets=True)

    return build


def made_semchunk(counter: Callable[[str], int] | None, chunk_size: int):
    import semchunk

    return semchunk.chunkerify(counter or get_encoding(), chunk_size)


def text_splitter(tiktoken_model: str | None, chunk_size: int):
    """semantic-text-splitter; its Rust tiktoken-rs has cl100k built in ("gpt-4"), so it needs no download."""
    return lambda: made_text_splitter(tiktoken_model, chunk_size).chunk_indices


def made_text_splitter(tiktoken_model: str | None, chunk_size: int):
    from semantic_text_splitter import TextSplitter

    return TextSplitter.from_tiktoken_model(tiktoken_model, chunk_size) if tiktoken_model else TextSplitter(chunk_size)


def llamaindex_sentences():
    """LlamaIndex's SentenceSplitter counting cl100k tokens as we do, special-token strings as plain text
    (its own tiktoken and NLTK data ship in the wheel)."""
    from llama_index.core import Document
    from llama_index.core.node_parser import SentenceSplitter

    splitter = SentenceSplitter(chunk_size=512, chunk_overlap=0, tokenizer=get_encoding().encode_ordinary)
    return lambda text: splitter.get_nodes_from_documents([Document(text=text)])


def missing(case: Case) -> str:
    """Why a case cannot run here ("" if it can): its package is not installed."""
    module = PEER_MODULES.get(case.package)
    try:
        found = module is None or importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # the parent of a dotted name is missing
        found = False
    return "" if found else f"not installed (pip install -e '.[bench]' for {case.package})"


# --- text, timing, checks -------------------------------------------------------------------------------


def build_text(megabytes: float, source: Path | None = None, exact: bool = False, base: str | None = None) -> str:
    """`megabytes` million characters: `base`, `source` or the bundled English documents, repeated and cut
    to size; each copy after the first varied (see `vary`) unless `exact`."""
    if base is None and source:
        base = source.read_text(encoding="utf-8")
    elif base is None:
        english = [p for p in sorted(CORPUS.glob("*")) if p.suffix in (".md", ".txt") and "_ja" not in p.stem]
        base = "\n\n".join(p.read_text(encoding="utf-8") for p in english)
    if not base:
        raise ValueError(f"--text must not be empty, got {str(source)!r}")
    target = round(megabytes * 1_000_000)
    copies = [base if exact or k == 0 else vary(base, seed=k) for k in range(target // len(base) + 1)]
    return "\n\n".join(copies)[:target]


def vary(text: str, seed: int) -> str:
    """`text` with about one lowercase word in four swapped for another word of it, and one digit in four
    for another digit, chosen by `seed`.

    Exact copies would flatter any chunker that memoises by content (semchunk, chonkie): from the second
    copy on, every sentence would be a cache hit, which real text of that size does not give. Varied,
    about one long sentence in ten and one paragraph in three (mostly headings and list items) still
    recur; a table row recurs only if none of its digits changed (the tables shape is numbers: with words
    alone varied, every row after the first copy was a hit). The swaps keep the text's shape: lines,
    markup, punctuation, the length of every number, and every word before a period (no abbreviation is
    made or lost, so the sentence boundaries stay where they were)."""
    rng = random.Random(seed)
    words = sorted(set(VARIABLE_WORD.findall(text)))
    text = VARIABLE_WORD.sub(lambda m: rng.choice(words) if rng.random() < 0.25 else m.group(0), text)
    return VARIABLE_DIGIT.sub(lambda m: rng.choice(DIGITS) if rng.random() < 0.25 else m.group(0), text)


def timed(build: Callable[[], Callable[[str], Any]], texts: dict[float, str], repeat: int
          ) -> tuple[dict[float, float], dict[float, Any]]:
    """Median seconds per size of `repeat` rounds, each call on a freshly built callable, the sizes taken in
    turns within a round (so a change in the machine's load hits every size alike); and the last outputs."""
    build()(next(iter(texts.values()))[:WARM_UP])
    times, outputs = {mb: [] for mb in texts}, {}
    for _ in range(repeat):
        for mb, text in texts.items():
            outputs[mb] = None
            run = build()
            gc.collect()
            start = time.perf_counter()
            outputs[mb] = run(text)
            times[mb].append(time.perf_counter() - start)
    return {mb: statistics.median(values) for mb, values in times.items()}, outputs


def check(text: str, pieces: list[Piece], *, unit: str, bound: int) -> Check:
    """Count chunks whose offsets are not true, and chunks longer than `bound` in `unit`."""
    bad = sum(not 0 <= start <= end <= len(text) or text[start:end] != piece
              for (start, end), (_, _, piece) in zip(locate(text, pieces), pieces))
    sizes = measure([piece for _, _, piece in pieces], unit)
    return Check(len(pieces), bad, sum(size > bound for size in sizes), max(sizes, default=0))


def locate(text: str, pieces: list[Piece]) -> list[tuple[int, int]]:
    """Each chunk's span: the chunker's own offsets where given, else found from the previous chunk's end
    (overlap is 0 in every case here); a chunk that is not in the text gets start -1."""
    spans, cursor = [], 0
    for start, end, piece in pieces:
        if start is None:
            start = text.find(piece, cursor)
        if end is None:
            end = start + len(piece)
        if start >= 0:
            cursor = end
        spans.append((start, end))
    return spans


def measure(pieces: list[str], unit: str) -> list[int]:
    if unit == "characters":
        return [len(piece) for piece in pieces]
    return [len(ids) for ids in get_encoding().encode_ordinary_batch(pieces)]


def run_speed(rows: list[Row], texts: dict[float, str], repeat: int) -> None:
    """Time every runnable case at every size, checking each output; a case that raises is reported."""
    for row in (r for r in rows if not r.error):
        try:
            seconds, outputs = timed(row.case.build, texts, repeat)
        except Exception as error:  # a peer that fails (say, wants the network) is reported, not fatal
            row.error = f"failed: {type(error).__name__}: {' '.join(str(error).split())[:200]}"
            progress(f"{row.case.key}: {row.error}")
            continue
        for mb, text in texts.items():
            row.speed[mb] = len(text) / 1e6 / seconds[mb]
            if row.case.pieces:
                pieces = row.case.pieces(outputs[mb])
                found = check(text, pieces, unit=row.case.unit, bound=row.case.size)
                row.chunks[mb], row.check = len(pieces), found if row.check is None else row.check + found
        progress(f"{row.case.key}: " + ", ".join(f"{row.speed[mb]:.2f} MB/s at {mb:g} MB" for mb in texts))


def progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


# --- memory, in a fresh process per case ----------------------------------------------------------------

MEMORY_METHOD = (
    "measured in a fresh process per case (text loaded, one warm-up call on 10,000 characters, splitter built) "
    "as the larger of two readings of one call: (a) the growth of resident memory (peak RSS during the call "
    "minus RSS before it, free heap memory returned to the OS first), which sees C and Rust allocations but "
    "not memory reused from Python's own free pools, and (b) tracemalloc's peak, which sees every Python "
    "allocation but nothing native"
)


def run_memory(rows: list[Row], args: argparse.Namespace) -> None:
    """Each runnable case at the first size, in a subprocess of its own (the same text, built the same way)."""
    same_text = ["--sizes", f"{args.sizes[0]:g}", *(["--text", str(args.text)] if args.text else []),
                 *(["--exact-copies"] if args.exact_copies else [])]
    for row in (r for r in rows if not r.error):
        command = [sys.executable, __file__, "--memory-case", row.case.key, *same_text]
        result = subprocess.run(command, capture_output=True, text=True, timeout=1800)
        if result.returncode:
            progress(f"memory {row.case.key}: failed: {result.stderr.strip()[-300:]}")
            continue
        found = json.loads(result.stdout.strip().splitlines()[-1])
        row.memory = max(found.values())
        progress(f"memory {row.case.key}: {found}")


def memory_case(key: str, text: str) -> dict[str, float]:
    """One case's extra memory in MB, measured both ways (this is the subprocess's side)."""
    case = next(c for c in cases() if c.key == key)
    case.build()(text[:WARM_UP])
    found = {}
    if Path("/proc/self/clear_refs").exists():  # Linux: the peak RSS can be reset; first, before any garbage
        found["rss_mb"] = rss_growth(case.build(), text)
    found["traced_mb"] = traced_peak(case.build(), text)
    return found


def rss_growth(run: Callable[[str], Any], text: str) -> float:
    gc.collect()
    _trim_heap()
    before = _status_kb("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")  # VmHWM := VmRSS
    output = run(text)
    peak = _status_kb("VmHWM")
    del output  # alive until the peak is read: the output is part of it
    return max(peak - before, 0) * 1024 / 1e6


def traced_peak(run: Callable[[str], Any], text: str) -> float:
    gc.collect()
    tracemalloc.start()
    output = run(text)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    del output
    return peak / 1e6


def _status_kb(name: str) -> int:
    return int(re.search(rf"^{name}:\s+(\d+) kB", Path("/proc/self/status").read_text(), re.M).group(1))


def _trim_heap() -> None:
    """Give the C heap's free memory back to the OS (glibc), so reusing it counts as growth."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


# --- semantic chunking and embedding throughput ---------------------------------------------------------


def run_semantic(args) -> dict:
    """`semantic` against embedding each sentence once (model's encode, same batch size), and chunks/s."""
    if importlib.util.find_spec("sentence_transformers") is None:
        return {"skipped": "the retrieval extra is not installed (pip install -e '.[retrieval]')"}
    import torch

    from chunking.embed import default_embedder
    from chunking.segment import split_sentences

    if args.torch_threads:
        torch.set_num_threads(args.torch_threads)
    text = build_text(args.semantic_kb / 1000, args.text, args.exact_copies)
    embedder = default_embedder()  # CHUNKING_CACHE=off: every run embeds
    model = embedder.model
    model.encode(["load and warm up"])
    sentences = [text[s:e] for s, e in split_sentences(text)]
    seconds, outputs = interleaved({"floor": lambda: model.encode(sentences, batch_size=embedder.batch_size),
                                    "ours": lambda: chunk(text, "semantic", chunk_size=512)}, args.repeat)
    progress(f"semantic: {seconds['ours']:.2f} s, floor {seconds['floor']:.2f} s")
    texts = [c.text for c in chunk(text, "recursive", chunk_size=200)][:EMBED_TEXTS]
    calls = {(b, order): functools.partial(embed_in_batches, model, texts, b, order == "sorted by length")
             for b in args.batch_sizes for order in ("sorted by length", "document order")}
    speeds = {key: len(texts) / value for key, value in interleaved(calls, args.repeat)[0].items()}
    backends = sibling("embedding").throughput(texts, args.batch_sizes, args.repeat, timer=interleaved)
    progress("embedding: " + ", ".join(f"{b} {s:.1f}/s" for (b, n), s in backends["speeds"].items()
                                         if n == args.batch_sizes[0]))
    recall = sibling("embedding").recall() if args.recall else {}
    cold = sibling("embedding").cold_runs() if args.cold else {}
    return {"characters": len(text), "sentences": len(sentences), "chunks": len(outputs["ours"]),
            "texts": len(texts), "speeds": speeds, "threads": torch.get_num_threads(), "backend": embedder.backend,
            "backends": backends, "recall": recall, "cold": cold, **seconds}


def interleaved(calls: dict[Any, Callable[[], Any]], repeat: int) -> tuple[dict[Any, float], dict[Any, Any]]:
    """Median seconds of each call, taken in turns (a, b, a, b, …) so a change in the machine's load hits
    all of them alike; and each call's last output."""
    times, outputs = {key: [] for key in calls}, {}
    for _ in range(repeat):
        for key, call in calls.items():
            gc.collect()
            start = time.perf_counter()
            outputs[key] = call()
            times[key].append(time.perf_counter() - start)
    return {key: statistics.median(values) for key, values in times.items()}, outputs


def embed_in_batches(model, texts: list[str], batch_size: int, by_length: bool) -> None:
    """sentence-transformers sorts a call's inputs by length itself, so document order takes one call per
    batch (each batch padded to its own longest text)."""
    if by_length:
        model.encode(texts, batch_size=batch_size)
        return
    for i in range(0, len(texts), batch_size):
        model.encode(texts[i : i + batch_size], batch_size=batch_size)


# --- the report -----------------------------------------------------------------------------------------


def machine(load_before: tuple[float, float, float], text: str, args: argparse.Namespace) -> dict:
    versions = {dist: _version(dist) for dist in ["chunking", "tiktoken", *PEER_MODULES, "sentence-transformers",
                                                  "torch"]}
    origin = f"`{args.text}`" if args.text else "the bundled English documents (data/corpus, .md and .txt)"
    copies = ("exact copies, which a chunker that memoises by content gains from" if args.exact_copies else
              "each copy after the first with about one word in four swapped: exact copies would make every later "
              "sentence a cache hit for a chunker that memoises by content")
    return {
        "text": f"{origin}, repeated to size ({copies}); Python holds it at {_char_width(text)} bytes a character",
        "date": datetime.date.today().isoformat(),
        "platform": platform.platform(),
        "processor": _cpu_model(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "load": f"{load_before[0]:.2f} at the start, {os.getloadavg()[0]:.2f} at the end (1 minute)",
        "versions": ", ".join(f"{d} {v}" for d, v in versions.items() if v),
    }


def _char_width(text: str) -> int:
    """Bytes per character of `text` as a Python str (PEP 393: the widest character decides)."""
    widest = max(map(ord, text), default=0)
    return 1 if widest < 0x100 else 2 if widest < 0x10000 else 4


def _cpu_model() -> str:
    try:
        return re.search(r"^model name\s*:\s*(.+)$", Path("/proc/cpuinfo").read_text(), re.M).group(1)
    except (OSError, AttributeError):
        return platform.processor() or platform.machine()


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return ""


@dataclass
class Report:
    """Everything measured, as markdown tables (stdout, README) and as the docs page with its plot."""

    args: argparse.Namespace
    rows: list[Row]
    semantic: dict
    machine: dict
    pathological: list[dict] = field(default_factory=list)
    shapes: list[tuple[str, list[Row]]] = field(default_factory=list)
    documents: list[dict] = field(default_factory=list)

    @property
    def measured(self) -> list[Row]:
        return [row for row in self.rows if not row.error]

    def markdown(self, page: bool = True) -> str:
        parts = [PAGE_INTRO.format(command=command_line(self.args), **self.machine).strip()] if page else []
        parts += ["## Throughput and checks", self.speed_table(), self.not_measured()]
        parts += ["![MB/s per case, ours and the peers](benchmarks.png)", PEERS_NOTE] if page else []
        parts += ["## Targets (issue 6)", self.targets_table()]
        parts += ["## Semantic chunking and embedding", self.semantic_tables()]
        if self.shapes:
            parts += ["## Shapes of text (issue 18)", self.shapes_tables()]
        if self.documents:
            parts += ["## Many small documents (issue 18)", MANY_DOCUMENTS_NOTE, sibling("many_documents").markdown(
                self.documents)]
        if self.pathological:
            parts += ["## Pathological input", self.pathological_tables()]
        return "\n\n".join(p for p in parts if p) + "\n"

    def shapes_tables(self) -> str:
        """Per shape: the recursive cases' MB/s and checks, and ours over the fastest peer per size."""
        sizes = self.args.sizes
        intro = ("Recursive chunking by characters (1000) and by cl100k tokens (512) beside the peers, on shapes of "
                 "real text built by `benchmarks/shapes.py` (its docstring names every source), each repeated to "
                 f"size as above; median of {self.args.repeat}, every case taking its turn in each round.")
        lines = [["shape", "task", "implementation", *(f"{mb:g} MB, MB/s" for mb in sizes), "offsets true",
                  "size bound"]]
        verdicts = [["shape", "target", *(f"ours / fastest peer, {mb:g} MB" for mb in sizes), "fastest peer", "holds"]]
        for name, rows in self.shapes:
            measured = [row for row in rows if not row.error]
            for row in measured:
                lines.append([name, row.case.task, row.case.name, *(_number(row.speed[mb]) for mb in sizes),
                              *check_cells(row.check, row.case)])
            for task in SHAPE_TASKS:
                if not any(r.case.task == task and r.case.name == "chunking" for r in measured):
                    continue
                ratios = [_over_fastest_peer(measured, task, mb) for mb in sizes]
                fastest = _fastest_peer(measured, task, sizes[-1])
                holds = "—" if None in ratios else "✓" if min(ratios) >= 1 else "✗"
                verdicts.append([name, f"{task} ≥ the fastest peer",
                                 *("—" if r is None else f"{r:.2f}×" for r in ratios),
                                 fastest.case.name if fastest else "—", holds])
        errors = [f"- {name}: {row.case.key}: {row.error}" for name, rows in self.shapes for row in rows if row.error]
        return "\n\n".join([intro, table(lines), table(verdicts), *(["Not measured:\n\n" + "\n".join(errors)]
                                                                      if errors else [])])

    def pathological_tables(self) -> str:
        module, sizes = pathological(), self.args.pathological_sizes
        flagged = module.superlinear(self.pathological)
        families = sorted({row["family"] for row in self.pathological})
        judged = [row["growth"] for row in self.pathological if row["growth"] is not None]
        verdict = ("none is superlinear" if not flagged else
                   f"**{len(flagged)} superlinear**: " + ", ".join(f"{r['target']} on {r['family']}" for r in flagged))
        intro = (f"{len(families)} families of hostile text (`benchmarks/pathological.py`) through every loader and "
                 f"strategy, one call each at {', '.join(f'{n:,}' for n in sizes)} characters (64 tokens a chunk). "
                 f"Growth is the time at the largest size over the time at the one before: about "
                 f"{sizes[-1] / sizes[-2]:g} for linear work, {(sizes[-1] / sizes[-2]) ** 2:g} for quadratic; "
                 f"it is not judged under {module.NOISE:g} s. Highest growth: "
                 f"{max(judged, default=0):.1f}; {verdict} (flagged above {module.SUPERLINEAR:g}). "
                 "tests/test_linear.py counts "
                 "the same families' work (characters read by the tokenizer, a unit, the HTML tokenizer).")
        return intro + "\n\n" + module.markdown(self.pathological, sizes)

    def speed_table(self) -> str:
        sizes, first = self.args.sizes, self.args.sizes[0]
        header = ["task", "implementation", *(f"{mb:g} MB, MB/s" for mb in sizes)]
        header += [f"{sizes[-1]:g} MB / {first:g} MB"] if len(sizes) > 1 else []
        header += [f"chunks ({first:g} MB)", "offsets true", "size bound", f"peak extra memory ({first:g} MB)"]
        lines = [header]
        for row in self.measured:
            speeds = [_number(row.speed[mb]) if mb in row.speed else "—" for mb in sizes]
            ratio = [f"{row.speed[sizes[-1]] / row.speed[first]:.2f}"] if len(sizes) > 1 and row.speed else []
            chunks = f"{row.chunks[first]:,}" if first in row.chunks else "—"
            lines.append([row.case.task, row.case.name, *speeds, *ratio, chunks, *check_cells(row.check, row.case),
                          memory_cell(row.memory, first)])
        return table(lines)

    def summary(self) -> str:
        """The README's summary: the targets, and when and how busy."""
        return (f"{self.targets_table()}\n\nMeasured {self.machine['date']} with `{command_line(self.args)}`; "
                f"load average {self.machine['load']}.")

    def not_measured(self) -> str:
        skipped = [f"- {row.case.key}: {row.error}" for row in self.rows if row.error]
        return "Not measured:\n\n" + "\n".join(skipped) if skipped else ""

    def targets_table(self) -> str:
        lines = [["target", "measured", "holds"]]
        for target, measured, holds in targets(self.measured, self.args.sizes, self.semantic):
            lines.append([target, measured, "—" if holds is None else "✓" if holds else "✗"])
        return table(lines)

    def semantic_tables(self) -> str:
        result = self.semantic
        if "skipped" in result:
            return f"Skipped: {result['skipped']}."
        ratio = result["ours"] / result["floor"]
        intro = (f"{result['characters']:,} characters, {result['sentences']:,} sentences, all-MiniLM-L6-v2 "
                 f"(torch threads: {result['threads']}), embedding cache off, median of {self.args.repeat}.")
        first = table([["case", "seconds", "chunks", "× the floor"],
                       ["embed every sentence once (the floor)", f"{result['floor']:.2f}", "—", "1.00"],
                       ["chunking `semantic`, 512 tokens", f"{result['ours']:.2f}", str(result["chunks"]),
                        f"{ratio:.2f}"]])
        speeds = [["batch size", "order", "chunks/s"]]
        speeds += [[str(b), order, f"{v:.1f}"] for (b, order), v in result["speeds"].items()]
        rate = (f"Embedding throughput on the default backend ({result['backend']}): the first {result['texts']} of "
                f"our recursive 200-token chunks of the same text (lengths vary, so sorting can save padding); "
                f"median of {self.args.repeat} passes, in turns.")
        return "\n\n".join([intro, first, rate, table(speeds), self.backend_tables()])

    def backend_tables(self) -> str:
        """The backends side by side (benchmarks/embedding.py): chunks/s, vectors, recall, cold runs."""
        result = self.semantic
        found, sizes = result["backends"], self.args.batch_sizes
        rows = [["backend", *(f"chunks/s, batch {n}" for n in sizes), f"× torch (batch {sizes[0]})",
                 f"GFLOP/s (batch {sizes[0]})", "of the sgemm peak", "min cosine to torch", "recall@5, recursive-200"]]
        peak = found["peak"]
        for backend in sibling("embedding").BACKENDS:
            speed = [found["speeds"][(backend, n)] for n in sizes]
            recall = result["recall"].get(backend)
            gflops = found["gflops"][(backend, sizes[0])]
            rows.append([backend, *(f"{v:.1f}" for v in speed),
                         f"{speed[0] / found['speeds'][('torch', sizes[0])]:.2f}", f"{gflops:.0f}",
                         f"{gflops / peak:.0%}", f"{found['cosine'][backend]:.7f}",
                         "—" if recall is None else f"{recall:.3f}"])
        needed = 1.8 * found["gflops"][("torch", sizes[0])]
        intro = ("The embedding model's backends (`chunking.embed.Embedder(backend=...)`, `--backend`) on the same "
                 f"{found['texts']} chunks, in turns, embedding cache off: `torch` is sentence-transformers itself, "
                 "`onnx` (the default) the same weights exported once to ONNX Runtime with its transformer fusions, "
                 "`onnx-int8` those weights quantized per channel. Recall is the bundled corpus's 192 questions "
                 "(top 5) with recursive 200-token chunks. GFLOP/s is the model's float32 arithmetic on these chunks "
                 "(`benchmarks/embedding.py`'s `model_flops`; int8 does the same work in 8-bit integers) over the "
                 "time taken; the sgemm peak is this machine's float32 matrix multiply on every core, measured with "
                 f"numpy in a product shaped like the model's feed-forward layer: {peak:.0f} GFLOP/s. 1.8× the torch "
                 f"path would take {needed:.0f} GFLOP/s, {needed / peak:.0%} of that peak for the whole model "
                 "(norms, softmax and small attention products included), in float32.")
        parts = [intro, table(rows)]
        if result["cold"]:
            cold = [["run (empty embedding cache, exported model kept)", "torch, s", "onnx, s", "onnx / torch"]]
            for name in ("make demo", "notebooks"):
                t, o = result["cold"][(name, "torch")], result["cold"][(name, "onnx")]
                cold.append([name, f"{t:.0f}", f"{o:.0f}", f"{o / t:.2f}"])
            parts += ["Cold runs, each in a fresh process on the same machine (`--cold`):", table(cold)]
        if result.get("many_files"):
            parts += ["Many small files into a local Qdrant folder (`benchmarks/many_files.py`): `chunking index` in a "
                      "fresh process with an empty embedding cache and the exported model kept (it counts the "
                      "interpreter's start, imports, opening the store, loading the model, chunking, embedding and "
                      "writing), the same command again on the unchanged files, and embedding the same chunks alone in "
                      "one process with the model loaded (the floor). The last column is the very first run, with an "
                      "empty cache folder: it also exports the model to ONNX once, which every later run reuses "
                      "(`make setup` makes that export, so after it the first `chunking index` is the ordinary "
                      "run; installed with pip alone, the first use pays it once):",
                      sibling("many_files").markdown(result["many_files"])]
        return "\n\n".join(parts)

    def write(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "benchmarks.md").write_text(self.markdown(), encoding="utf-8")
        progress(f"wrote {folder / 'benchmarks.md'}")
        if importlib.util.find_spec("matplotlib") is None:
            progress("no plot: matplotlib is not installed (the notebooks extra)")
            return
        plot(self.measured, self.args.sizes, folder / "benchmarks.png")
        progress(f"wrote {folder / 'benchmarks.png'}")


PAGE_INTRO = """# Benchmarks

<!-- Written by benchmarks/bench.py: change the script and re-run it, not this page. -->

Every structural strategy of `chunking` beside tiktoken's encode (the floor for any token-based
chunker) and the production chunkers (the `bench` extra), on the same text with the same settings:
cl100k tokens, overlap 0, offsets asked for where a chunker offers them. "MB" is a million
characters. Speed is the median of several runs in one process, after a warm-up call, each run with
a freshly built splitter. Every output is checked outside the timing: **offsets true** means
`text[start:end] == chunk` for every chunk (the chunker's own offsets where it gives them, else a
forward search), **size bound** that no chunk exceeds its size (cl100k tokens or characters; the
largest seen in brackets).

- Threads: `chunking` encodes a long text once, in parts of about 32k characters cut at seams (a
  space before a letter, which no cl100k token crosses), on one thread per core: tiktoken releases
  the GIL, so the ids are exactly those of one call at about two thirds of the time on two cores.
  The floor is shown both ways: on one thread (the yardstick of issue 6's targets) and on the
  threads and parts `chunking` uses. The peers, called as below, count tokens on one thread.
- Peak extra memory: {memory}.
- Command: `{command}` (`make bench` installs the peers and runs it)
- Text: {text}
- Date: {date}; machine: {platform}, {processor}, {cpus} cores, Python {python}
- Load average: {load}. The machine is shared: timings move with it; ratios within one run are steadier.
- Versions: {versions}
""".replace("{memory}", MEMORY_METHOD)


PEERS_NOTE = """How the peers are called (each built fresh before every run, outside the timing):

- LangChain: `TokenTextSplitter(encoding_name="cl100k_base")`, `RecursiveCharacterTextSplitter(chunk_size=1000)`
  and `RecursiveCharacterTextSplitter.from_tiktoken_encoder(encoding_name="cl100k_base")`, each with
  `chunk_overlap=0, add_start_index=True`, through `create_documents([text])`; offsets from `start_index`.
  `cl100k_base` loads offline because `chunking.get_encoding()` registers it with tiktoken first.
- chonkie: `TokenChunker`, `RecursiveChunker` and `SentenceChunker` with `tokenizer=` the cl100k
  `tiktoken.Encoding` object (the name `"cl100k_base"` makes chonkie fetch a tokenizer from the Hugging
  Face hub), or the default character tokenizer for 1000 characters; offsets from `start_index`, `end_index`.
- semchunk: `chunkerify(len, 1000)` and `chunkerify(encoding, 512)`, called with `offsets=True`
  (it memoizes token counts, so it is built fresh for every run).
- semantic-text-splitter: `TextSplitter(1000)` and `TextSplitter.from_tiktoken_model("gpt-4", 512)`
  (cl100k from the tiktoken-rs crate inside the wheel), `chunk_indices`.
- LlamaIndex: `SentenceSplitter(chunk_size=512, chunk_overlap=0, tokenizer=encoding.encode_ordinary)`,
  `get_nodes_from_documents`; offsets from `start_char_idx`, `end_char_idx`. Its NLTK data ship in the wheel."""


def targets(rows: list[Row], sizes: list[float], semantic: dict) -> list[tuple[str, str, bool | None]]:
    """The issue's targets: (target, what was measured, holds or None if not measured)."""
    ours = {row.case.task: row for row in rows if row.case.name == "chunking"}
    floor = next((row for row in rows if row.case.task == FLOOR), None)
    found = []

    def per_size(target: str, task: str, value: Callable[[float], float | None], test: Callable[[float], bool],
                 unit: str = "×", note: str = ""):
        values = [value(mb) if task in ours and mb in ours[task].speed else None for mb in sizes]
        cells = " / ".join(f"{_number(v)}{unit} ({mb:g} MB)" for mb, v in zip(sizes, values) if v is not None)
        found.append((target, (cells + note) if cells else "—", None if None in values else all(map(test, values))))

    per_size("fixed, 512 tokens ≥ 0.8× the one-thread encode floor", FIXED,
             lambda mb: ours[FIXED].speed[mb] / floor.speed[mb] if floor else None, lambda v: v >= 0.8)
    per_size("recursive, 1000 characters ≥ 20 MB/s", RECURSIVE_CHARS, lambda mb: ours[RECURSIVE_CHARS].speed[mb],
             lambda v: v >= 20, unit=" MB/s")
    fastest = _fastest_peer(rows, RECURSIVE, sizes[0])
    per_size("recursive, 512 tokens ≥ the fastest peer", RECURSIVE,
             lambda mb: _over_fastest_peer(rows, RECURSIVE, mb), lambda v: v >= 1,
             note=f"; fastest peer at {sizes[0]:g} MB: {fastest.case.name}" if fastest else "")
    per_size("sentence, 512 tokens ≥ 5 MB/s", SENTENCE, lambda mb: ours[SENTENCE].speed[mb], lambda v: v >= 5,
             unit=" MB/s")
    if "skipped" not in semantic:
        ratio = semantic["ours"] / semantic["floor"]
        found.append(("semantic ≤ 1.1× embedding every sentence once", f"{ratio:.2f}×", ratio <= 1.1))
        speeds, batch = semantic["backends"]["speeds"], min(semantic["backends"]["sizes"], key=lambda n: abs(n - 8))
        ratio = speeds[("onnx", batch)] / speeds[("torch", batch)]
        found.append((f"embedding (ONNX) ≥ 1.8× the torch path's chunks/s (batch {batch})", f"{ratio:.2f}×",
                      ratio >= 1.8))
        cosine = semantic["backends"]["cosine"]["onnx"]
        found.append(("ONNX vectors within cosine 0.99999 of torch's", f"{cosine:.7f}", cosine >= 0.99999))
        for row in semantic.get("many_files", []):
            ratio = row["index"] / row["floor"]
            found.append((f"`chunking index` of {row['files']:,} small files ≤ 1.5× embedding their chunks",
                          f"{ratio:.2f}×", ratio <= 1.5))
        for name, limit in (("make demo", 120), ("notebooks", 180)):
            if semantic["cold"]:
                seconds = semantic["cold"][(name, "onnx")]
                found.append((f"cold {name} ≤ {limit // 60} min", f"{seconds:.0f} s", seconds <= limit))
    scaled = [row for row in ours.values() if sizes[0] in row.speed and sizes[-1] in row.speed]
    if len(sizes) > 1 and scaled:
        worst = min(scaled, key=lambda r: r.speed[sizes[-1]] / r.speed[sizes[0]])
        ratio = worst.speed[sizes[-1]] / worst.speed[sizes[0]]
        found.append((f"{sizes[-1]:g} MB ≥ 0.9× the speed at {sizes[0]:g} MB, every strategy",
                      f"lowest {ratio:.2f} ({worst.case.task})", ratio >= 0.9))
    measured = [row for row in ours.values() if row.memory is not None]
    if measured:
        worst = max(measured, key=lambda r: r.memory)
        found.append(("peak extra memory ≤ 10× the input, every strategy",
                      f"highest {worst.memory / sizes[0]:.1f}× ({worst.case.task})", worst.memory <= 10 * sizes[0]))
    return found


def _fastest_peer(rows: list[Row], task: str, mb: float) -> Row | None:
    peers = [row for row in rows if row.case.task == task and row.case.name != "chunking" and mb in row.speed]
    return max(peers, key=lambda row: row.speed[mb], default=None)


def _over_fastest_peer(rows: list[Row], task: str, mb: float) -> float | None:
    """Our speed as a multiple of the fastest peer's on `task` at `mb` (None without peers)."""
    fastest = _fastest_peer(rows, task, mb)
    ours = next(row for row in rows if row.case.task == task and row.case.name == "chunking")
    return ours.speed[mb] / fastest.speed[mb] if fastest and mb in ours.speed else None


def check_cells(found: Check | None, case: Case) -> list[str]:
    """The offsets and size-bound cells: ✓, or ✗ with how many chunks fail."""
    if found is None:
        return ["—", "—"]
    offsets = "✓" if not found.bad_offsets else f"✗ ({found.bad_offsets:,} of {found.chunks:,} wrong)"
    limit = f"{case.size} {case.unit}"
    bound = f"✓ ≤ {limit} (max {found.max_size})" if not found.over_bound else (
        f"✗ {found.over_bound:,} over {limit} (max {found.max_size})")
    return [offsets, bound]


def memory_cell(extra_mb: float | None, input_mb: float) -> str:
    return "—" if extra_mb is None else f"{extra_mb:.1f} MB ({extra_mb / input_mb:.1f}× input)"


def table(lines: list[list[str]]) -> str:
    rows = ["| " + " | ".join(cells) + " |" for cells in lines]
    return "\n".join([rows[0], "|" + "---|" * len(lines[0]), *rows[1:]])


def _number(value: float) -> str:
    return f"{value:.0f}" if value >= 100 else f"{value:.1f}" if value >= 10 else f"{value:.2f}"


def command_line(args: argparse.Namespace) -> str:
    return "python benchmarks/bench.py " + shlex.join(args.argv) if args.argv else "python benchmarks/bench.py"


COLORS = {"chunking": "#1f4e79", "peer": "#9aa5b1", "floor": "#d08c2b"}


def plot(rows: list[Row], sizes: list[float], path: Path) -> None:
    """Horizontal bars of MB/s per case (log scale): one bar per size, the later sizes lighter."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    rows = [row for row in rows if row.speed][::-1]  # matplotlib draws the first bar at the bottom
    kinds = [_kind(row) for row in rows]
    height = 0.8 / len(sizes)
    alphas = [1.0 - 0.5 * k / max(len(sizes) - 1, 1) for k in range(len(sizes))]
    fig, ax = plt.subplots(figsize=(9, 0.3 * len(rows) * len(sizes) + 1.5))
    for k, mb in enumerate(sizes):
        ax.barh([i + (len(sizes) - 1 - k) * height for i in range(len(rows))], [r.speed.get(mb, 0) for r in rows],
                height, color=[COLORS[kind] for kind in kinds], alpha=alphas[k])
    ax.set_yticks([i + height * (len(sizes) - 1) / 2 for i in range(len(rows))])
    ax.set_yticklabels([f"{row.case.task} · {row.case.name}" for row in rows], fontsize=8)
    ax.set_xscale("log")
    ax.set_xlabel("MB/s (log scale; higher is faster)")
    handles = [Patch(color=color, label=kind) for kind, color in COLORS.items() if kind in kinds]
    handles += [Patch(color="black", alpha=alpha, label=f"{mb:g} MB") for mb, alpha in zip(sizes, alphas)]
    ax.legend(handles=handles, loc="lower right", fontsize=8)
    ax.grid(axis="x", which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _kind(row: Row) -> str:
    return "floor" if row.case.task == FLOOR else "chunking" if row.case.name == "chunking" else "peer"


def replace_summary(path: Path, summary: str) -> None:
    """Put `summary` between the summary markers of the README."""
    text = path.read_text(encoding="utf-8")
    start, end = text.index(SUMMARY_START) + len(SUMMARY_START), text.index(SUMMARY_END)
    path.write_text(text[:start] + "\n" + summary + "\n" + text[end:], encoding="utf-8")
    progress(f"refreshed the summary in {path}")


# --- command line ---------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1,10", help="text sizes in millions of characters, comma-separated")
    parser.add_argument("--repeat", type=int, default=5, help="runs per measurement (the median is reported)")
    parser.add_argument("--text", type=Path, help="a UTF-8 file to repeat instead of the bundled documents")
    parser.add_argument("--exact-copies", action="store_true", help="repeat the text unvaried (flatters memoising)")
    parser.add_argument("--semantic-kb", type=float, default=150, help="thousands of characters for semantic (0: skip)")
    parser.add_argument("--batch-sizes", default="8,16,32", help="embedding batch sizes to time")
    parser.add_argument("--torch-threads", type=int, default=0, help="torch threads for MiniLM (0: torch's default)")
    parser.add_argument("--no-recall", dest="recall", action="store_false",
                        help="skip each embedding backend's recall on the bundled questions")
    parser.add_argument("--cold", action="store_true",
                        help="also time `chunking demo` and the notebooks cold, on torch and on ONNX (~15 min)")
    parser.add_argument("--many-files", default="1000,5000",
                        help="`chunking index` on this many small files, comma-separated (0: skip)")
    parser.add_argument("--many-documents", type=int, default=10_000,
                        help="documents of ~2,000 characters for the many-documents table (0: skip)")
    parser.add_argument("--no-peers", dest="peers", action="store_false", help="only the floor and chunking")
    parser.add_argument("--no-memory", dest="memory", action="store_false", help="skip the memory subprocesses")
    parser.add_argument("--out", type=Path, help="folder for benchmarks.md and .png (default docs/; --quick: none)")
    parser.add_argument("--readme", action="store_true", help="refresh the summary table in README.md")
    parser.add_argument("--pathological-sizes", default="10000,100000,1000000",
                        help="characters for the pathological families, comma-separated (0: skip)")
    parser.add_argument("--pathological-families",
                        help="comma-separated family names, or all (default: pathological.DEFAULT_FAMILIES, 29)")
    parser.add_argument("--shapes", default="all",
                        help="shapes of text (benchmarks/shapes.py) for the recursive cases: names, all or none")
    parser.add_argument("--quick", action="store_true",
                        help="0.2 MB, 1 run, no memory, 2 KB semantic, 1 thread, two pathological families, no shapes")
    parser.add_argument("--memory-case", help=argparse.SUPPRESS)  # the memory subprocess's side
    argv = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(argv)
    if args.quick:  # quick defaults; options given explicitly still win
        parser.set_defaults(**QUICK)
        args = parser.parse_args(argv)
    elif args.out is None and not args.memory_case:
        args.out = ROOT / "docs"
    args.sizes = [float(s) for s in str(args.sizes).split(",")]
    args.batch_sizes = [int(b) for b in str(args.batch_sizes).split(",")]
    args.many_files = [int(n) for n in str(args.many_files).split(",") if int(n) > 0]
    args.pathological_sizes = [int(n) for n in str(args.pathological_sizes).split(",") if int(n) > 0]
    if args.pathological_families:
        args.pathological_families = args.pathological_families.split(",")
    known = list(shapes().SHAPES)
    args.shapes = known if args.shapes == "all" else [] if args.shapes == "none" else args.shapes.split(",")
    if not set(args.shapes) <= set(known):
        parser.error(f"--shapes must be all, none or names from {known}, got {','.join(args.shapes)}")
    if args.repeat < 1 or min(args.sizes) <= 0:
        parser.error(f"--repeat must be >= 1 and --sizes positive, got {args.repeat} and {args.sizes}")
    args.argv = argv
    return args


def block_network() -> None:
    """Make every network connection fail at once: a peer that would download something is caught here."""

    def refuse(self, address, *rest):
        raise ConnectionRefusedError(f"benchmarks/bench.py runs offline (tried to connect to {address!r})")

    socket.socket.connect = refuse
    socket.socket.connect_ex = refuse


if __name__ == "__main__":
    os.environ.update(CHUNKING_CACHE="off", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    block_network()
    main()
