"""MkDocs hook: the pages that come from the repository as it is, so nothing is copied into docs/.

1. `on_files` adds `notebooks/README.md` and every numbered notebook from `notebooks/` (read in place;
   mkdocs-jupyter renders them as committed), and one API page per module of `chunking/`, whose whole
   content is `::: chunking.<module>` (mkdocstrings fills it from the docstrings).
2. `on_page_markdown` fills the generated parts of hand-written pages: the home page's map
   (notebook → module → idea) is built from the table in `notebooks/README.md`, the results page's
   table from `docs/results/results.csv`; in `notebooks/README.md` the notebook names become links
   and links into the repository's `docs/` point at the site's pages.
3. `on_page_content` points a rendered notebook's links (`01_fixed_size.ipynb`, `README.md`,
   `../docs/glossary.md#token`) at their pages. MkDocs validates links in Markdown only, so a
   notebook link to nowhere is reported here, as a warning that fails `mkdocs build --strict`. It
   also rebuilds the notebook's table of contents from the headings as rendered: mkdocs-jupyter's
   drops inline code from a heading, so the entry for "The knobs: `chunk_size` and `chunk_overlap`"
   pointed at an anchor that does not exist.
"""

from __future__ import annotations

import csv
import json
import logging
import posixpath
import re
from pathlib import Path

from markdown.extensions.toc import nest_toc_tokens
from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File
from mkdocs.structure.toc import get_toc

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
PACKAGE = ROOT / "chunking"
MAP_MARKER = "<!-- notebook-map -->"
RESULTS_MARKER = "<!-- results-table -->"
LAYERS_MARKER = "<!-- layers-table -->"
GUIDE_MARKER = "<!-- guide-table -->"
SCHEDULE_MARKER = "<!-- workshop-schedule -->"
TRACK_ROW = re.compile(r"^\| (\d\d) · ([^|]+?) \| (\d+) \|\s*(✓?)\s*\|$", re.M)
BREAKS = re.compile(r"(\d+) minutes of breaks")
FLOWCHART = "choosing.png"  # drawn by chunking.guide.draw() at every build, from the guide's own tree
LINK = re.compile(r'(href|src)="([^"]*)"')
HEADING = re.compile(r'<h([1-6]) id="([^"]+)"[^>]*>(.*?)</h\1>', re.S)
log = logging.getLogger("mkdocs.hooks.pages")
# results.csv column, header, number format (None: as written).
RESULT_COLUMNS = [
    ("config", "config", None),
    ("chunks", "chunks", None),
    ("mean_tokens", "mean tokens", "{:.1f}"),
    ("truncated", "truncated", "{:.3f}"),
    ("recall", "recall [95% CI]", "{:.3f}"),
    ("iou", "IoU", "{:.3f}"),
    ("precision_omega", "precision Ω", "{:.3f}"),
    ("hit", "hit", "{:.3f}"),
    ("reciprocal_rank", "MRR", "{:.3f}"),
    ("recall_at_budget", "recall @1000 tokens", "{:.3f}"),
    ("retrieved_tokens", "tokens handed over", "{:.0f}"),
]
RECALL = [key for key, _, _ in RESULT_COLUMNS].index("recall")


