"""Every numbered notebook follows the arc, is committed executed top to bottom, and breaks no rule.

(nbval, run by `make test`, then re-executes each one and compares every output.)
"""

from __future__ import annotations

import json
import re
import sys

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
    assert "## Exercises" in markdown and "## Solutions" in markdown, "exercises, and their solutions at the end"
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


# --- What a learner reads: the numbers, the solutions, the words, the path -------------------------

def outputs_text(cell) -> str:
    parts = []
    for output in cell.get("outputs", []):
        if "text" in output:
            parts.append("".join(output["text"]))
        for kind, value in output.get("data", {}).items():
            if kind.startswith("text/"):
                parts.append("".join(value) if isinstance(value, list) else value)
    return "\n".join(parts)


NUMBER = re.compile(r"(?<![\w.\-/#·])[−-]?\d[\d,]*(?:\.\d+)?(?![\w/])")
# Numbers a notebook's prose may state without an output showing them: facts about the world, not
# results of the notebook's own computation. Each with the reason it needs no output.
STATED = {
    "09_contextual": {"2024": "the year Anthropic published contextual retrieval"},
    "11_late_chunking": {"2024": "the year of the late-chunking paper", "8192": "jina-embeddings-v2's window"},
}


def prose(markdown: str) -> str:
    """Markdown without code, link targets, headings' numbers and HTML tags: the sentences a learner reads."""
    markdown = re.sub(r"```.*?```", " ", markdown, flags=re.S)
    markdown = re.sub(r"`[^`]*`", " ", markdown)
    markdown = re.sub(r"\*\*Time:\*\* about \d+ minutes", " ", markdown)  # the learner's time, set by the text
    markdown = re.sub(r"\[(Notebook )?\d\d ·", "[", markdown)  # a notebook's number in a link to it
    markdown = re.sub(r"\]\([^)]*\)", "]", markdown)
    markdown = re.sub(r"^#+\s*\d+(\.\d+)*\.?", "#", markdown, flags=re.M)
    markdown = re.sub(r"\b(notebooks?|section|sections|§)\s+\d+(\.\d+)*(\s*(–|-|and|,)\s*\d+(\.\d+)*)*", " ", markdown,
                      flags=re.I)
    return re.sub(r"<[^>]+>", " ", markdown)


def numbers(text: str) -> set[str]:
    return {re.sub(r"\.0+$", "", m.replace("−", "-").replace(",", "")) for m in NUMBER.findall(text)}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_every_number_in_the_prose_is_computed_or_set(path):
    """A number the text quotes appears in an output (nbval then holds it to the computation) or in the
    code (a parameter the text sets); single digits are exempt (counts, steps, ranks)."""
    shown = " ".join(outputs_text(c) + "\n" + source(c) for c in cells(path, "code"))
    known = numbers(shown) | set(STATED.get(path.stem, {}))
    missing = []
    for i, cell in enumerate(cells(path)):
        if cell["cell_type"] == "markdown":
            found = sorted(numbers(prose(source(cell))))
            missing += [(i, n) for n in found if len(n.lstrip("-")) > 1 and n not in known]
    assert not missing, f"numbers in the prose that no output or code shows (cell, number): {missing}"


