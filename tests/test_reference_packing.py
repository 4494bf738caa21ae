"""The plain versions of fixed, sentence, paragraph and sliding: the contract, golden spans, the
engine's spans on the corpus, and every documented difference from the engine, asserted."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import chunking
from chunking import packing
from chunking import sliding as engine_sliding
from chunking.checks import check_chunks
from chunking.reference import fixed, paragraph, sentence, sliding
from chunking.segment import split_paragraphs
from chunking.segment import split_sentences as engine_sentences
from chunking.sizers import Tokens
from chunking.tokens import count_tokens
from chunking.types import make_chunks, shift
from tests.conftest import corpus_texts

chunking.get_encoding()  # makes tiktoken.get_encoding("cl100k_base") work offline in this process

CORPUS = {name: text for name, text in corpus_texts().items() if name.endswith((".md", ".txt"))}
DOCS = sorted(CORPUS)
REFERENCES = [fixed, sentence, paragraph, sliding]
# Where the compact splitter of reference/sentence.py cuts exactly as chunking/segment.py does.
SAME_SENTENCES = {"lumendb_release_notes.md"}
# Where reference/paragraph.py with its own splitter differs from the engine at chunk_size=200:
# the documents with a paragraph over 200 tokens whose sentences the two splitters cut differently.
PARAGRAPH_DIFFERS = {"kyoto_tea_guide_ja.md"}

# Configurations: (name, chunk function taking (text, size), length unit, trimmed spans?)
CONFIGS = {
    "fixed-tokens": (lambda t, n: fixed.chunk(t, n), count_tokens, False),
    "fixed-characters": (lambda t, n: fixed.chunk(t, n, unit="characters"), len, False),
    "sentence": (lambda t, n: sentence.chunk(t, n), count_tokens, True),
    "paragraph": (lambda t, n: paragraph.chunk(t, n), count_tokens, True),
    "sliding": (lambda t, n: sliding.chunk(t, n), count_tokens, True),
}
PARTS = [
    "word", "Hello", "world", "Dr.", "e.g.", "U.S.", "J.", "3.14", ".", "!", "?", "...", ",", "(", ")",
    " ", " ", " ", "\n", "\n\n", "\r\n", "\r", " \t\n", "\n \n", "。", "！", "今天天气很好", "日本語の文",
    "🎉", "👩‍👩‍👧‍👦", "🇫🇷", "ज्ञान", "Ünïcödé", "x" * 40, "<|endoftext|>",
]
TEXTS = st.lists(st.sampled_from(PARTS), max_size=60).map("".join)


def spans_of(chunks) -> list[tuple[int, int]]:
    return [(c.start, c.end) for c in chunks]


def assert_contract(text: str, spans: list[tuple[int, int]], size: int | None, length, trimmed: bool) -> None:
    """The contract: `check_chunks` (offsets, order, no whitespace-only chunk, nothing lost, the
    bound but for a single code point), trimmed spans where the strategy trims, [] for blank text."""
    check_chunks(text, make_chunks(text, spans, strategy="reference"), chunk_size=size, length=length)
    if trimmed:
        assert all(text[s:e] == text[s:e].strip() for s, e in spans)
    if not text.strip():
        assert spans == []


def engine_packing(text: str, pieces, size: int, cut) -> list[tuple[int, int]]:
    """The engine's packer (chunking/packing.py) over given pieces, cutting oversize ones with `cut`."""
    return packing.pack(pieces, Tokens().bind(text), size, 0, cut)


def engine_word_cut(text: str, size: int):
    """How the engine cuts a sentence too long: words, then fixed token windows."""
    return packing.fallback(Tokens().bind(text), size, 0, ("words",))


def engine_slide_on_exact_pieces(text: str, size: int, fraction: float, split_sentences) -> list[tuple[int, int]]:
    """The engine's `slide`, given sentences judged too long by their own token count (not an estimate)."""
    bound = Tokens().bind(text)
    cut = packing.fallback(bound, size, 0, ("words",))
    pieces = []
    for start, end in split_sentences(text):
        pieces += [(start, end)] if count_tokens(text[start:end]) <= size else cut((start, end))
    return engine_sliding.slide(pieces, bound, size, fraction, cut)


# ---------------------------------------------------------------- every reference: standalone, checked input


@pytest.mark.parametrize("module", REFERENCES, ids=lambda m: m.__name__)
def test_the_file_imports_only_the_standard_library_and_tiktoken(module):
    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    names = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    names |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert names <= set(sys.stdlib_module_names) | {"tiktoken"}


