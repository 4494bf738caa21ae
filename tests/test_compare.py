"""The comparison runner end to end on a tiny corpus: real MiniLM, in-memory Qdrant, exact offsets."""

from __future__ import annotations

import re

import pytest

from chunking import compare, store
from chunking.embed import Embedder
from chunking.evaluate import Question, Reference

DOCS = {
    "pets.md": "# Pets\n\nCats sleep sixteen hours a day.\n\n## Dogs\n\nDogs need two walks daily.\n",
    "tea.txt": "Green tea is brewed at seventy degrees. Black tea wants boiling water.",
}


def question(text: str, doc: str, excerpt: str) -> Question:
    start = DOCS[doc].index(excerpt)
    return Question(text, (Reference(doc, start, start + len(excerpt), excerpt),))


QUESTIONS = [
    question("How long do cats sleep?", "pets.md", "Cats sleep sixteen hours a day."),
    question("At what temperature should green tea be brewed?", "tea.txt", "Green tea is brewed at seventy degrees."),
]
CONFIGS = [
    compare.Config("sentence-8", "sentence", {"chunk_size": 8}),
    compare.Config("paragraph-uncapped", "paragraph", {"chunk_size": None}),
]


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    client = store.connect(":memory:")
    embedder = Embedder(cache=tmp_path_factory.mktemp("cache"))
    return compare.run(DOCS, QUESTIONS, CONFIGS, embedder=embedder, client=client, corpus="tiny", k=1, budget=50)


def test_one_row_per_configuration_with_costs_and_intervals(result):
    assert [r["config"] for r in result.rows] == ["sentence-8", "paragraph-uncapped"]
    for column in ("chunks", "mean_tokens", "max_pieces", "truncated", "recall", "recall_low", "recall_high",
                   "iou", "precision_omega", "reciprocal_rank", "recall_at_budget", "embed_seconds"):
        assert column in result.rows[0]


def test_sentence_chunks_retrieve_the_exact_evidence(result):
    sentence = result.rows[0]
    assert sentence["recall"] == 1.0 and sentence["precision"] == 1.0 and sentence["iou"] == 1.0


def test_per_question_rows_carry_the_document_and_metrics(result):
    rows = [r for r in result.per_question if r["config"] == "sentence-8"]
    assert [r["doc"] for r in rows] == ["pets.md", "tea.txt"]
    assert all(r["hit"] == 1.0 for r in rows)


def test_per_document_breakdown(result):
    rows = compare.per_document(result.per_question)
    assert [(r["config"], r["doc"], r["questions"]) for r in rows][:2] == [("sentence-8", "pets.md", 1),
                                                                            ("sentence-8", "tea.txt", 1)]


def test_chunks_keep_their_offsets(result):
    for chunks in result.chunks.values():
        assert all(DOCS[c.doc_id][c.start : c.end] == c.text for c in chunks)


def test_unknown_strategy_in_a_config_is_named():
    with pytest.raises(ValueError, match="'semantik'"):
        compare.run(DOCS, QUESTIONS, [compare.Config("x", "semantik")], embedder=None, client=None)


@pytest.mark.parametrize(
    "config",
    [
        compare.Config("hybrid", "sentence", {"chunk_size": 8}, retrieval="hybrid"),
        compare.Config("late", "sentence", {"chunk_size": 8}, embedding="late"),
        compare.Config("parents", "parent_child", {"chunk_size": 8, "parent_size": 40}, retrieval="parents"),
        compare.Config("contextual", "contextual", {"chunk_size": 8, "provider": "heading"}),
        compare.Config("semantic", "semantic", {"chunk_size": 8}),
    ],
    ids=lambda c: c.name,
)
def test_every_embedding_and_retrieval_mode_finds_the_evidence(config, tmp_path):
    client = store.connect(":memory:")
    embedder = Embedder(cache=tmp_path)
    result = compare.run(DOCS, QUESTIONS, [config], embedder=embedder, client=client, corpus="tiny", k=2)
    assert result.rows[0]["hit"] == 1.0 and 0.0 < result.rows[0]["iou"] <= 1.0


def test_parents_are_what_is_handed_over(tmp_path):
    config = compare.Config("parents", "parent_child", {"chunk_size": 8, "parent_size": 40}, retrieval="parents")
    result = compare.run(DOCS, QUESTIONS, [config], embedder=Embedder(cache=tmp_path),
                         client=store.connect(":memory:"), corpus="tiny", k=1)
    children = result.rows[0]["mean_tokens"]
    assert result.rows[0]["retrieved_tokens"] > children  # a parent is bigger than the child that found it


@pytest.mark.parametrize(("field", "value"), [("embedding", "nope"), ("retrieval", "parents"), ("retrieval", "x")])
def test_bad_embedding_or_retrieval_is_named(field, value):
    config = compare.Config("bad", "sentence", {}, **{field: value})
    with pytest.raises(ValueError, match=field):
        config.check()


# --- every configuration checked in full before any runs ------------------------------------------

