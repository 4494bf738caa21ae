"""Contextual chunking: exact spans of the base strategy, a context beside them, from every provider."""

from __future__ import annotations

import socket

import numpy as np
import pytest

from chunking import STRATEGIES, check_chunks, chunk, contextual
from chunking.embed import Embedder
from chunking.tokens import count_tokens
from tests.conftest import AWKWARD, MARKDOWN, corpus_texts

DOC = """# LumenDB Operator Guide

LumenDB is a vector database for small teams.

## 4. Installing on Linux

Install the package with your distribution's manager.

### 4.2 Configuration

Edit /etc/lumendb/lumend.toml and restart the daemon.

The daemon listens on port 7471.
"""
BASES = sorted(set(STRATEGIES) - {"contextual"})
FAQ = corpus_texts()["harbor_cycles_faq.md"]


class ScriptedLLM:
    """Stands in for a chat model (the real client is tested against a real server in test_llm.py)."""

    def contextualize(self, document: str, chunk: str) -> str:
        return f"  This chunk starts with {chunk.split()[0]!r}.\n"


def contextual_chunks(text: str, provider: str, base: str = "recursive", **options):
    llm = ScriptedLLM() if provider == "llm" else None
    return chunk(text, "contextual", provider=provider, base=base, llm=llm, doc_id="doc", **options)


@pytest.mark.parametrize("base", BASES)
@pytest.mark.parametrize("provider", contextual.PROVIDERS)
def test_offsets_are_exact_for_every_provider_and_base(provider, base):
    for text in (MARKDOWN, FAQ):
        got = contextual_chunks(text, provider, base, chunk_size=60)
        check_chunks(text, got)
        assert got and all(c.strategy == "contextual" and c.context for c in got)


@pytest.mark.parametrize("base", BASES)
@pytest.mark.parametrize("provider", contextual.PROVIDERS)
def test_context_never_enters_the_text(provider, base):
    got = contextual_chunks(FAQ, provider, base, chunk_size=60)
    plain = chunk(FAQ, base, chunk_size=60, doc_id="doc")
    assert [(c.start, c.end, c.text) for c in got] == [(c.start, c.end, c.text) for c in plain]


@pytest.mark.parametrize("provider", contextual.PROVIDERS)
def test_embed_text_is_context_blank_line_text(provider):
    for c in contextual_chunks(DOC, provider, chunk_size=16):
        assert c.embed_text == c.context + "\n\n" + c.text


def test_heading_provider_golden():
    got = chunk(DOC, "contextual", chunk_size=16)
    guide, linux, config = ("LumenDB Operator Guide", "4. Installing on Linux", "4.2 Configuration")
    assert [(c.start, c.end) for c in got] == [(0, 24), (26, 71), (73, 98), (100, 176), (178, 223), (224, 231),
                                               (233, 265)]
    assert [c.context for c in got] == [
        guide, guide, f"{guide} > {linux}",
        f"{guide} > {linux}",  # most of it is under 4. (it ends with the "### 4.2" heading line)
        f"{guide} > {linux} > {config}", f"{guide} > {linux} > {config}", f"{guide} > {linux} > {config}",
    ]


def test_heading_provider_uses_the_markdown_strategys_paths():
    got = chunk(DOC, "contextual", base="markdown", chunk_size=16)
    plain = chunk(DOC, "markdown", chunk_size=16)
    assert [c.metadata["heading_path"] for c in got] == [c.metadata["heading_path"] for c in plain]
    assert [c.context for c in got] == [c.context for c in plain]  # the path starts with the title already


def test_a_given_title_heads_the_path():
    got = chunk(DOC, "contextual", chunk_size=16, title="Ops manual")
    assert got[-1].context == "Ops manual > LumenDB Operator Guide > 4. Installing on Linux > 4.2 Configuration"


def test_plain_text_gets_its_first_line_as_the_title():
    text = "Tide Mills of the Wendle\n\nThe mills ground grain. They used the tide.\n\nMost are gone now."
    assert {c.context for c in chunk(text, "contextual", chunk_size=8)} == {"Tide Mills of the Wendle"}


