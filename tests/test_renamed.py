"""One meaning per name: every renamed option still works under its old spelling, with a warning.

Until the next minor version an old name gives the same chunks as the new one and a
`DeprecationWarning` that names the new one; giving both is an error.
"""

from __future__ import annotations

import numpy as np
import pytest

from chunking import chunk, semantic
from chunking.embed import Embedder
from chunking.late import embed_late

TEXT = " ".join(f"Sentence {i} sits here." for i in range(30)) + " Cats purr. Cats nap. Stocks fell. Stocks rose."


def topic(texts):
    return np.array([[t.startswith("Cats"), t.startswith("Stocks"), 1.0] for t in texts], dtype=float)


EMBEDDER = Embedder(topic, cache=False)
CASES = {  # old spelling -> (strategy, old options, new options, the new name)
    "sliding window": ("sliding", {"window": "tokens", "overlap_fraction": 0.25}, {"over": "tokens"}, "over"),
    "sliding float chunk_overlap": ("sliding", {"chunk_overlap": 0.25}, {"overlap_fraction": 0.25}, "overlap_fraction"),
    "semantic breakpoint": ("semantic", {"breakpoint": "fixed", "embedder": EMBEDDER},
                            {"threshold_type": "fixed", "embedder": EMBEDDER}, "threshold_type"),
    "semantic window": ("semantic", {"window": 2, "embedder": EMBEDDER},
                        {"similarity_window": 2, "embedder": EMBEDDER}, "similarity_window"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_an_old_option_name_still_works_and_names_the_new_one(case):
    strategy, old, new, name = CASES[case]
    with pytest.warns(DeprecationWarning, match=name):
        by_old = chunk(TEXT, strategy, chunk_size=40, **old)
    new = {**{k: v for k, v in old.items() if k not in ("window", "breakpoint", "chunk_overlap")}, **new}
    assert [(c.start, c.end) for c in by_old] == [(c.start, c.end) for c in chunk(TEXT, strategy, chunk_size=40, **new)]


@pytest.mark.parametrize(("strategy", "options"), [
    ("semantic", {"breakpoint": "fixed", "threshold_type": "std"}),
    ("semantic", {"window": 2, "similarity_window": 3}),
    ("sliding", {"window": "tokens", "over": "tokens"}),
])
def test_an_old_and_a_new_name_together_are_an_error(strategy, options):
    with pytest.raises(TypeError, match="not both"):
        chunk(TEXT, strategy, chunk_size=40, embedder=EMBEDDER, **options) if strategy == "semantic" else chunk(
            TEXT, strategy, chunk_size=40, **options)


def test_sliding_takes_a_fraction_or_an_amount_in_the_unit_not_both():
    with pytest.raises(ValueError, match="overlap_fraction .* or chunk_overlap"):
        chunk(TEXT, "sliding", chunk_size=40, overlap_fraction=0.5, chunk_overlap=8)


def test_semantic_breakpoints_take_the_old_name_too():
    dist = np.array([0.1, 0.6, 0.2])
    with pytest.warns(DeprecationWarning, match="threshold_type"):
        old = semantic.breakpoints(dist, breakpoint="fixed")
    assert old[0].tolist() == semantic.breakpoints(dist, threshold_type="fixed")[0].tolist() == [1]


@pytest.mark.parametrize(("old", "new"), [({"window": 128}, {"window_pieces": 128}),
                                          ({"overlap": 16}, {"overlap_pieces": 16})])
def test_late_chunking_windows_are_in_word_pieces_by_name(old, new):
    text = "The mill stood by the quay. It ground corn for six centuries."
    chunks = chunk(text, "sentence", chunk_size=1, unit="sentences")
    embedder = Embedder(cache=False)
    with pytest.warns(DeprecationWarning, match=next(iter(new))):
        by_old = embed_late(text, chunks, embedder=embedder, **old)
    assert np.array_equal(by_old, embed_late(text, chunks, embedder=embedder, **new))


def test_a_float_chunk_overlap_of_zero_still_means_no_overlap():
    with pytest.warns(DeprecationWarning, match="overlap_fraction"):
        old = chunk(TEXT, "sliding", chunk_size=40, chunk_overlap=0.0)
    assert [(c.start, c.end) for c in old] == [(c.start, c.end) for c in chunk(TEXT, "sliding", chunk_size=40,
                                                                                overlap_fraction=0.0)]
