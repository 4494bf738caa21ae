"""The code questions and their corpus: every reference is a true span of its file's raw text, the set
is current, and every bundled file is real code whose source, hash and licence are on record."""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import re

import pytest

from tests.conftest import DATA

EVAL = DATA / "eval"
CODE = DATA / "code"
KINDS = {"definition", "signature", "constant", "scope", "behaviour", "two_places"}
PERMISSIVE = {"MIT", "BSD-2-Clause", "BSD-3-Clause", "Apache-2.0", "ISC", "PSF-2.0"}
LANGUAGES = {".py": "Python", ".js": "JavaScript", ".ts": "TypeScript", ".go": "Go", ".rs": "Rust",
             ".java": "Java", ".c": "C", ".h": "C", ".cpp": "C++", ".hpp": "C++"}
QUESTIONS = [json.loads(line) for line in (EVAL / "code_questions.jsonl").read_text(encoding="utf-8").splitlines()]
REFERENCES = [(q["question"], ref) for q in QUESTIONS for ref in q["references"]]
FILES = sorted(p.name for p in CODE.iterdir() if p.is_file() and p.name != "SOURCES.md")
# A row of the SOURCES.md table: file | language | project | version | path | from | licence | licence file | sha256
ROW = re.compile(r"^\| `(?P<file>[^`]+)` \|(?:[^|]*\|){5} (?P<licence>[^|]+?) \| (?P<licence_files>[^|]+?) \| "
                 r"`(?P<sha256>[0-9a-f]{64})` \|$")
SOURCES = {m["file"]: m for line in (CODE / "SOURCES.md").read_text(encoding="utf-8").splitlines()
           if (m := ROW.match(line))}


@functools.cache
def raw_text(name: str) -> str:
    """The file as the offsets count it: UTF-8, newlines untouched."""
    with open(CODE / name, encoding="utf-8", newline="") as file:
        return file.read()


@pytest.mark.parametrize(("question", "ref"), REFERENCES, ids=[f"{r['doc']}:{r['start']}" for _, r in REFERENCES])
def test_reference_is_a_span_of_its_file(question, ref):
    text = raw_text(ref["doc"])
    assert 0 <= ref["start"] < ref["end"] <= len(text)
    assert text[ref["start"] : ref["end"]] == ref["text"]


def test_there_are_at_least_60_questions():
    assert len(QUESTIONS) >= 60


def test_every_kind_is_present_and_no_other():
    assert {q["kind"] for q in QUESTIONS} == KINDS


def test_two_places_questions_have_two_references():
    assert all(len(q["references"]) >= 2 for q in QUESTIONS if q["kind"] == "two_places")


def test_no_question_is_asked_twice():
    keys = [" ".join(q["question"].casefold().split()) for q in QUESTIONS]
    assert len(keys) == len(set(keys))


def test_every_file_of_the_corpus_is_asked_about():
    assert {ref["doc"] for _, ref in REFERENCES} == set(FILES)


def test_code_questions_jsonl_is_what_the_drafts_build():
    spec = importlib.util.spec_from_file_location("build_questions", EVAL / "build_questions.py")
    build_questions = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build_questions)
    drafts = sorted(EVAL.glob("code_questions_draft*.jsonl"))
    expected = build_questions.to_jsonl(build_questions.build(drafts, CODE))
    assert (EVAL / "code_questions.jsonl").read_text(encoding="utf-8") == expected


def test_sources_lists_every_file_and_no_other():
    assert sorted(SOURCES) == FILES


@pytest.mark.parametrize("name", FILES)
def test_file_matches_its_recorded_sha256(name):
    assert hashlib.sha256((CODE / name).read_bytes()).hexdigest() == SOURCES[name]["sha256"]


@pytest.mark.parametrize("name", FILES)
def test_file_has_a_permissive_licence_and_its_licence_file(name):
    licences = set(SOURCES[name]["licence"].split(" OR "))
    assert licences <= PERMISSIVE
    for licence_file in SOURCES[name]["licence_files"].split(", "):
        assert (CODE / "LICENSES" / licence_file.strip("`")).is_file()


def test_the_corpus_spans_at_least_four_languages():
    assert all(name[name.rfind("."):] in LANGUAGES for name in FILES)
    assert len({LANGUAGES[name[name.rfind("."):]] for name in FILES}) >= 4
