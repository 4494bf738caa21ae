"""Order and the size bound for every unit: units that do not grow with the text, tiny sizes, sentences.

A unit callable need not be monotonic (WordPiece reads any word over 100 characters as one `[UNK]`;
BPE counts depend on context), token windows can only cut where the whole text's encoding has a
boundary, and a run of sentences can split differently once cut out. Each of these used to give
chunks out of order or over the bound; here they are held to the shared invariants.
"""

from __future__ import annotations

import pytest

from chunking import check_chunks, chunk, count_tokens
from chunking.packing import first_fitting, last_fitting
from chunking.segment import split_sentences

STRUCTURAL = ["fixed", "sentence", "paragraph", "markdown", "sliding", "recursive"]


def unk(text: str) -> int:
    """WordPiece-like: a word over 100 characters is a single [UNK]; any other word, a piece per character."""
    return sum(1 if len(word) > 100 else len(word) for word in text.split())


def starts_cheap(text: str) -> int:
    """Short text that starts with "Start" counts as one; everything else a unit per word."""
    return 1 if text.startswith("Start") and len(text) < 40 else len(text.split())


UNK_TEXT = " ".join(["a" * 150, "bb", "ccc", "d" * 120, "eeee"][i * 7 % 5] for i in range(300))
CHEAP_TEXT = " ".join(f"Start {i}. Ab b. Cd d. Ef f. Gh h." for i in range(40))


@pytest.mark.parametrize("strategy", STRUCTURAL)
@pytest.mark.parametrize(("unit", "text"), [(unk, UNK_TEXT), (starts_cheap, CHEAP_TEXT)], ids=["unk", "cheap-start"])
@pytest.mark.parametrize("size", [3, 5, 30])
def test_units_that_do_not_grow_with_the_text_keep_order_and_bound(strategy, unit, text, size):
    options = {"fixed": {"chunk_overlap": 0.5}, "sliding": {"overlap_fraction": 0.5}}.get(strategy, {})
    chunks = chunk(text, strategy, chunk_size=size, unit=unit, **options)
    check_chunks(text, chunks, chunk_size=size, length=unit)


def test_sliding_windows_stay_in_order_when_the_overlap_measures_longer():
    # "Start 0. … Gh h." counts 1, but from "Cd d." on it counts a unit per word: the next window
    # used to end before the one it overlapped
    chunks = chunk(CHEAP_TEXT, "sliding", chunk_size=3, unit=starts_cheap, overlap_fraction=0.5)
    assert [c.end for c in chunks] == sorted(c.end for c in chunks)
    check_chunks(CHEAP_TEXT, chunks, chunk_size=3, length=starts_cheap)


@pytest.mark.parametrize("strategy", STRUCTURAL)
@pytest.mark.parametrize("text", ["ज्ञान", "a 漢", "ज्ञान ज्ञान. ज्ञान", "👩‍👩‍👧‍👦 x", "x" * 50 + "ज्ञान" * 20])
@pytest.mark.parametrize("size", [1, 2, 3])
def test_tiny_sizes_cut_at_code_points_to_keep_the_bound(strategy, text, size):
    chunks = chunk(text, strategy, chunk_size=size)
    check_chunks(text, chunks, chunk_size=size, length=count_tokens)  # one code point alone may exceed it


@pytest.mark.parametrize(("text", "size", "expected"), [
    ("ज्ञान", 1, ["ज", "्", "ञ", "ा", "न"]),  # "ान" is one token in context, two alone
    ("a 漢", 2, ["a", "漢"]),  # " 漢" is two tokens in context, three alone
])
def test_token_windows_golden_at_tiny_sizes(text, size, expected):
    assert [c.text for c in chunk(text, "fixed", chunk_size=size)] == expected


def test_only_a_single_code_point_may_exceed_the_bound():
    chunks = chunk("👩👩", "fixed", chunk_size=1)
    assert [c.text for c in chunks] == ["👩", "👩"] and count_tokens("👩") > 1
    check_chunks("👩👩", chunks, chunk_size=1, length=count_tokens)


TITLE_TRAP = ("word " * 60 + "ends here. Short title line\nNext Line starts here. ") * 20


@pytest.mark.parametrize(("strategy", "options", "size"), [
    *[("sentence", {}, size) for size in (1, 2, 3)],
    *[("sliding", {"overlap_fraction": 0.5}, size) for size in (1, 2, 3)],
    *[("sentence", {"chunk_overlap": 1}, size) for size in (2, 3)],
])
def test_sentence_counts_are_measured_on_the_chunk_itself(strategy, options, size):
    """In context the long line is no title; cut out, "Short title line" is one and splits off."""
    chunks = chunk(TITLE_TRAP, strategy, chunk_size=size, unit="sentences", **options)
    check_chunks(TITLE_TRAP, chunks, chunk_size=size, length=lambda t: len(split_sentences(t)))


@pytest.mark.parametrize("answer", range(0, 40))
def test_galloping_finds_the_largest_that_fits(answer):
    probes = []

    def fits(x):
        probes.append(x)
        return x <= answer

    assert last_fitting(fits, 0, 39) == answer
    assert len(probes) <= 2 * 6 + 1  # doubling then halving: O(log n) probes
    assert last_fitting(fits, 0, 39, down=True) == answer


@pytest.mark.parametrize("answer", range(1, 40))
def test_galloping_finds_the_smallest_that_fits(answer):
    assert first_fitting(lambda x: x >= answer, 0, 39) == answer


def test_galloping_down_says_when_nothing_fits():
    assert last_fitting(lambda x: False, 5, 9, down=True) == 4
    assert first_fitting(lambda x: False, 0, 9) == 9


def test_a_value_seen_to_fit_is_returned_when_fits_is_not_monotone():
    holes = {3, 4, 7}
    found = last_fitting(lambda x: x not in holes, 0, 9)
    assert found not in holes
