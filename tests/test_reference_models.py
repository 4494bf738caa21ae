"""The plain semantic, parent-child and late chunking in `chunking/reference/`: contract, golden spans, engine parity.

No model is loaded: sentences are embedded by a bag of words (one crc32-seeded vector per word), and late
chunking pools made-up token vectors. Every difference from the engine listed in a module docstring is
asserted here, on the bundled corpus and on small strings.
"""

from __future__ import annotations

import functools
import re
import zlib

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import chunking
from chunking import blocks, markdown
from chunking import late as engine_late
from chunking import parent_child as engine_parent_child
from chunking.embed import Embedder
from chunking.reference import late, parent_child, semantic
from chunking.segment import split_sentences
from chunking.types import make_chunks
from tests.conftest import corpus_texts

chunking.get_encoding()  # makes tiktoken.get_encoding("cl100k_base") work offline for the reference modules

CORPUS = {name: text for name, text in corpus_texts().items() if name.endswith((".md", ".txt"))}
DOCS = sorted(CORPUS)
MARKDOWN_DOCS = [name for name in DOCS if name.endswith(".md")]
PIECES = ["alpha", "Beta", "gamma.", "Delta!", "why?", "Dr.", "e.g.", "3.14", "—", "…", "\n", "\n\n", " \n\t\n",
          "猫が好きです。", "日本語の文", "😀", "👩‍👩‍👧‍👦", "x" * 80, "# Title", "## Sub", "```", "- item", "| a | b |",
          "Title\n=====", ">"]
TEXTS = st.tuples(st.lists(st.sampled_from(PIECES), max_size=40), st.sampled_from([" ", "", "\n"])).map(
    lambda parts: parts[1].join(parts[0]))


@functools.cache
def word_vector(word: str) -> np.ndarray:
    return np.random.default_rng(zlib.crc32(word.encode())).standard_normal(32)


def bag_of_words(texts: list[str]) -> np.ndarray:
    """Sum of the vectors of a text's words, plus a constant: deterministic, never a zero vector."""
    return np.array([sum((word_vector(w) for w in re.findall(r"\w+", t.lower())), np.full(32, 0.5)) for t in texts])


ENGINE_EMBEDDER = Embedder(bag_of_words, cache=False)  # the reference gets its `.embed`: the very same vectors


def scripted(vectors: dict[str, list[float]]):
    """An embedder giving each sentence the vector of the first key it starts with."""
    return lambda texts: np.array([next(v for k, v in vectors.items() if t.startswith(k)) for t in texts], dtype=float)


def refuse(texts):
    raise AssertionError(f"embed should not be called, got {texts!r}")


def assert_contract(text: str, spans: list[tuple[int, int]], size: int) -> None:
    """In order, non-empty, trimmed, nothing lost, within `size` tokens but a lone code point."""
    chunks = make_chunks(text, spans, strategy="reference")
    chunking.check_chunks(text, chunks, chunk_size=size, length=chunking.count_tokens)
    assert all(c.text == c.text.strip() for c in chunks)


# --- semantic ----------------------------------------------------------------------------------------------


@functools.cache
def semantic_pair(name: str, size: int) -> tuple[list[chunking.Chunk], list[tuple[int, int]]]:
    text = CORPUS[name]
    engine = chunking.chunk(text, "semantic", chunk_size=size, embedder=ENGINE_EMBEDDER)
    return engine, semantic.chunk(text, size, ENGINE_EMBEDDER.embed, split=split_sentences)


def test_semantic_cuts_where_the_topic_changes():
    topic = scripted({"Cats": [1, 0], "Stocks": [0, 1]})
    assert semantic.chunk("Cats purr. Cats nap. Stocks fell. Stocks rose.", 200, topic) == [(0, 20), (21, 46)]


@pytest.mark.parametrize(("percentile", "spans"), [
    (0.0, [(0, 7), (8, 11), (12, 15)]),  # every boundary above the smallest distance
    (50.0, [(0, 7), (8, 15)]),  # only the boundary above the median
    (100.0, [(0, 15)]),  # nothing is above the largest distance
])
def test_semantic_the_percentile_sets_how_many_boundaries_cut(percentile, spans):
    embed = scripted({"Aa": [1, 0], "Bb": [1, 0.1], "Cc": [0, 1], "Dd": [0.3, 1]})  # distances 0.005, 0.90, 0.04
    assert semantic.chunk("Aa. Bb. Cc. Dd.", 200, embed, threshold_percentile=percentile) == spans


