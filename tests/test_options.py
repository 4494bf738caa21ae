"""One name, one meaning: the retired spellings are refused by name, and a float chunk_overlap is a
fraction of chunk_size in every strategy (sliding included)."""

from __future__ import annotations

import numpy as np
import pytest

from chunking import STRATEGIES, chunk, late, semantic
from chunking.embed import Embedder
from chunking.options import resolve_sizes

TEXT = " ".join(f"Sentence {i} sits here." for i in range(30)) + " Cats purr. Cats nap. Stocks fell. Stocks rose."


def topic(texts):
    return np.array([[t.startswith("Cats"), t.startswith("Stocks"), 1.0] for t in texts], dtype=float)


EMBEDDER = Embedder(topic, cache=False)


@pytest.mark.parametrize(("strategy", "old"), [
    ("sliding", {"window": "tokens"}), ("sliding", {"over": "tokens"}),
    ("semantic", {"breakpoint": "fixed"}), ("semantic", {"window": 2}),
])
def test_a_retired_option_name_is_refused_by_name(strategy, old):
    with pytest.raises(TypeError, match=f"unknown option\\(s\\) \\[.{next(iter(old))}.\\]"):
        chunk(TEXT, strategy, chunk_size=40, embedder=EMBEDDER, **old) if strategy == "semantic" else chunk(
            TEXT, strategy, chunk_size=40, **old)


@pytest.mark.parametrize("old", [{"window": 128}, {"overlap": 16}])
def test_late_chunking_takes_its_windows_in_word_pieces_by_name_only(old):
    with pytest.raises(TypeError, match="unexpected keyword argument"):
        late.embed_late("One. Two.", chunk("One. Two.", "sentence"), embedder=EMBEDDER, **old)


def test_semantic_breakpoints_take_threshold_type_only():
    with pytest.raises(TypeError, match="unexpected keyword argument 'breakpoint'"):
        semantic.breakpoints(np.array([0.1, 0.6, 0.2]), breakpoint="fixed")


@pytest.mark.parametrize("strategy", sorted(set(STRATEGIES) - {"contextual"}))
def test_a_float_chunk_overlap_is_a_fraction_of_chunk_size_in_every_strategy(strategy):
    options = {"embedder": EMBEDDER} if strategy in ("semantic",) else {}
    extra = {"parent_size": 80} if strategy == "parent_child" else {}
    size, amount = resolve_sizes(40, 0.25)
    by_fraction = chunk(TEXT, strategy, chunk_size=40, chunk_overlap=0.25, **options, **extra)
    by_amount = chunk(TEXT, strategy, chunk_size=40, chunk_overlap=amount, **options, **extra)
    assert amount == 10 and [(c.start, c.end) for c in by_fraction] == [(c.start, c.end) for c in by_amount]


def test_sliding_takes_a_share_of_sentences_or_an_amount_in_the_unit_not_both():
    with pytest.raises(ValueError, match="overlap_fraction .* or chunk_overlap"):
        chunk(TEXT, "sliding", chunk_size=40, overlap_fraction=0.5, chunk_overlap=8)


def test_sliding_with_chunk_overlap_is_sentence_packing_with_overlap():
    got = chunk(TEXT, "sliding", chunk_size=40, chunk_overlap=0.25)
    expected = chunk(TEXT, "sentence", chunk_size=40, chunk_overlap=0.25)
    assert [(c.start, c.end) for c in got] == [(c.start, c.end) for c in expected]
