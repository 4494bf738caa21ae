"""The embedding model on ONNX Runtime: the same vectors as sentence-transformers, faster on a CPU.

1. `supports(folder)` says whether a sentence-transformers folder has the shape this module runs: a
   Transformer (with a fast tokenizer's `tokenizer.json`), a Pooling by mean or by [CLS], and maybe a
   Normalize — all-MiniLM-L6-v2 and most sentence-embedding models. Anything else runs on torch.
2. `exported(folder)` exports the folder's transformer to ONNX once, offline, from its own weights (no
   hub): torch's exporter, then ONNX Runtime's transformer fusions (attention, layer norm, GELU: the
   speed-up). It checks the result end to end against sentence-transformers on probe texts (cosine ≥
   `MIN_COSINE`, else it keeps the unfused graph, else it refuses), takes the window and the pooling
   from sentence-transformers itself (their files' format changes between its versions), and keeps
   all of it in the user's cache folder (`~/.cache/chunking/onnx/`, or `$CHUNKING_CACHE_DIR/onnx/`),
   never beside the model. Exporting needs torch and `onnx`; running needs `onnxruntime`, the
   tokenizer and numpy.
3. `OnnxModel` is the part of `SentenceTransformer` the package uses: `tokenizer` (the same Hugging
   Face fast tokenizer), `max_seq_length`, `encode(texts, batch_size)` — tokenise, run, pool over the
   attention mask, normalise: sentence-transformers' steps, with batches made by length in word-pieces
   (less padding) — and `hidden(ids, mask)`, the last hidden states that late chunking pools.
   Measured on 2 quiet cores: about 1.5× sentence-transformers' chunks/s at batch 8 (fusions and
   batching by pieces about equally); docs/benchmarks.md has the current figures.
4. `quantized=True` runs int8 weights (ONNX Runtime's dynamic quantization of the fused graph, per
   output channel): faster again, but the vectors move (cosine ~0.98 to the float model at worst on
   the corpus's chunks) — an option only, with its recall on the bundled questions beside its speed
   in docs/benchmarks.md.
The plain path is `sentence_transformers.SentenceTransformer(folder).encode`; tests/test_onnx.py holds
the two to cosine 0.99999 on the corpus. Chosen in `chunking.embed.Embedder(backend=...)`.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from filelock import FileLock, Timeout

from chunking.cache import default_cache_dir
from chunking.options import check_int

MIN_COSINE = 0.99999  # an exported graph must give vectors at least this close to torch's
OPSET = 17
PROBES = (  # texts the export is checked on: short, long (truncated), accents, CJK, padding in one batch
    "Chunking splits a document into pieces an embedding model can read.",
    "Qdrant stores the vectors. " * 80,
    "Größe, café, naïve — and 東京の天気は晴れです。",
    "a",
    " \n a text with spaces and lines around it \n",
)
POOLINGS = ("mean", "cls")  # what `encode` pools by (sentence-transformers' names)
LOCK = ".lock"  # held by the process exporting into a model's cache folder
SCRATCH_PREFIX = ".export-"  # a process's scratch folder (and, before, its scratch files) in that folder


def supports(folder: str | Path) -> str | None:
    """None if `folder` can run on ONNX Runtime here, else the reason it cannot (a sentence)."""
    folder = Path(folder)
    try:
        modules = json.loads((folder / "modules.json").read_text(encoding="utf-8"))
        kinds = [m["type"].rsplit(".", 1)[-1] for m in modules]
        settings = json.loads((folder / "sentence_bert_config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
        return f"{folder} is not a sentence-transformers folder this module reads ({error})"
    if kinds not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
        return f"its modules are {kinds}, not Transformer, Pooling and Normalize"
    if modules[0].get("path", "") != "" or not (folder / "tokenizer.json").is_file():
        return "its transformer has no fast tokenizer (tokenizer.json) at the top of the folder"
    if settings.get("do_lower_case"):
        return "it lowercases its input itself (do_lower_case)"
    if _pooling(folder) is None:
        return "its pooling is neither mean nor [CLS]"
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        return "onnxruntime is not installed (pip install onnxruntime onnx)"
    return None


def exported(folder: str | Path, fingerprint: str, *, quantized: bool = False) -> Path:
    """The ONNX file for the model in `folder` (whose files hash to `fingerprint`), exported if absent.

    Safe for several processes at once (pytest workers, notebook kernels, the command line): one takes
    the folder's lock and exports, the others wait and then find the file. Everything is written in a
    private scratch folder and moved into place whole, so a process killed mid-way leaves no half model;
    its scratch folder is removed by the next process that finds it unlocked.
    """
    home = default_cache_dir() / "onnx" / fingerprint  # by content: a copied model shares its export
    target = home / ("model-int8.onnx" if quantized else "model.onnx")
    _remove_leftovers(home)
    if target.is_file():
        return target
    home.mkdir(parents=True, exist_ok=True)
    with FileLock(home / LOCK):
        if not (home / "model.onnx").is_file():  # (another process may have made it while this one waited)
            with _scratch(home) as scratch:
                report = _export(Path(folder), scratch / "model.onnx")
                (scratch / "export.json").write_text(json.dumps(report, indent=1), encoding="utf-8")
                # export.json first: a reader that finds the model always finds its settings
                os.replace(scratch / "export.json", home / "export.json")
                os.replace(scratch / "model.onnx", home / "model.onnx")
        if quantized and not target.is_file():
            with _scratch(home) as scratch:
                _quantize(home / "model.onnx", scratch)
                os.replace(scratch / "model-int8.onnx", target)
    return target


class OnnxModel:
    """A sentence-transformers folder run on ONNX Runtime (CPU): the members of `SentenceTransformer`
    that `chunking.embed.Embedder` uses, giving the same vectors."""

    device = "cpu"

    def __init__(self, folder: str | Path, onnx_file: str | Path, settings: dict | None = None, *,
                 threads: int | None = None) -> None:
        """`settings` (`max_seq_length`, `pooling`): default, what the export recorded beside `onnx_file`.
        `threads`: ONNX Runtime's threads within an operation (default: one per core)."""
        import onnxruntime
        from transformers import PreTrainedTokenizerFast

        self.folder, self.onnx_file = Path(folder), Path(onnx_file)
        if settings is None:
            settings = json.loads((self.onnx_file.parent / "export.json").read_text(encoding="utf-8"))
        # the folder's tokenizer.json as it is (`supports` requires one): AutoTokenizer would give the same
        # tokenizer, after importing torch (1.4 s) to read the model's config
        self.tokenizer = PreTrainedTokenizerFast.from_pretrained(str(self.folder))
        self.max_seq_length, self.pooling = int(settings["max_seq_length"]), settings["pooling"]
        options = onnxruntime.SessionOptions()
        options.log_severity_level = 3  # warnings about unused initialisers are not the user's business
        if threads is not None:
            options.intra_op_num_threads = threads
        self.session = onnxruntime.InferenceSession(str(self.onnx_file), options, providers=["CPUExecutionProvider"])
        self.dim = int(self.session.get_outputs()[0].shape[-1])

    def get_embedding_dimension(self) -> int:
        return self.dim

    def hidden(self, input_ids: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
        """The transformer's last hidden states, shape (batch, width, dim), float32."""
        feed = {"input_ids": np.asarray(input_ids, dtype=np.int64),
                "attention_mask": np.asarray(attention_mask, dtype=np.int64)}
        return self.session.run(None, feed)[0]

    def encode(self, texts: list[str], batch_size: int = 8, normalize_embeddings: bool = True,
               **_ignored) -> np.ndarray:
        """Vectors for `texts` (shape (n, dim), float32, input order), as `SentenceTransformer.encode` gives
        them: cut at `max_seq_length` word-pieces, pooled over the real pieces, normalised. The texts are
        tokenised once and batched by their length in pieces (sentence-transformers sorts by characters),
        so a batch pads almost nothing — padding is most of what a mixed batch computes in vain."""
        check_int("batch_size", batch_size)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        ids = self.tokenizer(list(texts), truncation="longest_first", max_length=self.max_seq_length)["input_ids"]
        order = sorted(range(len(texts)), key=lambda i: len(ids[i]))
        pad = self.tokenizer.pad_token_id or 0
        for b in range(0, len(order), batch_size):
            rows = order[b : b + batch_size]
            lengths = np.array([len(ids[i]) for i in rows])
            width = int(lengths.max())
            batch = np.array([ids[i] + [pad] * (width - len(ids[i])) for i in rows], dtype=np.int64)
            mask = (np.arange(width)[None, :] < lengths[:, None]).astype(np.int64)
            states = self.hidden(batch, mask)
            if self.pooling == "cls":
                vectors = states[:, 0]
            else:
                weights = mask[:, :, None].astype(np.float32)
                vectors = (states * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
            if normalize_embeddings:
                vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
            out[rows] = vectors
        return out

    def __repr__(self) -> str:
        return f"OnnxModel({str(self.folder)!r}, {self.onnx_file.name!r})"


def _pooling(folder: Path) -> str | None:
    """The folder's pooling if it is one `encode` does, read in either format sentence-transformers
    writes: `"pooling_mode": "mean"` (version 6 on), or one true `pooling_mode_*_token(s)` flag."""
    try:
        config = json.loads((folder / "1_Pooling" / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(config, dict):
        return None
    mode = config.get("pooling_mode")
    if mode is None:
        flags = [k for k, v in config.items() if k.startswith("pooling_mode_") and v is True]
        legacy = {"pooling_mode_mean_tokens": "mean", "pooling_mode_cls_token": "cls"}
        mode = legacy.get(flags[0]) if len(flags) == 1 else None
    return mode if mode in POOLINGS else None


def _export(folder: Path, target: Path) -> dict:
    """Export and fuse the transformer into `target`; check it end to end against sentence-transformers.
    Returns what the model runs with and what the check found (written as export.json)."""
    import torch
    from sentence_transformers import SentenceTransformer
    from transformers import AutoModel
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    reference = SentenceTransformer(str(folder), device="cpu")  # the plain path: what the vectors must be
    pooling = getattr(reference[1], "pooling_mode", None)
    pooling = pooling if isinstance(pooling, str) else reference[1].get_pooling_mode_str()
    settings = {"max_seq_length": int(reference.max_seq_length), "pooling": pooling}
    if pooling not in POOLINGS:
        raise ValueError(f"the model in {str(folder)!r} pools by {pooling!r}; ONNX runs {POOLINGS}")
    expected = reference.encode(list(PROBES), normalize_embeddings=True, convert_to_numpy=True)
    # eager attention: the graph ONNX Runtime's fusions recognise (torch's fused kernel exports as a trace)
    transformer = AutoModel.from_pretrained(str(folder), attn_implementation="eager").eval()

    class LastHidden(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.transformer = transformer

        def forward(self, input_ids, attention_mask):
            return self.transformer(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    example = reference.tokenizer(list(PROBES[:2]), padding=True, truncation=True, max_length=16, return_tensors="pt")
    raw = target.with_suffix(".raw.onnx")
    with torch.inference_mode(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the tracer's notes on Python control flow: the check below decides
        torch.onnx.export(
            LastHidden(), (example["input_ids"], example["attention_mask"]), str(raw),
            input_names=["input_ids", "attention_mask"], output_names=["last_hidden_state"], opset_version=OPSET,
            dynamic_axes={name: {0: "batch", 1: "width"} for name in ("input_ids", "attention_mask",
                                                                     "last_hidden_state")},
            dynamo=False,
        )
    report = {**settings, "torch": torch.__version__, "opset": OPSET}
    return {**report, **_fuse(raw, target, transformer.config, folder, settings, expected)}


def _fuse(raw: Path, target: Path, config, folder: Path, settings: dict, expected: np.ndarray) -> dict:
    """Fuse the `raw` graph into `target` (ONNX Runtime's BERT fusions) if its vectors stay within
    MIN_COSINE of sentence-transformers' `expected`, else keep the plain graph; check it either way.
    Returns what was fused and the smallest cosine found."""
    report: dict = {}
    try:
        from onnxruntime.transformers import optimizer

        fused = optimizer.optimize_model(str(raw), model_type="bert", num_heads=int(config.num_attention_heads),
                                         hidden_size=int(config.hidden_size))
        fused.save_model_to_file(str(target))
        report["fused"] = {k: v for k, v in fused.get_fused_operator_statistics().items() if v}
        report["min_cosine"] = _agreement(folder, target, settings, expected)
    except Exception as error:  # noqa: BLE001 - any failure of the optional fusion keeps the plain graph
        report["fused"], report["min_cosine"] = f"not fused: {type(error).__name__}: {error}", 0.0
    if report["min_cosine"] < MIN_COSINE:
        if isinstance(report["fused"], dict):
            report["fused"] = f"not used: its vectors were {report['min_cosine']:.7f} cosine-close"
        os.replace(raw, target)
        report["min_cosine"] = _agreement(folder, target, settings, expected)
    raw.unlink(missing_ok=True)
    if report["min_cosine"] < MIN_COSINE:
        raise ValueError(f"the ONNX export of {str(folder)!r} gives vectors only {report['min_cosine']:.6f} "
                         f"cosine-close to sentence-transformers' (need {MIN_COSINE})")
    return report


def _quantize(source: Path, scratch: Path) -> None:
    """int8 weights per output channel (per tensor moves the vectors three times as far), written as
    `model-int8.onnx` in `scratch`. ONNX Runtime writes a shape-inferred copy beside its input and
    deletes it after, so the input is copied into the scratch folder first: two quantizations of one
    model would otherwise share (and delete) that copy."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    shutil.copyfile(source, scratch / "model.onnx")
    quantize_dynamic(str(scratch / "model.onnx"), str(scratch / "model-int8.onnx"), weight_type=QuantType.QInt8,
                     per_channel=True, extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})


def _agreement(folder: Path, onnx_file: Path, settings: dict, expected: np.ndarray) -> float:
    """Smallest cosine between sentence-transformers' vectors of the probes and the graph's."""
    got = OnnxModel(folder, onnx_file, settings).encode(list(PROBES), batch_size=len(PROBES))
    return float((got * expected).sum(axis=1).min())


@contextlib.contextmanager
def _scratch(home: Path) -> Iterator[Path]:
    """A private folder inside `home` for one step's files, removed when the step ends (or fails)."""
    scratch = Path(tempfile.mkdtemp(dir=home, prefix=SCRATCH_PREFIX))
    try:
        yield scratch
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _remove_leftovers(home: Path) -> None:
    """Remove the scratch folders (and, from earlier versions, scratch files) of processes killed while
    exporting into `home`: only when no process holds its lock, so nobody's work in progress goes."""
    try:
        leftovers = [p for p in home.iterdir() if p.name.startswith(SCRATCH_PREFIX)]
    except OSError:  # no export here yet
        return
    if not leftovers:
        return
    try:
        with FileLock(home / LOCK, timeout=0):
            for path in leftovers:
                if path.is_dir():
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    path.unlink(missing_ok=True)
    except (Timeout, OSError):  # an export is running (its owner or the next one removes them), or read-only
        pass