def test_summary_provider_is_deterministic_and_offline(monkeypatch):
    def no_network(*args, **kwargs):
        raise AssertionError("the summary provider opened a socket")

    monkeypatch.setattr(socket, "socket", no_network)
    first, again = (chunk(FAQ, "contextual", provider="summary") for _ in range(2))
    assert first == again and [c.context for c in first] == [c.context for c in again]
    assert len({c.context for c in first}) == 1
    assert first[0].context.startswith("Harbor Cycles: Frequently Asked Questions\n")


def test_summary_picks_the_most_central_sentences_in_document_order():
    text = (
        "Tide mills ground grain on the estuary for centuries. "
        "The weather was pleasant that spring and many birds sang. "
        "The estuary tide mills used stored tide water to grind grain. "
        "Tide water in the mill pond turned the wheel that ground grain."
    )
    assert contextual.summarize(text, sentences=2) == (
        "Tide mills ground grain on the estuary for centuries. "
        "The estuary tide mills used stored tide water to grind grain."
    )


def test_summary_is_cut_to_its_token_budget():
    summary = contextual.summarize(corpus_texts()["tidal_mills_essay.txt"], max_tokens=30)
    assert summary.endswith("…") and count_tokens(summary[:-1]) <= 30


@pytest.mark.parametrize("base", BASES)
def test_the_size_bound_holds_on_the_source_text(base):
    got = chunk(FAQ, "contextual", base=base, provider="summary", chunk_size=60)
    check_chunks(FAQ, got, chunk_size=60, length=count_tokens)
    assert max(count_tokens(c.embed_text) for c in got) > 60  # the context comes on top


@pytest.mark.parametrize("provider", contextual.PROVIDERS)
def test_metadata_names_the_provider_and_counts_the_context(provider):
    for c in contextual_chunks(DOC, provider, chunk_size=16):
        assert c.metadata["context_provider"] == provider and c.metadata["base_strategy"] == "recursive"
        assert c.metadata["context_tokens"] == count_tokens(c.context)


def test_ids_are_stable_and_name_the_strategy():
    first, again = (chunk(DOC, "contextual", chunk_size=16, doc_id="guide.md") for _ in range(2))
    plain = chunk(DOC, "recursive", chunk_size=16, doc_id="guide.md")
    assert [c.id for c in first] == [c.id for c in again]
    assert not {c.id for c in first} & {c.id for c in plain}


@pytest.mark.parametrize("name", sorted(AWKWARD))
@pytest.mark.parametrize("provider", ["heading", "summary"])
def test_invariants_on_awkward_text(provider, name):
    text = AWKWARD[name]
    check_chunks(text, chunk(text, "contextual", provider=provider, chunk_size=24), chunk_size=24, length=count_tokens)


@pytest.mark.skipif("semantic" not in STRATEGIES, reason="no model-based base registered")
def test_an_embedder_goes_to_a_base_that_takes_one():
    seen = []

    def lengths(texts):
        seen.extend(texts)
        return np.array([[len(t), 1.0, 0.0] for t in texts])

    chunk(FAQ, "contextual", base="semantic", embedder=Embedder(lengths, cache=False), chunk_size=60)
    assert seen


def test_a_base_without_an_embedder_ignores_it():
    embedder = Embedder(lambda texts: np.ones((len(texts), 3)), cache=False)
    assert chunk(DOC, "contextual", chunk_size=16, embedder=embedder) == chunk(DOC, "contextual", chunk_size=16)


def test_empty_text_gives_no_chunks():
    assert chunk("", "contextual", provider="summary") == []


@pytest.mark.parametrize(
    ("kwargs", "error", "name"),
    [
        ({"provider": "magic"}, ValueError, "provider"),
        ({"base": "contextual"}, ValueError, "base"),
        ({"base": "nope"}, ValueError, "base"),
        ({"llm": ScriptedLLM()}, ValueError, "llm"),
        ({"provider": "llm", "llm": object()}, TypeError, "llm"),
        ({"title": 3}, TypeError, "title"),
        ({"chunk_size": 0}, ValueError, "chunk_size"),
    ],
)
def test_bad_options_are_named(kwargs, error, name):
    with pytest.raises(error, match=name):
        chunk(DOC, "contextual", **kwargs)
