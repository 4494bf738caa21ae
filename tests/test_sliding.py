"""Sliding windows: the integer-division bug of "Text Chunking Strategies for RAG" shown, and fixed."""

from __future__ import annotations

import pytest

from chunking import count_tokens, sliding

TEXT = " ".join(f"Sentence {i} sits here." for i in range(12))


def seed_000_next_start(window_start, window_end, overlap, max_chunk_size):
    """Seed 000's slide step, in its integer arithmetic: overlap / max size truncates to 0."""
    return window_start + max(1, (window_end - window_start) * (1 - overlap // max_chunk_size))


def test_seed_000_step_never_overlaps():
    # A 4-sentence window with Overlap=50, MaxChunkSize=512: it jumps the whole window.
    assert seed_000_next_start(0, 4, 50, 512) == 4


def test_fraction_overlap_makes_windows_share_sentences():
    got = sliding.chunk(TEXT, chunk_size=4, overlap_fraction=0.25, unit="sentences")
    assert [(c.start, c.end) for c in got][:3] == [(0, 87), (66, 153), (132, 219)]
    assert all(a.end > b.start for a, b in zip(got, got[1:]))


def test_half_overlap_golden():
    got = sliding.chunk("One. Two. Three. Four.", chunk_size=2, overlap_fraction=0.5, unit="sentences")
    assert [c.text for c in got] == ["One. Two.", "Two. Three.", "Three. Four."]


@pytest.mark.parametrize("unit", ["characters", "tokens", len])
def test_windows_are_measured_in_the_unit_asked_for(unit):
    got = sliding.chunk(TEXT, chunk_size=50, overlap_fraction=0.25, unit=unit)
    length = {"characters": len, "tokens": count_tokens}.get(unit, unit)
    assert len(got) > 1 and max(length(c.text) for c in got) <= 50


def test_int_overlap_is_absolute_like_sentence_packing():
    from chunking import sentence

    got = sliding.chunk(TEXT, chunk_size=30, chunk_overlap=8)
    expected = sentence.chunk(TEXT, chunk_size=30, chunk_overlap=8)
    assert [(c.start, c.end) for c in got] == [(c.start, c.end) for c in expected]
