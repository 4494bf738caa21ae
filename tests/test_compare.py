"""The comparison runner end to end on a tiny corpus: real MiniLM, in-memory Qdrant, exact offsets."""

from __future__ import annotations

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
