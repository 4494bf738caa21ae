"""chunking.segment: the spans of lines and the trim that every splitter shares, as golden spans."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunking import segment
from chunking.segment import split_lines, split_paragraphs, split_sentences
from chunking.types import trim


@pytest.mark.parametrize(("text", "spans"), [
    ("", []),
    ("one\ntwo", [(0, 3), (4, 7)]),
    ("  one  \r\n\r\n two\r", [(2, 5), (12, 15)]),
    ("a\x0bb\x85c\u2028d\n", [(0, 7)]),  # only CR and LF break lines; other whitespace stays inside
    ("\t\n \n", []),
    ("x" + " " * 40 + "\ny", [(0, 1), (42, 43)]),
])
def test_lines_are_trimmed_spans_between_line_breaks(text, spans):
    assert split_lines(text) == spans


@pytest.mark.parametrize(("text", "start", "end", "span"), [
    ("  ab  ", 0, 6, (2, 4)),
    ("ab", 0, 2, (0, 2)),
    ("   ", 0, 3, (3, 3)),
    ("a" + " " * 100, 0, 101, (0, 1)),  # trailing whitespace longer than the short tail stripped first
    ("a b" + "\u3000" * 20 + "c  ", 1, 26, (2, 24)),
    ("xx  yy", 2, 4, (4, 4)),
])
def test_trim_drops_leading_and_trailing_whitespace_only(text, start, end, span):
    assert trim(text, start, end) == span


@pytest.mark.parametrize(("text", "spans"), [
    ("Wait... what?! Yes.", [(0, 14), (15, 19)]),  # lowercase after the ellipsis: one sentence
    ("v1.2.3 ships.\nNext", [(0, 13), (14, 18)]),  # dots inside a word start no candidate
    ("Done! 🎉 Next one.", [(0, 7), (8, 17)]),
    ("...", [(0, 3)]),
])
def test_sentences_after_marks_that_start_no_candidate(text, spans):
    assert split_sentences(text) == spans


LINE_TEXTS = st.lists(st.sampled_from(["a", "b c", " ", "\t", "\f", "\v", "\n", "\n\n", " \n", "\u3000", "\x1c",
                                       "\x85", "\u2028", "\r"]), max_size=40).map("".join)


@given(LINE_TEXTS)
@settings(max_examples=400, deadline=None, derandomize=True)
def test_paragraphs_and_lines_are_the_spans_between_the_general_patterns_matches(text):
    for case in (text, text.replace("\r", "")):  # the fast patterns are used when there is no "\r"
        general = segment._spans_between(case, [m.end() for m in segment.BLANK_LINE.finditer(case)])
        assert split_paragraphs(case) == general
        assert split_lines(case) == [m.span() for m in segment.LINE_PIECE.finditer(case)]


@pytest.mark.parametrize("text, paragraphs", [("a\r\n\r\nb", [(0, 1), (5, 6)]), ("a\r\nb\n\nc", [(0, 4), (6, 7)]),
                                              ("a\r\rb", [(0, 1), (3, 4)])])
def test_carriage_returns_still_break_lines(text, paragraphs):
    assert split_paragraphs(text) == paragraphs


SENTENCE_PIECES = st.lists(st.sampled_from([
    "Word", "lower", "Dr", "U.S", "e.g", "7", "。", "！", ".", "..", "…", "!?", "?", "‽", ")", "\"", "”", "»", "」",
    " ", "  ", "\t", "\n", "\r\n", "\r", "\n\n", " \n ", "\f", "- ", "1. ", "# ", "🎉", "\u3000", "を", "x.y",
]), max_size=60).map("".join)


def _full_scan(text: str) -> list[tuple[str, int, int]]:
    return [(m.lastgroup, m.start(m.lastgroup), m.end()) for m in segment._CANDIDATE.finditer(text) if m.lastgroup]


@given(SENTENCE_PIECES)
@settings(max_examples=500, deadline=None, derandomize=True)
def test_a_scan_from_a_synced_position_finds_the_full_scans_candidates_from_there(text):
    """`SentenceEnds` scans only near where a chunk stops; from the positions `_synced` picks, the
    candidates are exactly those of one scan of the whole text."""
    full = _full_scan(text)
    ends = segment.SentenceEnds(text)
    for q in range(len(text)):
        synced = ends._synced(q, 0)
        assert 0 <= synced <= q
        assert ends._candidates(synced, len(text)) == [c for c in full if c[2] > synced]
        for stop in range(synced, len(text) + 1, 7):
            assert ends._candidates(synced, stop) == [c for c in full if synced < c[2] <= stop]


@given(SENTENCE_PIECES, st.integers(1, 30))
@settings(max_examples=500, deadline=None, derandomize=True)
def test_sentence_ends_found_in_windows_are_the_cuts_of_split_sentences(text, size):
    """`last_within` and `next_cut` against every cut `split_sentences` makes, from every chunk start."""
    full = _full_scan(text)
    cuts = [cut for cut in (segment._confirmed(text, *c) for c in full) if cut is not None]
    ends = segment.SentenceEnds(text)
    ends.WINDOW = 4  # small windows, so both windows and the sync step are exercised
    starts = {0} | {trim(text, cut, len(text))[0] for cut in cuts}
    for first in sorted(s for s in starts if s < len(text)):
        later = [cut for cut in cuts if cut > first]
        assert ends.next_cut(first) == (later[0] if later else len(text))
        limit = first + size
        within = [(cut, trim(text, first, cut)[1]) for cut in later if trim(text, first, cut)[1] <= limit
                  and cut <= trim(text, limit, len(text))[0]]
        assert ends.last_within(first, limit) == (within[-1] if within else None)
    assert ends.confirmed <= len(full)
