"""Linear work on pathological input, counted (never timed) for every loader and strategy.

The families are benchmarks/pathological.py's: runs of one punctuation mark, unclosed constructs,
deep nesting, one character repeated, markup storms. That file times them at 10k, 100k and 1M
characters (docs/benchmarks.md); here each is built at `N` characters and the work of one call is
counted: characters the tokenizer or a length callable reads, characters the HTML tokenizer
scans, calls a parser gets. A quadratic path shows up as a count that grows with `N`.
"""

from __future__ import annotations

import pytest

from chunking import chunk
from chunking.blocks import parse
from chunking.documents import document_title
from chunking.html_text import Scanner, html_to_text
from tests.conftest import load_benchmark

pathological = load_benchmark("pathological")
FAMILIES = sorted(pathological.FAMILIES)
READERS = ("html_to_text", "document_title", "docx_to_text", "strip_reasoning", "load_document, html")  # not strategies
STRATEGIES = [name for name in pathological.targets() if name not in READERS]
N = 30_000
TOKENIZER_READS = 10  # per input character, every strategy (parent_child chunks the text twice: up to 8.1 seen)
UNIT_READS = 30  # per input character, for a callable unit (windows are found by doubling then halving)
SCANS = 3  # per input character, the HTML tokenizer


def text(family: str, n: int = N) -> str:
    return pathological.FAMILIES[family][1](n)


@pytest.fixture(scope="module")
def calls():
    return pathological.targets()


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_the_tokenizer_reads_each_character_a_bounded_number_of_times(family, strategy, calls, characters_encoded):
    source = text(family)
    calls[strategy](source)
    assert characters_encoded[0] <= TOKENIZER_READS * len(source)


@pytest.mark.parametrize("family", ["one-letter", "cjk", "tiny-sentences", "abbreviations", "md-headings", "spaces",
                                    "dash-lines", "html-nested-lists"])
@pytest.mark.parametrize("strategy", ["fixed", "sentence", "paragraph", "markdown", "sliding", "recursive"])
def test_a_callable_unit_reads_each_character_a_bounded_number_of_times(family, strategy):
    read = [0]

    def unit(piece: str) -> int:  # about a token per 4 characters, as a model's tokenizer would give
        read[0] += len(piece)
        return len(piece.split()) + len(piece) // 4

    options = {"fixed": {"chunk_overlap": 0.25}, "sliding": {"overlap_fraction": 0.25}}.get(strategy, {})
    source = text(family, 20_000)
    chunk(source, strategy, chunk_size=50, unit=unit, **options)
    assert read[0] <= UNIT_READS * len(source)


@pytest.mark.parametrize("family", FAMILIES)
def test_the_html_tokenizer_scans_each_character_a_bounded_number_of_times(family):
    scanner = Scanner(text(family))
    for _ in scanner.events():
        pass
    assert scanner.scanned <= SCANS * N + 16


@pytest.mark.parametrize("html", ["<a " * 10_000, "</" * 10_000, "<!--" * 10_000, "<![CDATA[" * 10_000,
                                  "<?" * 10_000, '<a b="' * 10_000, "<a b=c " * 10_000, "<a b='>' " * 10_000,
                                  "<script>" * 10_000, "<title>" + "</titl" * 10_000, "&#" + "9" * 10_000])
def test_malformed_markup_is_scanned_in_linear_work(html):
    scanner = Scanner(html)
    events = list(scanner.events())
    assert scanner.scanned <= SCANS * len(html) + 16
    assert len(events) <= len(html)


def test_nested_lists_indent_a_bounded_amount():
    source = "<ul><li>x" * 5_000
    assert len(html_to_text(source)[0]) <= 30 * len("x") * 5_000


def test_a_numeric_reference_beyond_unicode_becomes_a_replacement_character():
    assert html_to_text("<p>a&#" + "1" * 5_000 + ";b &#x110000; &#0000000065;</p>")[0] == "a\ufffdb \ufffd A"


def test_titles_and_markdown_skip_inline_parsing(monkeypatch):
    """Inline parsing (links, emphasis) is where markdown-it's time grows faster than the text."""
    tokens = parse("# Title with *emphasis* and [a link](x)\n\n![" * 1_000)
    assert all(not t.children for t in tokens)
    assert document_title("![" * 20_000 + "\n\n# Found") == "Found"


@pytest.mark.parametrize("family", ["md-long-headings", "md-headings"])
def test_heading_paths_are_short_whatever_the_headings(family):
    chunks = chunk(text(family), "markdown", chunk_size=64)
    assert max(len(c.context) for c in chunks) <= 6 * 210


