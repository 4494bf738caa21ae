"""Exact token counts without re-encoding: `TokenCounter.count` equals `count_tokens` of the span,
on the corpus and on random text built from awkward pieces; estimates stay close."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunking import tokens
from chunking.counting import TokenCounter, first_seam, last_seam
from chunking.segment import split_paragraphs, split_sentences
from chunking.sizers import Tokens
from chunking.tokens import count_tokens, get_encoding, seam_cuts

# Pieces chosen to stress cl100k's pre-tokenizer: contractions, digit runs, whitespace runs
# before letters, punctuation followed by newlines, letters in several scripts, emoji, marks.
FRAGMENTS = [
    "a", "Ab", " the", "  word", "   x", "'s", "'ll", "’re", " 1234567", "12", ".", "...", "!?", "\n", "\n\n",
    "\r\n", "\t", " ", "  ", "\u00a0", "\u3000", "é", "e\u0301", "漢字", "ひらがな", "한국어", "ไทย", "עברית",
    "😀", "👨‍👩‍👧", " (", ")", '"', " —", "-", "_", "x²", " ½", "ǅ", " ß", "\x00", "\u2028",
    # line seams: a line break before table cells, indentation, separators str.isspace counts as whitespace
    "\n|", "| 1.25 ", ",", "\n ", "\r", "\x0b", "\x1c", "\x1f", "\x85", "\u2029", "\n\u3000", ".\n", "-\n",
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
def test_a_counter_over_part_of_a_text_counts_spans_inside_it_exactly(text, data):
    lo = data.draw(st.integers(0, len(text) - 1))
    hi = data.draw(st.integers(lo + 1, len(text)))
    start = data.draw(st.integers(lo, hi - 1))
    end = data.draw(st.integers(start + 1, hi))
    assert TokenCounter(text, lo, hi).count(start, end) == count_tokens(text[start:end])


def test_a_bound_tokens_sizer_keeps_one_counter_per_region_and_each_edge_word():
    bound = Tokens().bind("One two. Three four.")
    assert bound.counter() is bound.counter() and bound.counter(0, 8) is not bound.counter()
    assert bound.count(0, 8) == count_tokens("One two.") and bound.count(9, 20) == count_tokens("Three four.")
    assert set(bound.words) <= {"One", "One two.", " two.", "Three", " four.", "Three four."}


def test_token_counter_on_every_corpus_document(corpus):
    rng = random.Random(1)
    for text in corpus.values():
        counter = TokenCounter(text)
        for _ in range(300):
            start = rng.randrange(len(text))
            end = min(len(text), start + rng.choice([1, 7, 60, 800, 4000]))
            assert counter.count(start, end) == count_tokens(text[start:end])


@pytest.mark.parametrize("split", [split_sentences, split_paragraphs])
def test_estimates_are_within_a_few_tokens_of_the_truth(corpus, split):
    for text in corpus.values():
        pieces = split(text)
        exact = [count_tokens(text[s:e]) for s, e in pieces]
        estimates = TokenCounter(text).estimate(pieces)
        assert sum(estimates) == pytest.approx(sum(exact), rel=0.05)
        assert max(abs(a - b) for a, b in zip(exact, estimates)) <= 3


def test_seams_are_spaces_before_non_whitespace_inside_the_span():
    text = "x   1 y. Zed and ok"
    assert first_seam(text, 0, len(text)) == 3  # " 1"; the spaces before a space are not seams
    assert last_seam(text, 3, len(text)) == 16  # " ok"
    assert first_seam(text, 0, 4) is None  # the character after the space must lie in the span
    assert first_seam("漢字ひらがな", 0, 6) is None


def test_a_line_break_before_a_non_whitespace_character_is_a_seam():
    text = "|1|2|\n\t|3|\n|4|5|\n\x1c6"
    assert first_seam(text, 0, len(text)) == 11  # "|4"; "\n\t" is followed by whitespace
    assert last_seam(text, 11, len(text)) == 11  # "\x1c" counts as whitespace (str.isspace), not a seam
    assert first_seam(text, 0, 11) is None  # the character after the line break must lie in the span
    assert TokenCounter(text)._cuts_at(11) and not TokenCounter(text)._cuts_at(6)


@pytest.mark.parametrize("before", ["x\n", ". \n\n", "x\r\n", "x", "5 ", "x\n\u00a0"])
def test_every_non_whitespace_code_point_after_a_seam_starts_a_new_pre_token(before):
    """The one Unicode fact the seams rest on, checked for every code point of the BMP after a line
    break or a space (all 1.1 M code points were checked once the same way while writing this)."""
    joint = "" if before.endswith("\n") else " "
    after = [joint + chr(i) * 2 + "\n " for i in range(0x10000) if not 0xD800 <= i < 0xE000 and not chr(i).isspace()]
    encoding = get_encoding()
    whole = encoding.encode_ordinary_batch([before + a for a in after], num_threads=2)
    alone = encoding.encode_ordinary_batch(after, num_threads=2)
    head = count_tokens(before)
    assert [a for a, w, t in zip(after, whole, alone) if len(w) != head + len(t)] == []


def test_table_rows_are_counted_from_the_region_without_encoding_them_again():
    text = "\n".join(f"| {i} | {i * 7 % 100}.25 | {i % 13} |" for i in range(2000))
    encoded: list[str] = []
    counter = TokenCounter(text, encoded=lambda piece: encoded.append(piece) or count_tokens(piece))
    rng = random.Random(5)
    for _ in range(200):
        start = rng.randrange(len(text) - 1)
        end = rng.randrange(start + 1, len(text))
        assert counter.count(start, end) == count_tokens(text[start:end])
    assert max(map(len, encoded)) < 30  # at most a row's head or tail, never a span of rows


def test_a_text_without_seams_is_simply_encoded():
    text = "漢字。ひらがな。" * 50
    assert TokenCounter(text).count(3, len(text) - 2) == count_tokens(text[3:-2])


def split_at_seams(text: str, parts: int) -> list[str]:
    cuts = seam_cuts(text, parts)
    return [text[a:b] for a, b in zip(cuts, cuts[1:])]


@given(texts, st.integers(1, 6))
@settings(max_examples=400, deadline=None, derandomize=True)
def test_text_cut_at_seams_encodes_to_the_same_ids_part_by_part(text, parts):
    pieces = split_at_seams(text, parts)
    assert "".join(pieces) == text and 1 <= len(pieces) <= max(parts, 1)
    for piece in pieces[1:]:
        assert piece[0] == " " and piece[1].isalpha()
    ids = [i for piece in pieces for i in get_encoding().encode_ordinary(piece)]
    assert ids == get_encoding().encode_ordinary(text)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_encode_and_boundaries_in_parts_on_threads_match_one_call(corpus, threads):
    text = "\n\n".join(corpus.values()) + " 漢字" * 400  # seams everywhere: no part is forced
    assert len(seam_cuts(text, len(text) // 500)) > 50
    ids = get_encoding().encode_ordinary(text)
    assert tokens.encode(text, threads=threads, part_chars=500).tolist() == ids
    bounds, _, _, forced = tokens.token_boundaries(text, threads=threads, part_chars=500)
    assert forced == [] and bounds.tolist() == tokens.token_byte_offsets(np.array(ids)).tolist()


@pytest.mark.parametrize("threads", [1, 2])
def test_counts_stay_exact_across_cuts_forced_inside_long_words(threads):
    text = "Start. " + "x" * 3000 + " ²x ½y" * 300 + "." * 2000 + " end"  # stretches without a seam
    counter = TokenCounter(text, threads=threads, part_chars=500)
    assert counter.forced  # the planning encode had to cut inside them
    rng = random.Random(3)
    for _ in range(300):
        start = rng.randrange(len(text))
        end = min(len(text), start + rng.choice([1, 50, 700, 3000]))
        assert counter.count(start, end) == count_tokens(text[start:end])


def test_text_without_seams_is_not_cut():
    assert split_at_seams("漢字。" * 5000, 4) == ["漢字。" * 5000]
    assert split_at_seams(" ²" * 5000 + " a", 2) == [" ²" * 5000 + " a"]  # a numeral is not a letter
