"""The playground, tested twice: the function behind the widget, driven with values and checked on the
boundaries it renders; and the widget itself in a real JupyterLab, driven by headless Chromium.

The browser test talks to Chromium over the DevTools protocol with `websocket-client` (which
jupyter_server already needs): no driver, nothing downloaded. Chromium may reach 127.0.0.1 only, so
the widget's front end must come from the installed jupyterlab_widgets. Without Chromium it skips,
except on CI (CHUNKING_REQUIRE_BROWSER=1), where it fails.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import itertools
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from html.parser import HTMLParser
from pathlib import Path

import pytest

from chunking import chunk
from chunking.playground import PASTE, STRUCTURAL, UNITS, Result, render, run
from chunking.registry import STRATEGIES
from chunking.tokens import count_tokens
from tests.conftest import AWKWARD, ROOT, chromium, corpus_texts, length_of

FAQ = corpus_texts()["harbor_cycles_faq.md"]
TEXTS = {**{k: AWKWARD[k] for k in ("empty", "emoji-zwj", "crlf", "markdown", "injection")}, "faq": FAQ[:6000]}
SIZE = {"tokens": 40, "characters": 160, "sentences": 3}
# Every strategy by tokens with and without overlap, by characters with overlap, by sentences where it can.
CASES = [(s, u, o) for s in STRUCTURAL for u in UNITS[s] for o in (0, 1) if u == "tokens" or o or u == "sentences"]
CASE_IDS = [f"{s}-{u}-{'overlap' if o else 'no-overlap'}" for s, u, o in CASES]


class Rendered(HTMLParser):
    """What a reader of `render`'s HTML sees: the coloured view's text, where its grey chunk numbers
    stand (character offsets into that text), and each table row's data attributes."""

    def __init__(self, page: str) -> None:
        super().__init__()
        self.text, self.marks, self.rows, self._depth, self._in_mark = "", {}, [], 0, False
        self.feed(page)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "div" and (self._depth or attrs.get("class") == "view"):
            self._depth += 1
        self._in_mark = self._in_mark or (self._depth > 0 and tag == "sup")
        if tag == "tr" and attrs.get("class") == "chunk":
            self.rows.append(tuple(int(attrs[f"data-{k}"]) for k in ("start", "end", "size", "tokens")))

    def handle_endtag(self, tag):
        self._depth -= tag == "div" and self._depth > 0
        self._in_mark = self._in_mark and tag != "sup"

    def handle_data(self, data):
        if self._in_mark:
            self.marks[int(data)] = len(self.text)
        elif self._depth:
            self.text += data


