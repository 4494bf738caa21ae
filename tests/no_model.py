"""A pytest plugin for `make check`: a test that would load an embedding model is skipped instead.

`make check` is the quick loop (lint, doctests, the core's and the strategies' tests): no model, no
notebooks. Loaded with `-p tests.no_model`, this turns `chunking.embed.load_model` (every model the
package loads goes through it) into a skip, so a test that needs the real model waits for `make test`
while the rest of its file runs. Tests with their own toy embedders are unaffected.
"""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _no_model(monkeypatch):
    from chunking import embed

    def refuse(*args, **kwargs):
        pytest.skip("loads the embedding model: `make test` runs it")

    monkeypatch.setattr(embed, "load_model", refuse)