def test_semantic_a_single_sentence_is_not_embedded():
    assert semantic.chunk("  Only one sentence here  ", 200, refuse) == [(2, 24)]


@pytest.mark.parametrize("text", ["", " ", "\n\n\t "])
def test_semantic_empty_or_whitespace_text_gives_no_span(text):
    assert semantic.chunk(text, 200, refuse) == []


def test_semantic_a_sentence_longer_than_the_size_is_cut_at_words():
    assert semantic.chunk("one two three four five six.", 2, refuse) == [(0, 7), (8, 18), (19, 23), (24, 28)]


def test_semantic_the_parts_of_a_cut_sentence_are_not_packed_with_the_next_sentence():
    text = "one two three four. Go."  # "four. Go." would fit in 4 tokens, but "four." ends a cut sentence
    assert semantic.chunk(text, 4, scripted({"one": [1, 0], "Go": [1, 0]})) == [(0, 13), (14, 19), (20, 23)]


LONG_WORDS = ["x" * 3000, "😀" * 60, "ज्ञान" * 30, "👩‍👩‍👧‍👦" * 8, "https://example.com/" + "a1b2c3" * 60,
              "お茶とお菓子は、似たものどうしではなく、" * 10]


@pytest.mark.parametrize("size", [1, 3, 40])
@pytest.mark.parametrize("word", LONG_WORDS, ids=lambda w: w[:8])
def test_semantic_a_word_longer_than_the_size_is_cut_into_the_engines_token_windows(word, size):
    engine = [(c.start, c.end) for c in chunking.chunk(word, "sentence", chunk_size=size)]
    assert semantic.chunk(word, size, refuse) == engine


def test_semantic_own_splitter_cuts_at_end_marks_cjk_marks_and_blank_lines():
    text = "Hi there! How are you? 「はい。」次です。\n\nNext line"
    assert semantic.split_sentences(text) == [(0, 9), (10, 22), (23, 28), (28, 32), (34, 43)]


def test_semantic_own_splitter_differs_from_the_engines_after_an_abbreviation():
    text = "Dr. Smith arrived. He sat."  # the documented difference: ours does not know abbreviations
    assert semantic.split_sentences(text) == [(0, 3), (4, 18), (19, 26)]
    assert split_sentences(text) == [(0, 18), (19, 26)]


@pytest.mark.parametrize("size", [200, 40])
@pytest.mark.parametrize("name", DOCS)
def test_semantic_spans_equal_the_engines_given_its_splitter(name, size):
    engine, reference = semantic_pair(name, size)
    assert any(c.metadata["end_reason"] == "breakpoint" for c in engine)  # the comparison covers breakpoints
    assert reference == [(c.start, c.end) for c in engine]


@pytest.mark.parametrize("size", [200, 40])
@pytest.mark.parametrize("name", DOCS)
def test_semantic_own_splitter_keeps_the_contract_on_the_corpus(name, size):
    assert_contract(CORPUS[name], semantic.chunk(CORPUS[name], size, bag_of_words), size)


@given(text=TEXTS, size=st.integers(1, 40), percentile=st.floats(0, 100))
def test_semantic_keeps_the_contract_on_generated_text(text, size, percentile):
    assert_contract(text, semantic.chunk(text, size, bag_of_words, threshold_percentile=percentile), size)


@pytest.mark.parametrize(("args", "error", "name"), [
    ((b"bytes", 200), TypeError, "text"),
    (("Text.", "200"), TypeError, "chunk_size"),
    (("Text.", 0), ValueError, "chunk_size"),
    (("Text.", True), TypeError, "chunk_size"),
])
def test_semantic_bad_input_is_named(args, error, name):
    with pytest.raises(error, match=name):
        semantic.chunk(*args, bag_of_words)


@pytest.mark.parametrize("percentile", [-1, 100.5, float("nan"), "95"])
def test_semantic_a_percentile_outside_0_to_100_is_refused(percentile):
    with pytest.raises(ValueError, match="threshold_percentile"):
        semantic.chunk("One. Two.", 200, bag_of_words, threshold_percentile=percentile)


