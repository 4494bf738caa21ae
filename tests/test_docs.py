"""The docs site: every notebook rendered with its committed outputs, an API page per module, no broken links."""

from __future__ import annotations

import ast
import csv
import functools
import html
import http.server
import json
import os
import posixpath
import re
import subprocess
import sys
import threading
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from tests.conftest import ROOT, chromium

pytest.importorskip("mkdocs_jupyter", reason="the docs extra is not installed: pip install -e '.[docs]'")
pytest.importorskip("mkdocstrings_handlers.python", reason="the docs extra is not installed: pip install -e '.[docs]'")

NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
MODULES = sorted(p.stem for p in (ROOT / "chunking").glob("*.py") if p.stem != "__main__")


@pytest.fixture(scope="module")
def build(tmp_path_factory) -> tuple[Path, str]:
    """Build the site once into a temporary folder (its notebook cache too); return it and the build log."""
    out = tmp_path_factory.mktemp("docs")
    env = {**os.environ, "CHUNKING_DOCS_CACHE": str(out / "cache"), "NO_MKDOCS_2_WARNING": "1"}
    command = [sys.executable, "-m", "mkdocs", "build", "-f", str(ROOT / "mkdocs.yml"), "-d", str(out / "site")]
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    return out / "site", result.stdout + result.stderr


@pytest.fixture(scope="module")
def site(build) -> Path:
    return build[0]


def squeeze(text: str) -> str:
    """Text with all whitespace removed: rendering moves line breaks and spaces around tags."""
    return re.sub(r"\s+", "", text)


def page_text(path: Path) -> str:
    """A page's text, tags dropped and entities decoded, squeezed."""
    return squeeze(html.unescape(re.sub(r"<[^>]+>", "", path.read_text(encoding="utf-8"))))


def output_only_line(notebook: Path) -> str:
    """The first line of a code cell's plain-text output that appears in none of the notebook's cells."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    sources = "\n".join("".join(c["source"]) for c in cells)
    for cell in cells:
        for output in cell.get("outputs", []):
            text = output.get("text") or output.get("data", {}).get("text/plain") or ""
            for line in "".join(text).splitlines():
                if len(squeeze(line)) >= 12 and line.strip() not in sources:
                    return line.strip()
    raise AssertionError(f"{notebook.name} has no plain-text output to look for")


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_notebook_has_a_page_linked_from_the_home_map(site, notebook):
    page = site / "notebooks" / notebook.stem / "index.html"
    assert page.is_file()
    assert (page.parent / notebook.name).read_bytes() == notebook.read_bytes()  # the download, as committed
    assert f'href="notebooks/{notebook.stem}/"' in (site / "index.html").read_text(encoding="utf-8")


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_page_shows_the_committed_outputs(site, notebook):
    assert squeeze(output_only_line(notebook)) in page_text(site / "notebooks" / notebook.stem / "index.html")


@pytest.mark.parametrize("module", MODULES)
def test_every_module_has_an_api_page_from_its_docstring(site, module):
    page = site / "reference" / ("index.html" if module == "__init__" else f"{module}/index.html")
    docstring = ast.get_docstring(ast.parse((ROOT / "chunking" / f"{module}.py").read_text(encoding="utf-8")))
    assert docstring, f"chunking/{module}.py has no module docstring"
    assert squeeze(docstring.splitlines()[0].replace("`", "")) in page_text(page)


def test_results_page_has_every_configuration_and_links_the_csvs(site):
    page = (site / "results" / "index.html").read_text(encoding="utf-8")
    with (ROOT / "docs" / "results" / "results.csv").open(encoding="utf-8", newline="") as f:
        configs = [row["config"] for row in csv.DictReader(f)]
    assert configs and all(f'<td><span id="{config}"></span>{config}</td>' in page for config in configs)
    assert {p.name for p in (site / "results").glob("*.csv")} == {"results.csv", "per_document.csv", "per_question.csv"}


def test_the_decision_guide_links_every_recommendation_to_its_measured_row(site):
    """docs/choosing.md: the flowchart drawn from chunking.guide at build time, and one table row per leaf
    of the guide whose configuration links to its row of the results page."""
    from chunking import guide

    page = (site / "choosing" / "index.html").read_text(encoding="utf-8")
    results = (site / "results" / "index.html").read_text(encoding="utf-8")
    assert 'src="../choosing.png"' in page and (site / "choosing.png").read_bytes()[:4] == b"\x89PNG"
    for _, leaf in guide.leaves():
        assert f'href="../results/#{leaf.config}"' in page, leaf.config
        assert f'<span id="{leaf.config}"></span>' in results


def test_the_workshop_page_has_the_tracks_timetable(site):
    """docs/workshop.md's schedule is notebooks/README.md's workshop track, with its breaks, from 0:00."""
    text = page_text(site / "workshop" / "index.html")
    readme = (ROOT / "notebooks" / "README.md").read_text(encoding="utf-8")
    track = re.findall(r"^\| (\d\d · [^|]+?) \| (\d+) \| ✓ \|$", readme, flags=re.M)
    assert len(track) >= 4 and squeeze("0:00") in text and "break" in text
    for title, minutes in track:
        assert squeeze(f"{title}{minutes}") in text, title

def test_build_has_no_warnings(build):
    _, log = build
    assert not [line for line in log.splitlines() if line.startswith(("WARNING", "ERROR"))], log[-4000:]


class Links(HTMLParser):
    """The ids a page defines and the URLs it links to (href and src)."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.urls: list[str] = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("id", "name") and value:
                self.ids.add(value)
            elif name in ("href", "src") and value:
                self.urls.append(value)


