"""The labelled questions: every reference is a true span of its document as loaded, and the set is current."""

from __future__ import annotations

import functools
import importlib.util
import json

import pytest

from chunking.documents import Document
from chunking.load import load_document
from tests.conftest import DATA

EVAL = DATA / "eval"
KINDS = {"number", "heading", "paraphrase", "two_places", "fact", "boundary"}
QUESTIONS = [json.loads(line) for line in (EVAL / "questions.jsonl").read_text(encoding="utf-8").splitlines()]
REFERENCES = [(q["question"], ref) for q in QUESTIONS for ref in q["references"]]


@functools.cache
def document(name: str) -> Document:
    return load_document(DATA / "corpus" / name)


@pytest.mark.parametrize(("question", "ref"), REFERENCES, ids=[f"{r['doc']}:{r['start']}" for _, r in REFERENCES])
def test_reference_is_a_span_of_its_document_as_loaded(question, ref):
    text = document(ref["doc"]).text
    assert 0 <= ref["start"] < ref["end"] <= len(text)
    assert text[ref["start"] : ref["end"]] == ref["text"]


def test_there_are_at_least_150_questions():
    assert len(QUESTIONS) >= 150


def test_every_kind_is_present_and_no_other():
    assert {q["kind"] for q in QUESTIONS} == KINDS


def test_no_question_is_asked_twice():
    keys = [" ".join(q["question"].casefold().split()) for q in QUESTIONS]
    assert len(keys) == len(set(keys))


def test_every_document_of_the_corpus_is_asked_about():
    names = {p.name for p in (DATA / "corpus").iterdir() if p.is_file()}
    assert {ref["doc"] for _, ref in REFERENCES} == names


def test_questions_jsonl_is_what_the_drafts_build():
    spec = importlib.util.spec_from_file_location("build_questions", EVAL / "build_questions.py")
    build_questions = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build_questions)
    drafts = sorted(EVAL.glob("questions_draft_*.jsonl"))
    expected = build_questions.to_jsonl(build_questions.build(drafts, DATA / "corpus"))
    assert (EVAL / "questions.jsonl").read_text(encoding="utf-8") == expected