BAD = [  # each, as a third configuration, must stop the run before the first one chunks or embeds
    (compare.Config("bad", "fixed", {"colour": "red"}), "unknown option(s) ['colour']"),
    (compare.Config("bad", "fixed", {"chunk_size": -5}), "chunk_size must be > 0, got -5"),
    (compare.Config("bad", "fixed", {"unit": "sentences"}), "unit='sentences' is only for"),
    (compare.Config("bad", "recursive", {"chunk_size": 10, "chunk_overlap": 10}), "< chunk_size=10, got 10"),
    (compare.Config("bad", "semantic", {"threshold_type": "target"}), "target_size must be an int >= 1, got None"),
    (compare.Config("bad", "parent_child", {"chunk_size": 900}, retrieval="parents"),
     "parent_size must be >= chunk_size=900, got 800"),
    (compare.Config("bad", "contextual", {"base": "semantic", "threshold": 300}), "got 300"),
    (compare.Config("bad", "sliding", {"overlap_fraction": 1.0}), "overlap_fraction must be below 1"),
    (compare.Config("bad", "sentence", {"doc_id": "x"}), "must not set 'doc_id'"),
]


class CountingEmbedder:
    """An embedder that counts its calls: a run stopped by the check never embeds."""

    name, dim, max_pieces = "counting", 2, None

    def __init__(self) -> None:
        self.calls = 0

    def embed(self, texts):
        self.calls += 1
        raise AssertionError("a configuration was run before every one was checked")


@pytest.mark.parametrize(("bad", "named"), BAD, ids=[named for _, named in BAD])
def test_a_bad_third_configuration_stops_the_run_before_the_first(bad, named, monkeypatch):
    built, embedder = [], CountingEmbedder()
    monkeypatch.setattr(compare, "build_index", lambda *args, **kwargs: built.append(args))
    with pytest.raises((TypeError, ValueError)) as caught:
        compare.run(DOCS, QUESTIONS, [*CONFIGS, bad], embedder=embedder, client=None)
    assert str(caught.value).startswith("configs[2] ('bad'): ") and named in str(caught.value)
    assert built == [] and embedder.calls == 0


@pytest.mark.parametrize(("arguments", "named"), [
    ({"k": 0}, "k must be"), ({"budget": -1}, "budget must be"),
    ({"questions": [Question("Where?", (Reference("missing.md", 0, 1, "x"),))]}, "doc 'missing.md' is not in"),
    ({"questions": [Question("Which?", (Reference("tea.txt", 0, 9, "Black tea"),))]}, "but tea.txt[0:9] is"),
])
def test_bad_arguments_stop_the_run_before_the_first_configuration(arguments, named, monkeypatch):
    built, embedder = [], CountingEmbedder()
    monkeypatch.setattr(compare, "build_index", lambda *args, **kwargs: built.append(args))
    with pytest.raises((TypeError, ValueError), match=re.escape(named)):
        compare.run(DOCS, arguments.pop("questions", QUESTIONS), CONFIGS, embedder=embedder, client=None, **arguments)
    assert built == [] and embedder.calls == 0


def test_every_bad_configuration_is_listed_in_one_error():
    configs = [BAD[0][0], CONFIGS[0], compare.Config("worse", "fixed", {"chunk_size": 0})]
    listed = r"2 problems in configs: configs\[0\] \('bad'\): .*; configs\[2\] \('worse'\): chunk_size must be > 0"
    with pytest.raises(ValueError, match=listed):
        compare.check_configs(configs)


def test_a_repeated_name_is_named_with_both_indices():
    configs = [compare.Config("a", "fixed"), compare.Config("b", "sentence"), compare.Config("a", "recursive")]
    with pytest.raises(ValueError, match=r"distinct: configs\[0\] and configs\[2\] are all named 'a'"):
        compare.check_configs(configs)


def test_check_names_the_configuration_as_its_caller_asks():
    with pytest.raises(ValueError, match=r"^c\.json:3: entry 1 \('x'\): chunk_size must be > 0, got 0$"):
        compare.Config("x", "fixed", {"chunk_size": 0}).check(where="c.json:3: entry 1 ('x')")


@pytest.mark.parametrize("config", compare.DEFAULT_CONFIGS, ids=lambda c: c.name)
def test_every_default_configuration_passes_the_check(config):
    assert config.check() is None


@pytest.mark.parametrize(
    "config",
    [
        compare.Config("semantic", "semantic", {"chunk_size": 20, "threshold_type": "target", "target_size": 10}),
        compare.Config("parents", "parent_child", {"parent_mode": "semantic"}, retrieval="parents"),
        compare.Config("contextual-llm", "contextual", {"provider": "llm", "base": "semantic"}),
    ],
    ids=lambda c: c.name,
)
def test_the_check_loads_no_model_and_asks_no_llm(config, monkeypatch):
    from chunking import embed, llm

    def refuse(*args, **kwargs):
        raise AssertionError("the check used a real model")

    monkeypatch.setattr(embed, "default_embedder", refuse)
    monkeypatch.setattr(embed.Embedder, "embed", refuse)
    monkeypatch.setattr(llm.ChatContextualizer, "contextualize", refuse)
    monkeypatch.setenv(llm.MODEL_ENV, "some-model")
    assert config.check() is None


def test_the_default_llm_unconfigured_is_found_by_the_check(monkeypatch):
    from chunking import llm

    monkeypatch.delenv(llm.MODEL_ENV, raising=False)
    with pytest.raises(ValueError, match=r"config 'c': model must be given or set in \$CHUNKING_LLM_MODEL"):
        compare.Config("c", "contextual", {"provider": "llm"}).check()
