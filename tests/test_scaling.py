"""Linear work: the tokenizer reads each character of the input a bounded number of times.

Speed itself is measured in benchmarks/; this counts work, so it cannot flake on a busy machine.
"""

from __future__ import annotations

import pytest

from chunking import STRATEGIES, chunk
from tests.conftest import corpus_texts

MAX_READS_PER_CHARACTER = 6
TWO_LEVELS = {"parent_child": 2}  # chunks the text twice: parents, then children inside them


@pytest.mark.parametrize("strategy", sorted(STRATEGIES))
def test_tokenizer_work_is_linear_in_the_input(strategy, characters_encoded):
    text = "\n\n".join(t for name, t in corpus_texts().items() if name.endswith((".md", ".txt")))
    big = text * 4
    options = {"chunk_size": 256} if strategy != "sliding" else {"chunk_size": 256, "overlap_fraction": 0.25}
    chunk(big, strategy, **options)
    assert characters_encoded[0] <= TWO_LEVELS.get(strategy, 1) * MAX_READS_PER_CHARACTER * len(big)