@pytest.mark.parametrize("module", REFERENCES, ids=lambda m: m.__name__)
@pytest.mark.parametrize("text", ["", " \n\t\r\n "])
def test_blank_text_gives_no_chunks(module, text):
    assert module.chunk(text, 10) == []


@pytest.mark.parametrize("module", REFERENCES, ids=lambda m: m.__name__)
def test_text_that_is_not_a_str_is_a_type_error(module):
    with pytest.raises(TypeError, match="text must be str, got bytes"):
        module.chunk(b"bytes", 10)


@pytest.mark.parametrize("module", REFERENCES, ids=lambda m: m.__name__)
@pytest.mark.parametrize(("size", "error", "message"), [
    (0, ValueError, "chunk_size must be > 0, got 0"),
    (-3, ValueError, "chunk_size must be > 0, got -3"),
    (2.5, TypeError, "chunk_size must be an int, got 2.5"),
    (True, TypeError, "chunk_size must be an int, got True"),
])
def test_a_bad_chunk_size_is_refused_naming_it(module, size, error, message):
    with pytest.raises(error, match=message):
        module.chunk("Some text.", size)


@pytest.mark.parametrize("module", [fixed, sentence, paragraph], ids=lambda m: m.__name__)
@pytest.mark.parametrize(("overlap", "error", "message"), [
    (10, ValueError, "chunk_overlap must be >= 0 and < chunk_size=10, got 10"),
    (-1, ValueError, "got -1"),
    (0.5, TypeError, "chunk_overlap must be an int, got 0.5"),
])
def test_a_bad_token_overlap_is_refused_naming_it(module, overlap, error, message):
    with pytest.raises(error, match=message):
        module.chunk("Some text.", 10, chunk_overlap=overlap)


# ---------------------------------------------------------------- the contract, on the corpus and generated text


@pytest.mark.parametrize("config", sorted(CONFIGS))
@pytest.mark.parametrize("size", [200, 40])
@pytest.mark.parametrize("name", DOCS)
def test_the_contract_holds_on_the_corpus(config, size, name):
    function, length, trimmed = CONFIGS[config]
    assert_contract(CORPUS[name], function(CORPUS[name], size), size, length, trimmed)


@pytest.mark.parametrize("config", sorted(CONFIGS))
@given(text=TEXTS, size=st.integers(1, 40))
def test_the_contract_holds_on_generated_text(config, text, size):
    function, length, trimmed = CONFIGS[config]
    assert_contract(text, function(text, size), size, length, trimmed)


@given(text=TEXTS, size=st.integers(2, 30), data=st.data())
def test_the_contract_holds_with_token_overlap(text, size, data):
    overlap = data.draw(st.integers(0, size - 1))
    assert_contract(text, fixed.chunk(text, size, chunk_overlap=overlap), size, count_tokens, False)
    assert_contract(text, sentence.chunk(text, size, chunk_overlap=overlap), size, count_tokens, True)
    assert_contract(text, paragraph.chunk(text, size, chunk_overlap=overlap), size, count_tokens, True)


@given(text=TEXTS, size=st.integers(1, 30), fraction=st.sampled_from([0.0, 0.25, 0.5, 0.9]))
def test_the_contract_holds_for_any_sliding_fraction(text, size, fraction):
    assert_contract(text, sliding.chunk(text, size, overlap_fraction=fraction), size, count_tokens, True)


@given(text=TEXTS)
def test_uncapped_paragraphs_keep_the_contract_but_the_bound(text):
    assert_contract(text, paragraph.chunk(text, None), None, None, True)


# ---------------------------------------------------------------- fixed


def test_fixed_character_windows_overlap_by_the_given_characters():
    assert fixed.chunk("abcdefghij", 4, chunk_overlap=1, unit="characters") == [(0, 4), (3, 7), (6, 10)]


def test_fixed_windows_are_untrimmed_but_whitespace_only_ones_are_dropped():
    assert fixed.chunk("ab  \n\n  cd", 2, unit="characters") == [(0, 2), (8, 10)]


def test_fixed_token_windows_are_whole_tokens():
    assert fixed.chunk("Hello world", 1) == [(0, 5), (5, 11)]


def test_fixed_never_cuts_a_character_where_slicing_ids_gives_replacement_characters():
    text = "🦙🦙"  # each llama is 3 tokens: a 4-token window ends inside the second one
    enc = chunking.get_encoding()
    assert "\ufffd" in enc.decode(enc.encode_ordinary(text)[:4])
    assert fixed.chunk(text, 4) == [(0, 1), (1, 2)]


