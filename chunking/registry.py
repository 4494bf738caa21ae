"""The registry: strategy names mapped lazily to their modules, and the calls that use a name.

1. `STRATEGIES` maps each name to its strategy function; a strategy's module is imported the first
   time its name is looked up, so naming one strategy loads only it (and the core under it).
2. `chunk(text, strategy, **options)` checks the name and the options (`check_strategy`), fills in
   the shared models a strategy needs and was not given, and runs it with the garbage collector
   paused; `chunk_document` and `chunk_documents` do the same for loaded documents, adding each
   document's id and metadata to its chunks (in worker processes with `workers`).
3. `takes(strategy, option)` says whether a strategy has an option (the command line and the
   comparison ask it before passing a model).
This is the bottom of the pipeline: a strategy never imports it (they import only the core).
"""

from __future__ import annotations

import functools
import gc
import importlib
import inspect
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from chunking.documents import Document
from chunking.options import check_int
from chunking.parallel import chunk_in_processes
from chunking.types import Chunk, new_chunk

# name -> "module:function" (imported on first use)
MODULES = {
    "fixed": "chunking.fixed:chunk",
    "sentence": "chunking.sentence:chunk",
    "paragraph": "chunking.paragraph:chunk",
    "markdown": "chunking.markdown:chunk",
    "sliding": "chunking.sliding:chunk",
    "recursive": "chunking.recursive:chunk",
    "semantic": "chunking.semantic:chunk",
    "parent_child": "chunking.parent_child:chunk",
    "contextual": "chunking.registry:contextual",  # the base strategy's chunks, then their context
}


class Strategies(Mapping):
    """Strategy name -> function, each module imported on first lookup."""

    def __getitem__(self, name: str) -> Callable[..., list[Chunk]]:
        return _function(MODULES[name])

    def __iter__(self) -> Iterator[str]:
        return iter(MODULES)

    def __len__(self) -> int:
        return len(MODULES)

    def __repr__(self) -> str:
        return f"Strategies({', '.join(MODULES)})"


STRATEGIES = Strategies()


def chunk(text: str, strategy: str = "recursive", **options) -> list[Chunk]:
    """Chunk `text` with a named strategy; `options` are that strategy's keyword options.

    Shared options: `chunk_size`, `chunk_overlap` (int in the unit, or a float fraction),
    `unit` ("tokens" of cl100k_base, "characters", or a callable `str -> int`), `doc_id`.
    The garbage collector is paused while the strategy runs (see `collector_paused`).
    """
    function = check_strategy(strategy, options)
    with collector_paused():
        return function(text, **with_models(strategy, options))


def contextual(
    text: str,
    *,
    base: str = "recursive",
    provider: str = "heading",
    title: str | None = None,
    llm=None,
    embedder=None,
    doc_id: str = "",
    **base_options,
) -> list[Chunk]:
    """The `base` strategy's chunks (its options in `base_options`: `chunk_size`, `unit`, …), each with a
    context from `provider` (`chunking.contextual.chunk`). `llm` defaults to the shared
    `chunking.llm.default_contextualizer()` for provider "llm"; `embedder` goes to a base that takes one.

    >>> doc = "# Guide\\n\\nIntro.\\n\\n## Install\\n\\nRun it.\\n"
    >>> [(c.text, c.context) for c in chunk(doc, "contextual", chunk_size=6)]
    [('# Guide\\n\\nIntro.', 'Guide'), ('## Install\\n\\nRun it.', 'Guide > Install')]
    """
    from chunking import contextual as contextual_strategy

    if base == "contextual" or base not in STRATEGIES:
        raise ValueError(f"base must be one of {sorted(set(STRATEGIES) - {'contextual'})}, got {base!r}")
    if provider == "llm" and llm is None:
        from chunking.llm import default_contextualizer

        llm = default_contextualizer()
    contextual_strategy.check_provider(provider, llm, title)  # before the base chunks are made
    if embedder is not None and takes(base, "embedder"):
        base_options["embedder"] = embedder
    pieces = chunk(text, base, doc_id=doc_id, **base_options)
    return contextual_strategy.chunk(text, chunks=pieces, provider=provider, title=title, llm=llm)


