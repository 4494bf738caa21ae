"""Late chunking with the real bundled MiniLM: one vector per chunk, any strategy, windows, checks."""

from __future__ import annotations

import numpy as np
import pytest

from chunking import chunk
from chunking.embed import Embedder
from chunking.late import embed_late, token_spans
from chunking.models import plan_windows
from chunking.types import Chunk, make_chunks
from tests.conftest import DATA

SHORT = "The tide mill at Horsey Pound ground corn for five centuries. It stopped in 1921, when the dam failed."
ESSAY = (DATA / "corpus" / "tidal_mills_essay.txt").read_text(encoding="utf-8")
GUIDE = (DATA / "corpus" / "lumendb_operator_guide.md").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def embedder():
    return Embedder(cache=False)  # every call computes: the tests below compare computations


def test_late_vectors_are_cached_and_keyed_by_document_span_and_windows(tmp_path, monkeypatch):
    cached = Embedder(cache=tmp_path)
    calls = []
    real = cached.token_vectors
    monkeypatch.setattr(cached, "token_vectors", lambda *a, **k: calls.append(k) or real(*a, **k))
    chunks = chunk(ESSAY[:3000], "sentence", chunk_size=40)
    first = embed_late(ESSAY[:3000], chunks, embedder=cached)
    again = embed_late(ESSAY[:3000], chunks, embedder=cached)
    assert len(calls) == 1 and np.array_equal(first, again)  # the second time, from the cache
    embed_late(ESSAY[:3000], chunks, embedder=cached, overlap_pieces=16)  # other windows: other vectors
    embed_late(ESSAY[:2999], chunks[:-1], embedder=cached)  # another document: the same spans mean other text
    assert len(calls) == 3
    fresh = embed_late(ESSAY[:3000], chunks, embedder=Embedder(cache=False))
    assert first == pytest.approx(fresh, abs=1e-6)


def whole(text: str) -> list[Chunk]:
    return make_chunks(text, [(0, len(text))], strategy="whole")


def test_one_normalised_vector_per_chunk(embedder):
    chunks = chunk(SHORT, "sentence", chunk_size=1, unit="sentences")
    vectors = embed_late(SHORT, chunks, embedder=embedder)
    assert vectors.shape == (2, 384) and vectors.dtype == np.float32
    assert np.linalg.norm(vectors, axis=1) == pytest.approx([1.0, 1.0], abs=1e-5)


def test_vectors_come_in_the_order_of_the_chunks(embedder):
    chunks = chunk(SHORT, "sentence", chunk_size=1, unit="sentences")
    forward = embed_late(SHORT, chunks, embedder=embedder)
    assert np.array_equal(embed_late(SHORT, chunks[::-1], embedder=embedder), forward[::-1])


def test_whole_short_document_is_close_to_its_normal_embedding(embedder):
    # Same input ([CLS] text [SEP], one window), so the token vectors are identical; but the model's own
    # mean pooling also averages in the [CLS] and [SEP] vectors, and late pooling keeps only the chunk's
    # word-pieces. So the two are close, not equal (they would be equal only if [CLS]/[SEP] were pooled too).
    late = embed_late(SHORT, whole(SHORT), embedder=embedder)[0]
    assert late @ embedder.embed([SHORT])[0] > 0.95


def test_whole_short_document_equals_the_library_token_vectors_pooled_without_specials(embedder):
    # sentence-transformers on torch (the plain path) gives the token vectors; ours run on ONNX Runtime
    library = Embedder(backend="torch", cache=False).model
    tokens = np.asarray(library.encode([SHORT], output_value="token_embeddings")[0])
    expected = tokens[1:-1].mean(axis=0)  # drop [CLS] and [SEP]
    late = embed_late(SHORT, whole(SHORT), embedder=embedder)[0]
    assert late == pytest.approx(expected / np.linalg.norm(expected), abs=1e-5)


@pytest.mark.parametrize("strategy", ["sentence", "fixed", "markdown"])
def test_chunks_of_any_strategy_work(embedder, strategy):
    text = GUIDE[:6000]
    chunks = chunk(text, strategy, chunk_size=64)
    vectors = embed_late(text, chunks, embedder=embedder)
    assert vectors.shape == (len(chunks), 384)
    assert np.linalg.norm(vectors, axis=1) == pytest.approx(np.ones(len(chunks)), abs=1e-5)


def test_a_chunk_vector_depends_on_its_span_not_on_the_other_chunks(embedder):
    # The context is the document, not the chunk list: the same span from two strategies gets one vector.
    text = GUIDE[:6000]
    sentences = chunk(text, "sentence", chunk_size=64)
    alone = embed_late(text, [sentences[5]], embedder=embedder)
    among = embed_late(text, sentences, embedder=embedder)[5]
    fixed = embed_late(text, chunk(text, "fixed", chunk_size=64) + [sentences[5]], embedder=embedder)[-1]
    assert np.array_equal(alone[0], among) and np.array_equal(among, fixed)


def test_late_differs_from_naive_when_context_matters(embedder):
    chunks = chunk(SHORT, "sentence", chunk_size=1, unit="sentences")
    late = embed_late(SHORT, chunks, embedder=embedder)[1]
    assert late @ embedder.embed([chunks[1].text])[0] < 0.99  # "It stopped…" was read after "The tide mill…"


def test_a_long_document_spans_many_windows(embedder):
    chunks = chunk(ESSAY, "sentence", chunk_size=64)
    vectors = embed_late(ESSAY, chunks, embedder=embedder)
    assert len(token_spans(ESSAY, embedder=embedder)) > 10 * 256
    assert vectors.shape == (len(chunks), 384) and np.isfinite(vectors).all()
    assert np.linalg.norm(vectors, axis=1) == pytest.approx(np.ones(len(chunks)), abs=1e-5)