def test_fixed_a_character_needing_more_tokens_than_the_size_is_a_chunk_of_its_own():
    assert fixed.chunk("a🦙b", 2) == [(0, 1), (1, 2), (2, 3)]


def test_fixed_rejects_an_unknown_unit():
    with pytest.raises(ValueError, match="unit must be one of .* got 'words'"):
        fixed.chunk("text", 5, unit="words")


@pytest.mark.parametrize(("unit", "overlap"), [("tokens", 0), ("characters", 0), ("tokens", 20), ("characters", 50)])
@pytest.mark.parametrize("name", DOCS)
def test_fixed_gives_the_engines_spans_on_the_corpus(name, unit, overlap):
    text = CORPUS[name]
    engine = chunking.chunk(text, "fixed", chunk_size=200, chunk_overlap=overlap, unit=unit)
    assert fixed.chunk(text, 200, chunk_overlap=overlap, unit=unit) == spans_of(engine)


def test_documented_difference_fixed_past_the_engines_cut_in_a_long_seamless_stretch():
    text = "7" * 70_000  # no space before a letter anywhere: the engine encodes it in two parts cut at 35,000
    ours, engine = fixed.chunk(text, 200), spans_of(chunking.chunk(text, "fixed", chunk_size=200))
    before = [span for span in ours if span[1] <= 35_000]
    assert engine[: len(before)] == before
    assert engine[len(before)] == (34_800, 35_399) and ours[len(before)] == (34_800, 35_400)


@pytest.mark.parametrize("size", [1, 3])
@pytest.mark.parametrize("text", ["ज्ञान ज्ञान", "Family 👩‍👩‍👧‍👦 and 🇫🇷, x" + "🎉" * 5])
def test_fixed_gives_the_engines_spans_where_tokens_re_encode_longer_alone(text, size):
    # "ान" is one token in context and two alone: the window shrinks, then is cut at code points
    assert fixed.chunk(text, size) == spans_of(chunking.chunk(text, "fixed", chunk_size=size))


# ---------------------------------------------------------------- sentence


def test_sentence_splitter_keeps_abbreviations_and_initials_inside():
    text = "Dr. Smith met Mr. Jones in the U.S. last May. Then J. Doe left! Why?"
    assert sentence.split_sentences(text) == [(0, 45), (46, 63), (64, 68)]


def test_sentence_splitter_cuts_at_blank_lines_and_cjk_marks():
    assert sentence.split_sentences("One.\n\nTwo\r\n\r\nThree。四！") == [(0, 4), (6, 9), (13, 19), (19, 21)]


def test_sentence_packs_whole_sentences_up_to_the_size():
    assert sentence.chunk("One. Two. Three.", 4) == [(0, 9), (10, 16)]


def test_sentence_overlap_carries_the_trailing_sentence_that_fits():
    assert sentence.chunk("One. Two. Three.", 4, chunk_overlap=2) == [(0, 9), (5, 16)]


def test_a_sentence_longer_than_the_size_is_cut_at_words():
    text = "Short. A considerably longer sentence follows here."
    assert sentence.chunk(text, 5) == [(0, 6), (7, 45), (46, 51)]


def test_a_word_longer_than_the_size_is_cut_into_token_windows():
    text = "Go. supercalifragilisticexpialidocious"
    assert [text[s:e] for s, e in sentence.chunk(text, 3)] == ["Go.", "supercal", "ifragil", "isticexpial", "idocious"]


def test_token_windows_of_a_long_word_overlap_by_the_overlap():
    text = "Go. supercalifragilisticexpialidocious"
    assert sentence.chunk(text, 3, chunk_overlap=1) == [(0, 3), (4, 12), (10, 17), (14, 24), (19, 30), (27, 38)]


@pytest.mark.parametrize("overlap", [0, 30])
@pytest.mark.parametrize("name", DOCS)
def test_sentence_with_the_engines_splitter_gives_the_engines_spans(name, overlap):
    text = CORPUS[name]
    engine = chunking.chunk(text, "sentence", chunk_size=200, chunk_overlap=overlap)
    assert sentence.chunk(text, 200, chunk_overlap=overlap, split=engine_sentences) == spans_of(engine)


