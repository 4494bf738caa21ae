"""Semantic chunking: the real bundled MiniLM on real text; a scripted embedder only to force a breakpoint."""

from __future__ import annotations

import hashlib
import statistics

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from chunking import check_chunks, chunk, count_tokens, embed, semantic
from chunking.embed import Embedder
from chunking.segment import split_sentences
from tests.conftest import DATA

FULL_ESSAY = (DATA / "corpus" / "tidal_mills_essay.txt").read_text(encoding="utf-8")
ESSAY = FULL_ESSAY[: FULL_ESSAY.index("\n\n", 12000)]  # 82 sentences: real text, embedded in seconds
TOPICS = "Cats purr. Cats nap. Stocks fell. Stocks rose."
MODES = {
    "fixed": {},
    "percentile": {},
    "std": {},
    "iqr": {},
    "gradient": {},
    "target": {"target_size": 100},
}


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    return Embedder(cache=tmp_path_factory.mktemp("semantic-cache"))


def scripted(vectors: dict[str, list[float]]) -> Embedder:
    """A fake embedder: each sentence gets the vector of the first key it starts with."""
    def lookup(texts):
        return np.array([next(v for k, v in vectors.items() if t.startswith(k)) for t in texts], dtype=float)

    return Embedder(lookup, cache=False)


def hashed(texts: list[str]) -> np.ndarray:
    """Deterministic pseudo-random vectors from each text's sha256 (for property tests)."""
    digests = [np.frombuffer(hashlib.sha256(t.encode("utf-8", "surrogatepass")).digest(), np.uint8) for t in texts]
    return np.array(digests, dtype=float) - 127.5


def counting(inner: Embedder, calls: list[list[str]]) -> Embedder:
    """The real model behind a callable that records every batch it is asked for."""
    def model_call(texts):
        calls.append(list(texts))
        return inner.embed(texts)

    return Embedder(model_call, cache=False)


def test_golden_spans_on_two_topics():
    topic = scripted({"Cats": [1.0, 0.0], "Stocks": [0.0, 1.0]})
    got = semantic.chunk(TOPICS, threshold_type="fixed", embedder=topic)
    assert [(c.start, c.end) for c in got] == [(0, 20), (21, 46)]
    assert [dict(c.metadata) for c in got] == [
        {"end_reason": "breakpoint", "distance": 1.0, "threshold": 0.25},
        {"end_reason": "end", "distance": None, "threshold": 0.25},
    ]


@pytest.mark.parametrize("mode", sorted(MODES))
def test_every_mode_holds_offsets_order_and_the_token_bound(model, mode):
    got = semantic.chunk(ESSAY, chunk_size=120, threshold_type=mode, embedder=model, **MODES[mode])
    check_chunks(ESSAY, got, chunk_size=120, length=count_tokens)
    assert all(count_tokens(c.text) <= 120 for c in got)


@pytest.mark.parametrize("mode", sorted(MODES))
def test_every_mode_holds_the_bound_in_characters(model, mode):
    options = {"target_size": 300} if mode == "target" else {}
    got = semantic.chunk(ESSAY, chunk_size=500, unit="characters", threshold_type=mode, embedder=model, **options)
    check_chunks(ESSAY, got, chunk_size=500, length=len)


def test_a_tiny_chunk_size_ends_chunks_for_size(model):
    got = semantic.chunk(ESSAY[:3000], chunk_size=12, embedder=model)
    check_chunks(ESSAY[:3000], got, chunk_size=12, length=count_tokens)
    reasons = [c.metadata["end_reason"] for c in got]
    assert reasons.count("size") > len(got) / 2 and reasons[-1] == "end"
    assert any(c.metadata["distance"] is None for c in got[:-1])  # cut inside an oversize sentence


def test_breakpoint_ends_are_above_the_threshold(model):
    got = semantic.chunk(ESSAY, chunk_size=400, threshold_type="percentile", threshold=90, embedder=model)
    at_breaks = [c.metadata for c in got if c.metadata["end_reason"] == "breakpoint"]
    assert at_breaks and all(m["distance"] >= m["threshold"] for m in at_breaks)  # both rounded


def test_chunks_split_for_size_are_below_the_threshold(model):
    got = semantic.chunk(ESSAY, chunk_size=100, threshold_type="percentile", embedder=model)
    sized = [c.metadata for c in got if c.metadata["end_reason"] == "size" and c.metadata["distance"] is not None]
    assert sized and all(m["distance"] <= m["threshold"] for m in sized)


def test_unit_sentences_caps_sentences_per_chunk(model):
    got = semantic.chunk(ESSAY, chunk_size=3, unit="sentences", embedder=model)
    check_chunks(ESSAY, got, chunk_size=3, length=lambda t: len(split_sentences(t)))
    assert max(len(split_sentences(c.text)) for c in got) == 3


