"""Recursive splitting: coarsest separator first, merge up to size, never straddle a coarser cut."""

from __future__ import annotations

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
