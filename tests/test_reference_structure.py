"""Reference recursive, markdown and contextual chunkers: the contract, golden spans, the engine's spans."""

from __future__ import annotations

import doctest

import pytest
from hypothesis import given
from hypothesis import strategies as st

import chunking
from chunking import blocks, check_chunks, count_tokens
from chunking import markdown as engine_markdown
from chunking import recursive as engine_recursive
from chunking.reference import contextual, markdown, recursive
from chunking.segment import split_lines, split_sentences
from chunking.types import make_chunks
from tests.conftest import AWKWARD, MARKDOWN, corpus_texts

chunking.get_encoding()  # makes tiktoken.get_encoding("cl100k_base") work offline in this process

CORPUS = {name: text for name, text in corpus_texts().items() if name.endswith((".md", ".txt"))}
MARKDOWN_DOCS = sorted(name for name in CORPUS if name.endswith(".md"))
# The engine's sentence splitter, passed in as `levels`: the compact paragraph, line and word splitters stay,
# so the tests below also hold those equal to the engine's.
ENGINE_LEVELS = {"sentences": engine_recursive.LEVELS["sentences"]}
# Where the compact sentence splitter cuts and the engine's does not, at chunk_size=200: the word before the cut.
RECURSIVE_EXTRA_CUTS = {"coastal_sensor_report.md": ["vs."], "greenfield_data_policy.txt": ["(cf.", "e.g."]}
MARKDOWN_EXTRA_CUTS = {"coastal_sensor_report.md": ["vs."]}

WORDS = ["The", "cat", "sat", "on", "a", "mat.", "Dr.", "e.g.", "U.S.", "vs.", "today!", "why?", "so…", "(see", "this)",
         "x" * 60, "今天天气很好。", "日本語の文", "👩‍👩‍👧‍👦", "🎉", "ज्ञान", "café"]
BREAKS = ["", " ", " ", "\n", "\n\n", "\r\n", "\r", " \n \n", "\t"]
BLOCKS = ["# Title", "## Sub", "### Deep", "Setext\n===", "Two\n---", "```\n# not a heading\ncode line\n```",
          "| a | b |\n|---|---|\n| 1 | 2 |", "- item", "  - nested", "1. first", "> quote", "    indented code",
          "[ref]: http://example.com", "#"]
plain_texts = st.lists(st.tuples(st.sampled_from(WORDS), st.sampled_from(BREAKS)), max_size=80).map(
    lambda parts: "".join(word + gap for word, gap in parts)
)
markdown_texts = st.lists(
    st.one_of(st.sampled_from(WORDS).map(lambda w: w + " "), st.sampled_from(BREAKS),
              st.sampled_from(BLOCKS).map(lambda block: "\n" + block + "\n")),
    max_size=60,
).map("".join)
sizes = st.integers(min_value=1, max_value=60)


def assert_contract(text: str, spans: list[tuple[int, int]], size: int) -> None:
    """In order, non-empty, trimmed, nothing but whitespace lost, each within `size` tokens (or one code point)."""
    check_chunks(text, make_chunks(text, spans, strategy="reference"), chunk_size=size, length=count_tokens)
    assert all(text[start:end] == text[start:end].strip() for start, end in spans)


def engine_spans(text: str, strategy: str, **options) -> list[tuple[int, int]]:
    return [(c.start, c.end) for c in chunking.chunk(text, strategy, chunk_size=200, **options)]


def engine_markdown_chunks(text: str, size: int = 200) -> list[tuple[int, int, tuple[str, ...]]]:
    return [(c.start, c.end, c.metadata["heading_path"]) for c in chunking.chunk(text, "markdown", chunk_size=size)]


def last_word(text: str, end: int) -> str:
    return text[max(0, end - 40) : end].split()[-1]


def sentence_splitters_differ(module, piece: str) -> bool:
    """Does the module's compact sentence splitter cut `piece` unlike the engine's?"""
    return module._pieces(module.PATTERNS["sentences"], piece) != split_sentences(piece)


