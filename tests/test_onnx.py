"""The fast path beside the plain one: MiniLM on ONNX Runtime gives sentence-transformers' vectors.

The plain path is `SentenceTransformer(folder).encode` on torch (`Embedder(backend="torch")`); the
default runs the same weights exported to ONNX (`chunking.onnx_model`). They must agree to cosine
0.99999 on every chunk of the corpus, on the edge cases of the tokenizer, and token by token for
late chunking; and the choice must be visible everywhere vectors are kept (cache keys).
"""

from __future__ import annotations

import json
import shutil
import sys

import numpy as np
import pytest

from chunking import chunk, onnx_model
from chunking.embed import BACKEND_ENV, Embedder, default_model_path, folder_fingerprint
from tests.conftest import corpus_texts

EDGES = [
    "", " ", "  leading and trailing spaces  ", "\n\ttabs and lines\n", "x" * 5000,  # cut at 256 pieces
    "Größe, café, naïve", "東京の天気は晴れです。", "emoji 🙂🚀 and a zero\u200bwidth space", "a\x00b",
    "word " * 300, "UPPER case Mixed", "1,234.56 USD | 7 %",
]


@pytest.fixture(scope="module")
def both():
    return Embedder(backend="onnx", cache=False), Embedder(backend="torch", cache=False)


@pytest.fixture(scope="module")
def corpus_chunks():
    texts = [c.text for text in corpus_texts().values() for c in chunk(text, "recursive", chunk_size=200)]
    return texts[::2]  # every second: ~250 chunks of every document


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def test_the_default_runs_on_onnx():
    assert Embedder(cache=False).backend == "onnx"


def test_same_vectors_on_the_corpus(both, corpus_chunks):
    fast, plain = both
    assert len(corpus_chunks) > 200
    assert cosines(fast.embed(corpus_chunks), plain.embed(corpus_chunks)).min() >= onnx_model.MIN_COSINE


def test_same_vectors_on_the_tokenizers_edge_cases(both):
    fast, plain = both
    assert cosines(fast.embed(EDGES), plain.embed(EDGES)).min() >= onnx_model.MIN_COSINE


def test_a_text_gets_the_same_vector_in_any_batch(both):
    fast, _ = both
    alone = fast.embed(["Exactly the same sentence."])[0]
    model = fast.model
    batched = model.encode(["x " * 200, "Exactly the same sentence.", "short"], batch_size=3)
    assert batched[1] == pytest.approx(alone, abs=1e-6)


def test_same_token_vectors_and_spans_for_late_chunking(both):
    fast, plain = both
    text = " ".join(corpus_texts().values())[:6000]  # several overlapping windows
    vectors, spans = fast.token_vectors(text, window_pieces=128, overlap_pieces=32, batch_size=3)
    expected, expected_spans = plain.token_vectors(text, window_pieces=128, overlap_pieces=32, batch_size=3)
    assert np.array_equal(spans, expected_spans)
    assert cosines(vectors, expected).min() >= onnx_model.MIN_COSINE


def test_the_same_tokenizer_counts_the_same_pieces(both):
    fast, plain = both
    assert fast.count_pieces(EDGES) == plain.count_pieces(EDGES)
    assert fast.visible_end(EDGES) == plain.visible_end(EDGES)
    assert (fast.max_pieces, fast.dim) == (plain.max_pieces, plain.dim) == (256, 384)


def test_the_backend_is_part_of_every_cache_key(both, tmp_path):
    fast, plain = both
    assert fast.identity != plain.identity
    assert fast._key("same text") != plain._key("same text")
    Embedder(backend="onnx", cache=tmp_path).embed(["cached once"])
    Embedder(backend="torch", cache=tmp_path).embed(["cached once"])
    import sqlite3

    rows = sqlite3.connect(tmp_path / "embeddings.sqlite").execute("SELECT COUNT(*) FROM entries").fetchone()[0]
    assert rows == 2  # one vector per backend: neither reads the other's


