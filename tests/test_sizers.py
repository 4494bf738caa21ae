"""Sizers: the one boundary between strategies and counting — every unit, the fast path, the plain path.

Each sizer is held to what strategies ask of it (`count` exact on any span, `windows` within the
bound and in order) and the fast cl100k path to the plain one (encode each span alone).
"""

from __future__ import annotations

import ast
import random
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import chunking
from chunking import check_chunks, chunk, count_tokens
from chunking.embed import WordPieces
from chunking.sizers import Bound, Characters, Measured, Sentences, Sizer, Tokens, resolve_unit
from chunking.types import make_chunks
from chunking.windows import windows
from tests.conftest import corpus_texts

STRATEGY_MODULES = ["fixed", "sentence", "paragraph", "markdown", "sliding", "recursive", "semantic",
                    "parent_child", "contextual", "packing"]


class PlainTokens(Tokens):
    """cl100k_base measured the plain way: every span encoded on its own (the generic `Bound`)."""

    def bind(self, text: str) -> Bound:
        return Bound(self, text)


@pytest.fixture(scope="module")
def minilm_tokenizer():
    from chunking.embed import load_model

    return load_model().tokenizer


@pytest.mark.parametrize("name", sorted(corpus_texts()))
def test_the_fast_tokens_path_counts_every_span_as_the_plain_one(name):
    text = corpus_texts()[name]
    fast, plain = Tokens().bind(text), PlainTokens().bind(text)
    rng = random.Random(name)
    for _ in range(200):
        start = rng.randrange(len(text))
        end = min(len(text), start + rng.choice([1, 9, 120, 2000]))
        assert fast.count(start, end) == plain.count(start, end) == count_tokens(text[start:end])


@pytest.mark.parametrize("strategy", ["sentence", "paragraph", "markdown", "recursive"])
def test_strategies_give_the_same_chunks_through_the_plain_tokens_sizer(strategy, corpus):
    """(Not `fixed`: the plain sizer knows no token boundaries, so its windows end at any code point.)"""
    text = corpus["harbor_cycles_faq.md"]
    fast = chunk(text, strategy, chunk_size=120)
    plain = chunk(text, strategy, chunk_size=120, unit=PlainTokens())
    assert [(c.start, c.end) for c in plain] == [(c.start, c.end) for c in fast]


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_the_thread_count_is_a_parameter_of_the_sizer_and_changes_nothing_else(threads, corpus):
    text = "\n\n".join(corpus.values()) * 2
    spans = [(c.start, c.end) for c in chunk(text, "recursive", unit=Tokens(threads=threads, part_chars=2_000))]
    assert spans == [(c.start, c.end) for c in chunk(text, "recursive")]


@pytest.mark.parametrize(("unit", "expected"), [
    ("tokens", Tokens), ("characters", Characters), (len, Measured), (Characters(), Characters),
])
def test_every_unit_resolves_to_a_sizer(unit, expected):
    assert isinstance(resolve_unit(unit), expected)


def test_sentences_are_a_unit_only_where_allowed():
    assert isinstance(resolve_unit("sentences", sentences=True), Sentences)
    for unit in ("sentences", Sentences()):
        with pytest.raises(ValueError, match="only for the sentence and sliding"):
            resolve_unit(unit)


@pytest.mark.parametrize("unit", ["words", 3, None, "Tokens"])
def test_an_unknown_unit_is_named(unit):
    with pytest.raises(ValueError, match="unit must be one of"):
        chunk("Some text.", "recursive", unit=unit)


@pytest.mark.parametrize(("threads", "part_chars"), [(0, 100), (True, 100), (2, 10)])
def test_bad_sizer_settings_are_named(threads, part_chars):
    with pytest.raises(ValueError, match="threads|part_chars"):
        Tokens(threads=threads, part_chars=part_chars)


def test_a_tiktoken_encoding_object_is_a_unit():
    sizer = resolve_unit(chunking.get_encoding())
    assert isinstance(sizer, Tokens) and sizer.size("Hello world") == 2


def test_a_sizer_of_your_own_needs_only_size():
    class Vowels(Sizer):
        name = "vowels"

        def size(self, text: str) -> int:
            return sum(ch in "aeiou" for ch in text)

    text = "The quick brown fox jumps over the lazy dog. " * 20
    chunks = chunk(text, "recursive", chunk_size=12, unit=Vowels())
    check_chunks(text, chunks, chunk_size=12, length=Vowels())


def test_word_pieces_count_the_models_own_tokenizer_with_its_special_tokens(minilm_tokenizer):
    pieces = WordPieces(minilm_tokenizer)
    assert pieces.size("Late chunking") == 3 + 2  # "late", "chunk", "##ing", then [CLS] and [SEP]
    assert WordPieces(minilm_tokenizer, special_tokens=False).size("Late chunking") == 3
    with pytest.raises(TypeError, match=r"a tokenizer is not a unit: pass chunking.embed.WordPieces\(tokenizer\)"):
        resolve_unit(minilm_tokenizer)


def test_chunks_bounded_in_word_pieces_fit_the_models_window_exactly(minilm_tokenizer, corpus):
    text = corpus["tidal_mills_essay.txt"]
    pieces = WordPieces(minilm_tokenizer)
    chunks = chunk(text, "sentence", chunk_size=256, unit=pieces)
    check_chunks(text, chunks, chunk_size=256, length=pieces)
    assert max(pieces.size(c.text) for c in chunks) > 200  # the window is used, not wasted


@given(st.text(alphabet=st.sampled_from(list("ab .\n漢🎉ज्ञ")), max_size=300), st.integers(1, 12))
def test_windows_hold_the_bound_in_every_unit(text, size):
    for sizer in (Tokens(), Characters(), Measured(lambda t: len(t.split()) + len(t) // 5)):
        spans = windows(sizer.bind(text), 0, len(text), size, size // 3)
        check_chunks(text, make_chunks(text, spans, strategy="w"), chunk_size=size, length=sizer)


@pytest.mark.parametrize("module", STRATEGY_MODULES)
def test_no_strategy_asks_which_unit_it_has(module):
    """Speed lives behind the sizer: no strategy compares unit names or reaches into a sizer's kind."""
    source = (Path(chunking.__file__).parent / f"{module}.py").read_text(encoding="utf-8")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            asks = [s for s in sides if isinstance(s, ast.Name) and s.id == "unit"
                    or isinstance(s, ast.Attribute) and s.attr in ("name", "sizer")]
            assert not asks, ast.unparse(node)
        if isinstance(node, ast.Name):
            assert node.id not in ("Tokens", "Characters", "TokenCounter"), f"{module} names {node.id}"