def _layers():
    """docs/_hooks/layers.py (the layer table and the picture), loaded by path: hooks are not a package."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("chunking_layers", Path(__file__).with_name("layers.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def notebook_paths() -> list[Path]:
    return sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))


def module_page(module: str) -> str:
    """The API page of a module of `chunking` (`__init__` is the package itself, `reference` its
    folder of plain implementations, `reference.fixed` one of them)."""
    return "reference/index.md" if module == "__init__" else f"reference/{module}.md"


def modules() -> list[str]:
    package = sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem != "__main__")
    plain = sorted(f"reference.{p.stem}" for p in (PACKAGE / "reference").glob("*.py") if p.stem != "__init__")
    return [*package, "reference", *plain]


# Before mkdocs-jupyter's on_files, which turns .ipynb files into pages.
@event_priority(100)
def on_files(files, config):
    # The repository root stands in as the source folder, so `notebooks/x.ipynb` is the file itself
    # (a generated File would lose its path when mkdocs-jupyter wraps it).
    for path in [NOTEBOOKS / "README.md", *notebook_paths(), NOTEBOOKS / "playground.ipynb"]:
        src_uri = path.relative_to(ROOT).as_posix()
        files.append(
            File(src_uri, src_dir=str(ROOT), dest_dir=config.site_dir, use_directory_urls=config.use_directory_urls)
        )
    files.append(File.generated(config, FLOWCHART, content=flowchart_png()))
    for module in modules():
        name = "chunking" if module == "__init__" else f"chunking.{module}"
        content = f"---\ntitle: {name}\n---\n\n::: {name}\n"
        files.append(File.generated(config, module_page(module), content=content))
    return files


def on_page_markdown(markdown, page, config, files):
    if MAP_MARKER in markdown:
        markdown = markdown.replace(MAP_MARKER, notebook_map(page.file.src_uri))
    if RESULTS_MARKER in markdown:
        markdown = markdown.replace(RESULTS_MARKER, results_table(Path(config.docs_dir) / "results" / "results.csv"))
    if GUIDE_MARKER in markdown:
        markdown = markdown.replace(GUIDE_MARKER, guide_table(Path(config.docs_dir) / "results"))
    if SCHEDULE_MARKER in markdown:
        markdown = markdown.replace(SCHEDULE_MARKER, workshop_schedule(NOTEBOOKS / "README.md"))
    if LAYERS_MARKER in markdown:  # each module links to its API page, beside this page
        table = _layers().table(link=lambda module: posixpath.relpath(module_page(module), "."))
        markdown = markdown.replace(LAYERS_MARKER, table)
    if page.file.src_uri == "notebooks/README.md":
        markdown = re.sub(r"^\| `(\d\d_\w+\.ipynb)`", r"| [`\1`](\1)", markdown, flags=re.MULTILINE)
        markdown = markdown.replace("](../docs/", "](../")  # the repository's docs/ is the site's root
    return markdown


def on_page_content(html, page, config, files):
    if not page.file.src_uri.endswith(".ipynb"):
        return html
    here = posixpath.dirname(page.file.src_uri)

    def repoint(match: re.Match) -> str:
        attribute, url = match.groups()
        if not url or re.match(r"^([a-z][a-z0-9+.-]*:|#|/)", url):
            return match.group(0)
        path, hash_, fragment = url.partition("#")
        path = posixpath.normpath(posixpath.join(here, path))
        # A notebook links the docs as the repository lays them out (`../docs/glossary.md`), so the
        # link also works in JupyterLab and on GitHub; on the site those pages sit at the root.
        docs = posixpath.relpath(config.docs_dir, ROOT.as_posix()) + "/"
        target = files.get_file_from_path(path) or files.get_file_from_path(path.removeprefix(docs))
        if target is None:
            log.warning(f"Doc file '{page.file.src_uri}' contains a link '{url}', but the target is not found")
            return match.group(0)
        return f'{attribute}="{target.url_relative_to(page.file)}{hash_}{fragment}"'

    html = LINK.sub(repoint, html)
    page.toc = notebook_toc(html)
    return html


def notebook_toc(html: str):
    """The table of contents of a rendered notebook, from its headings' ids and text."""
    tokens = []
    for level, anchor, inner in HEADING.findall(html):
        text = re.sub(r"<[^>]+>", "", re.sub(r'<a class="anchor-link".*?</a>', "", inner)).strip()
        tokens.append({"level": int(level), "id": anchor, "name": text, "html": text, "children": []})
    return get_toc(nest_toc_tokens(tokens))


def notebook_map(src_uri: str) -> str:
    """The map table of notebooks/README.md, with each notebook and module linked to its page."""
    readme = (NOTEBOOKS / "README.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `(\d\d_\w+\.ipynb)` \| (.+?) \| (.+?) \|$", readme, re.M)
    if [name for name, _, _ in rows] != [p.name for p in notebook_paths()]:
        raise PluginError("the map in notebooks/README.md does not list exactly the numbered notebooks, in order")
    base = posixpath.dirname(src_uri)
    lines = ["| notebook | module | idea |", "|---|---|---|"]
    for name, module_cell, idea in rows:
        page = posixpath.relpath(f"notebooks/{name}", base or ".")
        links = []
        for module in re.findall(r"`(\w+)`", module_cell):
            if module not in modules():
                raise PluginError(f"notebooks/README.md maps {name} to a module that does not exist: {module!r}")
            links.append(f"[`{module}`]({posixpath.relpath(module_page(module), base or '.')})")
        lines.append(f"| [{notebook_title(NOTEBOOKS / name)}]({page}) | {', '.join(links)} | {idea} |")
    return "\n".join(lines)


