"""The decision guide (chunking.guide): its advice is the showdown's measured configurations, its walk and
its size rule are exact, its evidence is the committed results' own numbers, and the cheat sheet's defaults
are the strategies' own."""

from __future__ import annotations

import csv
import importlib
import importlib.util
import inspect
import re

import numpy as np
import pytest

from chunking import guide
from chunking.compare import DEFAULT_CONFIGS
from chunking.datasets import results_dir
from chunking.evaluate import bootstrap_ci
from tests.conftest import ROOT


def rows(name: str) -> list[dict]:
    with (results_dir() / name).open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def test_every_recommendation_is_a_measured_configuration_with_its_options():
    measured = {c.name: c for c in DEFAULT_CONFIGS}
    results = {row["config"] for row in rows("results.csv")}
    for path, leaf in guide.leaves():
        config = measured[leaf.config]
        assert (leaf.strategy, dict(leaf.options), leaf.retrieval) == (
            config.strategy, dict(config.options), config.retrieval), path
        assert config.embedding == "chunk", "the guide's leaves are embedded chunk by chunk"
        assert {leaf.config, leaf.baseline} <= results


def test_recommend_walks_every_path_and_names_what_is_wrong():
    paths = list(guide.leaves())
    assert len({leaf.config for _, leaf in paths}) == len(paths) >= 5
    for path, leaf in paths:
        assert guide.recommend(**dict(path)) is leaf
    with pytest.raises(TypeError, match=r"needs documents="):
        guide.recommend()
    with pytest.raises(ValueError, match=r"documents must be one of .* got 'slides'"):
        guide.recommend(documents="slides")
    with pytest.raises(TypeError, match=r"never asks: exact_terms"):
        guide.recommend(documents="code", exact_terms="yes")
    with pytest.raises(ValueError, match=r"exact_terms must be one of 'no', 'yes', got True"):
        guide.recommend(documents="markdown", exact_terms=True)


@pytest.mark.parametrize("pieces", [8, 100, 256, 300, 512, 8192])
@pytest.mark.parametrize("budget", [100, 600, 1000, 4000, 100_000])
@pytest.mark.parametrize("k", [1, 5, 10])
def test_chunk_size_for_fits_both_limits(pieces, budget, k):
    if budget // k < 8 or pieces * 200 // 256 < 8:
        with pytest.raises(ValueError, match="raise budget or lower k|leaves"):
            guide.chunk_size_for(pieces, budget, k)
        return
    size = guide.chunk_size_for(pieces, budget, k)
    assert size % 8 == 0 and size * k <= budget and size <= pieces * 200 / 256
    assert size + 8 > min(pieces * 200 // 256, budget // k)  # the largest multiple of 8 within both


@pytest.mark.parametrize("name, value", [("window_pieces", 0), ("budget", -1), ("k", 2.5), ("k", True)])
def test_chunk_size_for_names_a_bad_value(name, value):
    with pytest.raises(ValueError, match=rf"{name} must be a positive int, got {value!r}"):
        guide.chunk_size_for(**{name: value})


def test_evidence_is_the_committed_rows_and_a_paired_bootstrap():
    results, per_question = rows("results.csv"), rows("per_question.csv")
    by_config = {row["config"]: row for row in results}
    found = guide.evidence(results, per_question)
    assert [row["config"] for row in found] == [leaf.config for _, leaf in guide.leaves()]
    for row in found:
        assert row["recall"] == float(by_config[row["config"]]["recall"])
        assert row["retrieved_tokens"] == float(by_config[row["config"]]["retrieved_tokens"])
        recall = {c: [float(r["recall"]) for r in per_question if r["config"] == c]
                  for c in (row["config"], row["baseline"])}
        differences = np.subtract(recall[row["config"]], recall[row["baseline"]])
        assert row["difference"] == pytest.approx(differences.mean(), abs=1e-12)
        assert (row["low"], row["high"]) == bootstrap_ci(differences.tolist())
        expected = "better" if row["low"] > 0 else "worse" if row["high"] < 0 else "within noise"
        assert row["verdict"] == expected


def test_evidence_refuses_a_row_that_was_never_measured():
    leaf = guide.Recommendation("fixed-999", "fixed", {"chunk_size": 999}, "never measured")
    with pytest.raises(ValueError, match="'fixed-999'"):
        guide.evidence(rows("results.csv"), tree=guide.Question("documents", "?", {"x": leaf}))
    with pytest.raises(ValueError, match="not measured on the same questions"):
        guide.paired([{"config": "a", "question": "q1", "recall": "1"}], "a", "b")


def test_the_flowchart_is_drawn_from_the_tree():
    import matplotlib

    matplotlib.use("Agg")
    figure = guide.draw()
    texts = [" ".join(t.get_text().split()) for t in figure.axes[0].texts]
    for path, leaf in guide.leaves():
        assert any(t.startswith(leaf.config + " ") for t in texts), leaf.config
        for _, answer in path:
            assert answer in texts

    def questions(node):
        if isinstance(node, guide.Question):
            yield node.text
            for child in node.answers.values():
                yield from questions(child)

    for question in questions(guide.GUIDE):
        assert question in texts, question


def test_the_docs_table_links_every_recommendation_to_its_results_row():
    spec = importlib.util.spec_from_file_location("pages_hook", ROOT / "docs" / "_hooks" / "pages.py")
    pages = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(pages)
    table = pages.guide_table(results_dir())
    anchors = set(re.findall(r'<span id="([^"]+)"></span>', pages.results_table(results_dir() / "results.csv")))
    linked = re.findall(r"\(results\.md#([^)]+)\)", table)
    assert {leaf.config for _, leaf in guide.leaves()} <= set(linked) <= anchors
    assert "<!-- guide-table -->" in (ROOT / "docs" / "choosing.md").read_text(encoding="utf-8")
    assert pages.flowchart_png()[:8] == b"\x89PNG\r\n\x1a\n"


CHEATSHEET = (ROOT / "docs" / "cheatsheet.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("strategy", ["fixed", "sentence", "paragraph", "markdown", "sliding", "recursive",
                                      "semantic", "parent_child", "contextual"])
def test_the_cheat_sheet_states_each_strategys_own_defaults(strategy):
    row = next(line for line in CHEATSHEET.splitlines() if line.startswith(f"| `{strategy}` |"))
    signature = inspect.signature(importlib.import_module(f"chunking.{strategy}").chunk)
    stated = re.findall(r"`(\w+)=([^`]+)`", row.split(" | ")[3])
    assert stated, row
    for name, value in stated:
        assert signature.parameters[name].default == eval(value), f"{strategy}: {name}={value}"  # noqa: S307
    for name, default in (("chunk_size", 200), ("chunk_overlap", 0), ("unit", "tokens")):
        if name in signature.parameters and name not in dict(stated):
            assert signature.parameters[name].default == default, f"{strategy}: the page's shared {name} default"
