"""Your embedding model: `--model` end to end, the model recorded by the collection, a mismatch one
clear error, and chunk sizes in the model's own word-pieces from the command line."""

from __future__ import annotations

import json
import shutil

import pytest

from chunking import store
from chunking.embed import Embedder, default_model_path, model_record
from tests.test_cli import corpus, one_error_line, run, write_docs  # noqa: F401 (corpus is a fixture)

pytest.importorskip("sentence_transformers")


@pytest.fixture(scope="module")
def copied_model(tmp_path_factory):
    """The bundled MiniLM copied under another name: the same weights, so the same model."""
    folder = tmp_path_factory.mktemp("models") / "my-minilm"
    shutil.copytree(default_model_path(), folder)
    return folder


@pytest.fixture(scope="module")
def other_model(tmp_path_factory):
    """A real second model of the same size (384): MiniLM with its last layer's weights changed."""
    import torch
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(default_model_path()), device="cpu")
    with torch.no_grad():
        for parameter in model[0].auto_model.encoder.layer[-1].parameters():
            parameter.mul_(0.5)
    folder = tmp_path_factory.mktemp("models") / "other-minilm"
    model.save(str(folder))
    return folder


def test_a_second_model_folder_works_end_to_end(tmp_path, copied_model):
    docs = write_docs(tmp_path / "docs")
    qdrant = str(tmp_path / "qdrant")
    indexed = run("index", str(docs), "--path", qdrant, "--model", str(copied_model))
    assert indexed.returncode == 0, indexed.stderr
    found = run("search", "When does the alpha valve open?", "--path", qdrant, "--model", str(copied_model),
                "--format", "jsonl", "--k", "1")
    assert found.returncode == 0, found.stderr
    assert "alpha valve" in json.loads(found.stdout.splitlines()[0])["text"]
    # the same weights under another name are the same model: the bundled one may search it too
    assert run("search", "alpha valve", "--path", qdrant).returncode == 0


def test_searching_with_another_model_is_one_clear_error(tmp_path, other_model):
    docs = write_docs(tmp_path / "docs")
    qdrant = str(tmp_path / "qdrant")
    assert run("index", str(docs), "--path", qdrant).returncode == 0
    message = one_error_line(run("search", "alpha valve", "--path", qdrant, "--model", str(other_model)))
    assert "was written by model 'all-MiniLM-L6-v2'" in message and "other-minilm" in message
    assert "chunking index --recreate" in message
    again = run("index", str(docs), "--path", qdrant, "--model", str(other_model))
    assert "was written by model 'all-MiniLM-L6-v2'" in one_error_line(again)
    assert run("index", str(docs), "--path", qdrant, "--model", str(other_model), "--recreate").returncode == 0
    assert run("search", "alpha valve", "--path", qdrant, "--model", str(other_model)).returncode == 0


def test_evaluate_and_demo_take_a_model(corpus, tmp_path, copied_model):  # noqa: F811
    folder, questions = corpus
    result = run("evaluate", "--corpus", str(folder), "--questions", str(questions), "--strategies", "sentence",
                 "--chunk-size", "20", "--k", "2", "--out", str(tmp_path / "out"), "--model", str(copied_model))
    assert result.returncode == 0, result.stderr
    assert "--model PATH" in run("demo", "--help").stdout


def test_the_backend_is_one_option_and_either_reads_the_others_collection(tmp_path):
    docs = write_docs(tmp_path / "docs")
    qdrant = str(tmp_path / "qdrant")
    assert run("index", str(docs), "--path", qdrant, "--backend", "torch").returncode == 0
    hits = {}
    for backend in ("torch", "onnx"):  # the same model, so the same collection serves both
        found = run("search", "When does the alpha valve open?", "--path", qdrant, "--backend", backend,
                    "--format", "jsonl", "--k", "2")
        assert found.returncode == 0, found.stderr
        hits[backend] = [(row["doc"], row["start"], round(row["score"], 4))
                         for row in map(json.loads, found.stdout.splitlines())]
    assert hits["torch"] == hits["onnx"]
    bad = run("search", "x", "--path", qdrant, "--backend", "gpu")
    assert bad.returncode == 2 and "--backend" in bad.stderr and "'gpu'" in bad.stderr


@pytest.mark.parametrize("make", ["missing", "empty", "file"])
def test_a_model_path_that_is_not_a_model_is_a_usage_error(tmp_path, make):
    path = tmp_path / "model"
    if make == "empty":
        path.mkdir()
    elif make == "file":
        path.write_text("not a model")
    result = run("search", "x", "--model", str(path))
    assert result.returncode == 2 and "--model" in result.stderr and "Traceback" not in result.stderr
    assert "sentence-transformers model folder" in result.stderr


def test_chunk_sizes_in_the_models_own_word_pieces(tmp_path):
    text = (tmp_path / "guide.md")
    shutil.copy(_corpus_file(), text)
    result = run("chunk", str(text), "--unit", "pieces", "--chunk-size", "256")
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    embedder = Embedder()
    pieces = embedder.count_pieces([r["text"] for r in rows])  # [CLS] and [SEP] included
    assert max(pieces) <= 256 == embedder.max_pieces
    assert not any(embedder.truncated([r["text"] for r in rows]))
    assert max(pieces) >= 240  # the bound is used, not just respected


def _corpus_file():
    from tests.conftest import DATA

    return DATA / "corpus" / "lumendb_operator_guide.md"


# --- the store's record of the model -----------------------------------------------------------------

def test_a_collection_records_its_model_and_checks_it():
    client = store.connect(":memory:")
    minilm = model_record(Embedder())
    store.ensure_collection(client, "c", 384, model=minilm)
    assert store.check_model(client, "c", minilm) == minilm
    other = {"model": "other", "model_sha256": "0" * 16}
    with pytest.raises(ValueError, match=r"collection 'c' was written by model 'all-MiniLM-L6-v2' \(sha256 .*\), "
                                         r"not by 'other'"):
        store.ensure_collection(client, "c", 384, model=other)
    store.ensure_collection(client, "c", 384, model=other, recreate=True)
    assert store.check_model(client, "c", other) == other


def test_callables_are_told_apart_by_name_and_old_collections_adopt_a_model():
    client = store.connect(":memory:")
    store.ensure_collection(client, "old", 3)  # written before models were recorded
    assert store.check_model(client, "old", {"model": "a", "model_sha256": ""}) is None
    mine = model_record(Embedder(lambda texts: [[1.0, 0.0, 0.0]] * len(texts), name="mine@1", cache=False))
    assert mine == {"model": "mine@1", "model_sha256": ""}
    store.ensure_collection(client, "old", 3, model=mine)
    assert store.check_model(client, "old", mine) == mine
    with pytest.raises(ValueError, match="'mine@1'.*not by 'mine@2'"):
        store.check_model(client, "old", {"model": "mine@2", "model_sha256": ""})