@pytest.mark.parametrize("min_chunk_size", [None, 40])
def test_target_mode_lands_near_the_target_size(model, min_chunk_size):
    got = semantic.chunk(ESSAY, chunk_size=200, threshold_type="target", target_size=100, min_chunk_size=min_chunk_size,
                         embedder=model)
    assert statistics.mean(count_tokens(c.text) for c in got) == pytest.approx(100, rel=0.1)


def test_min_chunk_size_merges_slivers(model):
    # MiniLM's neighbouring sentences are rarely 0.75 similar, so seed 004's threshold cuts almost everywhere.
    options = {"chunk_size": 200, "threshold_type": "fixed", "embedder": model}
    plain = semantic.chunk(ESSAY, **options)
    merged = semantic.chunk(ESSAY, min_chunk_size=60, **options)
    check_chunks(ESSAY, merged, chunk_size=200, length=count_tokens)
    assert sum(count_tokens(c.text) < 60 for c in merged) < sum(count_tokens(c.text) < 60 for c in plain) / 10


SLIVER = "Rivers flow far. Short. Hills rise high."


@pytest.mark.parametrize(
    ("middle", "expected"),
    [([0.8, 0.6, 0.0], [(0, 23), (24, 40)]), ([0.0, 0.6, 0.8], [(0, 16), (17, 40)])],
    ids=["closer-to-previous", "closer-to-next"],
)
def test_a_sliver_joins_the_closer_neighbour(middle, expected):
    sides = scripted({"Rivers": [1.0, 0.0, 0.0], "Short": middle, "Hills": [0.0, 0.0, 1.0]})
    got = semantic.chunk(SLIVER, unit="characters", threshold_type="fixed", threshold=0.1, min_chunk_size=10,
                         embedder=sides)
    assert [(c.start, c.end) for c in got] == expected


def test_a_sliver_stays_when_no_merge_fits():
    sides = scripted({"Rivers": [1.0, 0.0], "Short": [0.0, 1.0], "Hills": [1.0, 0.0]})
    got = semantic.chunk(SLIVER, chunk_size=20, unit="characters", threshold_type="fixed", min_chunk_size=10,
                         embedder=sides)
    assert [c.text for c in got] == ["Rivers flow far.", "Short.", "Hills rise high."]


def test_the_model_is_called_once_with_exactly_the_sentences(model):
    calls: list[list[str]] = []
    semantic.chunk(ESSAY, threshold_type="target", target_size=100, embedder=counting(model, calls))
    assert len(calls) == 1
    assert sorted(calls[0]) == sorted({ESSAY[s:e] for s, e in split_sentences(ESSAY)})


def test_window_smooths_distances_without_more_model_calls(model):
    calls: list[list[str]] = []
    spans, plain = semantic.distances(ESSAY, similarity_window=1, embedder=counting(model, calls))
    _, smooth = semantic.distances(ESSAY, similarity_window=3, embedder=counting(model, calls))
    assert len(calls) == 2 and calls[0] == calls[1]
    assert plain.shape == smooth.shape == (len(spans) - 1,)
    assert np.std(smooth) < np.std(plain)


def test_distances_are_one_minus_cosine(model):
    spans, dist = semantic.distances(ESSAY[:2000], embedder=model)
    vectors = model.embed([ESSAY[s:e] for s, e in spans])
    assert dist == pytest.approx(1 - np.sum(vectors[:-1] * vectors[1:], axis=1), abs=1e-5)


@pytest.mark.parametrize(
    ("mode", "expected"),
    # np.gradient is a central difference: it peaks on the boundary before an isolated spike.
    [("fixed", [4]), ("percentile", [4]), ("std", [4]), ("iqr", [4]), ("gradient", [3])],
)
def test_every_threshold_mode_finds_a_clear_shift(mode, expected):
    dist = np.array([0.10, 0.12, 0.09, 0.11, 0.75, 0.10, 0.13, 0.08, 0.11, 0.10])
    ends, threshold = semantic.breakpoints(dist, threshold_type=mode)
    assert ends.tolist() == expected and np.isfinite(threshold)


def test_fixed_default_is_seed_004_similarity():
    ends, threshold = semantic.breakpoints(np.array([0.2, 0.3]), threshold_type="fixed")
    assert ends.tolist() == [1] and threshold == 0.25  # distance 0.25 is similarity 0.75


def test_overlap_carries_sentences_only_inside_a_run(model):
    got = semantic.chunk(ESSAY, chunk_size=60, chunk_overlap=20, embedder=model)
    check_chunks(ESSAY, got, chunk_size=60, length=count_tokens)
    pairs = list(zip(got, got[1:]))
    assert any(b.start < a.end for a, b in pairs)
    assert all(b.start >= a.end for a, b in pairs if a.metadata["end_reason"] == "breakpoint")


