"""Parent-child chunking: golden parent and child spans per mode, ids, rebuilt parents, both storage modes."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from chunking import check_chunks, count_tokens, parent_child, retrieval
from chunking.embed import Embedder
from chunking.evaluate import load_questions
from chunking.store import connect
from tests.conftest import AWKWARD, DATA

DOC = """# Guide

Welcome to the guide. It is short.

## Install

Run the installer. Then restart the machine.

## Use

Open the app. Click start. Wait a moment. Read the log when it is done.
"""
SMALL = {"chunk_size": 40, "parent_size": 110, "unit": "characters"}

# Scripted vectors by first word: apples and apricots are 0.8 apart (1 - cos), boats are 1.0 from both.
TOPICS = {"Apples": [1.0, 0.0, 0.0], "Apricots": [0.2, 0.98, 0.0], "Boats": [0.0, 0.0, 1.0]}
FRUIT_AND_BOATS = "Apples are red. Apples are sweet. Apricots are orange. Boats float. Boats sail."


def scripted(texts):
    return np.array([TOPICS[t.split()[0]] for t in texts])


def hashed(texts):
    """Any text gets a fixed pseudo-random vector: for invariants, where breakpoints do not matter."""
    seeds = [int(hashlib.sha256(t.encode()).hexdigest()[:8], 16) for t in texts]
    return np.array([np.random.default_rng(s).normal(size=8) for s in seeds])


SCRIPTED = Embedder(scripted, cache=False)
HASHED = Embedder(hashed, cache=False)


def spans(chunks):
    return [(c.start, c.end) for c in chunks]


# --- parents and children ------------------------------------------------------------------------


def test_sections_golden_children():
    got = parent_child.chunk(DOC, **SMALL)
    assert spans(got) == [(0, 30), (31, 43), (45, 75), (76, 101), (103, 137), (138, 152), (153, 182)]


def test_sections_golden_parents_pack_whole_sections():
    got = parent_child.parents(DOC, parent_child.chunk(DOC, **SMALL))
    assert spans(got) == [(0, 101), (103, 182)]  # Guide + Install fit in 110 characters together; Use does not
    assert got[0].text == DOC[0:101] and got[0].strategy == "parent_child:parent"


def test_children_never_cross_a_section_inside_a_parent():
    got = parent_child.chunk(DOC, **SMALL)
    assert [c.metadata["heading_path"] for c in got[1:3]] == [("Guide",), ("Guide", "Install")]
    assert got[2].context == "Guide > Install" and got[2].text == "## Install\n\nRun the installer."


def test_sections_too_big_for_one_parent_are_split_at_blocks():
    got = parent_child.parents(DOC, parent_child.chunk(DOC, chunk_size=40, parent_size=60, unit="characters"))
    assert spans(got) == [(0, 43), (45, 101), (103, 152), (153, 182)]  # "## Use" packs with the first part


def test_tokens_mode_golden_spans():
    got = parent_child.chunk(DOC, chunk_size=40, parent_size=80, unit="characters", parent_mode="windows")
    assert spans(parent_child.parents(DOC, got)) == [(0, 80), (80, 160), (160, 183)]
    assert spans(got) == [(0, 30), (31, 55), (57, 80), (81, 109), (111, 137), (138, 160), (160, 182)]
    assert all("heading_path" not in c.metadata and c.context == "" for c in got)


def test_semantic_parents_split_at_the_relaxed_threshold_children_at_the_strict_one():
    got = parent_child.chunk(FRUIT_AND_BOATS, parent_mode="semantic", embedder=SCRIPTED)
    assert spans(parent_child.parents(FRUIT_AND_BOATS, got)) == [(0, 54), (55, 79)]
    assert spans(got) == [(0, 33), (34, 54), (55, 79)]  # apricots: 0.8 > 0.75 apart, a child of their own


def test_semantic_one_threshold_for_both_gives_one_child_per_parent():
    got = parent_child.chunk(FRUIT_AND_BOATS, parent_mode="semantic", child_threshold=0.9, embedder=SCRIPTED)
    assert spans(got) == [(0, 54), (55, 79)]


def test_semantic_parents_are_capped_at_parent_size():
    got = parent_child.chunk(FRUIT_AND_BOATS, chunk_size=40, parent_size=40, unit="characters",
                             parent_mode="semantic", embedder=SCRIPTED)
    assert spans(parent_child.parents(FRUIT_AND_BOATS, got)) == [(0, 33), (34, 54), (55, 79)]


def test_parent_ids_are_the_parents_uuid5_and_deterministic():
    first, again = parent_child.chunk(DOC, **SMALL, doc_id="d"), parent_child.chunk(DOC, **SMALL, doc_id="d")
    rebuilt = {p.start: p.id for p in parent_child.parents(DOC, first)}
    assert [c.metadata["parent_id"] for c in first] == [rebuilt[c.metadata["parent_start"]] for c in first]
    assert [c.metadata["parent_id"] for c in first] == [c.metadata["parent_id"] for c in again]
    assert first[0].metadata["parent_id"] != parent_child.chunk(DOC, **SMALL, doc_id="e")[0].metadata["parent_id"]


def test_parents_rebuild_every_parent_exactly_once_in_order():
    children = parent_child.chunk(DOC, **SMALL, doc_id="d")
    got = parent_child.parents(DOC, children)
    assert [p.index for p in got] == list(range(len(got)))
    assert all(DOC[p.start : p.end] == p.text and p.doc_id == "d" for p in got)
    assert {c.metadata["parent_index"] for c in children} == {p.index for p in got}


def test_text_before_the_first_heading_has_an_empty_heading_path():
    got = parent_child.chunk("Preface.\n\n# A\n\nBody.")
    assert [(c.text, c.metadata["heading_path"], c.context) for c in got] == [
        ("Preface.", (), ""), ("# A\n\nBody.", ("A",), "A")]


def test_parents_of_chunks_without_parents_is_an_error():
    from chunking import sentence

    with pytest.raises(ValueError, match=r"children\[0\] has no parent span"):
        parent_child.parents("One. Two.", sentence.chunk("One. Two."))


def test_parents_of_two_documents_is_an_error():
    children = parent_child.chunk(DOC, doc_id="a") + parent_child.chunk(DOC, doc_id="b")
    with pytest.raises(ValueError, match="children must come from one document, got 'a' and 'b'"):
        parent_child.parents(DOC, children)


# --- the shared invariants -----------------------------------------------------------------------

MODES = {
    "sections-tokens": {"chunk_size": 16, "parent_size": 48},
    "sections-characters": {"chunk_size": 60, "chunk_overlap": 10, "parent_size": 150, "unit": "characters"},
    "tokens": {"chunk_size": 16, "parent_size": 40, "parent_mode": "windows"},
    "semantic": {"chunk_size": 16, "parent_size": 40, "parent_mode": "semantic", "embedder": HASHED},
}


def check_family(text: str, options: dict) -> list:
    children = parent_child.chunk(text, **options)
    unit = options.get("unit", "tokens")
    length = len if unit == "characters" else count_tokens
    check_chunks(text, children, chunk_size=options["chunk_size"], length=length)
    found = parent_child.parents(text, children)
    check_chunks(text, found, chunk_size=options["parent_size"], length=length)
    assert all(c.metadata["parent_start"] <= c.start and c.end <= c.metadata["parent_end"] for c in children)
    return children


@pytest.mark.parametrize("name", sorted(AWKWARD))
@pytest.mark.parametrize("mode", sorted(MODES))
def test_invariants_on_awkward_text(mode, name):
    check_family(AWKWARD[name], MODES[mode])


@pytest.mark.parametrize("mode", sorted(MODES))
def test_invariants_on_a_real_document(mode):
    text = (DATA / "corpus" / "harbor_cycles_faq.md").read_text(encoding="utf-8")
    assert check_family(text, MODES[mode])


@pytest.mark.parametrize("mode", sorted(MODES))
def test_same_input_same_output(mode):
    first, second = check_family(DOC * 3, MODES[mode]), check_family(DOC * 3, MODES[mode])
    assert first == second and [c.id for c in first] == [c.id for c in second]


@given(st.lists(st.sampled_from(["Word", " ", "\n", "\n\n", ". ", "# ", "## H\n", "```\n", "é", "漢字", "😀"]),
                max_size=80).map("".join))
def test_invariants_hold_on_generated_text(text):
    check_family(text, MODES["sections-tokens"])
    check_family(text, MODES["tokens"])


# --- bad options ---------------------------------------------------------------------------------


@pytest.mark.parametrize("options, message", [
    ({"parent_mode": "chapters"}, r"parent_mode must be one of .* got 'chapters'"),
    ({"chunk_size": 200, "parent_size": 100}, r"parent_size must be >= chunk_size=200, got 100"),
    ({"parent_threshold": -0.1}, r"parent_threshold must be .* got -0.1"),
    ({"child_threshold": 2.5}, r"child_threshold must be .* got 2.5"),
    ({"parent_threshold": 0.2, "child_threshold": 0.3}, r"child_threshold must be <= parent_threshold=0.2 .* got 0.3"),
    ({"unit": "sentences"}, r"unit='sentences'"),
])
def test_bad_options_are_named(options, message):
    with pytest.raises(ValueError, match=message):
        parent_child.chunk(DOC, **options)


def test_a_bare_callable_is_not_an_embedder():
    with pytest.raises(TypeError, match="embedder must be an EmbeddingModel"):
        parent_child.chunk(FRUIT_AND_BOATS, parent_mode="semantic", embedder=scripted)


def test_parent_size_must_be_an_int():
    with pytest.raises(TypeError, match=r"parent_size must be an int, got '800'"):
        parent_child.chunk(DOC, parent_size="800")


# --- retrieval in both storage modes (real model, in-memory Qdrant) -------------------------------

FAQ = "harbor_cycles_faq.md"


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    """The FAQ and DOC indexed twice, once per storage mode, in one in-memory Qdrant."""
    embedder = Embedder(cache=tmp_path_factory.mktemp("c"))
    texts = {FAQ: (DATA / "corpus" / FAQ).read_text(encoding="utf-8"), "guide": DOC}
    children = [c for name, text in texts.items()
                for c in parent_child.chunk(text, chunk_size=128, parent_size=512, doc_id=name)]
    parents = [p for name, text in texts.items()
               for p in parent_child.parents(text, [c for c in children if c.doc_id == name])]
    vectors = embedder.embed([c.embed_text for c in children])
    client = connect(":memory:")
    for mode in retrieval.STORAGE_MODES:
        retrieval.index_parents(client, mode, children, vectors, parents, mode=mode)
    questions = [q for q in load_questions(DATA / "eval" / "questions.jsonl") if q.references[0].doc == FAQ]
    queries = embedder.embed([q.question for q in questions[:12]] + ["How do I install the guide?"])
    return client, children, parents, queries


def test_both_storage_modes_return_the_same_parents_in_the_same_order(indexed):
    client, _, _, queries = indexed
    for vector in queries:
        payload, lookup = (retrieval.search_parents(client, mode, vector, k=5, mode=mode)
                           for mode in ("payload", "lookup"))
        assert [(h.parent, h.child, round(h.score, 5)) for h in payload] == \
               [(h.parent, h.child, round(h.score, 5)) for h in lookup]


@pytest.mark.parametrize("mode", ["payload", "lookup"])
def test_search_returns_k_distinct_parents_best_first(indexed, mode):
    client, _, parents, queries = indexed
    got = retrieval.search_parents(client, mode, queries[0], k=5, mode=mode)
    assert len({h.parent.id for h in got}) == len(got) == 5
    assert [h.score for h in got] == sorted((h.score for h in got), reverse=True)
    assert all(h.parent in parents and h.parent.start <= h.child.start and h.child.end <= h.parent.end for h in got)


def test_payload_mode_reads_more_children_until_it_has_k_parents(indexed):
    client, _, _, queries = indexed
    few = retrieval.search_parents(client, "payload", queries[1], k=5, candidates=5)
    assert [h.parent for h in few] == [h.parent for h in retrieval.search_parents(client, "payload", queries[1])]


@pytest.mark.parametrize("mode", ["payload", "lookup"])
def test_document_filter_keeps_one_document(indexed, mode):
    client, _, _, queries = indexed
    got = retrieval.search_parents(client, mode, queries[0], k=5, mode=mode, doc_id="guide")
    assert [(h.parent.doc_id, h.parent.start, h.parent.end) for h in got] == [("guide", 0, 182)]  # one parent


def test_payload_mode_stores_more_characters_lookup_mode_more_points(indexed):
    client, children, parents, _ = indexed
    payload, lookup = retrieval.index_size(client, "payload"), retrieval.index_size(client, "lookup")
    assert payload["points"] == len(children) and lookup["points"] == len(children) + len(parents)
    assert payload["payload_chars"] > 2 * lookup["payload_chars"]


def test_context_tokens_sum_the_parents_tokens(indexed):
    client, _, _, queries = indexed
    got = retrieval.search_parents(client, "lookup", queries[0], k=3, mode="lookup")
    assert retrieval.context_tokens(got) == sum(count_tokens(h.parent.text) for h in got)


@pytest.mark.parametrize("call, message", [
    (lambda c: retrieval.search_parents(c, "payload", np.zeros(384), mode="both"), r"mode must be one of"),
    (lambda c: retrieval.search_parents(c, "payload", np.zeros(384), k=5, candidates=3),
     r"candidates must be an int >= 5, got 3"),
    (lambda c: retrieval.search_parents(c, "lookup", np.zeros(384), k=0, mode="lookup"), r"k must be .* got 0"),
])
def test_bad_search_options_are_named(indexed, call, message):
    with pytest.raises(ValueError, match=message):
        call(indexed[0])


def test_indexing_needs_every_childs_parent(indexed):
    client, children, parents, _ = indexed
    with pytest.raises(ValueError, match="parent_chunks lacks the parent"):
        retrieval.index_parents(client, "other", children[:2], np.zeros((2, 384)), parents[-1:], mode="lookup")
