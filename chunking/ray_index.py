"""Indexing on Ray Data: `chunking index --engine ray`, for corpora that outgrow one process.

`chunking index` works in one process. This module runs the same work as Ray Data stages, so it
spreads over the cores of this machine, or over a Ray cluster given its address, with no change:

    the file list (the driver lists it, reads nothing)
      -> read, chunk, skip what the store already holds, embed    a pool of model actors ("workers")
      -> upsert                                                   writer actors
    then, in the driver: remove the chunks that edited files no longer have.

It writes the points `chunking index` writes: ids are uuid5s of (document, strategy, offsets), the
payloads are `chunking.store.payload`'s, and the vectors come from the same model on the same backend
(equal to float rounding: a batch pads its texts to its longest, and the batches here hold other texts).

- Reading and chunking are a stage of their own, which Ray Data fuses into the model actors: they
  take about a millisecond a document beside tens of milliseconds a chunk for the model, so no CPU
  is reserved for them. A strategy that takes an embedder (semantic) chunks with its actor's model.
- Each worker gets an equal share of the cores (`threads`): two models on one machine that each use
  every core only get in each other's way.
- A chunk whose point the store holds with the same payload is not embedded or written again, so a
  second run writes nothing, and a re-run of an interrupted run embeds only what the first did not write.
- A local Qdrant folder can be open in one process at a time: while the pipeline runs, one writer
  actor holds it, and the driver opens it only before (to prepare the collection and read which
  points it holds) and after (to remove stale chunks). A server or cluster (`url`) gets one writer
  per worker, each with its own connection.
- On a cluster, every node needs this package with the `ray` extra and must read the files at the
  paths the driver lists (a shared file system), and the store must be a server or cluster (`url`).

Ray is an optional extra (`pip install "chunking[ray]"`); nothing else in the package imports it.
Taught in notebook 15.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from chunking.options import check_int
from chunking.registry import check_strategy, chunk_document, takes
from chunking.store import TIMEOUT

FILES_PER_BLOCK = 64  # files read and chunked in one call, at most
CHUNKS_PER_CALL = 64  # chunks a worker embeds in one call (the embedder batches again inside, by 8)
REOPEN_SECONDS = 30.0  # how long the driver waits for the writer to let go of a local folder


@dataclass(frozen=True)
class Report:
    """What an indexing run did: as `chunking index` prints it, and how long it took."""

    documents: int
    chunks: int  # the chunks the documents have now (each is a point in the collection)
    written: int  # points embedded and written by this run (the rest were in the store already)
    stale: int  # points of these documents removed because their chunk is gone
    points: int  # points in the collection afterwards
    workers: int
    seconds: float  # building the pipeline to the last point written: workers' start-up in, Ray's own out
    # Chunks embedded a second while the workers ran: from the first batch a worker began to the last one
    # a worker finished (start-up and the last writes out): the rate that a bigger corpus approaches.
    # None when nothing was embedded.
    steady_rate: float | None


def index_files(
    files: Sequence[tuple[str | os.PathLike, str]], collection: str, *, strategy: str = "recursive",
    options: Mapping[str, object] | None = None, metadata: Mapping[str, object] | None = None,
    url: str | None = None, path: str | os.PathLike | None = None, timeout: float = TIMEOUT, recreate: bool = False,
    model: str | os.PathLike | None = None, backend: str | None = None, cache: bool | str | os.PathLike = True,
    workers: int | None = None, threads: int | None = None, address: str | None = None,
) -> Report:
    """Index `files`, (path, doc_id) pairs (`chunking.load.corpus_files` makes them), into a Qdrant
    collection at `url` (a server or cluster) or in the local folder `path`, on Ray Data.

    `workers`: model actors (default: one per CPU of the Ray cluster), each computing with `threads`
    CPU threads and reserving as many CPUs (default: an equal share of the cluster's). `address`: a running Ray
    cluster ("auto", "ray://host:10001"); default: the Ray already started in this process, else
    `$RAY_ADDRESS`, else a Ray of this machine's cores, started here and stopped at the end.
    `model`, `backend`, `cache`: as for `chunking.embed.Embedder`. `options` are the strategy's.
    """
    import ray

    from chunking import store
    from chunking.embed import Embedder

    options = dict(options or {})
    files = _checked(files, strategy, options, url, path, workers, threads)
    # The driver's embedder: resolves the backend now (exporting the model once, here, not in every worker).
    embedder = Embedder(model, backend=backend, cache=cache)
    held = _prepare(files, collection, embedder, url, path, timeout, recreate)
    started_here, failure = not ray.is_initialized(), None
    if started_here:
        start(address)
    try:
        workers, threads = _shares(workers, threads)
        model = {"model": None if model is None else str(model), "backend": embedder.backend,
                 "cache": cache if isinstance(cache, bool) else str(cache), "batch_size": embedder.batch_size,
                 "threads": threads}
        where = {"url": url} if url else {"path": str(path)}
        run = _run(files, {"strategy": strategy, "options": options, "metadata": dict(metadata or {})}, model,
                   {**where, "timeout": timeout, "collection": collection}, held, workers, threads)
    except Exception as error:
        failure = _user_error(error)
    finally:
        if started_here:
            ray.shutdown()
    client = _reopen(url, path, timeout)  # even after a failure: the caller gets the folder back
    try:
        if failure is not None:
            raise failure
        stale = store.remove_stale(client, collection, [d for _, d in files], run.keep)
        points = client.count(collection, exact=True).count
    finally:
        client.close()
    return Report(documents=len(files), chunks=len(run.keep), written=run.written, stale=stale, points=points,
                  workers=workers, seconds=run.seconds, steady_rate=run.steady_rate)


def _prepare(files, collection: str, embedder, url, path, timeout: float, recreate: bool) -> dict | None:
    """Make or check the collection; for a local folder, read the payloads it holds of these documents
    (the workers cannot open the folder while the writer holds it). None for a server: workers ask it."""
    from chunking import store
    from chunking.embed import model_record

    client = store.connect(url=url, timeout=timeout) if url else store.connect(path, use_env=False)
    try:
        store.ensure_collection(client, collection, lambda: embedder.dim, model=model_record(embedder),
                                recreate=recreate)
        return None if url else store.payloads(client, collection, [d for _, d in files])
    finally:
        client.close()


def _checked(files, strategy: str, options: dict, url, path, workers, threads) -> list[tuple[str, str]]:
    """The files as (absolute path, doc_id), after every argument is checked."""
    check_strategy(strategy, options)
    if (url is None) == (path is None):
        raise ValueError(f"give a Qdrant server's url or a local folder's path, not both or neither "
                         f"(got url={url!r}, path={path!r})")
    if workers is not None:
        check_int("workers", workers)
    if threads is not None:
        check_int("threads", threads)
    files = [(os.path.abspath(p), str(d)) for p, d in files]  # every node reads the paths the driver sees
    if not files:
        raise ValueError("files must hold at least one (path, doc_id) pair, got none")
    if len({d for _, d in files}) != len(files):
        raise ValueError("files must have distinct document ids")
    return files


def _shares(workers: int | None, threads: int | None) -> tuple[int, int]:
    """Model workers and each one's threads: by default a worker per CPU of the Ray cluster, and an equal
    share of its CPUs each."""
    import ray

    cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
    workers = cpus if workers is None else workers
    threads = max(1, cpus // workers) if threads is None else threads
    if workers * threads > cpus:
        raise ValueError(f"workers × threads must be at most the Ray cluster's {cpus} CPUs, got "
                         f"workers={workers} × threads={threads}")
    return workers, threads


@dataclass(frozen=True)
class _Run:
    keep: set[str]  # every chunk's point id
    written: int
    seconds: float
    steady_rate: float | None


def _run(files, chunking: dict, model: dict, where: dict, held, workers: int, threads: int) -> _Run:
    """The Ray Data pipeline: read and chunk, embed what the store lacks (model actors), write (writers)."""
    import ray

    from chunking import store

    # A server's API key reaches the workers as it reaches the driver: in $QDRANT_API_KEY.
    secret = {"runtime_env": {"env_vars": {store.KEY_ENV: os.environ[store.KEY_ENV]}}} \
        if where.get("url") and os.environ.get(store.KEY_ENV) else {}
    # A worker's error (an unreadable file, say) reaches the caller as itself, not wrapped by Ray Data.
    ray.data.DataContext.get_current().raise_original_map_exception = True
    began = time.perf_counter()
    # Blocks of at most FILES_PER_BLOCK files, and at least four per worker: Ray Data hands a worker
    # whole blocks, so fewer blocks than workers would leave some idle.
    blocks = min(len(files), max(4 * workers, -(-len(files) // FILES_PER_BLOCK)))
    files_ds = ray.data.from_items([{"path": p, "doc_id": d} for p, d in files], override_num_blocks=max(1, blocks))
    if takes(chunking["strategy"], "embedder"):  # semantic chunking needs the model: the model actors chunk too
        rows, chunker, per_call = files_ds, chunking, None
    else:  # its own stage, though Ray Data runs it in the model workers' processes (fusing the two)
        rows = files_ds.map_batches(read_and_chunk, fn_kwargs=chunking, batch_size=None, num_cpus=0,
                                    compute=ray.data.TaskPoolStrategy(size=workers))
        chunker, per_call = None, CHUNKS_PER_CALL
    embedded = rows.map_batches(
        Embed, batch_size=per_call, num_cpus=threads, compute=ray.data.ActorPoolStrategy(size=workers), **secret,
        fn_constructor_kwargs={"embedder": model, "store": where, "held": held, "chunker": chunker})
    written_rows = embedded.map_batches(
        Write, batch_size=None, num_cpus=0, compute=ray.data.ActorPoolStrategy(size=workers if where.get("url") else 1),
        **secret, fn_constructor_kwargs={"store": where})
    keep, written, first, last = set(), 0, float("inf"), float("-inf")
    for batch in written_rows.iter_batches(batch_size=None, batch_format="numpy"):
        keep.update(batch["id"].tolist())
        written += int(batch["written"].sum())
        if batch["written"].any():
            first, last = min(first, batch["began"].min()), max(last, batch["ended"].max())
    steady = written / (last - first) if written and last > first else None
    return _Run(keep, written, time.perf_counter() - began, steady)


def read_and_chunk(batch: dict[str, np.ndarray], strategy: str, options: dict, metadata: dict) -> dict:
    """A batch of files -> their chunks (the `chunk` column holds `Chunk` objects)."""
    from chunking.load import load_document

    chunks = []
    for path, doc_id in zip(batch["path"].tolist(), batch["doc_id"].tolist()):
        chunks += chunk_document(load_document(path, doc_id=doc_id, metadata=metadata), strategy, **options)
    column = np.empty(len(chunks), dtype=object)
    column[:] = chunks
    return {"chunk": column}


class Embed:
    """A worker (a Ray actor): embeds the chunks of a batch that the store does not already hold as
    they are. One model per worker, loaded once, when the actor starts. Given a `chunker` (a strategy
    that needs the model), its batches are files, which it reads and chunks first."""

    def __init__(self, embedder: dict, store: dict, held: dict[str, dict] | None, chunker: dict | None) -> None:
        from chunking.embed import Embedder

        self.embedder = Embedder(embedder["model"], backend=embedder["backend"], cache=embedder["cache"],
                                 batch_size=embedder["batch_size"], threads=embedder["threads"])
        if chunker is not None:
            chunker = {**chunker, "options": {**chunker["options"], "embedder": self.embedder}}
        self.chunker, self.held, self.client, self.collection = chunker, held, None, store["collection"]
        if held is None:  # a server: ask it, a batch at a time, which points it holds
            from chunking import store as qdrant

            self.client = qdrant.connect(url=store["url"], timeout=store["timeout"])

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        from chunking import store

        began = time.time()  # wall clock: workers of a cluster share it, not a monotonic clock
        if self.chunker is not None:
            batch = read_and_chunk(batch, **self.chunker)
        chunks = batch["chunk"].tolist()
        if self.held is None:
            fresh = store.changed(self.client, self.collection, chunks)
        else:
            fresh = store.differing(self.held, chunks)
        vectors = np.zeros((len(chunks), self.embedder.dim), dtype=np.float32)
        if fresh:
            vectors[fresh] = self.embedder.embed([chunks[i].embed_text for i in fresh])
        times = np.full(len(chunks), began), np.full(len(chunks), time.time())
        return {"chunk": batch["chunk"], "vector": vectors, "fresh": np.isin(np.arange(len(chunks)), fresh),
                "began": times[0], "ended": times[1]}


class Write:
    """A writer (a Ray actor): upserts the fresh chunks of each batch with their vectors and passes on
    every chunk's id (the driver keeps them, to tell stale points from current ones)."""

    def __init__(self, store: dict) -> None:
        from chunking import store as qdrant

        self.collection = store["collection"]
        if store.get("url"):
            self.client = qdrant.connect(url=store["url"], timeout=store["timeout"])
        else:
            self.client = qdrant.connect(store["path"], use_env=False)

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        from chunking import indexing

        fresh = np.flatnonzero(batch["fresh"])
        chunks = [batch["chunk"][i] for i in fresh]
        indexing.write(self.client, self.collection, chunks, indexing.given(chunks, batch["vector"][fresh]))
        return {"id": np.array([c.id for c in batch["chunk"]], dtype=str), "written": batch["fresh"],
                "began": batch["began"], "ended": batch["ended"]}


def start(address: str | None = None) -> None:
    """Connect to the Ray cluster at `address` (or `$RAY_ADDRESS`), else start a Ray of this machine's
    cores; quietly: no dashboard, no progress bars, no worker logs or Ray tracebacks on the terminal
    (a worker's error reaches the caller as an exception). `index_files` calls it when Ray is not
    running; call it yourself (and `ray.shutdown()` after) to pay Ray's start-up once for several runs."""
    import ray

    address = address or os.environ.get("RAY_ADDRESS") or None
    # Ray's C++ core logs to the terminal; among other things, that every Ray Data worker keeps its
    # arguments in the object store (ray-project/ray#53727): true, and not the user's business. Only
    # fatal errors, then; the one line announcing that level, written while Ray starts, is dropped.
    os.environ.setdefault("RAY_BACKEND_LOG_LEVEL", "fatal")
    with _stderr_dropped():
        if address is None:
            ray.init(num_cpus=os.cpu_count() or 1, include_dashboard=False, log_to_driver=False,
                     logging_level=logging.CRITICAL)
        else:
            ray.init(address=address, log_to_driver=False, logging_level=logging.CRITICAL)
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False
    context.print_on_execution_start = False
    for name in ("ray", "ray.data"):
        logging.getLogger(name).setLevel(logging.CRITICAL)


@contextlib.contextmanager
def _stderr_dropped():
    """The process's standard error (file descriptor 2, where C++ code writes) goes nowhere for a while."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _reopen(url: str | None, path, timeout: float):
    """The store again, in the driver; a local folder as soon as the writer actor has let go of it (Ray
    stops a run's actors when it ends, or fails, but not before the call that ran it has returned)."""
    from chunking import store

    if url:
        return store.connect(url=url, timeout=timeout)
    deadline = time.monotonic() + REOPEN_SECONDS
    while True:
        try:
            return store.connect(path, use_env=False)
        except RuntimeError as error:
            if "open in another process" not in str(error) or time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def _user_error(error: Exception) -> Exception:
    """The error a worker raised (a file that cannot be read, a bad option), as the plain path raises it:
    out of Ray's wrapping, without the retry advice Ray Data appends after a newline (ours are one line)."""
    seen = getattr(error, "cause", None) or error
    if not isinstance(seen, (ValueError, TypeError, OSError, RuntimeError)):
        return error
    message = str(seen.args[0]).split("\n", 1)[0] if seen.args else str(seen)
    try:
        return type(seen)(message)
    except Exception:  # an exception class that wants other arguments
        return seen