def test_semantic_embed_must_return_one_vector_per_sentence():
    with pytest.raises(ValueError, match=r"embed must return an array of shape \(2, dim\)"):
        semantic.chunk("One. Two.", 200, lambda texts: np.ones((1, 4)))


# --- parent-child ------------------------------------------------------------------------------------------


def engine_parent_child_spans(text: str, size: int, parent_size: int):
    """The engine's parents, and its children as (start, end, parent index): the reference's shape."""
    children = chunking.chunk(text, "parent_child", chunk_size=size, parent_size=parent_size)
    parents = [(p.start, p.end) for p in engine_parent_child.parents(text, children)]
    return parents, [(c.start, c.end, c.metadata["parent_index"]) for c in children]


@functools.cache
def parent_child_pair(name: str, size: int, parent_size: int):
    """The engine's and the reference's (parents, children) of one bundled document."""
    text = CORPUS[name]
    engine = engine_parent_child_spans(text, size, parent_size)
    return engine, parent_child.chunk(text, size, parent_size=parent_size, split=split_sentences)


def differently_cut_sections(text: str, parent_size: int) -> list[tuple[int, int]]:
    """Sections holding a block the two versions cut differently (docstring, difference b): a block over
    `parent_size` that spans several lines (not code or a table), or code or a table with a line over it."""
    found = []
    for section in markdown.sections(text):
        for (start, end), kind in section.blocks:
            block = text[start:end]
            verbatim = kind in blocks.VERBATIM_BLOCKS
            if chunking.count_tokens(block) > parent_size and (
                any(chunking.count_tokens(line) > parent_size for line in block.splitlines()) if verbatim
                else "\n" in block
            ):
                found.append((section.blocks[0][0][0], section.blocks[-1][0][1]))
                break
    return found


def test_parent_child_children_carry_their_parents_index():
    assert parent_child.chunk("# A\n\nOne. Two.\n\n# B\n\nThree.", 4, parent_size=8) == (
        [(0, 14), (16, 27)], [(0, 3, 0), (5, 14, 0), (16, 19, 1), (21, 27, 1)])


def test_parent_child_a_heading_with_only_a_heading_under_it_joins_the_next_section():
    assert parent_child.chunk("# Guide\n\n## Install\n\nRun it.", 20, parent_size=20) == ([(0, 28)], [(0, 28, 0)])


def test_parent_child_sections_ignore_hashes_in_code_and_see_setext_headings():
    text = "# Guide\n\n## Install\n\nRun it.\n\n```\n# no\n```\n\nTitle\n=====\n\nBody."
    assert parent_child.sections(text) == [[(0, 7), (9, 19), (21, 28), (30, 42)], [(44, 55), (57, 62)]]


@pytest.mark.parametrize("text", ["", " ", "\n\n\t "])
def test_parent_child_empty_or_whitespace_text_gives_nothing(text):
    assert parent_child.chunk(text, 128, parent_size=512) == ([], [])


@pytest.mark.parametrize("sizes", [(128, 512), (200, 800)])
@pytest.mark.parametrize("name", MARKDOWN_DOCS)
def test_parent_child_spans_equal_the_engines_on_the_bundled_markdown(name, sizes):
    engine, reference = parent_child_pair(name, *sizes)
    assert reference == engine


@pytest.mark.parametrize("sizes", [(128, 512), (200, 800), (40, 100)])
@pytest.mark.parametrize("name", DOCS)
def test_parent_child_spans_differ_from_the_engines_only_in_sections_with_a_block_cut_differently(name, sizes):
    (engine_parents, engine_children), (parents, children) = parent_child_pair(name, *sizes)
    flagged = differently_cut_sections(CORPUS[name], sizes[1])
    if not flagged:
        assert (parents, children) == (engine_parents, engine_children)
        return
    inside = lambda span: any(a <= span[0] and span[1] <= b for a, b in flagged)  # noqa: E731
    overlaps = lambda span: any(span[0] < b and a < span[1] for a, b in flagged)  # noqa: E731
    assert all(inside(s) for s in {c[:2] for c in children} ^ {c[:2] for c in engine_children})
    assert all(overlaps(s) for s in set(parents) ^ set(engine_parents))