@pytest.mark.parametrize("family", FAMILIES)
def test_the_sentence_scan_takes_one_match_per_end_mark_at_most(family):
    from chunking.segment import _CANDIDATE, _MARKS

    source = text(family)
    matches = sum(1 for _ in _CANDIDATE.finditer(source))  # each match is one step of split_sentences' loop
    assert matches <= sum(source.count(mark) for mark in _MARKS) + 2


@pytest.mark.parametrize("separators", [("words",), ("sentences",), ("lines",)])
def test_packing_grows_each_chunk_in_one_bisection_not_a_step_per_piece(separators, monkeypatch):
    import chunking.packing as packing

    searched = [0]

    def bisect_right(*args):
        searched[0] += 1
        return real(*args)

    real = packing.bisect_right
    monkeypatch.setattr(packing, "bisect_right", bisect_right)
    source = {"words": "a " * 50_000, "sentences": "A b. " * 20_000, "lines": "a b\n" * 25_000}[separators[0]]
    chunks = chunk(source, "recursive", chunk_size=1000, unit="characters", separators=separators)
    per_chunk = 2 if separators == ("sentences",) else 1  # `_pack_sentences`: the candidate ends from and to
    assert searched[0] <= per_chunk * len(chunks) + 1


class _Searched(str):
    """Text that counts the searches a seam scan makes in it."""

    searches = 0

    def find(self, *args):
        _Searched.searches += 1
        return super().find(*args)

    def rfind(self, *args):
        _Searched.searches += 1
        return super().rfind(*args)


@pytest.mark.parametrize("source", ["\n " * 20_000, "\n\n\t" * 10_000, " 1" * 20_000, "\n 1 2\n" * 5_000,
                                    "x" * 40_000])
def test_a_token_count_searches_for_seams_a_bounded_number_of_times(source):
    from chunking.counting import SEARCH_LIMIT, TokenCounter

    text = _Searched(source)
    counter = TokenCounter(text)
    _Searched.searches = 0
    spans = [(s, s + n) for s in range(1, len(text) - 5000, 997) for n in (3, 500, 4000)]
    for start, end in spans:
        counter.count(start, end)
    assert _Searched.searches <= 4 * (SEARCH_LIMIT + 1) * len(spans)


@pytest.mark.parametrize("source", ["a. " * 10_000, "A. " * 10_000, "Hi. " * 10_000, "x" * 30_000, "Dr. " * 10_000,
                                    "A b c d e f g h i j k l m n o p q r s t u v w x y z. " * 600, "!" * 30_000,
                                    "Hi.\nthere " * 3_000, "Go. " * 50 + "x" * 30_000 + ". Done.",
                                    ("word " * 300 + "end. ") * 40, ". " * 15_000, "\n A\n" * 6_000,
                                    ("Go. " * 50 + "x" * 3_000) * 10, ("x" * 900 + ". ") * 30])
@pytest.mark.parametrize("size", [5, 100, 1000, 5000])
def test_sentence_ends_are_confirmed_once_and_scanned_a_bounded_number_of_times(source, size, monkeypatch):
    import chunking.packing as packing
    from chunking.segment import _CANDIDATE, SentenceEnds

    made: list[SentenceEnds] = []
    looked = [0]

    class Counted(SentenceEnds):
        def __init__(self, text):
            super().__init__(text)
            made.append(self)

        def _cut(self, *candidate):
            looked[0] += 1
            return super()._cut(*candidate)

    monkeypatch.setattr(packing, "SentenceEnds", Counted)
    chunks = chunk(source, "recursive", chunk_size=size, unit="characters", separators=("sentences", "words"))
    candidates = sum(1 for m in made for found in _CANDIDATE.finditer(m.text) if found.lastgroup)
    assert sum(m.confirmed for m in made) <= candidates  # each candidate asked of the rules once at most
    assert looked[0] <= 3 * candidates + len(chunks)
    # A chunk scans the window before its stop, then perhaps the rest of itself, each scan running on to
    # the next end mark; a stretch without marks is scanned by the few chunks that stop before it.
    assert sum(m.scanned for m in made) <= 4 * sum(len(m.text) for m in made)


def test_long_paragraphs_scan_and_confirm_few_of_their_candidate_sentence_ends(monkeypatch):
    import chunking.packing as packing
    from chunking.segment import _CANDIDATE, SentenceEnds

    made: list[SentenceEnds] = []
    monkeypatch.setattr(packing, "SentenceEnds", lambda text: made.append(SentenceEnds(text)) or made[-1])
    source = " ".join(f"Sentence number {i} says a little more than the one before it." for i in range(3_000))
    chunk(source, "recursive", chunk_size=1000, unit="characters")
    candidates = sum(1 for m in made for found in _CANDIDATE.finditer(m.text) if found.lastgroup)
    assert sum(m.confirmed for m in made) <= candidates // 4
    assert sum(m.scanned for m in made) <= sum(len(m.text) for m in made) // 2  # a window before each stop