@pytest.mark.parametrize("module", [recursive, markdown, contextual], ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_the_docstring_examples_run(module):
    result = doctest.testmod(module)
    assert result.attempted and not result.failed


@pytest.mark.parametrize("level", ["paragraphs", "lines", "words"])
@pytest.mark.parametrize("module", [recursive, markdown], ids=lambda m: m.__name__.rsplit(".", 1)[-1])
@given(text=markdown_texts)
def test_the_compact_paragraph_line_and_word_splitters_cut_as_the_engines(module, level, text):
    assert module._pieces(module.PATTERNS[level], text) == engine_recursive.LEVELS[level](text)


# recursive ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [200, 40])
@pytest.mark.parametrize("name", sorted(CORPUS))
def test_recursive_obeys_the_contract_on_the_corpus(name, size):
    assert_contract(CORPUS[name], recursive.chunk(CORPUS[name], size), size)


@given(plain_texts, sizes, st.integers(min_value=0, max_value=59))
def test_recursive_obeys_the_contract_on_generated_text(text, size, overlap):
    assert_contract(text, recursive.chunk(text, size, chunk_overlap=overlap % size), size)


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_recursive_with_the_engines_sentence_splitter_gives_the_engines_spans(name):
    assert recursive.chunk(CORPUS[name], 200, levels=ENGINE_LEVELS) == engine_spans(CORPUS[name], "recursive")


@given(plain_texts, sizes)
def test_recursive_with_the_engines_sentence_splitter_gives_the_engines_spans_on_generated_text(text, size):
    engine = [(c.start, c.end) for c in chunking.chunk(text, "recursive", chunk_size=size)]
    assert recursive.chunk(text, size, levels=ENGINE_LEVELS) == engine


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_recursive_with_overlap_gives_the_engines_spans_on_the_corpus(name):
    ours = recursive.chunk(CORPUS[name], 200, chunk_overlap=30, levels=ENGINE_LEVELS)
    assert ours == engine_spans(CORPUS[name], "recursive", chunk_overlap=30)


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_recursive_compact_splitter_cuts_only_after_the_listed_abbreviations(name):
    text = CORPUS[name]
    ours, engine = recursive.chunk(text, 200), engine_spans(text, "recursive")
    extra_ends = sorted({end for _, end in ours} - {end for _, end in engine})
    assert [last_word(text, end) for end in extra_ends] == RECURSIVE_EXTRA_CUTS.get(name, [])


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_recursive_compact_splitter_changes_spans_only_inside_lines_it_splits_differently(name):
    text = CORPUS[name]
    lines = [(a, b) for a, b in split_lines(text) if sentence_splitters_differ(recursive, text[a:b])]
    for start, end in set(recursive.chunk(text, 200)) ^ set(engine_spans(text, "recursive")):
        assert any(a <= start and end <= b for a, b in lines), (start, end)


def test_recursive_cuts_paragraphs_then_sentences_then_words():
    assert recursive.chunk("One. Two.\n\nThree four five.", 3) == [(0, 4), (5, 9), (11, 21), (22, 27)]


def test_recursive_packs_pieces_of_different_paragraphs_together_when_they_fit():
    assert recursive.chunk("One. Two.\n\nThree four five.", 200) == [(0, 27)]


def test_recursive_a_word_longer_than_the_size_is_cut_into_token_windows():
    # cl100k: sup|erc|al|if|rag|il|istic
    assert recursive.chunk("supercalifragilistic", 2) == [(0, 6), (6, 10), (10, 15), (15, 20)]


def test_recursive_a_code_point_needing_more_tokens_than_the_size_stands_alone():
    # 👩 is three tokens, the zero-width joiner two: each code point is a chunk of its own
    assert recursive.chunk("👩\u200d👧", 1) == [(0, 1), (1, 2), (2, 3)]


def test_recursive_overlap_repeats_trailing_sentences():
    assert recursive.chunk("One. Two. Three. Four.", 4, chunk_overlap=2) == [(0, 9), (5, 16), (10, 22)]


def test_recursive_overlap_that_fits_is_carried_whatever_the_estimate_says():
    # "mat. a \n\n hello b" is 6 tokens; an estimate that adds the " \n\n" after "hello b" says 7
    text = "sat. \n\n mat. a \n\n hello b \n\n ?"
    assert recursive.chunk(text, 6, chunk_overlap=3, levels=ENGINE_LEVELS) == [(0, 14), (8, 25), (18, 30)]
    assert [(c.start, c.end) for c in chunking.chunk(text, "recursive", chunk_size=6, chunk_overlap=3)] == [
        (0, 14), (8, 25), (18, 30)]


def test_recursive_separators_name_the_levels_to_cut_at_in_order():
    assert recursive.chunk("One two. Three four.", 4) == [(0, 8), (9, 20)]
    assert recursive.chunk("One two. Three four.", 4, separators=("lines", "words")) == [(0, 14), (15, 20)]


@pytest.mark.parametrize("module", [recursive, markdown, contextual], ids=lambda m: m.__name__.rsplit(".", 1)[-1])
@pytest.mark.parametrize("name", ["empty", "space", "whitespace"])
def test_empty_or_whitespace_text_gives_no_chunks(module, name):
    assert module.chunk(AWKWARD[name], 10) == []


@pytest.mark.parametrize(
    ("args", "options", "error", "message"),
    [
        ((b"bytes", 10), {}, TypeError, "text"),
        (("text", 0), {}, ValueError, "chunk_size"),
        (("text", True), {}, ValueError, "chunk_size"),
        (("text", 10), {"chunk_overlap": 10}, ValueError, "chunk_overlap"),
        (("text", 10), {"separators": "lines"}, ValueError, "separators"),
        (("text", 10), {"separators": ("clauses",)}, ValueError, "separators"),
    ],
)
def test_recursive_bad_input_is_refused_by_name(args, options, error, message):
    with pytest.raises(error, match=message):
        recursive.chunk(*args, **options)


# markdown -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [200, 40])
@pytest.mark.parametrize("name", sorted(CORPUS))
def test_markdown_obeys_the_contract_on_the_corpus(name, size):
    assert_contract(CORPUS[name], [(s, e) for s, e, _ in markdown.chunk(CORPUS[name], size)], size)


@given(markdown_texts, sizes)
def test_markdown_obeys_the_contract_on_generated_text(text, size):
    assert_contract(text, [(s, e) for s, e, _ in markdown.chunk(text, size)], size)


@pytest.mark.parametrize("name", MARKDOWN_DOCS)
def test_markdown_with_the_engines_sentence_splitter_gives_the_engines_spans_and_paths(name):
    assert markdown.chunk(CORPUS[name], 200, levels=ENGINE_LEVELS) == engine_markdown_chunks(CORPUS[name])


@pytest.mark.parametrize("name", MARKDOWN_DOCS)
def test_markdown_compact_splitter_cuts_only_after_the_listed_abbreviations(name):
    text = CORPUS[name]
    ours, engine = markdown.chunk(text, 200), engine_markdown_chunks(text)
    extra_ends = sorted({end for _, end, _ in ours} - {end for _, end, _ in engine})
    assert [last_word(text, end) for end in extra_ends] == MARKDOWN_EXTRA_CUTS.get(name, [])


@pytest.mark.parametrize("name", MARKDOWN_DOCS)
def test_markdown_compact_splitter_changes_chunks_only_inside_paragraphs_it_splits_differently(name):
    text = CORPUS[name]
    blocks = [(a, b) for section in engine_markdown.sections(text) for (a, b), kind in section.blocks
              if kind == "paragraph_open" and sentence_splitters_differ(markdown, text[a:b])]
    for start, end, _ in set(markdown.chunk(text, 200)) ^ set(engine_markdown_chunks(text)):
        assert any(a <= start and end <= b for a, b in blocks), (start, end)


DOC = "# Guide\n\nIntro.\n\n## Install\n\n```bash\n# not a heading\npip install x\n```\n\nSetext\n------\n\nText.\n"


def test_markdown_sections_carry_their_heading_paths():
    assert markdown.chunk(DOC, 200) == [(0, 15, ("Guide",)), (17, 70, ("Guide", "Install")),
                                        (72, 92, ("Guide", "Setext"))]


def test_markdown_a_fence_too_long_alone_is_cut_at_line_ends():
    assert markdown.chunk(DOC, 8) == [(0, 15, ("Guide",)), (17, 27, ("Guide", "Install")),
                                      (29, 52, ("Guide", "Install")), (53, 70, ("Guide", "Install")),
                                      (72, 92, ("Guide", "Setext"))]


def test_markdown_a_heading_with_nothing_under_it_joins_the_next_section():
    assert markdown.chunk("# A\n\n## B\n\nText.", 200) == [(0, 16, ("A", "B"))]


def test_markdown_a_paragraph_too_long_alone_is_cut_at_sentences():
    assert markdown.chunk("First one here. Second one here. Third.", 5) == [(0, 15, ()), (16, 32, ()), (33, 39, ())]


def test_markdown_the_bundled_awkward_document_keeps_code_whole():
    chunks = markdown.chunk(MARKDOWN, 200)
    assert len(chunks) == 3 and chunks[1][2] == ("Guide", "Install", "Linux")
    assert "# not a heading" in MARKDOWN[chunks[1][0] : chunks[1][1]]


def test_markdown_a_word_too_long_is_cut_into_the_longest_code_point_runs_where_the_engine_cuts_tokens():
    # "a" * 24 is 3 tokens (8 a's each) but "a" * 21 is 4: code points stop at 20, token windows at 24
    assert markdown.chunk("a" * 40, 3) == [(0, 20, ()), (20, 40, ())]
    assert engine_markdown_chunks("a" * 40, 3) == [(0, 24, ()), (24, 40, ())]


def test_markdown_keeps_a_long_heading_whole_where_the_engine_cuts_it_at_200_characters():
    text = "# " + "word " * 60 + "\n\nText."
    ours, engine = markdown.chunk(text, 200), engine_markdown_chunks(text)
    assert ours[0][2] == (text[2:301].strip(),)
    assert engine[0][2] == (text[2:201].rstrip() + "…",)
    assert [c[:2] for c in ours] == [c[:2] for c in engine]


def test_markdown_a_document_the_engine_parses_in_parts_gets_the_engines_chunks():
    text = "\n\n".join(CORPUS[name] for name in MARKDOWN_DOCS * 2)
    line_starts = [0, *(i + 1 for i, ch in enumerate(text) if ch == "\n")]
    assert len(blocks._parts(text, line_starts)) > 1
    assert markdown.chunk(text, 200, levels=ENGINE_LEVELS) == engine_markdown_chunks(text)


@pytest.mark.parametrize(
    ("args", "error", "message"),
    [((None, 10), TypeError, "text"), (("text", 0), ValueError, "chunk_size"),
     (("text", 2.5), ValueError, "chunk_size")],
)
def test_markdown_bad_input_is_refused_by_name(args, error, message):
    with pytest.raises(error, match=message):
        markdown.chunk(*args)


# contextual -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_contextual_given_the_engines_recursive_spans_gives_the_engines_contexts(name):
    text = CORPUS[name]
    engine = chunking.chunk(text, "contextual", chunk_size=200)
    assert contextual.chunk(text, 200, spans=engine_spans(text, "recursive")) == [
        (c.start, c.end, c.context) for c in engine]


@pytest.mark.parametrize("name", MARKDOWN_DOCS)
def test_contextual_given_the_engines_markdown_spans_gives_the_engines_contexts(name):
    text = CORPUS[name]
    engine = chunking.chunk(text, "contextual", chunk_size=200, base="markdown")
    assert contextual.chunk(text, 200, spans=engine_spans(text, "markdown")) == [
        (c.start, c.end, c.context) for c in engine]


@given(markdown_texts, sizes)
def test_contextual_given_the_engines_spans_gives_the_engines_contexts_on_generated_text(text, size):
    engine = chunking.chunk(text, "contextual", chunk_size=size)
    assert contextual.chunk(text, size, spans=[(c.start, c.end) for c in engine]) == [
        (c.start, c.end, c.context) for c in engine]


@pytest.mark.parametrize("size", [200, 40])
@pytest.mark.parametrize("name", sorted(CORPUS))
def test_contextual_default_spans_obey_the_contract_on_the_corpus(name, size):
    assert_contract(CORPUS[name], [(s, e) for s, e, _ in contextual.chunk(CORPUS[name], size)], size)


@given(markdown_texts, sizes)
def test_contextual_default_spans_obey_the_contract_on_generated_text(text, size):
    assert_contract(text, [(s, e) for s, e, _ in contextual.chunk(text, size)], size)


def test_contextual_default_spans_pack_paragraphs_then_words():
    # "One two.\n\nThree." is 5 tokens, "Four five six seven." 5 too: it is cut at words
    assert [c[:2] for c in contextual.chunk("One two.\n\nThree.\n\nFour five six seven.", 4)] == [
        (0, 8), (10, 16), (18, 31), (32, 38)]


def test_contextual_context_is_the_title_and_the_heading_path():
    assert contextual.chunk(DOC, 200, spans=[(0, 15), (17, 70), (72, 92)]) == [
        (0, 15, "Guide"), (17, 70, "Guide > Install"), (72, 92, "Guide > Setext")]


def test_contextual_a_span_gets_the_path_of_the_section_holding_most_of_it():
    # 9..27 is "Intro.\n\n## Install": 8 characters under Guide, 10 under Install
    text = "# Guide\n\nIntro.\n\n## Install\n\nRun it.\n"
    assert contextual.chunk(text, 200, spans=[(9, 27), (9, 29)]) == [(9, 27, "Guide > Install"),
                                                                     (9, 29, "Guide > Install")]
    assert contextual.chunk(text, 200, spans=[(0, 27)]) == [(0, 27, "Guide")]


def test_contextual_a_tie_between_sections_goes_to_the_earlier_one():
    # 9..25 is "Intro.\n\n## Insta": 8 characters under each heading
    text = "# Guide\n\nIntro.\n\n## Install\n\nRun it.\n"
    assert contextual.chunk(text, 200, spans=[(9, 25), (9, 26)]) == [(9, 25, "Guide"), (9, 26, "Guide > Install")]


def test_contextual_the_title_is_added_above_a_path_that_does_not_start_with_it():
    text = "Preface line\n\n# Part one\n\nBody."
    assert contextual.chunk(text, 200, spans=[(0, 12), (14, 31)]) == [(0, 12, "Part one"), (14, 31, "Part one")]
    text = "# Title\n\nA.\n\n# Other\n\nB."
    assert contextual.chunk(text, 200, spans=[(9, 11), (13, 24)]) == [(9, 11, "Title"), (13, 24, "Title > Other")]


def test_contextual_without_headings_the_title_is_the_first_line_cut_to_100_characters():
    text = "\n  " + "long " * 30 + "\nSecond line."
    assert contextual.chunk(text, 200) == [(3, 166, "long " * 19 + "long…")]


def test_contextual_a_hash_line_inside_code_is_not_a_heading():
    text = "```\n# not a heading\n```\n\nAfter."
    assert contextual.chunk(text, 200, spans=[(0, 23), (25, 31)]) == [(0, 23, "```"), (25, 31, "```")]


@pytest.mark.parametrize(
    ("args", "options", "error", "message"),
    [
        ((["text"], 10), {}, TypeError, "text"),
        (("text", -1), {}, ValueError, "chunk_size"),
        (("text", 10), {"spans": [(0, 5)]}, ValueError, "spans"),
        (("text", 10), {"spans": [(2, 2)]}, ValueError, "spans"),
        (("text", 10), {"spans": [(0, 1, 2)]}, ValueError, "spans"),
        (("text", 10), {"spans": [3]}, ValueError, "spans"),
    ],
)
def test_contextual_bad_input_is_refused_by_name(args, options, error, message):
    with pytest.raises(error, match=message):
        contextual.chunk(*args, **options)