def test_the_export_lives_in_the_cache_folder_not_beside_the_model(tmp_path, monkeypatch):
    """A fresh export, checked against torch, written whole into the cache folder; the model's folder untouched."""
    monkeypatch.setenv("CHUNKING_CACHE_DIR", str(tmp_path))
    folder = default_model_path()
    before = sorted(p.name for p in folder.rglob("*"))
    fingerprint = folder_fingerprint(str(folder.resolve()))[:16]
    path = onnx_model.exported(folder, fingerprint)
    assert path.is_relative_to(tmp_path / "onnx") and path.stat().st_mode & 0o644 == 0o644
    report = json.loads((path.parent / "export.json").read_text())
    assert report["min_cosine"] >= onnx_model.MIN_COSINE and report["fused"]["Attention"] == 6
    assert [p.name for p in path.parent.iterdir() if p.name.startswith(".")] == [onnx_model.LOCK]  # no scratch left
    assert sorted(p.name for p in folder.rglob("*")) == before
    assert onnx_model.exported(folder, fingerprint) == path  # the second time: found, not exported again


def test_int8_is_an_option_whose_vectors_move_a_little(both, corpus_chunks):
    fast, _ = both
    quantized = Embedder(backend="onnx-int8", cache=False)
    assert quantized.identity.endswith("|onnx-int8|normalized")
    similarity = cosines(quantized.embed(corpus_chunks[:100]), fast.embed(corpus_chunks[:100]))
    assert 0.95 <= similarity.min() < onnx_model.MIN_COSINE  # close, but not the same vectors


@pytest.fixture
def max_pooled(tmp_path):
    """The bundled model with its pooling switched to max: a shape the ONNX path does not run."""
    folder = tmp_path / "max-pooled"
    shutil.copytree(default_model_path(), folder)
    config = folder / "1_Pooling" / "config.json"
    settings = json.loads(config.read_text()) | {"pooling_mode_mean_tokens": False, "pooling_mode_max_tokens": True}
    config.write_text(json.dumps(settings))
    return folder


def test_auto_falls_back_to_torch_and_says_why(max_pooled):
    with pytest.warns(UserWarning, match="with torch .*neither mean nor"):
        embedder = Embedder(max_pooled, cache=False)
        assert embedder.backend == "torch"
    assert embedder.embed(["still embeds"]).shape == (1, 384)


def test_asking_for_onnx_where_it_cannot_run_is_an_error(max_pooled):
    with pytest.raises(ValueError, match="backend 'onnx' cannot run the model .*pooling is neither mean nor"):
        _ = Embedder(max_pooled, backend="onnx", cache=False).backend
    with pytest.raises(ValueError, match="backend 'onnx' cannot run .*on the CPU only, not 'cuda'"):
        _ = Embedder(backend="onnx", device="cuda", cache=False).backend


def test_without_onnxruntime_auto_runs_torch(monkeypatch):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # what an environment without it gives: ImportError
    with pytest.warns(UserWarning, match="onnxruntime is not installed"):
        assert Embedder(cache=False).backend == "torch"


@pytest.mark.parametrize("backend", ["gpu", "ONNX", "", 1])
def test_a_bad_backend_is_named(backend):
    with pytest.raises(ValueError, match=f"backend must be one of auto, onnx, onnx-int8, torch, got {backend!r}"):
        Embedder(backend=backend)


def test_the_environment_sets_the_default(monkeypatch):
    monkeypatch.setenv(BACKEND_ENV, "torch")
    assert Embedder(cache=False).backend == "torch"
    monkeypatch.setenv(BACKEND_ENV, "fast")
    with pytest.raises(ValueError, match=r"\$CHUNKING_BACKEND must be one of .* got 'fast'"):
        Embedder(cache=False)


def test_a_callable_has_no_backend():
    assert Embedder(lambda texts: np.ones((len(texts), 2)), cache=False).backend == "callable"