def test_a_long_document_does_not_depend_on_batch_size(embedder):
    # Every window is full (the last is moved back to end at the text's end), so batches need no padding.
    text = ESSAY[:4000]
    chunks = chunk(text, "sentence", chunk_size=64)
    one = embed_late(text, chunks, embedder=embedder, batch_size=1)
    assert embed_late(text, chunks, embedder=embedder, batch_size=8) == pytest.approx(one, abs=1e-5)


PLANS = [(1, 254, 64), (254, 254, 64), (255, 254, 64), (600, 254, 64), (7764, 254, 64), (1000, 254, 0),
         (1000, 10, 9), (50, 7, 3), (100, 2, 1)]


@pytest.mark.parametrize(("n", "window", "overlap"), PLANS)
def test_windows_use_each_token_exactly_once(n, window, overlap):
    plan = plan_windows(n, window, overlap)
    kept = [t for _, _, keep_from, keep_to in plan for t in range(keep_from, keep_to)]
    assert kept == list(range(n))
    assert all(s <= keep_from <= keep_to <= e and e - s == min(window, n) for s, e, keep_from, keep_to in plan)
    assert all(a[1] - b[0] >= overlap for a, b in zip(plan, plan[1:]))  # neighbours share >= overlap


@pytest.mark.parametrize(("n", "window", "overlap"), PLANS)
def test_a_shared_token_is_kept_by_the_window_where_it_is_farther_from_the_edge(n, window, overlap):
    plan = plan_windows(n, window, overlap)
    for t in range(n):
        distance = {k: min(t - s, e - 1 - t) for k, (s, e, _, _) in enumerate(plan) if s <= t < e}
        keeper = next(k for k, (_, _, keep_from, keep_to) in enumerate(plan) if keep_from <= t < keep_to)
        assert distance[keeper] == max(distance.values())


def test_the_same_input_gives_the_same_vectors(embedder):
    chunks = chunk(ESSAY[:5000], "sentence", chunk_size=64)
    options = {"embedder": embedder, "window_pieces": 128, "overlap_pieces": 32}
    assert np.array_equal(embed_late(ESSAY[:5000], chunks, **options), embed_late(ESSAY[:5000], chunks, **options))


def test_no_chunks_give_an_empty_matrix(embedder):
    assert embed_late("", [], embedder=embedder).shape == (0, 384)


@pytest.mark.parametrize(
    ("options", "name"),
    [({"window_pieces": 0}, "window_pieces"), ({"window_pieces": 255}, "window_pieces"),
     ({"window_pieces": 2.5}, "window_pieces"), ({"overlap_pieces": -1}, "overlap_pieces"),
     ({"window_pieces": 64, "overlap_pieces": 64}, "overlap_pieces"), ({"overlap_pieces": 1.5}, "overlap_pieces"),
     ({"batch_size": 0}, "batch_size")],
)
def test_bad_options_are_named(embedder, options, name):
    with pytest.raises(ValueError, match=rf"{name} .*got {list(options.values())[-1]!r}"):
        embed_late(SHORT, whole(SHORT), embedder=embedder, **options)


@pytest.mark.parametrize(
    "bad",
    [Chunk(text="tide", start=0, end=4, index=0),  # text[0:4] is "The "
     Chunk(text=SHORT, start=1, end=len(SHORT) + 1, index=0),
     Chunk(text="", start=5, end=4, index=0)],
)
def test_chunks_with_bad_offsets_are_rejected(embedder, bad):
    with pytest.raises(ValueError, match=r"chunk 1: span"):
        embed_late(SHORT, [whole(SHORT)[0], bad], embedder=embedder)


def test_a_chunk_with_no_word_piece_is_embedded_alone(embedder):
    text = "Dam.\u00a0\u200b Mill."  # a no-break space and a zero-width space: the tokenizer drops both
    chunks = make_chunks(text, [(0, 4), (4, 6), (7, 12)], strategy="hand")
    vectors = embed_late(text, chunks, embedder=embedder)
    assert np.allclose(vectors[1], embedder.embed([chunks[1].text])[0], atol=1e-5)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)


def test_text_must_be_a_string(embedder):
    with pytest.raises(TypeError, match="text"):
        embed_late(b"bytes", [], embedder=embedder)


def test_a_callable_embedder_cannot_late_chunk(tmp_path):
    e = Embedder(lambda texts: np.ones((len(texts), 3)), cache=tmp_path)
    with pytest.raises(TypeError, match="embedder"):
        embed_late(SHORT, whole(SHORT), embedder=e)


@pytest.mark.parametrize("name", ["tidal_mills_essay.txt", "kyoto_tea_guide_ja.md", "night_train_handbook.html"])
def test_token_spans_cover_every_non_whitespace_character_in_order(embedder, name):
    text = (DATA / "corpus" / name).read_text(encoding="utf-8")
    spans = token_spans(text, embedder=embedder)
    assert all(0 <= a < b <= len(text) for a, b in spans)
    assert all(p[0] <= q[0] and p[1] <= q[1] for p, q in zip(spans, spans[1:]))
    covered = np.zeros(len(text), dtype=bool)
    for a, b in spans:
        covered[a:b] = True
    assert all(covered[i] or text[i].isspace() for i in range(len(text)))


def test_token_spans_map_word_pieces_back_to_the_original_characters(embedder):
    # The uncased model lowercases ("late", "chunk", "##ing"), but the spans point at the text as written.
    assert [("Late chunking"[a:b]) for a, b in token_spans("Late chunking", embedder=embedder)] == [
        "Late", "chunk", "ing"]


def test_token_spans_of_nothing_is_empty(embedder):
    assert token_spans("", embedder=embedder) == []
