"""Every numbered notebook follows the arc, is committed executed top to bottom, and breaks no rule.

(nbval, run by `make test`, then re-executes each one and compares every output.)
"""

from __future__ import annotations

import json

import pytest

from tests.conftest import ROOT

NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
FORBIDDEN = ("sys.path", "!pip", "%pip", "import *")


def cells(path, kind=None):
    nb = json.loads(path.read_text(encoding="utf-8"))
    return [c for c in nb["cells"] if kind is None or c["cell_type"] == kind]


def source(cell) -> str:
    return "".join(cell["source"])


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_follows_the_arc(path):
    markdown = "\n".join(source(c) for c in cells(path, "markdown"))
    code = "\n".join(source(c) for c in cells(path, "code"))
    assert "[index](README.md)" in markdown, "navigation line"
    assert "What you'll learn" in markdown
    assert "inspect.getsource" in code, "the real implementation shown"
    assert "assert " in code, "a by-hand version asserted equal to the library"
    assert "<details>" in markdown, "exercises with hidden solutions"
    assert "Takeaways" in markdown


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_committed_executed_top_to_bottom(path):
    counts = [c.get("execution_count") for c in cells(path, "code") if source(c).strip()]
    assert counts == list(range(1, len(counts) + 1))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_no_forbidden_patterns(path):
    for cell in cells(path, "code"):
        assert not any(f in source(cell) for f in FORBIDDEN), source(cell)[:80]
    for cell in cells(path, "code"):
        for output in cell.get("outputs", []):
            assert output.get("output_type") != "error"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_links_to_its_neighbours(path):
    markdown = "\n".join(source(c) for c in cells(path, "markdown"))
    position = NOTEBOOKS.index(path)
    if position + 1 < len(NOTEBOOKS):
        assert NOTEBOOKS[position + 1].name in markdown