def test_same_input_same_output(model):
    first = semantic.chunk(ESSAY, threshold_type="target", target_size=80, min_chunk_size=20, embedder=model)
    second = semantic.chunk(ESSAY, threshold_type="target", target_size=80, min_chunk_size=20, embedder=model)
    assert first == second and [c.metadata for c in first] == [c.metadata for c in second]


@pytest.mark.parametrize("text", ["", " ", "\n\n", "\t \r\n "])
def test_empty_input_gives_no_chunks_and_loads_nothing(monkeypatch, text):
    monkeypatch.setattr(embed, "load_model", lambda *a, **k: pytest.fail("the model was loaded"))
    assert chunk(text, "semantic") == []


def test_a_single_sentence_is_one_chunk_without_the_model(monkeypatch):
    monkeypatch.setattr(embed, "load_model", lambda *a, **k: pytest.fail("the model was loaded"))
    got = chunk("  Just one sentence here.  ", "semantic")
    assert [(c.start, c.end, c.metadata["end_reason"]) for c in got] == [(2, 25, "end")]


def test_unknown_mode_lists_the_modes():
    with pytest.raises(ValueError, match="threshold_type must be one of") as info:
        semantic.chunk(TOPICS, threshold_type="cosine")
    assert "'cosine'" in str(info.value) and all(mode in str(info.value) for mode in MODES)


@pytest.mark.parametrize(
    ("options", "name", "value"),
    [
        ({"threshold_type": "fixed", "threshold": 2.5}, "threshold", "2.5"),
        ({"threshold_type": "percentile", "threshold": 101}, "threshold", "101"),
        ({"threshold_type": "gradient", "threshold": -1}, "threshold", "-1"),
        ({"threshold_type": "std", "threshold": float("nan")}, "threshold", "nan"),
        ({"threshold_type": "iqr", "threshold": "1.5"}, "threshold", "'1.5'"),
        ({"threshold_type": "target", "threshold": 0.5, "target_size": 50}, "threshold", "0.5"),
        ({"similarity_window": 0}, "similarity_window", "0"),
        ({"similarity_window": 1.5}, "similarity_window", "1.5"),
        ({"similarity_window": True}, "similarity_window", "True"),
        ({"min_chunk_size": 0}, "min_chunk_size", "0"),
        ({"min_chunk_size": 500}, "min_chunk_size", "500"),
        ({"threshold_type": "target"}, "target_size", "None"),
        ({"threshold_type": "target", "target_size": 0}, "target_size", "0"),
        ({"threshold_type": "target", "target_size": 201}, "target_size", "201"),
        ({"threshold_type": "target", "target_size": "100"}, "target_size", "'100'"),
        ({"target_size": 100}, "target_size", "100"),
    ],
)
def test_bad_options_name_the_parameter_and_value(monkeypatch, options, name, value):
    monkeypatch.setattr(embed, "load_model", lambda *a, **k: pytest.fail("the model was loaded"))
    with pytest.raises(ValueError, match=name) as info:
        semantic.chunk(TOPICS, **options)
    assert value in str(info.value)


SENTENCES = st.lists(
    st.sampled_from(["Cats purr.", "Stocks fell!", "Why?", "Dr. Who ran.", "e.g. this", "\n\n", " ", "漢字。",
                     "😀 ok.", "word " * 30, "x" * 50, "3.14 is pi.", "- item\n", "\r\n"]),
    max_size=40,
).map(" ".join)


@given(
    text=st.one_of(SENTENCES, st.text(max_size=200)),
    mode=st.sampled_from(sorted(MODES)),
    unit=st.sampled_from(["tokens", "characters"]),
    size=st.integers(8, 80),
    window=st.integers(1, 3),
    merge=st.booleans(),
)
def test_invariants_on_generated_text(text, mode, unit, size, window, merge):
    options = {"target_size": max(1, size // 2)} if mode == "target" else {}
    run = {"chunk_size": size, "unit": unit, "threshold_type": mode, "similarity_window": window,
           "min_chunk_size": (size // 4 or 1) if merge else None, "embedder": Embedder(hashed, cache=False), **options}
    got = semantic.chunk(text, **run)
    check_chunks(text, got, chunk_size=size, length=count_tokens if unit == "tokens" else len)
    assert got == semantic.chunk(text, **run)
    assert all(c.metadata["end_reason"] in ("breakpoint", "size", "end") for c in got)


def test_the_strategy_is_given_its_model_and_the_registry_passes_the_bundled_one():
    with pytest.raises(TypeError, match="embedder is required: pass an EmbeddingModel"):
        semantic.chunk(TOPICS)
    assert [c.text for c in chunk("One sentence only.", "semantic")] == ["One sentence only."]