PLACEHOLDER = re.compile(r"SOLUTION_\d|\bTODO\b|\bFIXME\b|\bXXX\b")
DOCS = [ROOT / "README.md", ROOT / "notebooks" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


@pytest.mark.parametrize("path", NOTEBOOKS + DOCS, ids=[p.stem if p.suffix == ".ipynb" else str(p.relative_to(ROOT))
                                                    for p in NOTEBOOKS + DOCS])
def test_no_placeholder_lands(path):
    if path.suffix == ".ipynb":
        texts = [source(c) for c in cells(path)] + [outputs_text(c) for c in cells(path, "code")]
        stand_ins = [line for c in cells(path, "code") for line in source(c).splitlines()
                     if line.strip() == "..." or re.search(r"(=|\(|return)\s*\.\.\.\s*\)?\s*(#.*)?$", line)]
        assert not stand_ins, f"`...` standing in for code: {stand_ins}"
    else:
        texts = [path.read_text(encoding="utf-8")]
    found = [m.group(0) for text in texts for m in PLACEHOLDER.finditer(text)]
    assert not found, f"placeholders: {found}"


def headings(path) -> list[tuple[int, str]]:
    """(cell position, heading line) for every Markdown heading, in order."""
    return [(i, line) for i, c in enumerate(cells(path)) if c["cell_type"] == "markdown"
            for line in source(c).splitlines() if line.startswith("#")]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_solutions_are_code_that_runs_at_the_end(path):
    """One `### Solution k` per exercise, under `## Solutions` at the end; each has code cells, folded in
    JupyterLab, which nbval runs and compares like every other cell. No solution code in Markdown."""
    all_cells = cells(path)
    exercises = next(source(c) for c in all_cells if source(c).startswith("## Exercises"))
    count = len(re.findall(r"^\d+\. ", exercises, flags=re.M))
    found = headings(path)
    start = next(i for i, line in found if line.strip() == "## Solutions")
    assert all(line.startswith("###") for i, line in found if i > start), "nothing but solutions after `## Solutions`"
    solutions = [(i, line) for i, line in found if i >= start and line.startswith("### Solution")]
    assert [line.split()[2].rstrip(":.") for _, line in solutions] == [str(k) for k in range(1, count + 1)]
    bounds = [i for i, _ in solutions] + [len(all_cells)]
    for (i, line), end in zip(solutions, bounds[1:]):
        code = [c for c in all_cells[i + 1 : end] if c["cell_type"] == "code"]
        assert code, f"{line}: no code cell"
        assert all(c["metadata"].get("jupyter", {}).get("source_hidden") for c in code), f"{line}: code not folded"
    for c in all_cells:
        if c["cell_type"] == "markdown":
            assert "```python" not in source(c), "code a learner would run belongs in a code cell"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_opens_with_time_and_assumptions_and_navigates_once(path):
    first = source(cells(path)[0])
    assert re.search(r"\*\*Time:\*\* about \d+ minutes", first), "the learner's time, in the first cell"
    assert "**Assumes:**" in first
    markdown = [source(c) for c in cells(path, "markdown")]
    assert sum(m.count("[index](README.md)") for m in markdown) == 1, "the navigation line once, at the top"
    nexts = [m for m in markdown if "**Next:**" in m]
    assert len(nexts) == 1, "one **Next:** line, in the takeaways"
    following = NOTEBOOKS[NOTEBOOKS.index(path) + 1].name if path != NOTEBOOKS[-1] else "README.md"
    assert following in nexts[0]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_finds_the_data_through_the_package(path):
    code = "\n".join(source(c) for c in cells(path, "code"))
    assert "../data" not in code and 'Path("..' not in code, "a notebook copied elsewhere must still find the data"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_names_sources_by_title(path):
    text = "\n".join(source(c) for c in cells(path))
    assert not re.search(r"\bseed\s+0\d\d\b", text, flags=re.I), "a reader cannot look up a seed number"


def test_docs_name_sources_by_title():
    for path in DOCS:
        assert not re.search(r"\bseed\s+0\d\d\b", path.read_text(encoding="utf-8"), flags=re.I), path


# Option names retired in 0.1 (semantic's breakpoint and window, late's window and overlap, sliding's over):
# the package refuses them now, naming the current one (tests/test_options.py).
RETIRED = re.compile(r"[(,]\s*(breakpoint|window|overlap|over)\s*=(?!=)")  # as a keyword argument


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_teaches_the_current_option_names(path):
    """The course teaches the options by the names the package takes (`models.plan_windows(n, window,
    overlap)` is a helper's own signature, not an option)."""
    for c in cells(path, "code"):
        for line in source(c).splitlines():
            if "plan_windows(" not in line:
                assert not RETIRED.search(line), line


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_has_a_picture(path):
    assert any("image/png" in o.get("data", {}) for c in cells(path, "code") for o in c.get("outputs", []))


STRATEGY_NOTEBOOKS = [p for p in NOTEBOOKS if 1 <= int(p.name[:2]) <= 11 and p.stem != "10_hybrid_search"]


@pytest.mark.parametrize("path", STRATEGY_NOTEBOOKS, ids=[p.stem for p in STRATEGY_NOTEBOOKS])
def test_shows_the_plain_version(path):
    """Each strategy notebook shows its file from chunking/reference (the version to copy) and asserts
    that it gives the engine's spans."""
    code = "\n".join(source(c) for c in cells(path, "code"))
    assert re.search(r"from chunking\.reference import|import chunking\.reference", code)


@pytest.mark.parametrize("stem", ["00_why_chunking", "05_sliding_window", "09_contextual"])
def test_boxes_the_answer(stem):
    code = "\n".join(source(c) for c in cells(ROOT / "notebooks" / f"{stem}.ipynb", "code"))
    assert "highlight=" in code


# Terms of docs/glossary.md: (pattern, anchor, scope). "course": linked where the course first uses
# it; "notebook": linked at its first use in every notebook (a learner may start anywhere).
TERMS = [
    (r"RAG|retrieval-augmented generation", "rag", "course"), (r"top-k", "top-k", "course"),
    (r"unit[- ]length", "unit-length", "course"), (r"search scores?", "search-score", "course"),
    (r"chunks?", "chunk", "course"), (r"spans?", "span", "course"), (r"half-open", "half-open-offsets", "notebook"),
    (r"tokens?", "token", "course"), (r"word-pieces?", "word-piece", "notebook"),
    (r"truncat\w*", "truncation", "notebook"), (r"overlap", "overlap", "course"),
    (r"heading paths?", "heading-path", "notebook"), (r"sizers?", "sizer", "notebook"),
    (r"embeddings?", "embedding", "course"), (r"dense vectors?", "dense-vector", "notebook"),
    (r"sparse vectors?", "sparse-vector", "notebook"), (r"BM25", "bm25", "notebook"), (r"IDF", "bm25", "notebook"),
    (r"RRF|reciprocal rank fusion", "rrf", "notebook"), (r"payloads?", "payload", "notebook"),
    (r"uuid5", "uuid5", "notebook"), (r"late chunking", "late-chunking", "notebook"), (r"recall", "recall", "course"),
    (r"precision", "precision", "course"), (r"IoU", "iou", "notebook"),
    (r"precision (Ω|omega)", "precision-omega", "notebook"), (r"MRR|reciprocal rank(?! fusion)", "mrr", "notebook"),
    (r"recall at (a )?budget", "recall-at-budget", "notebook"), (r"bootstrap", "bootstrap-interval", "notebook"),
]
GLOSSARY_LINK = re.compile(r"\[([^\]]+)\]\(\.\./docs/glossary\.md#([\w-]+)\)")


def first_use(path, pattern: str):
    """The first prose occurrence of a term in a notebook (headings and code excluded): (cell, text
    without the term's surroundings, whether it sits in the text of a glossary link, that link's anchor)."""
    word = re.compile(rf"(?<![\w-])({pattern})(?![\w-])", flags=re.I if pattern.islower() else 0)
    for i, c in enumerate(cells(path)):
        for line in source(c).splitlines() if c["cell_type"] == "markdown" else ():
            if line.startswith("#"):
                continue
            text = re.sub(r"`[^`]*`", lambda m: " " * len(m.group(0)), line)
            links = [(m.start(1), m.end(1), m.group(2)) for m in GLOSSARY_LINK.finditer(text)]
            text = re.sub(r"\]\([^)]*\)", lambda m: "]" + " " * (len(m.group(0)) - 1), text)
            if hit := word.search(text):
                anchor = next((a for s, e, a in links if s <= hit.start() and hit.end() <= e), None)
                return i, hit.group(0), anchor
    return None


def test_terms_link_to_the_glossary_at_first_use():
    glossary = (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8")
    anchors = {re.sub(r"[^\w\- ]", "", line[4:].strip().lower()).replace(" ", "-")
               for line in glossary.splitlines() if line.startswith("### ")}
    problems = []
    for pattern, anchor, scope in TERMS:
        assert anchor in anchors, anchor
        for path in NOTEBOOKS:
            found = first_use(path, pattern)
            if found is None:
                continue
            cell, term, linked = found
            if linked != anchor:
                problems.append(f"{path.stem}, markdown cell {cell}: first {term!r} not linked to glossary #{anchor}")
            if scope == "course":
                break
    for path in NOTEBOOKS:
        for c in cells(path, "markdown"):
            for _, target in GLOSSARY_LINK.findall(source(c)):
                if target not in anchors:
                    problems.append(f"{path.stem}: glossary link to a missing term #{target}")
    assert not problems, "\n".join(problems)


def test_every_import_is_installed_by_the_notebooks_extra():
    """`pip install -e '.[notebooks]'` gives a notebook everything it imports."""
    import ast
    import importlib.metadata

    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]

    def names(requirements, seen=()):
        out = set()
        for requirement in requirements:
            name = re.split(r"[\s\[<>=!~;]", requirement, maxsplit=1)[0].lower().replace("_", "-")
            if name == project["name"]:
                for extra in re.search(r"\[(.*)\]", requirement).group(1).split(","):
                    if extra.strip() not in seen:
                        out |= names(extras[extra.strip()], (*seen, extra.strip()))
            else:
                out.add(name)
        return out

    installed = names(project["dependencies"]) | names(extras["notebooks"], ("notebooks",))
    distributions = importlib.metadata.packages_distributions()
    missing = []
    for path in NOTEBOOKS:
        for c in cells(path, "code"):
            tree = ast.parse("\n".join(line for line in source(c).splitlines() if not line.startswith(("%", "!"))))
            for node in ast.walk(tree):
                modules = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                    [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else [])
                for module in modules:
                    top = module.split(".")[0]
                    if top in sys.stdlib_module_names or top == "chunking":
                        continue
                    dists = {d.lower().replace("_", "-") for d in distributions.get(top, [top])}
                    if not dists & installed:
                        missing.append(f"{path.stem}: {module} ({', '.join(sorted(dists))})")
    assert not missing, "imported but not installed by the notebooks extra:\n" + "\n".join(missing)


def test_the_tracks_add_up():
    """notebooks/README.md's minutes are the notebooks' own, and its totals are their sums."""
    readme = (ROOT / "notebooks" / "README.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (\d\d) · [^|]+ \| (\d+) \|\s*(✓?)\s*\|$", readme, flags=re.M)
    assert [number for number, _, _ in rows] == [p.name[:2] for p in NOTEBOOKS]
    for (_, minutes, _), path in zip(rows, NOTEBOOKS):
        stated = re.search(r"\*\*Time:\*\* about (\d+) minutes", source(cells(path)[0])).group(1)
        assert minutes == stated, path.name
    assert f"**Full course:** {len(rows)} notebooks, {sum(int(m) for _, m, _ in rows)} minutes" in readme


# --- One sitting: the main path, its time, the self-check, the tracks ---------------------------------
# A learner's minutes for a main path: prose read at 150 words a minute, and 24 seconds a cell to read,
# run and look at (code and markdown alike). The stated time is held to it; about 30 minutes is a sitting.
WORDS_A_MINUTE, MINUTES_A_CELL = 150, 0.4
MAX_CELLS, MAX_WORDS, MAX_MINUTES = 40, 2000, 30
OPTIONAL = "## Going deeper (optional)"


def main_path(path) -> list[dict]:
    """The cells a learner takes in one sitting: from the top to `## Going deeper (optional)` (or to
    `## Solutions`); what follows is for those who want more."""
    out = []
    for c in cells(path):
        if c["cell_type"] == "markdown" and source(c).startswith((OPTIONAL, "## Solutions")):
            break
        out.append(c)
    return out


def words(cell_list) -> int:
    return sum(len(re.findall(r"[\w'’-]+", prose(source(c)))) for c in cell_list if c["cell_type"] == "markdown")


def minutes(path) -> float:
    path_cells = main_path(path)
    return words(path_cells) / WORDS_A_MINUTE + MINUTES_A_CELL * len(path_cells)


def stated_minutes(path) -> int:
    return int(re.search(r"\*\*Time:\*\* about (\d+) minutes", source(cells(path)[0])).group(1))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_the_main_path_fits_a_sitting(path):
    path_cells = main_path(path)
    assert len(path_cells) <= MAX_CELLS, f"{len(path_cells)} cells before {OPTIONAL!r}"
    assert words(path_cells) <= MAX_WORDS, f"{words(path_cells)} words of prose before {OPTIONAL!r}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_the_stated_time_is_the_computed_one(path):
    """The first cell's time is the main path's, rounded up to 5 minutes: never less, never padded."""
    computed = minutes(path)
    assert stated_minutes(path) == 5 * -(-computed // 5), f"computed {computed:.1f} minutes"
    assert stated_minutes(path) <= MAX_MINUTES


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_going_deeper_follows_the_takeaways_and_holds_only_subsections(path):
    found = headings(path)
    twos = [line.strip() for _, line in found if line.startswith("## ")]
    assert "## Self-check" in twos and "## Takeaways" in twos
    assert twos.index("## Self-check") < twos.index("## Takeaways")
    if OPTIONAL in twos:
        assert twos.index(OPTIONAL) == twos.index("## Solutions") - 1 == twos.index("## Takeaways") + 1, twos


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_self_check_questions_with_hidden_answers(path):
    """Three to eight questions, each followed by its answer folded in a <details> element."""
    cell = next(source(c) for c in cells(path, "markdown") if source(c).startswith("## Self-check"))
    questions = re.findall(r"^\d+\. ", cell, flags=re.M)
    answers = re.findall(r"<details><summary>Answer</summary>(.+?)</details>", cell, flags=re.S)
    assert 3 <= len(questions) <= 8, cell[:200]
    assert len(answers) == len(questions) and all(a.strip() for a in answers)


def assumed(path) -> set[str]:
    """The notebooks a notebook's **Assumes:** line names: "notebook 04", "notebooks 00, 02 and 04", "00–03"."""
    line = re.search(r"\*\*Assumes:\*\*(.*)", source(cells(path)[0]), flags=re.S).group(1)
    out = set()
    for group in re.findall(r"notebooks? ((?:\d\d(?:\s*(?:–|,|and)\s*)?)+)", line):
        for a, b in re.findall(r"(\d\d)(?:\s*–\s*(\d\d))?", group):
            out |= {f"{n:02d}" for n in range(int(a), int(b or a) + 1)}
    return out


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_assumes_only_earlier_notebooks(path):
    assert all(n < path.name[:2] for n in assumed(path)), assumed(path)


def track(name: str) -> list[tuple[str, int]]:
    """(number, minutes) of a track's rows in notebooks/README.md: `| 04 · Markdown | 30 | ✓ |`."""
    readme = (ROOT / "notebooks" / "README.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (\d\d) · [^|]+ \| (\d+) \|\s*(✓?)\s*\|$", readme, flags=re.M)
    return [(n, int(m)) for n, m, mark in rows if mark or name == "full"]


def test_the_workshop_track_holds_together():
    """Every notebook of the workshop track assumes only notebooks before it in the track; with its
    breaks it is about three hours."""
    readme = (ROOT / "notebooks" / "README.md").read_text(encoding="utf-8")
    order = [n for n, _ in track("workshop")]
    for position, number in enumerate(order):
        path = next(p for p in NOTEBOOKS if p.name[:2] == number)
        missing = assumed(path) - set(order[:position])
        assert not missing, f"{path.name} assumes {sorted(missing)}, which the workshop track does not take first"
    breaks = int(re.search(r"(\d+) minutes of breaks", readme).group(1))
    total = sum(m for _, m in track("workshop")) + breaks
    assert 160 <= total <= 200, total
    assert f"**Workshop track:** {len(order)} notebooks, {total - breaks} minutes" in readme