@pytest.mark.parametrize("name", DOCS)
def test_sentence_with_the_engines_splitter_gives_the_engines_spans_at_a_small_size_with_overlap(name):
    text = CORPUS[name]
    engine = chunking.chunk(text, "sentence", chunk_size=40, chunk_overlap=10)
    assert sentence.chunk(text, 40, chunk_overlap=10, split=engine_sentences) == spans_of(engine)


@pytest.mark.parametrize("name", DOCS)
def test_the_compact_splitter_differs_from_the_engines_on_the_listed_documents(name):
    text = CORPUS[name]
    assert (sentence.split_sentences(text) == engine_sentences(text)) == (name in SAME_SENTENCES)


@pytest.mark.parametrize("name", DOCS)
def test_sentence_with_its_own_splitter_is_the_engines_packing_of_its_own_sentences(name):
    # so the one difference from the engine is the sentence splitter
    text = CORPUS[name]
    expected = engine_packing(text, sentence.split_sentences(text), 200, engine_word_cut(text, 200))
    assert sentence.chunk(text, 200) == expected
    if name in SAME_SENTENCES:
        assert expected == spans_of(chunking.chunk(text, "sentence", chunk_size=200))


def test_an_overlap_piece_that_fits_is_carried_by_both():
    text = "Millbridge (pop. approx. 41,000) discharges treated wastewater at"
    engine = spans_of(chunking.chunk(text, "sentence", chunk_size=5, chunk_overlap=2))
    ours = sentence.chunk(text, 5, chunk_overlap=2, split=engine_sentences)
    assert [text[s:e] for s, e in ours][:2] == ["Millbridge (pop.", "(pop. approx."] and ours == engine
    assert count_tokens("(pop. approx.") <= 5


def test_documented_difference_a_word_too_long_alone_is_cut_though_it_fits_after_the_carried_one():
    text = "whether directly or indirectly, the data"
    engine = spans_of(chunking.chunk(text, "sentence", chunk_size=3, chunk_overlap=1))
    assert [text[s:e] for s, e in engine] == ["whether directly or", "or indirectly,", "the data"]
    ours = sentence.chunk(text, 3, chunk_overlap=1, split=engine_sentences)
    assert [text[s:e] for s, e in ours] == ["whether directly or", "indirectly", "ly,", "the data"]
    assert count_tokens("indirectly,") > 3 >= count_tokens("or indirectly,")


# ---------------------------------------------------------------- paragraph


def test_uncapped_paragraphs_are_one_chunk_each_and_whitespace_lines_are_blank():
    assert paragraph.chunk("One.\n\nTwo.\n \nThree.", None) == [(0, 4), (6, 10), (13, 19)]


def test_crlf_is_one_line_break_not_a_blank_line():
    assert paragraph.chunk("A.\r\nB.\r\n\r\nC.", None) == [(0, 6), (10, 12)]


def test_paragraphs_are_packed_up_to_the_size():
    text = "One.\n\nTwo.\n \nThree."
    assert paragraph.chunk(text, 200) == [(0, 19)]
    assert paragraph.chunk(text, 4) == [(0, 10), (13, 19)]


def test_a_paragraph_longer_than_the_size_is_cut_into_sentences():
    text = "Intro.\n\nOne two three. Four five six. Seven.\n\nEnd."
    assert paragraph.chunk(text, 9) == [(0, 6), (8, 37), (38, 44), (46, 50)]


def test_uncapped_paragraphs_refuse_an_overlap():
    with pytest.raises(ValueError, match="chunk_overlap must be 0 when chunk_size is None, got 5"):
        paragraph.chunk("One.\n\nTwo.", None, chunk_overlap=5)


@pytest.mark.parametrize("name", DOCS)
def test_uncapped_paragraphs_are_the_engines(name):
    text = CORPUS[name]
    assert paragraph.chunk(text, None) == spans_of(chunking.chunk(text, "paragraph", chunk_size=None))


@pytest.mark.parametrize(("size", "overlap"), [(200, 0), (200, 30), (40, 10)])
@pytest.mark.parametrize("name", DOCS)
def test_paragraph_with_the_engines_splitter_gives_the_engines_spans(name, size, overlap):
    text = CORPUS[name]
    engine = chunking.chunk(text, "paragraph", chunk_size=size, chunk_overlap=overlap)
    assert paragraph.chunk(text, size, chunk_overlap=overlap, sentences=engine_sentences) == spans_of(engine)


@pytest.mark.parametrize("name", DOCS)
def test_paragraph_with_its_own_splitter_differs_only_on_the_listed_documents(name):
    text = CORPUS[name]
    engine = spans_of(chunking.chunk(text, "paragraph", chunk_size=200))
    assert (paragraph.chunk(text, 200) == engine) == (name not in PARAGRAPH_DIFFERS)


