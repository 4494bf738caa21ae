"""Span metrics: hand-computed golden cases, the budget cut, the bootstrap, question files, properties."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chunking.evaluate import (
    Question,
    Reference,
    bootstrap_ci,
    load_questions,
    recall_at_budget,
    span_metrics,
    summarize,
    verify_questions,
)

# --- span_metrics: golden cases computed by hand ----------------------------------------------------


def test_overlapping_chunks_count_once_in_n_and_twice_in_precision():
    # reference [10, 30) = 20 chars; chunks [0, 20) and [15, 25) = 20 + 10 = 30 chars, sharing [15, 20)
    # N = |[10, 25)| = 15; uncovered reference = [25, 30) = 5
    # recall = 15/20, precision = 15/30, IoU = 15 / (30 + 5)
    got = span_metrics([("d", 10, 30)], [("d", 0, 20), ("d", 15, 25)])
    assert got == {
        "recall": 3 / 4,
        "precision": 1 / 2,
        "iou": pytest.approx(3 / 7),
        "hit": 1.0,
        "reciprocal_rank": 1.0,
    }


@pytest.mark.parametrize(
    "retrieved, expected",
    [
        # both halves: N = 6 of 6; Σ|R| = 20; nothing uncovered → IoU = 6/20
        ([("d", 0, 10), ("d", 10, 20)], {"recall": 1.0, "precision": 3 / 10, "iou": 3 / 10}),
        # right half only: N = |[10, 14)| = 4; uncovered [8, 10) = 2 → IoU = 4 / (10 + 2)
        ([("d", 10, 20)], {"recall": 2 / 3, "precision": 2 / 5, "iou": 1 / 3}),
    ],
    ids=["both-chunks", "one-chunk"],
)
def test_reference_spanning_two_chunks(retrieved, expected):
    got = span_metrics([("d", 8, 14)], retrieved)
    assert {k: got[k] for k in expected} == pytest.approx(expected)


def test_references_in_two_docs():
    # a: ref [0, 10), chunk [5, 10) → 5 found, [0, 5) uncovered
    # b: ref [100, 120), chunk [110, 130) → 10 found, [100, 110) uncovered
    # N = 15; Σ|e| = 30; Σ|R| = 20 + 5 = 25; uncovered = 15
    # recall = 15/30, precision = 15/25, IoU = 15 / (25 + 15)
    got = span_metrics([("a", 0, 10), ("b", 100, 120)], [("b", 110, 130), ("a", 5, 10)])
    assert got == pytest.approx(
        {"recall": 1 / 2, "precision": 3 / 5, "iou": 3 / 8, "hit": 1.0, "reciprocal_rank": 1.0}
    )


def test_chunk_from_another_doc_with_the_same_offsets_does_not_count():
    got = span_metrics([("a", 0, 10)], [("b", 0, 10)])
    assert got == {"recall": 0.0, "precision": 0.0, "iou": 0.0, "hit": 0.0, "reciprocal_rank": 0.0}


def test_chunk_from_another_doc_still_costs_precision():
    # N = 10 (from a only); Σ|R| = 10 + 10 → precision 1/2, IoU 10/20; first hit at rank 2
    got = span_metrics([("a", 0, 10)], [("b", 0, 10), ("a", 0, 10)])
    assert got == {"recall": 1.0, "precision": 0.5, "iou": 0.5, "hit": 1.0, "reciprocal_rank": 0.5}


def test_nothing_retrieved_gives_zeros():
    got = span_metrics([("a", 0, 10)], [])
    assert got == {"recall": 0.0, "precision": 0.0, "iou": 0.0, "hit": 0.0, "reciprocal_rank": 0.0}


@pytest.mark.parametrize(
    "retrieved, reciprocal_rank",
    [
        ([("d", 50, 60)], 1.0),
        ([("d", 0, 10), ("d", 10, 20), ("d", 55, 65), ("d", 50, 60)], 1 / 3),
        ([("d", 40, 50), ("d", 60, 70), ("d", 59, 61)], 1 / 3),  # touching [50, 60) is not overlapping
        ([("d", 0, 10), ("x", 50, 60)], 0.0),
    ],
    ids=["rank-1", "rank-3", "touching-is-not-a-hit", "no-hit"],
)
def test_reciprocal_rank(retrieved, reciprocal_rank):
    got = span_metrics([("d", 50, 60)], retrieved)
    assert (got["reciprocal_rank"], got["hit"]) == (
        pytest.approx(reciprocal_rank),
        float(reciprocal_rank > 0),
    )


# --- precision_omega -----------------------------------------------------------------------------------

FOUR_CHUNKS = {"d": [(0, 10), (10, 20), (20, 30), (30, 40)]}


@pytest.mark.parametrize(
    "reference, corpus_chunks, omega",
    [
        # [10, 20) and [20, 30) touch [12, 25): union 20, holding 13 → 13/20
        (("d", 12, 25), FOUR_CHUNKS, 13 / 20),
        # [10, 20) only touches [20, 25) at 20, sharing nothing: only [20, 30) counts → 5/10
        (("d", 20, 25), FOUR_CHUNKS, 1 / 2),
        # a gap [10, 15) no chunk covers: chunks union 25 + uncovered 5; held [5, 10) + [15, 20) = 10
        (("d", 5, 20), {"d": [(0, 10), (15, 30)]}, 1 / 3),
        # overlapping chunks are unioned, not summed: [0, 30) = 30 (not 40), holding 6
        (("d", 12, 18), {"d": [(0, 20), (10, 30)]}, 1 / 5),
        # no chunk in the reference's doc touches it: 0 held over the 10 uncovered characters
        (("d", 0, 10), {"d": [(20, 30)], "e": [(0, 10)]}, 0.0),
    ],
    ids=["two-chunks", "touching-chunk-excluded", "uncovered-gap", "overlapping-chunks", "none"],
)
def test_precision_omega(reference, corpus_chunks, omega):
    assert span_metrics([reference], [], corpus_chunks)["precision_omega"] == pytest.approx(omega)


def test_precision_omega_counts_chunks_that_were_not_retrieved():
    # reference [12, 25); only [10, 20) retrieved, yet [20, 30) also touches it → Ω = 13/20 as before,
    # while retrieval precision is 8/10
    got = span_metrics([("d", 12, 25)], [("d", 10, 20)], FOUR_CHUNKS)
    assert (got["precision"], got["precision_omega"]) == pytest.approx((4 / 5, 13 / 20))


def test_precision_omega_absent_without_corpus_chunks():
    assert "precision_omega" not in span_metrics([("d", 0, 5)], [("d", 0, 5)])


# --- recall_at_budget -----------------------------------------------------------------------------------

# reference [0, 100); ranked chunks: a miss of 10 tokens, the answer (40 tokens), a tiny miss (5 tokens)
BUDGET_CHUNKS = [("d", 200, 300), ("d", 0, 100), ("d", 100, 200)]
BUDGET_TOKENS = [10, 40, 5]


@pytest.mark.parametrize(
    "budget, recall",
    [
        (0, 0.0),  # the first chunk crosses at once and keeps 0 characters
        (5, 0.0),  # keeps 100 * 5 // 10 = 50 characters of the miss
        (30, 1 / 2),  # miss whole (10); answer crosses: 100 * 20 // 40 = 50 characters → [0, 50)
        (21, 27 / 100),  # answer keeps 100 * 11 // 40 = 27 characters (27.5 rounded down)
        (50, 1.0),  # 10 + 40 = 50 fits exactly
        (1000, 1.0),
    ],
)
def test_recall_at_budget_truncates_the_crossing_chunk(budget, recall):
    got = recall_at_budget([("d", 0, 100)], BUDGET_CHUNKS, BUDGET_TOKENS, budget)
    assert got == pytest.approx(recall)


def test_recall_at_budget_stops_after_the_crossing_chunk():
    # budget 30: the 5-token chunk after the crossing one would fit, but the walk has stopped
    got = recall_at_budget([("d", 100, 200)], BUDGET_CHUNKS, BUDGET_TOKENS, 30)
    assert got == 0.0


def test_recall_at_budget_needs_one_count_per_chunk():
    with pytest.raises(ValueError, match="token_counts has 2 entries but retrieved has 3"):
        recall_at_budget([("d", 0, 100)], BUDGET_CHUNKS, [10, 40], 30)


@pytest.mark.parametrize("budget", [-1, 2.5, True])
def test_recall_at_budget_rejects_bad_budget(budget):
    with pytest.raises(ValueError, match="budget"):
        recall_at_budget([("d", 0, 100)], BUDGET_CHUNKS, BUDGET_TOKENS, budget)


# --- input errors ---------------------------------------------------------------------------------------


def test_empty_references_are_an_error():
    with pytest.raises(ValueError, match="references is empty"):
        span_metrics([], [("d", 0, 10)])


@pytest.mark.parametrize(
    "references, retrieved, error, message",
    [
        ([("d", 5, 5)], [], ValueError, r"references\[0\] needs 0 <= start < end"),
        ([("d", 0, 5)], [("d", -1, 5)], ValueError, r"retrieved\[0\] needs 0 <= start < end"),
        ([("d", 0, 5)], [(0, 5)], TypeError, r"retrieved\[0\] must be a \(doc, start, end\)"),
        ([("d", "0", 5)], [], TypeError, r"references\[0\] offsets must be two ints"),
    ],
    ids=["empty-span", "negative-start", "missing-doc", "string-offset"],
)
def test_bad_spans_name_the_parameter_and_index(references, retrieved, error, message):
    with pytest.raises(error, match=message):
        span_metrics(references, retrieved)


def test_corpus_chunks_must_cover_every_reference_doc():
    with pytest.raises(ValueError, match="corpus_chunks has no entry for doc 'd'"):
        span_metrics([("d", 0, 5)], [], {"e": [(0, 5)]})


# --- bootstrap_ci and summarize ------------------------------------------------------------------------

SCORES = [0.0, 1.0, 1.0, 0.5, 0.25, 1.0, 0.0, 0.75, 1.0, 0.5]  # mean 0.6


def test_bootstrap_ci_is_deterministic():
    assert bootstrap_ci(SCORES, seed=7) == bootstrap_ci(SCORES, seed=7)


def test_bootstrap_ci_contains_the_mean():
    low, high = bootstrap_ci(SCORES)
    assert low < 0.6 < high


def test_bootstrap_ci_matches_the_normal_approximation_on_a_large_sample():
    # 400 coin flips: standard error of the mean = 0.5 / 20 = 0.025, so a 95% interval is about ±1.96 * 0.025
    low, high = bootstrap_ci([0.0, 1.0] * 200, n_resamples=4000)
    assert (high - low) / 2 == pytest.approx(1.96 * 0.025, rel=0.05)


def test_bootstrap_ci_narrows_with_lower_confidence():
    low95, high95 = bootstrap_ci(SCORES, confidence=0.95)
    low50, high50 = bootstrap_ci(SCORES, confidence=0.5)
    assert low95 <= low50 <= high50 <= high95


@pytest.mark.parametrize(
    "values, options, message",
    [
        ([], {}, "values must be a non-empty"),
        ([0.5, float("nan")], {}, "values must be finite"),
        (SCORES, {"n_resamples": 0}, "n_resamples must be an int >= 1, got 0"),
        (SCORES, {"confidence": 1.0}, "confidence must be between 0 and 1"),
    ],
)
def test_bootstrap_ci_rejects_bad_input(values, options, message):
    with pytest.raises(ValueError, match=message):
        bootstrap_ci(values, **options)


def test_summarize_gives_mean_and_interval_per_metric():
    rows = [{"recall": s, "iou": s / 2} for s in SCORES]
    got = summarize(rows, ["recall", "iou"])
    assert list(got) == ["recall", "recall_low", "recall_high", "iou", "iou_low", "iou_high"]
    assert (got["recall"], got["iou"]) == pytest.approx((0.6, 0.3))
    assert (got["recall_low"], got["recall_high"]) == bootstrap_ci(SCORES)


def test_summarize_names_rows_missing_a_metric():
    with pytest.raises(ValueError, match=r"metric 'iou' is missing from rows \[1\]"):
        summarize([{"iou": 1.0}, {"recall": 1.0}], ["iou"])


# --- load_questions and verify_questions ------------------------------------------------------------

GOOD = {"question": "Which greeting?", "references": [{"doc": "d", "start": 0, "end": 5, "text": "hello"}]}


def write_lines(path, lines):
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_load_questions_reads_references_and_kind(tmp_path):
    path = write_lines(tmp_path / "q.jsonl", [json.dumps(GOOD), "", json.dumps({**GOOD, "kind": "fact"})])
    assert load_questions(path) == [
        Question("Which greeting?", (Reference("d", 0, 5, "hello"),)),
        Question("Which greeting?", (Reference("d", 0, 5, "hello"),), kind="fact"),
    ]


def with_reference(**changes):
    return json.dumps({**GOOD, "references": [{**GOOD["references"][0], **changes}]})


@pytest.mark.parametrize(
    "bad_line, message",
    [
        ('{"question": "x", ', "not valid JSON"),
        ("[1, 2]", "expected a JSON object, got list"),
        (json.dumps({"references": GOOD["references"]}), "missing field 'question'"),
        (json.dumps({**GOOD, "references": []}), "'references' is empty"),
        (json.dumps({**GOOD, "references": {"doc": "d"}}), "field 'references' must be list"),
        (json.dumps({**GOOD, "kind": 3}), "field 'kind' must be str"),
        (with_reference(start=5), r"references\[0\] needs 0 <= start < end, got start=5, end=5"),
        (with_reference(start="0"), r"field 'references\[0\].start' must be int, got '0'"),
        (with_reference(end=True), r"field 'references\[0\].end' must be int, got True"),
        (
            json.dumps({**GOOD, "references": [{"doc": "d", "start": 0, "end": 5}]}),
            r"missing field 'references\[0\].text'",
        ),
    ],
    ids=[
        "bad-json",
        "not-object",
        "no-question",
        "no-references",
        "references-not-list",
        "kind-not-str",
        "start-equals-end",
        "string-start",
        "bool-end",
        "no-text",
    ],
)
def test_load_questions_errors_name_file_and_line(tmp_path, bad_line, message):
    path = write_lines(tmp_path / "q.jsonl", [json.dumps(GOOD), "", bad_line])
    with pytest.raises(ValueError, match=re.escape(f"{path}:3: ") + ".*" + message):
        load_questions(path)


@pytest.mark.parametrize(
    ("newline", "bad_line", "message"),
    [
        (b"\n", b'{"question": "caf\xe9"}', "byte 0xe9 at column 18"),  # Latin-1, not UTF-8
        (b"\n", b'{"question": "caf\xc3\xa9 \xe9"}', "byte 0xe9 at column 20"),  # columns count characters
        (b"\n", b'{"question": "\xe2\x82"}', "bytes 0xe2 0x82 at column 15"),  # a cut-off sequence
        (b"\r\n", b'{"question": "caf\xe9"}', "byte 0xe9 at column 18"),  # lines as text mode counts them
    ],
    ids=["latin-1", "after-a-two-byte-character", "truncated-sequence", "crlf"],
)
def test_load_questions_names_the_file_line_and_byte_that_is_not_utf8(tmp_path, newline, bad_line, message):
    path = tmp_path / "q.jsonl"
    path.write_bytes(newline.join([json.dumps(GOOD).encode(), b"", bad_line, b""]))
    with pytest.raises(ValueError, match=re.escape(f"{path}:3: not valid UTF-8 ({message}, byte offset ")):
        load_questions(path)


DOCUMENTS = {"d": "hello world"}


def test_verify_questions_accepts_true_references():
    question = Question("q", (Reference("d", 0, 5, "hello"), Reference("d", 6, 11, "world")))
    assert verify_questions([question], DOCUMENTS) is None


def test_verify_questions_catches_a_wrong_text():
    question = Question("q", (Reference("d", 0, 5, "hello"), Reference("d", 6, 11, "World")))
    with pytest.raises(
        ValueError, match=r"questions\[0\]\.references\[1\]: text 'World' but d\[6:11\] is 'world'"
    ):
        verify_questions([question], DOCUMENTS)


def test_verify_questions_lists_every_problem():
    questions = [
        Question("q1", (Reference("missing", 0, 5, "hello"),)),
        Question("q2", (Reference("d", 6, 20, "world and more"),)),  # past the end of the doc
    ]
    with pytest.raises(ValueError, match=r"(?s)2 reference\(s\).*questions\[0\].*'missing'.*questions\[1\]"):
        verify_questions(questions, DOCUMENTS)


def test_question_spans_feed_span_metrics():
    question = Question("q", (Reference("d", 0, 5, "hello"),))
    assert span_metrics(question.spans, [("d", 0, 11)])["precision"] == pytest.approx(5 / 11)


# --- properties ---------------------------------------------------------------------------------------

DOCS = ["a", "b"]
located = st.builds(
    lambda doc, start, width: (doc, start, start + width),
    st.sampled_from(DOCS),
    st.integers(0, 80),
    st.integers(1, 30),
)
corpus = st.fixed_dictionaries(
    {
        doc: st.lists(
            st.tuples(st.integers(0, 80), st.integers(1, 30)).map(lambda p: (p[0], p[0] + p[1])), max_size=8
        )
        for doc in DOCS
    }
)


@st.composite
def disjoint_references(draw):
    """Non-overlapping references: consecutive pairs of sorted distinct cut points, per doc."""
    spans = []
    for doc in draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=2, unique=True)):
        cuts = sorted(draw(st.lists(st.integers(0, 120), min_size=2, max_size=8, unique=True)))
        spans += [(doc, cuts[i], cuts[i + 1]) for i in range(0, len(cuts) - 1, 2)]
    return spans


@given(st.lists(located, min_size=1, max_size=4), st.lists(located, max_size=6), corpus)
def test_every_metric_is_between_0_and_1(references, retrieved, corpus_chunks):
    assert all(0.0 <= v <= 1.0 for v in span_metrics(references, retrieved, corpus_chunks).values())


@given(st.lists(located, min_size=1, max_size=4), st.lists(located, max_size=8))
def test_recall_never_falls_as_more_chunks_are_retrieved(references, retrieved):
    recalls = [span_metrics(references, retrieved[:k])["recall"] for k in range(len(retrieved) + 1)]
    assert recalls == sorted(recalls)


@given(disjoint_references())
def test_retrieving_exactly_the_references_scores_1(references):
    got = span_metrics(references, references)
    assert (got["recall"], got["precision"], got["iou"]) == (1.0, 1.0, 1.0)


@given(st.lists(located, min_size=1, max_size=4), st.lists(located, max_size=6), corpus)
def test_metrics_match_a_character_set_oracle(references, retrieved, corpus_chunks):
    """The interval arithmetic against the definitions written with sets of (doc, offset) characters."""
    chars = lambda spans: {(d, i) for d, s, e in spans for i in range(s, e)}  # noqa: E731
    refs, chunks = chars(references), chars(retrieved)
    found = len(refs & chunks)
    chunk_total = sum(e - s for _, s, e in retrieved)
    touching = chars((d, s, e) for d in DOCS for s, e in corpus_chunks[d] if chars([(d, s, e)]) & refs)
    expected = {
        "recall": found / sum(e - s for _, s, e in references),
        "precision": found / chunk_total if chunk_total else 0.0,
        "iou": found / (chunk_total + len(refs - chunks)),
        "precision_omega": len(touching & refs) / len(touching | refs),
    }
    got = span_metrics(references, retrieved, corpus_chunks)
    assert {k: got[k] for k in expected} == pytest.approx(expected)