def with_models(strategy: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """`options`, with the bundled MiniLM (`chunking.embed.default_embedder()`) as `embedder` where the
    strategy needs one and none was given: semantic, and parent_child's semantic parents. Strategies
    take their models as arguments; this is the one place a name brings a default."""
    options = dict(options)
    needs = strategy == "semantic" or (strategy == "parent_child" and options.get("parent_mode") == "semantic")
    if needs and options.get("embedder") is None:
        from chunking.embed import default_embedder

        options["embedder"] = default_embedder()
    return options


def check_strategy(strategy: str, options: Mapping[str, Any]) -> Callable[..., list[Chunk]]:
    """The strategy function named `strategy`, after checking that it takes every option in `options`
    (a ValueError naming the strategies for an unknown name, a TypeError naming unknown options)."""
    if not isinstance(strategy, str) or strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {sorted(STRATEGIES)}, got {strategy!r}")
    function = STRATEGIES[strategy]
    accepted, takes_any = _options_of(function)
    unknown = sorted(set(options) - set(accepted))
    if unknown and not takes_any:
        raise TypeError(f"{strategy!r} got unknown option(s) {unknown}; its options are {list(accepted)}")
    return function


def chunk_document(document: Document, strategy: str = "recursive", **options) -> list[Chunk]:
    """Chunk a loaded document: its id on every chunk, and its metadata in every chunk's metadata.

    Each chunk's metadata is the strategy's own (a heading path, say), then the document's title,
    source path, kind and — for a PDF — `page_start` and `page_end` (1-based) of the span, then
    the document's own metadata; `chunking.store` keeps all of it in the payload's `metadata`.

    >>> doc = Document(doc_id="a.md", text="# A\\n\\nOne.", title="A", kind="markdown", metadata={"team": "ops"})
    >>> [(c.doc_id, dict(c.metadata)) for c in chunk_document(doc, "paragraph")]
    [('a.md', {'title': 'A', 'kind': 'markdown', 'team': 'ops'})]
    """
    if not isinstance(document, Document):
        raise TypeError(f"document must be a chunking.Document (see load_document), got {type(document).__name__}")
    if "doc_id" in options:
        raise TypeError(f"doc_id comes from the document ({document.doc_id!r}); set it in load_document")
    chunks = chunk(document.text, strategy, doc_id=document.doc_id, **options)
    for c in chunks:
        if clash := sorted(c.metadata.keys() & document.metadata.keys()):
            raise ValueError(f"metadata key(s) {clash} of document {document.doc_id!r} are also set by the "
                             f"{strategy!r} strategy; rename them")
    return [with_metadata(c, {**c.metadata, **document.chunk_metadata(c.start, c.end)}) for c in chunks]


def chunk_documents(
    documents: Iterable[Document], strategy: str = "recursive", *, workers: int = 1, **options
) -> Iterator[Chunk]:
    """Chunk many documents with one strategy, yielding each one's chunks, in document order, as they
    are made (see `chunk_document`).

    `workers` > 1 chunks in that many processes (`chunking.parallel`): the same chunks, sooner for
    strategies that count tokens once there are a few thousand documents (by characters, one process
    is faster). A strategy given a model (`embedder`) runs in this process only.
    """
    check_int("workers", workers)
    if workers == 1:
        for document in documents:
            yield from chunk_document(document, strategy, **options)
        return
    check_strategy(strategy, options)  # before any process starts
    if "embedder" in options:
        raise ValueError(f"workers must be 1 for a strategy given an embedder (its model loads once per "
                         f"process), got {workers}")
    yield from chunk_in_processes(documents, strategy, options, workers, chunk_document)


def takes(strategy: str, option: str) -> bool:
    """Does the named strategy take this keyword option (e.g. "embedder")?"""
    return option in _options_of(STRATEGIES[strategy])[0]


@functools.cache
def _options_of(function: Callable[..., list[Chunk]]) -> tuple[tuple[str, ...], bool]:
    """A strategy's option names, and whether it takes any keyword (read once: ~40 µs a call)."""
    parameters = inspect.signature(function).parameters
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
    return tuple(p for p in parameters if p != "text"), takes_any


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for a bulk allocation (spans, chunks, parse trees).

    A chunker allocates many small objects that form no cycles and mostly live on. The collector
    would rescan them, and every other object in the process, again and again as the pile grows:
    10 MB chunked about 10% slower per MB than 1 MB in a process with big libraries loaded.
    The switch is process-wide; it is restored to what it was, so a caller's `gc.disable()` holds.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@functools.cache
def _function(target: str) -> Callable[..., list[Chunk]]:
    module, name = target.split(":")
    return getattr(importlib.import_module(module), name)


def with_metadata(chunk: Chunk, metadata: Mapping[str, Any]) -> Chunk:
    """`dataclasses.replace(chunk, metadata=metadata)`, built as `make_chunks` builds its chunks."""
    return new_chunk(chunk.text, chunk.start, chunk.end, chunk.index, chunk.strategy, chunk.doc_id, chunk.context,
                     metadata)
