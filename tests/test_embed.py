"""The embedder: the real bundled MiniLM, offline; normalised vectors; the on-disk cache; word-pieces."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from chunking.embed import Embedder, folder_fingerprint, load_model


@pytest.fixture(scope="module")
def embedder(tmp_path_factory):
    return Embedder(cache=tmp_path_factory.mktemp("cache"))


def test_vectors_are_normalised_384_floats(embedder):
    v = embedder.embed(["A cat sat on the mat.", "Stocks fell sharply today."])
    assert v.shape == (2, 384) and v.dtype == np.float32
    assert np.linalg.norm(v, axis=1) == pytest.approx([1.0, 1.0], abs=1e-5)


def test_similar_meaning_scores_higher(embedder):
    q, near, far = embedder.embed(["How do I reset my password?", "Steps to change a forgotten login password",
                                   "The tide mill ground grain for the village"])
    assert q @ near > q @ far + 0.2


def test_same_text_same_vector_in_any_batch(embedder):
    alone = embedder.embed(["Exactly the same sentence."])[0]
    mixed = embedder.embed(["Something else entirely, and longer than the other one.", "Exactly the same sentence."])
    assert mixed[1] == pytest.approx(alone, abs=1e-5)


def test_cache_stores_each_text_once(tmp_path):
    e = Embedder(cache=tmp_path)
    e.embed(["one", "two", "one"])
    e.embed(["two", "three"])
    rows = sqlite3.connect(tmp_path / "embeddings.sqlite").execute("SELECT COUNT(*) FROM entries").fetchone()
    assert rows == (3,)


def test_cached_vectors_equal_fresh_ones(tmp_path):
    first = Embedder(cache=tmp_path).embed(["cache me"])
    again = Embedder(cache=tmp_path).embed(["cache me"])
    fresh = Embedder(cache=False).embed(["cache me"])
    assert np.array_equal(first, again) and fresh == pytest.approx(first, abs=1e-6)


def test_cache_can_be_switched_off_by_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("CHUNKING_CACHE", "off")
    Embedder(cache=tmp_path).embed(["not stored"])
    assert not (tmp_path / "embeddings.sqlite").exists()


def test_word_pieces_include_special_tokens_and_show_truncation(embedder):
    assert embedder.count_pieces(["hello world"]) == [4]  # [CLS] hello world [SEP]
    assert embedder.max_pieces == 256
    assert embedder.truncated(["short", "word " * 300]) == [False, True]


def test_the_model_never_reads_past_the_visible_end(embedder):
    text = "The beginning matters. " + "Filler words keep going here. " * 80 + "The secret is 42."
    end = embedder.visible_end([text])[0]
    assert end < text.index("The secret")
    whole, visible = embedder.embed([text, text[:end]])
    assert whole == pytest.approx(visible, abs=1e-4)  # the tail changed nothing: it was never seen


def test_short_text_is_visible_to_the_end(embedder):
    assert embedder.visible_end(["short text"]) == [10]


def test_a_callable_can_stand_in_for_the_model(tmp_path):
    def three_dims(texts):
        return np.array([[len(t), 1.0, 0.0] for t in texts])

    e = Embedder(three_dims, cache=tmp_path)
    v = e.embed(["ab", "abcd"])
    assert v.shape == (2, 3) and np.linalg.norm(v, axis=1) == pytest.approx([1.0, 1.0])
    assert e.count_pieces(["ab"]) is None and e.dim == 3


def test_empty_input_gives_an_empty_matrix(embedder):
    assert embedder.embed([]).shape == (0, 384)


@pytest.mark.parametrize(("kwargs", "error"), [({"batch_size": 0}, ValueError), ({"model": 42}, TypeError)])
def test_bad_arguments_are_named(kwargs, error):
    with pytest.raises(error, match=next(iter(kwargs))):
        Embedder(**kwargs)


def test_a_string_is_not_a_list_of_texts(embedder):
    with pytest.raises(TypeError, match="embed_query"):
        embedder.embed("one string")


def test_hub_names_are_not_downloaded():
    with pytest.raises(ValueError, match="local sentence-transformers folder"):
        load_model("sentence-transformers/all-MiniLM-L6-v2")


# --- what the cache keys vectors by ---------------------------------------------------------------

def test_two_callables_without_names_never_share_vectors(tmp_path):
    first = Embedder(lambda texts: np.array([[1.0, 0.0]] * len(texts)), cache=tmp_path)
    second = Embedder(lambda texts: np.array([[0.0, 1.0]] * len(texts)), cache=tmp_path)
    assert first.embed(["same text"]).tolist() == [[1.0, 0.0]]
    assert second.embed(["same text"]).tolist() == [[0.0, 1.0]]


def test_a_named_callable_is_cached_under_its_name(tmp_path):
    calls = []

    def model(texts):
        calls.append(list(texts))
        return np.array([[1.0, 2.0]] * len(texts))

    Embedder(model, name="toy@1", cache=tmp_path).embed(["cached"])
    Embedder(model, name="toy@1", cache=tmp_path).embed(["cached"])
    Embedder(model, name="toy@2", cache=tmp_path).embed(["cached"])  # a new version: computed again
    assert calls == [["cached"], ["cached"]]


def test_a_models_identity_changes_with_its_files_backend_and_normalisation(tmp_path):
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "weights.bin").write_bytes(b"\x00" * 100)
    before = folder_fingerprint(str(folder))
    (folder / "weights.bin").write_bytes(b"\x00" * 99 + b"\x01")
    folder_fingerprint.cache_clear()
    assert folder_fingerprint(str(folder)) != before
    identity = Embedder(cache=False).identity
    assert identity.startswith("all-MiniLM-L6-v2|sha256:") and identity.endswith("|onnx|normalized")
    assert Embedder(cache=False, backend="torch").identity == identity.replace("|onnx|", "|torch|")


@pytest.mark.parametrize("name", ["", "  ", 3])
def test_a_bad_name_is_refused(name):
    with pytest.raises(ValueError, match="name must be a non-empty str"):
        Embedder(lambda texts: np.ones((len(texts), 2)), name=name)


# --- one interface: any object with name, dim, max_pieces and embed -------------------------------

class HashedWords:
    """An embedder that is not `chunking.embed.Embedder`: the interface is all the package needs."""

    name, dim, max_pieces = "hashed-words@1", 16, None

    def embed(self, texts):
        vectors = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                vectors[row, sum(map(ord, word)) % self.dim] += 1.0
            vectors[row, 0] += 1.0
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_any_embedding_model_serves_the_model_based_strategies():
    from chunking import chunk

    text = "Cats purr softly. Cats nap all day. Stocks fell sharply. Stocks rose again. " * 3
    for strategy, options in (("semantic", {}), ("parent_child", {"parent_mode": "semantic"})):
        assert chunk(text, strategy, chunk_size=20, embedder=HashedWords(), **options)


def test_any_embedding_model_serves_the_comparison():
    from chunking import compare, store
    from chunking.evaluate import Question, Reference

    docs = {"a.txt": "The ferry leaves at nine. It returns at five in the evening."}
    questions = [Question("When does the ferry leave?", (Reference("a.txt", 0, 25, docs["a.txt"][:25]),))]
    configs = [compare.Config("s", "sentence", {"chunk_size": 20}),
               compare.Config("h", "sentence", {"chunk_size": 20}, retrieval="hybrid")]
    result = compare.run(docs, questions, configs, embedder=HashedWords(), client=store.connect(":memory:"))
    assert [row["config"] for row in result.rows] == ["s", "h"] and result.rows[0]["mean_pieces"] == 0


def test_late_chunking_says_it_needs_token_vectors():
    from chunking.late import embed_late
    from chunking.types import make_chunks

    text = "The mill stood by the quay."
    with pytest.raises(TypeError, match="token vectors and their offsets"):
        embed_late(text, make_chunks(text, [(0, len(text))], strategy="s"), embedder=HashedWords())


@pytest.mark.parametrize("embedder", ["x", 3, object()])
def test_something_that_is_not_an_embedding_model_is_refused_by_name(embedder):
    from chunking.embed import resolve_embedder

    with pytest.raises(TypeError, match="EmbeddingModel"):
        resolve_embedder(embedder)


def test_the_device_is_a_parameter(tmp_path):
    with pytest.raises(ValueError, match="device 'no-such-device'"):
        Embedder(device="no-such-device", cache=False).embed(["x"])


def test_a_cache_written_by_an_earlier_version_stays_warm(tmp_path):
    import sqlite3

    key_text = "kept"
    embedder = Embedder(lambda texts: np.ones((len(texts), 2)), name="toy@1", cache=tmp_path)
    old = sqlite3.connect(tmp_path / "embeddings.sqlite")
    old.execute("DROP TABLE entries")
    old.execute("CREATE TABLE vectors (key TEXT PRIMARY KEY, vector BLOB)")
    vector = np.array([0.6, 0.8], np.float32).tobytes()
    old.execute("INSERT INTO vectors VALUES (?, ?)", (embedder._key(key_text), vector))
    old.commit()
    again = Embedder(lambda texts: np.ones((len(texts), 2)), name="toy@1", cache=tmp_path)
    assert again.embed([key_text]).tolist() == np.array([[0.6, 0.8]], np.float32).tolist()  # read, not computed
