"""Exact token counts without re-encoding: `TokenCounter.count` and `PieceTokens.count` equal
`count_tokens` of the span, on the corpus and on random text built from awkward pieces."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunking.counting import PieceTokens, TokenCounter, first_seam, last_seam
from chunking.segment import split_paragraphs, split_sentences
from chunking.tokens import count_tokens

# Pieces chosen to stress cl100k's pre-tokenizer: contractions, digit runs, whitespace runs
# before letters, punctuation followed by newlines, letters in several scripts, emoji, marks.
FRAGMENTS = [
    "a", "Ab", " the", "  word", "   x", "'s", "'ll", "’re", " 1234567", "12", ".", "...", "!?", "\n", "\n\n",
    "\r\n", "\t", " ", "  ", "\u00a0", "\u3000", "é", "e\u0301", "漢字", "ひらがな", "한국어", "ไทย", "עברית",
    "😀", "👨‍👩‍👧", " (", ")", '"', " —", "-", "_", "x²", " ½", "ǅ", " ß", "\x00", "\u2028",
]
texts = st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=60).map("".join)


@given(texts, st.data())
@settings(max_examples=400, deadline=None, derandomize=True)
def test_token_counter_counts_any_span_exactly(text, data):
    start = data.draw(st.integers(0, len(text) - 1))
    end = data.draw(st.integers(start + 1, len(text)))
    assert TokenCounter(text).count(start, end) == count_tokens(text[start:end])


@given(texts, st.data())
@settings(max_examples=400, deadline=None, derandomize=True)
def test_piece_tokens_count_any_run_exactly(text, data):
    cuts = sorted(set(data.draw(st.lists(st.integers(1, max(1, len(text) - 1)), max_size=6))))
    pieces = [(a, b) for a, b in zip([0, *cuts], [*cuts, len(text)]) if a < b]
    counts = PieceTokens(text, pieces)
    i = data.draw(st.integers(0, len(pieces) - 1))
    j = data.draw(st.integers(i, len(pieces) - 1))
    assert counts.count(i, j) == count_tokens(text[pieces[i][0] : pieces[j][1]])


@pytest.mark.parametrize("split", [split_sentences, split_paragraphs])
def test_piece_tokens_on_every_corpus_document(corpus, split):
    rng = random.Random(0)
    for text in corpus.values():
        pieces = split(text)
        counts = PieceTokens(text, pieces)
        assert counts.sizes == [count_tokens(text[s:e]) for s, e in pieces]
        for _ in range(200):
            i = rng.randrange(len(pieces))
            j = min(len(pieces) - 1, i + rng.randrange(12))
            assert counts.count(i, j) == count_tokens(text[pieces[i][0] : pieces[j][1]])


def test_token_counter_on_every_corpus_document(corpus):
    rng = random.Random(1)
    for text in corpus.values():
        counter = TokenCounter(text)
        for _ in range(300):
            start = rng.randrange(len(text))
            end = min(len(text), start + rng.choice([1, 7, 60, 800, 4000]))
            assert counter.count(start, end) == count_tokens(text[start:end])


def test_seams_are_spaces_before_letters_inside_the_span():
    text = "x 1 y. Zed and ok"
    assert first_seam(text, 0, len(text)) == 3  # " y"; " 1" is not a seam
    assert last_seam(text, 3, len(text)) == 14  # " ok"
    assert first_seam(text, 0, 4) is None  # the letter after the space must lie in the span
    assert first_seam("漢字ひらがな", 0, 6) is None


def test_a_text_without_seams_is_simply_encoded():
    text = "漢字。ひらがな。" * 50
    pieces = split_sentences(text)
    assert PieceTokens(text, pieces).count(0, len(pieces) - 1) == count_tokens(text)