def options(unit: str, overlap: int) -> dict:
    return {"chunk_size": SIZE[unit], "chunk_overlap": overlap * max(1, SIZE[unit] // 4), "unit": unit}


@functools.cache
def case(strategy: str, unit: str, overlap: int, name: str) -> tuple[str, list, Result, Rendered]:
    """A case's text, the library's chunks, the playground's result and its rendered HTML (made once:
    four tests read each)."""
    text, given = TEXTS[name], options(unit, overlap)
    return text, chunk(text, strategy, **given), run(text, strategy, **given), Rendered(render(text, strategy, **given))


# --- the function behind the widget, driven with values ---------------------------------------------


@pytest.mark.parametrize("name", TEXTS)
@pytest.mark.parametrize(("strategy", "unit", "overlap"), CASES, ids=CASE_IDS)
def test_the_spans_are_the_library_spans(strategy, unit, overlap, name):
    _, chunks, result, _ = case(strategy, unit, overlap, name)
    assert [(s.index, s.start, s.end) for s in result.spans] == [(c.index, c.start, c.end) for c in chunks]


@pytest.mark.parametrize("name", TEXTS)
@pytest.mark.parametrize(("strategy", "unit", "overlap"), CASES, ids=CASE_IDS)
def test_sizes_are_in_the_unit_and_tokens_are_cl100k(strategy, unit, overlap, name):
    text, _, result, _ = case(strategy, unit, overlap, name)
    assert [s.size for s in result.spans] == [length_of(unit)(text[s.start:s.end]) for s in result.spans]
    assert [s.tokens for s in result.spans] == [count_tokens(text[s.start:s.end]) for s in result.spans]


@pytest.mark.parametrize("name", TEXTS)
@pytest.mark.parametrize(("strategy", "unit", "overlap"), CASES, ids=CASE_IDS)
def test_the_html_shows_the_whole_text_with_a_mark_where_each_chunk_starts(strategy, unit, overlap, name):
    text, chunks, _, page = case(strategy, unit, overlap, name)
    assert page.text == text
    assert page.marks == {c.index: c.start for c in chunks}


@pytest.mark.parametrize("name", TEXTS)
@pytest.mark.parametrize(("strategy", "unit", "overlap"), CASES, ids=CASE_IDS)
def test_the_html_table_has_each_chunk_offsets_size_and_tokens(strategy, unit, overlap, name):
    _, _, result, page = case(strategy, unit, overlap, name)
    assert page.rows == [(s.start, s.end, s.size, s.tokens) for s in result.spans]


def test_the_summary_line_counts_chunks_and_tokens():
    result = run(FAQ, "recursive", chunk_size=100)
    tokens = [s.tokens for s in result.spans]
    assert result.summary == (f"{len(tokens)} chunks, mean {sum(tokens) / len(tokens):.1f} tokens, max {max(tokens)} "
                              "(chunk_size 100 tokens)")
    assert f"<b>{result.summary}</b>" in render(FAQ, "recursive", chunk_size=100)


@pytest.mark.parametrize(("given", "message"), [
    ({"chunk_size": 100, "chunk_overlap": 100}, "ValueError: chunk_overlap must be >= 0 and < chunk_size=100, got 100"),
    ({"chunk_size": 100, "chunk_overlap": 150}, "ValueError: chunk_overlap must be >= 0 and < chunk_size=100, got 150"),
    ({"chunk_size": -5}, "ValueError: chunk_size must be > 0, got -5"),
    ({"chunk_size": 0}, "ValueError: chunk_size must be > 0, got 0"),
    ({"chunk_size": 2.5}, "TypeError: chunk_size must be an int, got 2.5"),
    ({"strategy": "nope"}, "ValueError: strategy must be one of"),
    ({"strategy": "semantic"}, "ValueError: strategy must be one of ['fixed', 'sentence', 'paragraph', 'markdown', "
                               "'sliding', 'recursive'] in the playground (no model), got 'semantic'"),
    ({"unit": "words"}, "ValueError: unit must be one of"),
    ({"strategy": "fixed", "unit": "sentences"}, "ValueError: unit='sentences' is only for"),
])
def test_an_invalid_value_shows_the_library_message_naming_it(given, message):
    result = run("Some text. More text.", **given)
    assert result.error.startswith(message) and result.spans == ()
    assert result.summary == result.error
    assert 'class="error"' in render("Some text. More text.", **given)


def test_an_unknown_strategy_gets_the_registry_own_message():
    with pytest.raises(ValueError) as raised:
        chunk("text", "nope")
    assert run("text", "nope").error == f"ValueError: {raised.value}"


def test_every_strategy_of_the_registry_is_in_the_playground_or_needs_more_than_boundaries():
    assert set(STRATEGIES) - set(STRUCTURAL) == {"semantic", "parent_child", "contextual"}


def test_the_text_is_escaped_in_the_html():
    page = render("<script>alert(1)</script>", "fixed", chunk_size=5)
    assert "<script>" not in page and "&lt;script&gt;" in page


def test_importing_the_playground_loads_no_widget_store_or_model():
    script = "import json, sys, chunking.playground; print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    loaded = set(json.loads(subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                                           check=True).stdout))
    assert not loaded & {"ipywidgets", "qdrant_client", "torch", "onnxruntime", "sentence_transformers"}, loaded


def test_without_ipywidgets_the_playground_says_how_to_install(monkeypatch):
    from chunking.playground import playground

    monkeypatch.setitem(sys.modules, "ipywidgets", None)
    with pytest.raises(ImportError, match=r"pip install -e '\.\[notebooks\]'"):
        playground({"doc": "text"})


# --- the widget, built headlessly (ipywidgets needs no front end) -----------------------------------


@pytest.fixture
def widget():
    pytest.importorskip("ipywidgets")
    from chunking.playground import playground

    return playground({"faq": FAQ, "markdown": AWKWARD["markdown"]})


def test_the_widget_opens_on_recursive_and_the_first_document(widget):
    assert widget.output.value == render(FAQ, "recursive", chunk_size=200)
    assert list(widget.document.options) == ["faq", "markdown", PASTE]


def test_moving_the_size_slider_redraws_the_output(widget):
    before = widget.output.value
    widget.size.value = 60
    assert widget.output.value != before
    assert widget.output.value == render(FAQ, "recursive", chunk_size=60)


def test_moving_the_overlap_slider_redraws_the_output(widget):
    widget.overlap.value = 50
    assert widget.output.value == render(FAQ, "recursive", chunk_size=200,
                                         chunk_overlap=50)


def test_an_overlap_as_large_as_the_size_shows_the_library_error(widget):
    widget.overlap.value = 200
    assert "chunk_overlap must be &gt;= 0 and &lt; chunk_size=200, got 200" in widget.output.value


def test_sentence_strategies_offer_sentences_with_their_own_slider_range(widget):
    assert "sentences" not in widget.unit.options
    widget.strategy.value = "sliding"
    widget.unit.value = "sentences"
    assert (widget.size.min, widget.size.max, widget.size.value) == (1, 20, 5)
    assert widget.output.value == render(FAQ, "sliding", chunk_size=5, unit="sentences")


def test_leaving_a_sentence_strategy_goes_back_to_tokens(widget):
    widget.strategy.value = "sentence"
    widget.unit.value = "sentences"
    widget.strategy.value = "markdown"
    assert (widget.unit.value, widget.size.value, widget.size.max) == ("tokens", 200, 1000)
    assert widget.output.value == render(FAQ, "markdown", chunk_size=200)


def test_pasted_text_is_shown_in_a_box_and_chunked(widget):
    assert widget.pasted.layout.display == "none"
    widget.document.value = PASTE
    widget.pasted.value = "One. Two. Three."
    assert widget.pasted.layout.display == ""
    assert widget.output.value == render("One. Two. Three.", "recursive", chunk_size=200)


# --- the widget in a real JupyterLab, driven by headless Chromium ----------------------------------

NOTEBOOK = ROOT / "notebooks" / "playground.ipynb"
TOKEN = "chunking-playground-test"
BROWSER_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--window-size=1300,1000",
                 # nothing but this machine: the widget's JavaScript must come from the installed packages
                 "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"]
NOTEBOOK_READY = """(() => {
  const app = window.jupyterapp;
  const panel = app && Array.from(app.shell.widgets('main')).find(w => w.sessionContext);
  const kernel = panel && panel.sessionContext.session && panel.sessionContext.session.kernel;
  if (panel) app.shell.activateById(panel.id);
  return !!(kernel && kernel.status === 'idle' && kernel.connectionStatus === 'connected' && panel.context.isReady);
})()"""
SUMMARY = "(document.querySelector('.chunking-playground .summary') || {}).textContent || ''"
READOUT = "document.querySelector('.widget-slider .widget-readout').textContent"


def needed(module: str) -> None:
    """Skip without `module` — but fail on CI, where the browser test must run."""
    if importlib.util.find_spec(module) is None:
        if os.environ.get("CHUNKING_REQUIRE_BROWSER"):
            pytest.fail(f"CHUNKING_REQUIRE_BROWSER is set but {module} is not installed (pip install -e '.[all]')")
        pytest.skip(f"{module} is not installed (pip install -e '.[all]')")



def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(check, timeout: float, what: str, step: float = 0.1):
    """`check()`'s first truthy value, polled until `timeout` seconds have passed."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := check():
            return value
        time.sleep(step)
    raise TimeoutError(f"{what}: not after {timeout} s")


@pytest.fixture
def lab(tmp_path):
    """A JupyterLab server on a free port, in a folder holding a copy of the playground notebook and
    its own settings (news off); yields its URL, and stops its kernels and itself whatever happens."""
    needed("jupyterlab")
    folder = tmp_path / "notebooks"
    folder.mkdir()
    shutil.copy(NOTEBOOK, folder / NOTEBOOK.name)
    settings = tmp_path / "settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    (settings / "notification.jupyterlab-settings").write_text('{"fetchNews": "false", "checkForUpdates": false}')
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(tmp_path / "config"), "JUPYTER_RUNTIME_DIR": str(tmp_path / "run"),
           "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "settings"), "IPYTHONDIR": str(tmp_path / "ipython"),
           "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "workspaces")}
    port = free_port()
    command = [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", f"--port={port}", "--port-retries=0",
               "--ServerApp.ip=127.0.0.1", f"--IdentityProvider.token={TOKEN}", f"--ServerApp.root_dir={folder}",
               "--LabApp.expose_app_in_browser=True", "--LabApp.extension_manager=readonly", "--LabApp.news_url=None"]
    log = (tmp_path / "server.log").open("w")
    server = subprocess.Popen(command, cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT,
                              start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: server.poll() is not None or _answers(f"{url}/api/status?token={TOKEN}"), 60, "the server")
        assert server.poll() is None, (tmp_path / "server.log").read_text()[-3000:]
        yield url
    finally:
        with contextlib.suppress(OSError):
            for kernel in json.loads(_request(f"{url}/api/kernels?token={TOKEN}")):
                _request(f"{url}/api/kernels/{kernel['id']}?token={TOKEN}", method="DELETE")
        _stop(server)
        log.close()


class Chromium:
    """Headless Chromium driven over the DevTools protocol: evaluate JavaScript, wait for a value,
    press keys. Nothing to download: the system browser and websocket-client."""

    def __init__(self, executable: str, profile: Path) -> None:
        import websocket

        command = [executable, *BROWSER_FLAGS, "--remote-debugging-port=0", f"--user-data-dir={profile}", "about:blank"]
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                        start_new_session=True)
        self.ids = itertools.count(1)
        try:
            active = profile / "DevToolsActivePort"  # the port Chromium chose, written once it listens
            port = wait_until(lambda: active.is_file() and active.read_text().split()[:1], 30, "the browser")[0]
            pages = json.loads(_request(f"http://127.0.0.1:{port}/json"))
            address = next(p["webSocketDebuggerUrl"] for p in pages if p["type"] == "page")
            self.socket = websocket.create_connection(address, timeout=60, suppress_origin=True)
        except BaseException:
            _stop(self.process)
            raise

    def send(self, method: str, **params) -> dict:
        number = next(self.ids)
        self.socket.send(json.dumps({"id": number, "method": method, "params": params}))
        while (message := json.loads(self.socket.recv())).get("id") != number:
            pass  # an event: none is subscribed to, so none is needed
        assert "error" not in message, message
        return message["result"]

    def evaluate(self, expression: str):
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True)
        assert "exceptionDetails" not in result, result["exceptionDetails"]
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 60):
        return wait_until(lambda: self.evaluate(expression), timeout, expression)

    def press(self, key: str, code: int) -> None:
        for kind in ("keyDown", "keyUp"):
            self.send("Input.dispatchKeyEvent", type=kind, key=key, code=key, windowsVirtualKeyCode=code)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.socket.close()
        _stop(self.process)


@pytest.fixture
def browser(tmp_path):
    needed("websocket")
    driven = Chromium(chromium(), tmp_path / "profile")
    try:
        yield driven
    finally:
        driven.close()


@pytest.mark.xdist_group("browser")  # two browsers and two kernels at once only slow each other down
def test_the_widget_renders_in_jupyterlab_and_follows_its_size_slider(lab, browser):
    """Open the notebook, run its cells, wait for the widget; three ArrowLeft presses on the size
    slider's handle must redraw the output as `run` would draw it at the slider's new value."""
    from chunking.datasets import corpus_dir
    from chunking.load import load_corpus

    first = load_corpus(corpus_dir())[0].text  # the document the widget opens on
    browser.send("Page.navigate", url=f"{lab}/lab/tree/playground.ipynb?token={TOKEN}")
    browser.wait_for(NOTEBOOK_READY, timeout=90)
    browser.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells'), true")
    assert browser.wait_for(SUMMARY) == run(first, "recursive", chunk_size=200).summary
    browser.evaluate("document.querySelector('.widget-slider .noUi-handle').focus()")
    for _ in range(3):
        browser.press("ArrowLeft", 37)
    browser.wait_for(f"{READOUT} === '170'", timeout=10)
    expected = run(first, "recursive", chunk_size=170)
    assert browser.wait_for(f"({SUMMARY}) === {json.dumps(expected.summary)}", timeout=30)
    assert browser.evaluate("document.querySelectorAll('.chunking-playground tr.chunk').length") == len(expected.spans)


def _answers(url: str) -> bool:
    with contextlib.suppress(OSError):
        return bool(_request(url))
    return False


def _request(url: str, method: str = "GET") -> str:
    with urllib.request.urlopen(urllib.request.Request(url, method=method), timeout=10) as response:
        return response.read().decode()


def _stop(process: subprocess.Popen) -> None:
    """Terminate a process started in its own session, then kill its group if it lingers."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=15)