def test_parent_child_difference_b_shows_in_the_transcripts_long_paragraphs_of_several_lines():
    name = "platform_sync_transcript.txt"  # so the test above is not vacuous on the corpus
    (engine_parents, engine_children), (parents, children) = parent_child_pair(name, 128, 512)
    assert len(differently_cut_sections(CORPUS[name], 512)) == 2
    assert parents != engine_parents and children != engine_children


def test_parent_child_a_paragraph_of_several_lines_is_cut_at_lines_where_the_engine_cuts_at_sentences():
    text = "One two three four. Five six\nseven eight.\n\nNine."
    assert parent_child.chunk(text, 6, parent_size=8, split=split_sentences) == (
        [(0, 28), (29, 48)], [(0, 19, 0), (20, 28, 0), (29, 41, 1), (43, 48, 1)])
    assert engine_parent_child_spans(text, 6, 8) == ([(0, 19), (20, 48)], [(0, 19, 0), (20, 41, 1), (43, 48, 1)])


def test_parent_child_a_list_with_blank_lines_is_cut_at_lines_where_the_engine_cuts_at_blank_lines_first():
    text = "- one two three\n  four five.\n\n- six"
    assert parent_child.chunk(text, 6, parent_size=6, split=split_sentences) == (
        [(0, 15), (18, 35)], [(0, 15, 0), (18, 35, 1)])
    assert engine_parent_child_spans(text, 6, 6) == ([(0, 15), (18, 35)], [(0, 15, 0), (18, 28, 1), (30, 35, 1)])


def test_parent_child_a_code_line_longer_than_a_parent_is_cut_at_words_where_the_engine_cuts_token_windows():
    text = "```\nprint(1); print(2); print(3); print(4)\n```"
    assert parent_child.chunk(text, 6, parent_size=6, split=split_sentences) == (
        [(0, 13), (14, 23), (24, 33), (34, 46)],
        [(0, 3, 0), (4, 13, 0), (14, 23, 1), (24, 33, 2), (34, 42, 3), (43, 46, 3)])
    assert engine_parent_child_spans(text, 6, 6) == (  # the engine's windows are trimmed too
        [(0, 3), (4, 20), (20, 33), (34, 46)], [(0, 3, 0), (4, 20, 1), (20, 33, 2), (34, 42, 3), (43, 46, 3)])


def assert_parent_child_contract(text: str, parents, children, size: int, parent_size: int) -> None:
    assert_contract(text, parents, parent_size)
    assert_contract(text, [(a, b) for a, b, _ in children], size)
    assert all(parents[i][0] <= a and b <= parents[i][1] for a, b, i in children)  # each child inside its parent
    assert sorted({i for _, _, i in children}) == list(range(len(parents)))  # every parent has a child


@pytest.mark.parametrize("sizes", [(128, 512), (40, 100)])
@pytest.mark.parametrize("name", DOCS)
def test_parent_child_own_splitter_keeps_the_contract_on_the_corpus(name, sizes):
    parents, children = parent_child.chunk(CORPUS[name], sizes[0], parent_size=sizes[1])
    assert_parent_child_contract(CORPUS[name], parents, children, *sizes)


@given(text=TEXTS, size=st.integers(1, 30), extra=st.integers(0, 60))
def test_parent_child_keeps_the_contract_on_generated_text(text, size, extra):
    parents, children = parent_child.chunk(text, size, parent_size=size + extra)
    assert_parent_child_contract(text, parents, children, size, size + extra)


@pytest.mark.parametrize(("args", "options", "error", "name"), [
    ((None, 128), {}, TypeError, "text"),
    (("Text.", 0), {}, ValueError, "chunk_size"),
    (("Text.", 128.0), {}, TypeError, "chunk_size"),
    (("Text.", 128), {"parent_size": "800"}, TypeError, "parent_size"),
    (("Text.", 128), {"parent_size": 100}, ValueError, "parent_size must be >= chunk_size=128, got 100"),
])
def test_parent_child_bad_input_is_named(args, options, error, name):
    with pytest.raises(error, match=name):
        parent_child.chunk(*args, **options)


# --- late --------------------------------------------------------------------------------------------------


