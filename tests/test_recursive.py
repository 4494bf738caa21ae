"""Recursive splitting: coarsest separator first, merge up to size, never straddle a coarser cut."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunking import count_tokens, recursive

TEXT = "Para one, sentence one. Para one, sentence two.\n\nPara two is short.\n\nPara three."


def test_golden_spans_by_characters():
    got = recursive.chunk(TEXT, chunk_size=50, unit="characters")
    assert [c.text for c in got] == [
        "Para one, sentence one. Para one, sentence two.",
        "Para two is short.\n\nPara three.",
    ]


def test_splits_an_oversize_paragraph_at_sentences_first():
    got = recursive.chunk(TEXT, chunk_size=30, unit="characters")
    assert [c.text for c in got] == [
        "Para one, sentence one.",
        "Para one, sentence two.",
        "Para two is short.",
        "Para three.",
    ]


def test_oversize_parts_are_not_merged_with_neighbours():
    text = "Tiny.\n\n" + "Long sentence here. " * 10 + "\n\nTiny too."
    got = recursive.chunk(text, chunk_size=60, unit="characters")
    assert got[0].text == "Tiny." and got[-1].text == "Tiny too."


def test_a_huge_word_falls_through_to_fixed_windows():
    got = recursive.chunk("start " + "x" * 1000 + " end", chunk_size=50)
    assert all(count_tokens(c.text) <= 50 for c in got)
    assert "".join(c.text for c in got).replace(" ", "") == ("start" + "x" * 1000 + "end")


def test_literal_separators():
    got = recursive.chunk("a;b;c;d", chunk_size=4, unit="characters", separators=[";"])
    assert [c.text for c in got] == ["a;b;", "c;d"]


def test_a_regex_separator_starts_each_piece():
    import re

    text = "PART 1 Scope. Words here.\nPART 2 Terms. More words.\nPART 3 End."
    got = recursive.chunk(text, chunk_size=30, unit="characters", separators=[re.compile(r"(?m)^PART ")])
    assert [c.text for c in got] == ["PART 1 Scope. Words here.", "PART 2 Terms. More words.", "PART 3 End."]


def test_overlap_repeats_trailing_pieces():
    text = "One. Two. Three. Four. Five. Six."
    got = recursive.chunk(text, chunk_size=17, chunk_overlap=6, unit="characters")
    assert [c.text for c in got] == ["One. Two. Three.", "Three. Four.", "Four. Five. Six."]


SENTENCE_BITS = ["A cat sat.", " It ran!", " Dr. Who", " e.g. this", " J. Smith", " U.S. The", " 1. Item", "\n- item",
                 "\nTitle line\nNext", "\n\n", " ", "  ", "\n", " wordwordwordword", " x", "漢字。", "「はい。」と",
                 " ok?", " today! 🎉 Next", "...", " …", " (see.) And", " No. 5", " etc. The"]
sentence_texts = st.lists(st.sampled_from(SENTENCE_BITS), min_size=1, max_size=50).map("".join)


@given(sentence_texts, st.integers(1, 120), st.sampled_from([("sentences", "words"), ("lines", "sentences"),
                                                            ("sentences",), ("paragraphs", "sentences", "words")]))
@settings(max_examples=300, deadline=None, derandomize=True)
def test_sentences_packed_by_offsets_give_the_spans_of_packing_every_sentence(text, size, separators):
    """By characters, sentence ends are confirmed only where a chunk may stop (`packing._pack_sentences`);
    a callable unit measuring the same length packs every sentence of the piece: the same spans."""
    def length(piece: str) -> int:
        return len(piece)

    by_offsets = recursive.chunk(text, chunk_size=size, unit="characters", separators=separators)
    by_counting = recursive.chunk(text, chunk_size=size, unit=length, separators=separators)
    assert [(c.start, c.end) for c in by_offsets] == [(c.start, c.end) for c in by_counting]


@pytest.mark.parametrize("size", [3, 10, 40])
def test_a_sentence_longer_than_the_chunk_is_cut_at_words_when_packed_by_offsets(size):
    text = "Short one. " + "A long sentence of many words that never ends here " * 3 + "and then does. Tail."
    spans = [(c.start, c.end) for c in recursive.chunk(text, chunk_size=size, unit="characters",
                                                       separators=("sentences", "words"))]
    assert spans == [(c.start, c.end) for c in recursive.chunk(text, chunk_size=size, unit=len,
                                                                separators=("sentences", "words"))]
    assert all(e - s <= size for s, e in spans)
