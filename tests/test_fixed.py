"""Fixed-size windows: golden spans, seed 001 reproduced, token windows that never cut a character."""

from __future__ import annotations

import pytest

from chunking import chunk, count_tokens, fixed, get_encoding
from tests.conftest import corpus_texts


def spans(chunks):
    return [(c.start, c.end) for c in chunks]


def seed_001_chunk_by_char(text, chunk_size=150, chunk_overlap=20):
    """Seed 001's character chunker, re-typed for comparison."""
    out, start = [], 0
    while start < len(text):
        end = min(start + chunk_size, len(text))
        out.append(text[start:end])
        start = end - chunk_overlap if end < len(text) else len(text)
    return out


def test_character_windows_golden():
    got = fixed.chunk("abcdefghij", chunk_size=4, chunk_overlap=1, unit="characters")
    assert spans(got) == [(0, 4), (3, 7), (6, 10)]


def test_character_windows_without_overlap_golden():
    assert spans(fixed.chunk("abcdefghij", chunk_size=4, unit="characters")) == [(0, 4), (4, 8), (8, 10)]


@pytest.mark.parametrize("name", sorted(corpus_texts()))
def test_reproduces_seed_001_chunk_by_char(name):
    text = corpus_texts()[name]
    got = fixed.chunk(text, chunk_size=150, chunk_overlap=20, unit="characters")
    assert [c.text for c in got] == seed_001_chunk_by_char(text, 150, 20)


def test_overlap_fraction_equals_absolute_overlap():
    text = "The quick brown fox jumps over the lazy dog. " * 20
    by_fraction = fixed.chunk(text, chunk_size=20, chunk_overlap=0.25)
    assert spans(by_fraction) == spans(fixed.chunk(text, chunk_size=20, chunk_overlap=5))


def test_word_safe_overlap_starts_each_window_at_a_word():
    text = "alpha bravo charlie delta echo foxtrot golf hotel india juliet"
    got = fixed.chunk(text, chunk_size=20, chunk_overlap=8, unit="characters", word_safe_overlap=True)
    assert spans(got) == [(0, 20), (12, 32), (26, 46), (39, 59), (56, 62)]
    assert all(text[c.start - 1] == " " for c in got[1:])


def test_raw_overlap_can_start_mid_word():
    text = "alpha bravo charlie delta echo foxtrot golf hotel india juliet"
    got = fixed.chunk(text, chunk_size=20, chunk_overlap=6, unit="characters")
    assert got[1].text.startswith("arlie")


def test_token_windows_match_tiktoken_slices_on_ascii():
    text = corpus_texts().get("greenfield_data_policy.txt", "Some plain ASCII text. " * 400)
    ids = get_encoding().encode_ordinary(text)
    got = fixed.chunk(text, chunk_size=64)
    expected = [get_encoding().decode(ids[i : i + 64]) for i in range(0, len(ids), 64)]
    assert [c.text for c in got] == [t for t in expected if not t.isspace()]


def test_token_windows_hold_the_bound_when_re_encoded():
    text = "".join(corpus_texts().values()) or "Fallback text, plain. " * 1000
    assert all(count_tokens(c.text) <= 50 for c in fixed.chunk(text, chunk_size=50, chunk_overlap=10))


def test_naive_token_slicing_breaks_characters_and_ours_does_not():
    text = "Emoji 😀🎉👩‍👩‍👧 and 漢字かな交じり文 and 한국어 " * 30
    ids = get_encoding().encode_ordinary(text)
    naive = [get_encoding().decode(ids[i : i + 7]) for i in range(0, len(ids), 7)]
    assert any("\ufffd" in piece for piece in naive)  # the trap: cut bytes decode to U+FFFD
    ours = fixed.chunk(text, chunk_size=7)
    assert not any("\ufffd" in c.text for c in ours)
    assert all(text[c.start : c.end] == c.text for c in ours)


def test_a_character_longer_than_chunk_size_gets_its_own_chunk():
    got = fixed.chunk("😀", chunk_size=1)
    assert [c.text for c in got] == ["😀"]


def test_whitespace_only_windows_are_skipped():
    got = fixed.chunk("abc" + " " * 10 + "def", chunk_size=5, unit="characters")
    assert [c.text for c in got] == ["abc  ", "   de", "f"]


def test_callable_unit_windows_hold_the_bound():
    def words(text):
        return len(text.split())

    text = "one two three four five six seven eight nine ten"
    got = fixed.chunk(text, chunk_size=3, unit=words)
    assert all(words(c.text) <= 3 for c in got)
    assert " ".join(c.text.strip() for c in got) == text


def test_entry_point_matches_module():
    text = "Same text either way. " * 30
    assert chunk(text, "fixed", chunk_size=9) == fixed.chunk(text, chunk_size=9)