def made_up_tokens(text: str, dim: int = 16) -> tuple[np.ndarray, np.ndarray]:
    """Word tokens (punctuation belongs to none) with seeded random vectors, as a model would give them."""
    spans = np.array([m.span() for m in re.finditer(r"\w+", text)], dtype=np.int64).reshape(-1, 2)
    return np.random.default_rng(7).standard_normal((len(spans), dim)).astype(np.float32), spans


def test_late_pool_averages_the_overlapping_tokens_and_normalises():
    vectors = np.array([[1.0, 0.0], [0.0, 1.0], [3.0, 4.0]])
    spans = np.array([(0, 3), (4, 7), (8, 11)])
    pooled = late.pool(vectors, spans, [(0, 7), (5, 6), (3, 4), (8, 11)])
    assert np.allclose(pooled, [[0.5**0.5, 0.5**0.5], [0, 1], [0, 0], [0.6, 0.8]])  # (3, 4) holds no token: zeros


def test_late_a_token_cut_by_a_span_boundary_counts_for_both_spans():
    vectors = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 3.0]])
    pooled = late.pool(vectors, np.array([(0, 3), (4, 7), (8, 11)]), [(0, 5), (5, 11)])
    assert np.allclose(pooled, [[0.5**0.5, 0.5**0.5], [0, 1]])


@pytest.mark.parametrize("name", DOCS)
def test_late_pool_equals_the_engines_pool_on_made_up_token_vectors(name):
    text = CORPUS[name]
    vectors, token_spans = made_up_tokens(text)
    spans = [(c.start, c.end) for c in chunking.chunk(text, "sentence", chunk_size=40)]
    spans += [(s + 1, e - 1) for s, e in spans[:5]]  # cutting tokens at both ends
    spans += [m.span() for m in re.finditer(r"[^\w\s]+", text)][:5]  # punctuation only: no token
    engine, unseen = engine_late.pool(vectors, token_spans, make_chunks(text, spans, strategy="reference"))
    pooled = late.pool(vectors, token_spans, spans)
    assert unseen and unseen == [i for i, v in enumerate(pooled) if not v.any()]  # engine: embeds those alone
    assert np.allclose(pooled, engine, atol=1e-6)


@pytest.mark.parametrize("size", [200, 40])
@pytest.mark.parametrize("name", DOCS)
def test_late_chunk_spans_equal_the_engines_sentence_spans_given_its_splitter(name, size):
    vectors, token_spans = made_up_tokens(CORPUS[name])
    spans, _ = late.chunk(CORPUS[name], size, vectors, token_spans, split=split_sentences)
    assert spans == [(c.start, c.end) for c in chunking.chunk(CORPUS[name], "sentence", chunk_size=size)]


@pytest.mark.parametrize("size", [200, 40])
@pytest.mark.parametrize("name", DOCS)
def test_late_chunk_returns_one_pooled_vector_per_span_within_the_contract(name, size):
    vectors, token_spans = made_up_tokens(CORPUS[name])
    spans, pooled = late.chunk(CORPUS[name], size, vectors, token_spans)
    assert_contract(CORPUS[name], spans, size)
    assert pooled.shape == (len(spans), 16) and np.array_equal(pooled, late.pool(vectors, token_spans, spans))


@given(text=TEXTS, size=st.integers(1, 40))
def test_late_chunk_keeps_the_contract_on_generated_text(text, size):
    vectors, token_spans = made_up_tokens(text, dim=3)
    spans, pooled = late.chunk(text, size, vectors, token_spans)
    assert_contract(text, spans, size)
    assert pooled.shape == (len(spans), 3)


def test_late_chunk_of_empty_text_is_empty():
    spans, pooled = late.chunk("", 200, np.zeros((0, 4)), np.zeros((0, 2)))
    assert spans == [] and pooled.shape == (0, 4)


@pytest.mark.parametrize(("args", "error", "name"), [
    ((1, 200, np.ones((1, 2)), [(0, 1)]), TypeError, "text"),
    (("Text.", 0, np.ones((1, 2)), [(0, 4)]), ValueError, "chunk_size"),
    (("Text.", 200, np.ones((2, 2)), [(0, 4)]), ValueError, "token_vectors"),
    (("Text.", 200, np.ones(2), [(0, 4)]), ValueError, "token_vectors"),
])
def test_late_bad_input_is_named(args, error, name):
    with pytest.raises(error, match=name):
        late.chunk(*args)
