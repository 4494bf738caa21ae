"""Paragraph chunking: blank lines (CRLF, whitespace-only lines), capped packing, uncapped mode."""

from __future__ import annotations

import pytest

from chunking import count_tokens, paragraph
from chunking.segment import split_paragraphs

TEXT = "First para.\n\nSecond para,\nstill second.\r\n \r\nThird.\n\n\n\nFourth."


def test_paragraph_spans_golden():
    assert split_paragraphs(TEXT) == [(0, 11), (13, 39), (44, 50), (54, 61)]


def test_uncapped_gives_one_chunk_per_paragraph():
    got = paragraph.chunk(TEXT, chunk_size=None)
    assert [c.text for c in got] == ["First para.", "Second para,\nstill second.", "Third.", "Fourth."]


def test_uncapped_is_the_documented_exception_to_the_bound():
    text = "Short.\n\n" + "A very long paragraph. " * 200
    got = paragraph.chunk(text, chunk_size=None)
    assert len(got) == 2 and count_tokens(got[1].text) > 500


def test_capped_packs_neighbouring_paragraphs():
    got = paragraph.chunk(TEXT, chunk_size=30, unit="characters")
    assert [(c.start, c.end) for c in got] == [(0, 11), (13, 39), (44, 61)]


def test_oversize_paragraph_falls_back_to_sentences():
    text = "Intro.\n\n" + " ".join(f"Sentence {i} is here." for i in range(40)) + "\n\nOutro."
    got = paragraph.chunk(text, chunk_size=30)
    assert got[0].text == "Intro." and got[-1].text == "Outro."
    assert all(c.text.endswith(".") for c in got)  # cut between sentences, not inside them
    assert all(count_tokens(c.text) <= 30 for c in got)


def test_uncapped_refuses_overlap():
    import pytest

    with pytest.raises(ValueError, match="chunk_overlap"):
        paragraph.chunk(TEXT, chunk_size=None, chunk_overlap=2)


@pytest.mark.parametrize("unit", ["sentences", "bytes", 3])
def test_a_bad_unit_is_refused_even_uncapped(unit):
    with pytest.raises(ValueError, match="unit"):
        paragraph.chunk("One.\n\nTwo.", chunk_size=None, unit=unit)
