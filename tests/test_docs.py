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
import shutil
import subprocess
import sys
import threading
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from tests.conftest import ROOT

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
    assert configs and all(f"<td>{config}</td>" in page for config in configs)
    assert {p.name for p in (site / "results").glob("*.csv")} == {"results.csv", "per_document.csv", "per_question.csv"}


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


def test_a_notebook_page_renders_in_a_headless_browser(server, tmp_path):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("chromium is not installed")
    screenshot = tmp_path / "page.png"
    command = [
        chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}",
        f"--screenshot={screenshot}", "--window-size=1200,900", f"{server}/notebooks/01_fixed_size/",
    ]  # fmt: skip
    subprocess.run(command, capture_output=True, timeout=60)
    assert screenshot.is_file()
    assert screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert screenshot.stat().st_size > 10_000
