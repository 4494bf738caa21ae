"""Every strategy x awkward and real texts: offsets true, ordered, bounded, nothing lost."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chunking import STRATEGIES, check_chunks, chunk
from tests.conftest import AWKWARD, corpus_texts, length_of, words

CONFIGS = {
    "fixed-tokens": ("fixed", {"chunk_size": 16, "chunk_overlap": 4}),
    "fixed-characters": ("fixed", {"chunk_size": 60, "chunk_overlap": 10, "unit": "characters"}),
    "fixed-words": ("fixed", {"chunk_size": 8, "chunk_overlap": 2, "unit": words}),
    "fixed-word-safe": ("fixed", {"chunk_size": 40, "chunk_overlap": 0.25, "unit": "characters",
                                  "word_safe_overlap": True}),
    "sentence-tokens": ("sentence", {"chunk_size": 24, "chunk_overlap": 6}),
    "sentence-characters": ("sentence", {"chunk_size": 100, "unit": "characters"}),
    "sentence-count": ("sentence", {"chunk_size": 3, "chunk_overlap": 1, "unit": "sentences"}),
    "paragraph-tokens": ("paragraph", {"chunk_size": 24}),
    "paragraph-words": ("paragraph", {"chunk_size": 10, "unit": words}),
    "paragraph-uncapped": ("paragraph", {"chunk_size": None}),
    "markdown-tokens": ("markdown", {"chunk_size": 24}),
    "markdown-characters": ("markdown", {"chunk_size": 80, "chunk_overlap": 10, "unit": "characters"}),
    "sliding-tokens": ("sliding", {"chunk_size": 24, "overlap_fraction": 0.25}),
    "sliding-count": ("sliding", {"chunk_size": 4, "overlap_fraction": 0.5, "unit": "sentences"}),
    "sliding-overlap-amount": ("sliding", {"chunk_size": 16, "chunk_overlap": 0.25}),
    "recursive-tokens": ("recursive", {"chunk_size": 24, "chunk_overlap": 4}),
    "recursive-characters": ("recursive", {"chunk_size": 50, "unit": "characters"}),
    "recursive-words": ("recursive", {"chunk_size": 10, "chunk_overlap": 2, "unit": words}),
    "semantic-tokens": ("semantic", {"chunk_size": 24}),
    "semantic-characters": ("semantic", {"chunk_size": 100, "unit": "characters", "threshold_type": "fixed"}),
    "parent-child-sections": ("parent_child", {"chunk_size": 24, "parent_size": 64}),
    "parent-child-tokens": ("parent_child", {"chunk_size": 16, "parent_size": 48, "parent_mode": "windows"}),
    "contextual-heading": ("contextual", {"chunk_size": 24, "provider": "heading"}),
    "contextual-summary-markdown": ("contextual", {"chunk_size": 24, "provider": "summary", "base": "markdown"}),
}


def run_and_check(text: str, config: str) -> list:
    strategy, options = CONFIGS[config]
    chunks = chunk(text, strategy, **options)
    size = options["chunk_size"]
    unit = options.get("unit", "tokens")
    check_chunks(text, chunks, chunk_size=size, length=length_of(unit) if size else None)
    return chunks


def test_every_strategy_has_a_config():
    assert {strategy for strategy, _ in CONFIGS.values()} == set(STRATEGIES)


@pytest.mark.parametrize("name", sorted(AWKWARD))
@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_invariants_on_awkward_text(config, name):
    run_and_check(AWKWARD[name], config)


@pytest.mark.parametrize("name", sorted(corpus_texts()))
@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_invariants_on_real_documents(config, name):
    text = corpus_texts()[name]
    assert run_and_check(text, config)


@pytest.mark.parametrize("text", ["", " ", "\n\n", "\t \r\n "])
@pytest.mark.parametrize("strategy", sorted(STRATEGIES))
def test_empty_or_whitespace_input_gives_no_chunks(strategy, text):
    assert chunk(text, strategy) == []


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_same_input_same_output(config):
    text = AWKWARD["abbreviations"] * 5 + AWKWARD["markdown"]
    first, second = run_and_check(text, config), run_and_check(text, config)
    assert first == second
    assert [c.id for c in first] == [c.id for c in second]


PIECES = st.sampled_from([
    "word", "Word", " ", "  ", "\n", "\r\n", "\n\n", "\t", ".", "!", "?", "。", "…", "Dr.", "e.g.",
    "3.14", "# ", "## Heading\n", "```\n", "- ", "1. ", "|a|b|\n", "😀", "👩‍👩‍👧", "é", "e\u0301", "漢字",
    "한국어", "<|endoftext|>", "\x00", "x" * 40, "https://example.org/a.b",
])
TEXTS = st.one_of(st.lists(PIECES, max_size=80).map("".join), st.text(max_size=300))


@pytest.mark.parametrize("config", sorted(CONFIGS))
@given(text=TEXTS)
def test_invariants_on_generated_text(config, text):
    run_and_check(text, config)