def notebook_title(path: Path) -> str:
    """The notebook's first heading, e.g. "00 · Why chunking, and the pipeline"."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    for cell in (c for c in cells if c["cell_type"] == "markdown"):
        heading = re.search(r"^# (.+)$", "".join(cell["source"]), re.M)
        if heading:
            return heading.group(1).strip()
    return path.stem


def results_table(path: Path) -> str:
    """The committed demo results as a Markdown table: means, and recall's 95% bootstrap interval."""
    with path.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    lines = ["| " + " | ".join(header for _, header, _ in RESULT_COLUMNS) + " |", "|---" * len(RESULT_COLUMNS) + "|"]
    for row in rows:
        cells = [row[key] if fmt is None else fmt.format(float(row[key])) for key, _, fmt in RESULT_COLUMNS]
        cells[RECALL] += f" [{float(row['recall_low']):.3f}, {float(row['recall_high']):.3f}]"
        cells[0] = f'<span id="{row["config"]}"></span>{cells[0]}'  # the decision guide links each row
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def flowchart_png() -> bytes:
    """The decision guide's flowchart, drawn from `chunking.guide.GUIDE` (never a hand-drawn copy)."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    from chunking import guide

    buffer = io.BytesIO()
    figure = guide.draw()
    figure.savefig(buffer, format="png", dpi=100, metadata={"Software": None})
    return buffer.getvalue()


def guide_table(folder: Path) -> str:
    """Each recommendation of `chunking.guide`, the answers that reach it, and the measured rows behind it:
    its row of the results page (linked), its paired difference from the default, and its strategy's
    chunking speed from the benchmarks page (1 MB, 512 tokens; the row linked)."""
    from chunking import guide

    def read(name):
        with (folder / name).open(encoding="utf-8", newline="") as f:
            return list(csv.DictReader(f))

    speeds = dict(re.findall(r"^\| (\w+), 512 tokens \| chunking \| ([\d.]+) \|",
                             (folder.parent / "benchmarks.md").read_text(encoding="utf-8"), flags=re.M))
    lines = ["| your answers | start from | recall [95% CI] | IoU | tokens handed over | truncated | against | "
             "recall difference [95% CI] | chunking speed |", "|---|---|---|---|---|---|---|---|---|"]
    for row in guide.evidence(read("results.csv"), read("per_question.csv")):
        base = "recursive" if row["strategy"] == "contextual" else row["strategy"]  # contextual's cuts are recursive's
        speed = f"[{speeds[base]} MB/s](benchmarks.md#throughput-and-checks)" if base in speeds else "not benchmarked"
        start, against = (f"[`{row[k]}`](results.md#{row[k]})" for k in ("config", "baseline"))
        lines.append(
            f"| {row['path'].replace('_', ' ')} | {start} | {row['recall']:.3f} [{row['recall_low']:.3f}, "
            f"{row['recall_high']:.3f}] | {row['iou']:.3f} | {row['retrieved_tokens']:.0f} | {row['truncated']:.3f} | "
            f"{against} | {row['difference']:+.3f} [{row['low']:+.3f}, {row['high']:+.3f}]: {row['verdict']} "
            f"| {speed} |")
    return "\n".join(lines)


def workshop_schedule(readme: Path) -> str:
    """The workshop track of notebooks/README.md as a timetable: each notebook's minutes (its own stated
    time) from a running clock, and a break after every second notebook (the README's minutes of breaks,
    shared equally)."""
    text = readme.read_text(encoding="utf-8")
    track = [(n, title.strip(), int(m)) for n, title, m, mark in TRACK_ROW.findall(text) if mark]
    pauses = (len(track) - 1) // 2
    pause = int(BREAKS.search(text).group(1)) // pauses if pauses else 0
    lines, clock = ["| clock | block | minutes |", "|---|---|---|"], 0
    for position, (number, title, minutes) in enumerate(track, start=1):
        path = next(p.name for p in notebook_paths() if p.name.startswith(f"{number}_"))
        lines.append(f"| {clock // 60}:{clock % 60:02d} | [{number} · {title}](notebooks/{path}) | {minutes} |")
        clock += minutes
        if position % 2 == 0 and position < len(track):
            lines.append(f"| {clock // 60}:{clock % 60:02d} | break | {pause} |")
            clock += pause
    lines.append(f"| {clock // 60}:{clock % 60:02d} | end | |")
    return "\n".join(lines)