@functools.cache
def parse(path: Path) -> Links:
    links = Links()
    links.feed(path.read_text(encoding="utf-8"))
    return links


def test_no_broken_internal_links(site):
    broken = []
    for page in sorted(site.rglob("*.html")):
        here = page.relative_to(site).parent.as_posix()
        for url in parse(page).urls:
            parts = urlsplit(url)
            if parts.scheme or parts.netloc or url.startswith(("//", "/")):
                continue
            target = site / posixpath.normpath(posixpath.join(here, unquote(parts.path))) if parts.path else page
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append(f"{page.relative_to(site)}: {url}")
            elif parts.fragment and target.suffix == ".html" and unquote(parts.fragment) not in parse(target).ids:
                broken.append(f"{page.relative_to(site)}: {url} (no such anchor)")
    assert not broken, "\n".join(broken)


@pytest.fixture
def server(site):
    handler = functools.partial(QuietHandler, directory=str(site))
    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) as httpd:
        thread = threading.Thread(target=httpd.serve_forever, daemon=True)
        thread.start()
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
        httpd.shutdown()
        thread.join(timeout=10)


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):
        pass


BROWSER_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]



def rendered(browser: str, url: str, profile: Path) -> str:
    """The DOM of a page as a reader's browser has it, after its scripts ran."""
    command = [browser, *BROWSER_FLAGS, f"--user-data-dir={profile}", "--dump-dom", url]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and "</html>" in result.stdout, f"{url}: {result.stderr[-2000:]}"
    return result.stdout


def png_outputs(notebook: Path) -> int:
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    return sum("image/png" in o.get("data", {}) for c in cells for o in c.get("outputs", []))


def test_a_reader_sees_outputs_plots_and_the_glossary_in_a_real_browser(site, server, tmp_path):
    """Each notebook page, rendered by headless Chromium: its outputs and every plot are there, and
    the glossary and sources links it has lead to pages that have the linked term."""
    browser = chromium()
    problems = []
    for notebook in NOTEBOOKS:
        path = f"notebooks/{notebook.stem}/"
        dom = rendered(browser, f"{server}/{path}", tmp_path / "profile")
        text = squeeze(html.unescape(re.sub(r"<[^>]+>", "", dom)))
        if squeeze(output_only_line(notebook)) not in text:
            problems.append(f"{notebook.stem}: an output is not on the page")
        plots = dom.count('src="data:image/png')
        if plots != png_outputs(notebook):
            problems.append(f"{notebook.stem}: {plots} plots shown, {png_outputs(notebook)} in the notebook")
        source = notebook.read_text(encoding="utf-8")
        links = Links()
        links.feed(dom)
        for page in ("glossary", "sources"):
            if f"../docs/{page}.md" not in source:
                continue
            targets = [urlsplit(url) for url in links.urls if urlsplit(url).path.rstrip("/").endswith(f"../{page}")]
            if not targets:
                problems.append(f"{notebook.stem}: links {page}.md in the notebook, but not on its page")
            for url in targets:
                target = site / posixpath.normpath(posixpath.join(path, url.path)) / "index.html"
                if not target.is_file() or (url.fragment and url.fragment not in parse(target).ids):
                    problems.append(f"{notebook.stem}: a link to {page}/#{url.fragment} leads nowhere")
    for page, heading in (("glossary", "Glossary"), ("sources", "Sources"), ("choosing", "Choosing a strategy"),
                          ("cheatsheet", "Cheat sheet"), ("workshop", "Running a workshop")):
        if heading not in rendered(browser, f"{server}/{page}/", tmp_path / "profile"):
            problems.append(f"the {page} page does not render")
    assert not problems, "\n".join(problems)


def test_a_notebook_page_renders_in_a_headless_browser(server, tmp_path):
    browser = chromium()
    screenshot = tmp_path / "page.png"
    command = [
        browser, *BROWSER_FLAGS, f"--user-data-dir={tmp_path / 'profile'}",
        f"--screenshot={screenshot}", "--window-size=1200,900", f"{server}/notebooks/01_fixed_size/",
    ]  # fmt: skip
    subprocess.run(command, capture_output=True, timeout=60)
    assert screenshot.is_file()
    assert screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert screenshot.stat().st_size > 10_000