@pytest.mark.parametrize("name", DOCS)
def test_paragraph_with_its_own_splitter_is_the_engines_packing_with_its_own_sentences(name):
    text = CORPUS[name]

    def cut(p):  # an oversize paragraph: the compact splitter's sentences, packed by the engine
        pieces = shift(paragraph.split_sentences(text[p[0] : p[1]]), p[0])
        return engine_packing(text, pieces, 200, engine_word_cut(text, 200))

    assert paragraph.chunk(text, 200) == engine_packing(text, split_paragraphs(text), 200, cut)


# ---------------------------------------------------------------- sliding


def test_sliding_windows_advance_by_the_non_overlapping_share():
    text = "One. Two. Three. Four."
    assert sliding.chunk(text, 4, overlap_fraction=0.5) == [(0, 9), (5, 16), (10, 22)]
    assert sliding.chunk(text, 6, overlap_fraction=0.25) == [(0, 16), (10, 22)]


def test_an_integer_division_fraction_as_in_the_csharp_article_never_overlaps():
    text = "One. Two. Three. Four."
    overlap, size = 2, 4
    assert sliding.chunk(text, size, overlap_fraction=overlap / size) == [(0, 9), (5, 16), (10, 22)]
    assert sliding.chunk(text, size, overlap_fraction=float(overlap // size)) == [(0, 9), (10, 22)]


def test_a_sentence_longer_than_the_window_is_cut_at_words_first():
    text = "Short. A considerably longer sentence follows here."
    assert sliding.chunk(text, 5, overlap_fraction=0.5) == [(0, 6), (7, 45), (46, 51)]


def test_a_window_that_would_end_before_the_previous_one_is_skipped():
    text = "Dr. Amara Okafor, Coastal Observation Laboratory, 14 Harbour Rd."
    # the window after ", Coastal Observation" (3 tokens) would be "Coastal" alone ("Coastal Observation" is 4)
    assert count_tokens(", Coastal Observation") == 3 < count_tokens("Coastal Observation")
    spans = [(0, 3), (4, 9), (10, 16), (16, 37), (38, 49), (50, 60), (61, 64)]
    assert sliding.chunk(text, 3, overlap_fraction=0.75) == spans


def test_sliding_needs_a_fraction():
    with pytest.raises(TypeError, match="overlap_fraction must be a float fraction of the window, got 2"):
        sliding.chunk("One. Two.", 10, overlap_fraction=2)
    with pytest.raises(ValueError, match=r"overlap_fraction must be in \[0, 1\), got 1.0"):
        sliding.chunk("One. Two.", 10, overlap_fraction=1.0)


@pytest.mark.parametrize("name", DOCS)
def test_sliding_with_the_engines_splitter_gives_the_engines_spans(name):
    text = CORPUS[name]
    engine = chunking.chunk(text, "sliding", chunk_size=200, overlap_fraction=0.25)
    assert sliding.chunk(text, 200, overlap_fraction=0.25, split=engine_sentences) == spans_of(engine)


@pytest.mark.parametrize("split", [sliding.split_sentences, engine_sentences], ids=["own-splitter", "engine-splitter"])
@pytest.mark.parametrize(("size", "fraction"), [(200, 0.25), (7, 0.5)])
@pytest.mark.parametrize("name", DOCS)
def test_sliding_is_the_engines_slide_over_sentences_judged_by_their_own_count(name, size, fraction, split):
    # the documented difference: the engine judges a sentence too long by an estimate; with that
    # one step done exactly, its windows are these, whichever sentence splitter
    text = CORPUS[name]
    expected = engine_slide_on_exact_pieces(text, size, fraction, split)
    assert sliding.chunk(text, size, overlap_fraction=fraction, split=split) == expected


def test_documented_difference_the_engine_keeps_a_sentence_its_estimate_says_fits():
    text = "안녕하세요. 반갑습니다! 오늘은"
    assert count_tokens("반갑습니다!") > 5  # alone; its tokens in the whole text's encoding are 5
    engine = spans_of(chunking.chunk(text, "sliding", chunk_size=5, overlap_fraction=0.25))
    ours = sliding.chunk(text, 5, overlap_fraction=0.25, split=engine_sentences)
    assert engine != ours
    assert ours == engine_slide_on_exact_pieces(text, 5, 0.25, engine_sentences)
