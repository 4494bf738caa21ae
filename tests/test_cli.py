"""The command line, driven as a subprocess: output, files and points written, exit codes 0 / 1 / 2 / 130.

Loading the model costs seconds per process, so one module-scoped `index` run (cold embedding cache)
serves several tests, and later runs find their vectors in the shared cache.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import signal
import socket
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from qdrant_client import models

from chunking import store
from tests.conftest import held_open

INSTALLED = Path(sys.executable).parent / "chunking"
MODULE = (sys.executable, "-m", "chunking")
DOCS = {
    "valves.md": "# Valves\n\nThe alpha valve opens at 40 kPa and closes again at 10 kPa. Inspect its seals every "
    "spring.\n",
    "bikes.txt": "Harbor bikes can be rented at 96 docks around the bay. A day pass costs 8 euros and includes "
    "unlimited rides of up to 30 minutes each.",
    "tea.md": "Green tea is brewed at 70 degrees for two minutes, never with boiling water, or it turns bitter.\n\n"
    "Black tea wants freshly boiled water and four to five minutes, then milk or lemon if you like.\n",
}
QUESTION = "How much does a day pass for the bikes cost?"


@pytest.fixture(autouse=True)
def no_qdrant_server(monkeypatch):
    """This process opens the test folders too, and must not be sent to a configured server either."""
    monkeypatch.delenv(store.URL_ENV, raising=False)
    monkeypatch.delenv(store.KEY_ENV, raising=False)


def env(**extra: str) -> dict[str, str]:
    """The environment of every run: offline, and never a Qdrant server the developer has configured."""
    base = {k: v for k, v in os.environ.items() if k not in (store.URL_ENV, store.KEY_ENV)}
    return {**base, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", **extra}


def run(*args: str, cwd=None, command=MODULE, timeout: float = 300, **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([*command, *args], capture_output=True, text=True, cwd=cwd, env=env(**extra),
                          timeout=timeout)


def one_error_line(result: subprocess.CompletedProcess) -> str:
    """The stderr of a failed run: exactly one line, no traceback."""
    assert result.returncode == 1, (result.returncode, result.stderr)
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("chunking: error: "), result.stderr
    return result.stderr


def write_docs(folder: Path) -> Path:
    folder.mkdir(parents=True)
    for name, text in DOCS.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> dict[str, str]:
    """One embedding cache for this module's runs (shared by the xdist workers of a session)."""
    base = tmp_path_factory.getbasetemp()
    folder = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "cli-embedding-cache"
    folder.mkdir(exist_ok=True)
    return {"CHUNKING_CACHE_DIR": str(folder)}


@pytest.fixture(scope="module")
def indexed(tmp_path_factory, cache):
    """`chunking index docs --chunk-size 30` run once in a fresh folder (the store is ./.qdrant)."""
    root = tmp_path_factory.mktemp("indexed")
    docs = write_docs(root / "docs")
    with open(Path(cache["CHUNKING_CACHE_DIR"]) / "first-run.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one worker embeds with the model, the other then finds the vectors
        first = run("index", str(docs), "--chunk-size", "30", cwd=root, **cache)
    assert first.returncode == 0, first.stderr
    return SimpleNamespace(root=root, docs=docs, store=root / ".qdrant", first=first)


def points(folder: Path, collection: str = "chunks") -> int:
    client = store.connect(folder)
    try:
        return client.count(collection, exact=True).count
    finally:
        client.close()


@pytest.fixture
def corpus(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text("# Alpha\n\nThe alpha valve opens at 40 kPa.\n\n## Beta\n\nBeta closes at noon.\n")
    (folder / "b.txt").write_text("Gamma rays are energetic. Delta wings are triangular.")
    text = (folder / "a.md").read_text()
    start = text.index("The alpha valve")
    ref = {"doc": "a.md", "start": start, "end": start + 32, "text": text[start : start + 32]}
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"question": "When does the alpha valve open?", "references": [ref]}) + "\n")
    return folder, questions


# chunk


def test_chunk_prints_json_lines_with_exact_offsets(corpus):
    folder, _ = corpus
    result = run("chunk", str(folder / "a.md"), "--strategy", "markdown", "--chunk-size", "50")
    assert result.returncode == 0, result.stderr
    text = (folder / "a.md").read_text()
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert all(text[r["start"] : r["end"]] == r["text"] for r in rows)
    assert rows[1]["metadata"]["heading_path"] == ["Alpha", "Beta"]
    assert rows[1]["metadata"]["title"] == "Alpha" and rows[1]["metadata"]["kind"] == "markdown"


def test_chunk_reads_every_supported_file_of_a_folder(corpus):
    folder, _ = corpus
    result = run("chunk", str(folder), "--format", "table")
    assert result.returncode == 0, result.stderr
    assert [line.split("\t")[0] for line in result.stdout.splitlines()] == ["a.md", "b.txt"]


def test_table_output_shows_control_characters_escaped(tmp_path):
    (tmp_path / "ansi.txt").write_text("plain \x1b[31mred\x1b[0m and a bell\x07.", encoding="utf-8")
    result = run("chunk", str(tmp_path / "ansi.txt"), "--format", "table")
    assert result.returncode == 0, result.stderr
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout
    assert "\\x1b[31mred" in result.stdout


@pytest.mark.parametrize(
    ("files", "named"),
    [
        ({"bad.txt": b"ok \xff\xfe not utf-8"}, ["bad.txt", "UTF-8"]),
        ({"notes.docx": b"x"}, ["notes.docx", ".docx"]),
        ({}, ["missing.md", "does not exist"]),
        ({"empty/readme.rst": b"x"}, ["empty", "no file"]),
        ({"a/same.md": b"one", "b/same.md": b"two"}, ["same.md", "rename"]),
    ],
    ids=["undecodable", "unsupported-suffix", "missing", "folder-without-documents", "same-name-twice"],
)
def test_unreadable_input_is_one_line_naming_it(tmp_path, files, named):
    for name, data in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(data)
    paths = sorted({name.split("/")[0] for name in files}) or ["missing.md"]
    message = one_error_line(run("chunk", *paths, cwd=tmp_path))
    assert all(part in message for part in named), message


# index and search


def test_index_prints_a_one_line_summary(indexed):
    summary = indexed.first.stdout
    assert summary.count("\n") == 1
    assert "indexed 3 documents" in summary and "collection 'chunks'" in summary and str(indexed.store) in summary


def test_no_progress_bar_when_stderr_is_not_a_terminal(indexed):
    assert indexed.first.stderr == ""


def test_reindexing_adds_no_duplicates(indexed, cache):
    before = points(indexed.store)
    again = run("index", str(indexed.docs), "--chunk-size", "30", cwd=indexed.root, **cache)
    assert again.returncode == 0, again.stderr
    assert points(indexed.store) == before and ": 0 written, 0 stale removed" in again.stdout


def test_search_ranks_the_answering_document_first(indexed, cache):
    result = run("search", QUESTION, cwd=indexed.root, **cache)
    assert result.returncode == 0, result.stderr
    header, first, *_ = result.stdout.splitlines()
    assert header.split() == ["rank", "score", "doc", "start", "end", "text"]
    assert re.match(r"1 +0\.\d{3} +bikes\.txt +\d+ +\d+ +\S", first), first


def test_search_as_json_lines_gives_exact_spans(indexed, cache):
    result = run("search", QUESTION, "--k", "2", "--format", "jsonl", cwd=indexed.root, **cache)
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["rank"] for r in rows] == [1, 2] and rows[0]["doc"] == "bikes.txt"
    assert all(DOCS[r["doc"]][r["start"] : r["end"]] == r["text"] for r in rows)


def test_a_terminal_gets_a_progress_bar(indexed, cache):
    terminal, stderr = pty.openpty()
    fcntl.ioctl(stderr, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))  # a new pty is 0 columns wide
    try:
        result = subprocess.run([*MODULE, "index", str(indexed.docs), "--chunk-size", "30"], cwd=indexed.root,
                                stdout=subprocess.PIPE, stderr=stderr, text=True, env=env(**cache), timeout=300)
    finally:
        os.close(stderr)
    shown = read_all(terminal)
    assert result.returncode == 0
    assert "100%" in shown and "document" in shown


def test_a_reindexed_document_loses_its_old_chunks(indexed, cache, tmp_path):
    # tea.md's first paragraph stays as it was (same span, same cached vector); its second goes
    docs = write_docs(tmp_path / "docs")
    first, second = DOCS["tea.md"].split("\n\n")
    assert run("index", str(docs), "--chunk-size", "30", "--path", str(tmp_path / "q"), **cache).returncode == 0
    before = points(tmp_path / "q")
    (docs / "tea.md").write_text(first + "\n", encoding="utf-8")
    result = run("index", str(docs), "--chunk-size", "30", "--path", str(tmp_path / "q"), **cache)
    assert result.returncode == 0, result.stderr
    assert ", 1 stale removed" in result.stdout and points(tmp_path / "q") == before - 1


def test_a_mismatched_collection_is_an_error_and_is_kept(indexed, cache, tmp_path):
    client = store.connect(tmp_path / "q")
    store.ensure_collection(client, "chunks", 8)
    client.upsert("chunks", [models.PointStruct(id=1, vector={store.DENSE: [1.0] * 8})])
    client.close()
    message = one_error_line(run("index", str(indexed.docs), "--chunk-size", "30", "--path", str(tmp_path / "q"),
                                 **cache))
    assert "different vectors" in message and "--recreate" in message
    assert points(tmp_path / "q") == 1


def test_search_for_a_missing_collection_names_it_and_lists_the_others(tmp_path):
    client = store.connect(tmp_path / "q")
    store.ensure_collection(client, "notes", 8)
    client.close()
    message = one_error_line(run("search", "anything", "--path", str(tmp_path / "q"), "--collection", "manual"))
    assert "'manual'" in message and str(tmp_path / "q") in message and "'notes'" in message


def test_search_without_a_store_does_not_create_one(tmp_path):
    message = one_error_line(run("search", "anything", cwd=tmp_path))
    assert "no Qdrant store" in message and not (tmp_path / ".qdrant").exists()


def test_qdrant_url_from_the_environment_is_used(tmp_path):
    url = f"http://127.0.0.1:{closed_port()}"
    message = one_error_line(run("search", "anything", cwd=tmp_path, QDRANT_URL=url))
    assert f"cannot reach Qdrant at '{url}'" in message


def test_an_explicit_path_wins_over_qdrant_url(tmp_path):
    client = store.connect(tmp_path / "q")
    store.ensure_collection(client, "notes", 8)
    client.close()
    url = f"http://127.0.0.1:{closed_port()}"
    message = one_error_line(run("search", "anything", "--path", str(tmp_path / "q"), QDRANT_URL=url))
    assert "no collection 'chunks'" in message and url not in message


def test_index_into_a_folder_open_in_another_process_says_so(tmp_path):
    docs = write_docs(tmp_path / "docs")
    folder = tmp_path / "q"
    with held_open(folder):
        message = one_error_line(run("index", str(docs), "--path", str(folder)))
    assert "open in another process" in message and str(folder) in message


def test_an_unreachable_url_is_named_within_a_bounded_time(tmp_path):
    docs = write_docs(tmp_path / "docs")
    url = f"http://127.0.0.1:{closed_port()}"
    started = time.monotonic()
    message = one_error_line(run("index", str(docs), "--url", url, timeout=60))
    assert time.monotonic() - started < 30
    assert url in message


# exit codes, help, the installed command


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["nope"],
        ["chunk"],
        ["chunk", "x.txt", "--strategy", "nope"],
        ["chunk", "x.txt", "--chunk-size", "0"],
        ["chunk", "x.txt", "--chunk-overlap", "abc"],
        ["chunk", "x.txt", "--chunk-size", "10", "--chunk-overlap", "20"],
        ["chunk", "x.txt", "--unit", "lines"],
        ["index"],
        ["index", "docs", "--path", "q", "--url", "http://localhost:6333"],
        ["index", "docs", "--url", "localhost:6333"],
        ["index", "docs", "--api-key", "secret"],
        ["search"],
        ["search", " "],
        ["search", "q", "--k", "0"],
        ["evaluate", "--corpus", "docs"],
    ],
    ids=lambda args: " ".join(args) or "no-command",
)
def test_bad_usage_exits_2_with_the_usage(args):
    result = run(*args)
    assert result.returncode == 2 and result.stderr.startswith("usage: chunking")
    assert result.stderr.splitlines()[-1].startswith("chunking")


@pytest.mark.parametrize("command", ["chunk", "index", "search", "evaluate", "demo"])
def test_every_command_has_help_with_examples(command):
    result = run(command, "--help")
    assert result.returncode == 0
    assert "examples:" in result.stdout and f"  chunking {command} " in result.stdout


def test_the_installed_command_is_the_module(corpus):
    folder, _ = corpus
    args = ("chunk", str(folder), "--format", "table")
    installed, module = run(*args, command=(str(INSTALLED),)), run(*args)
    assert installed.returncode == module.returncode == 0
    assert installed.stdout == module.stdout and installed.stdout


def test_a_damaged_embedding_cache_is_one_warning_and_the_index_is_written(indexed, cache, tmp_path):
    folder = tmp_path / "cache"
    folder.mkdir()
    (folder / "onnx").symlink_to(Path(cache["CHUNKING_CACHE_DIR"]) / "onnx")  # the model's export, made once
    (folder / "embeddings.sqlite").write_bytes(b"not a database " * 100)
    result = run("index", str(indexed.docs), "--chunk-size", "30", "--path", str(tmp_path / "q"),
                 CHUNKING_CACHE_DIR=str(folder))
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    [line] = [line for line in result.stderr.splitlines() if line.startswith("chunking: warning:")]
    assert "embeddings.sqlite" in line and "carrying on without it" in line
    assert points(tmp_path / "q") == points(indexed.store)


def test_text_a_word_file_leaves_out_is_one_warning_line(tmp_path):
    import docx

    document = docx.Document()
    document.add_paragraph("Body text.")
    document.sections[0].header.paragraphs[0].text = "A header Word shows on every page"
    document.save(tmp_path / "memo.docx")
    result = run("chunk", str(tmp_path / "memo.docx"))
    assert result.returncode == 0 and json.loads(result.stdout)["text"] == "Body text."
    assert result.stderr.startswith("chunking: warning: file ") and result.stderr.count("\n") == 1, result.stderr
    assert "left out 1 header" in result.stderr


def test_ctrl_c_exits_130_with_one_line(tmp_path):
    listener = socket.create_server(("127.0.0.1", 0))  # a "Qdrant server" that accepts and never answers
    listener.settimeout(60)
    url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    # a shell's background job ignores SIGINT, and a child inherits that: give it the default back
    process = subprocess.Popen([*MODULE, "search", "anything", "--url", url], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=env(),
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    with listener, listener.accept()[0]:  # connected: the command is inside main(), waiting for an answer
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130 and stderr == "chunking: interrupted\n"


def test_a_closed_pipe_ends_quietly(tmp_path):
    (tmp_path / "long.txt").write_text("word " * 100_000)
    process = subprocess.Popen([*MODULE, "chunk", str(tmp_path / "long.txt"), "--unit", "characters",
                                "--chunk-size", "10"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env())
    process.stdout.readline()
    process.stdout.close()  # like `| head -1`
    stderr = process.stderr.read()
    assert process.wait(timeout=60) == 141 and stderr == b""


# evaluate


def test_evaluate_writes_the_table_csv_and_plots(corpus, tmp_path):
    folder, questions = corpus
    out = tmp_path / "out"
    result = run("evaluate", "--corpus", str(folder), "--questions", str(questions), "--strategies",
                 "sentence,fixed", "--chunk-size", "20", "--k", "2", "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert "sentence-20" in result.stdout and "recall" in result.stdout
    header = (out / "results.csv").read_text().splitlines()[0].split(",")
    assert header[:2] == ["config", "strategy"] and "recall" in header and "iou" in header
    assert (out / "recall_vs_tokens.png").stat().st_size > 0 and (out / "chunk_sizes.png").exists()
    assert "config/s" not in result.stderr  # no progress bar off a terminal


def test_wrong_offsets_in_questions_are_reported(corpus, tmp_path):
    folder, questions = corpus
    row = json.loads(questions.read_text())
    row["references"][0]["start"] += 1
    questions.write_text(json.dumps(row) + "\n")
    result = run("evaluate", "--corpus", str(folder), "--questions", str(questions), "--out", str(tmp_path / "o"))
    assert result.returncode == 1 and "references[0]" in result.stderr


# checked before anything runs: usage errors (exit 2) and config files (exit 1, naming file, line, entry)

EVALUATE = ["evaluate", "--corpus", "docs", "--questions", "q.jsonl"]


def cli_main(args: list[str]) -> int:
    """The command in this process (a stop before any work needs no subprocess, nor the model)."""
    from chunking import cli

    return cli.main(args)


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["chunk", "x.txt", "--strategy", "fixed", "--unit", "sentences"], "--unit sentences is only for"),
        (["index", "x.txt", "--strategy", "markdown", "--unit", "sentences"], "--unit sentences is only for"),
        (["chunk", "x.txt", "--strategy", "fixed", "--min-chunk-size", "5"], "--min-chunk-size is an option of"),
        (["chunk", "x.txt", "--chunk-size", "10", "--min-chunk-size", "20"], "--min-chunk-size (at most --chunk-size)"),
        (["index", "x.txt", "--strategy", "parent_child", "--chunk-size", "1000"], ">= --chunk-size=1000, got 800"),
        (["chunk", "x.txt", "--chunk-size", "10", "--chunk-overlap", "10"], "--chunk-overlap must be >= 0"),
        (["index", "x.txt", "--workers", "2"], "--workers is an option of --engine ray"),
        (["index", "x.txt", "--ray-address", "auto"], "--ray-address is an option of --engine ray"),
        ([*EVALUATE, "--strategies", "fixed,nope"], "--strategies must name strategies"),
        ([*EVALUATE, "--strategies", "fixed,fixed"], "--strategies names ['fixed'] more than once"),
        ([*EVALUATE, "--strategies", "parent_child", "--chunk-size", "1000"], ">= --chunk-size=1000, got 800"),
        ([*EVALUATE, "--strategies", "fixed", "--config", "c.json"], "--config: not allowed with"),
    ],
    ids=["unit-fixed", "unit-markdown", "min-size-fixed", "min-size-too-big", "parent-size", "overlap", "workers",
         "ray-address", "unknown-strategy", "strategy-twice", "strategies-parent-size", "config-and-strategies"],
)
def test_an_option_the_arguments_rule_out_exits_2_naming_the_flag(args, named, tmp_path, monkeypatch, capsys):
    """None of the files exists: exit 2, not 1 ("does not exist"), shows nothing was read first."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as caught:
        cli_main(args)
    stderr = capsys.readouterr().err
    assert caught.value.code == 2 and stderr.startswith(f"usage: chunking {args[0]}")
    assert named in stderr.splitlines()[-1], stderr
    assert not re.search(r"\b(chunk_size|chunk_overlap|min_chunk_size|unit=)", stderr), stderr


def test_evaluate_strategies_give_parent_child_its_parents():
    from chunking import cli

    args = cli._parser().parse_args([*EVALUATE, "--strategies", "parent_child,fixed"])
    assert [c.retrieval for c in cli._configs(args)] == ["parents", "dense"]


BAD_ENTRIES = [  # the third entry of a config file, and what its error must name
    ({"strategy": "fixed", "options": {"colour": "red"}}, "unknown option(s) ['colour']"),
    ({"strategy": "fixed", "options": {"chunk_size": 0}}, "chunk_size must be > 0, got 0"),
    ({"strategy": "fixed", "options": {"unit": "sentences"}}, "unit='sentences' is only for"),
    ({"strategy": "recursive", "options": {"chunk_size": 10, "chunk_overlap": 10}}, "< chunk_size=10, got 10"),
    ({"strategy": "parent_child", "options": {"chunk_size": 900}, "retrieval": "parents"}, "parent_size must be"),
    ({"strategy": "fixed", "retrievel": "hybrid"}, "unknown key(s) ['retrievel']"),
]
CONFIG_FILES = {  # two good entries, then the bad one at line 6 (JSON) or 7 (YAML)
    "configs.json": ('[\n  {"name": "a", "strategy": "fixed"},\n  {"name": "b",\n   "strategy": "sentence"},\n\n'
                     "  {bad}\n]\n", 6),
    "configs.yaml": ("- name: a\n  strategy: fixed\n- name: b\n  strategy: sentence\n\n# the third\n- {bad}\n", 7),
}


@pytest.mark.parametrize("file_name", CONFIG_FILES)
@pytest.mark.parametrize(("entry", "named"), BAD_ENTRIES, ids=[named for _, named in BAD_ENTRIES])
def test_a_bad_third_config_entry_fails_before_any_runs_naming_file_line_and_entry(
        file_name, entry, named, corpus, tmp_path, monkeypatch, capsys):
    from chunking import cli, compare

    folder, questions = corpus
    template, line = CONFIG_FILES[file_name]
    config = tmp_path / file_name
    config.write_text(template.replace("{bad}", json.dumps({"name": "bad", **entry})), encoding="utf-8")
    built, loaded = [], []
    monkeypatch.setattr(compare, "build_index", lambda *args, **kwargs: built.append(args))
    monkeypatch.setattr(cli, "_embedder", lambda *args, **kwargs: loaded.append(args))
    out = tmp_path / "out"
    code = cli.main(["evaluate", "--corpus", str(folder), "--questions", str(questions), "--config", str(config),
                     "--out", str(out)])
    stderr = capsys.readouterr().err
    assert code == 1 and stderr.count("\n") == 1, stderr
    assert f"{config}:{line}: entry 2 ('bad'): " in stderr and named in stderr, stderr
    assert built == [] and loaded == [] and not out.exists()


def test_a_config_file_that_is_not_utf8_names_the_line_and_byte(corpus, tmp_path, capsys):
    folder, questions = corpus
    config = tmp_path / "c.json"
    config.write_bytes(b'[\n  {"name": "caf\xe9", "strategy": "fixed"}\n]\n')
    code = cli_main(["evaluate", "--corpus", str(folder), "--questions", str(questions), "--config", str(config),
                     "--out", str(tmp_path / "out")])
    assert code == 1 and f"{config}:2: not valid UTF-8 (byte 0xe9 at column 16, byte offset" in capsys.readouterr().err


def test_a_questions_file_that_is_not_utf8_names_the_file_line_and_byte(corpus, tmp_path, capsys):
    folder, questions = corpus
    questions.write_bytes(questions.read_bytes() + b'{"question": "caf\xe9"}\n')
    code = cli_main(["evaluate", "--corpus", str(folder), "--questions", str(questions), "--strategies", "fixed",
                     "--out", str(tmp_path / "out")])
    message = f"{questions}:2: not valid UTF-8 (byte 0xe9 at column 18, byte offset"
    assert code == 1 and message in capsys.readouterr().err


def read_all(fd: int) -> str:
    """Everything written to a pseudo-terminal whose other end is closed."""
    chunks = []
    while True:
        try:
            data = os.read(fd, 4096)
        except OSError:  # EIO: the other end is closed and everything has been read
            break
        if not data:
            break
        chunks.append(data)
    os.close(fd)
    return b"".join(chunks).decode("utf-8", "replace")


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_index_works_in_batches_so_an_interrupted_run_keeps_what_it_wrote(tmp_path, monkeypatch, capsys):
    """Many small files: each batch of chunks is embedded and written before the next is made (memory
    flat in the number of files); interrupted in its second batch, the run keeps the first, and the
    re-run embeds only the rest."""
    from chunking import cli

    docs = tmp_path / "notes"
    docs.mkdir()
    for i in range(cli.EMBED_BATCH + 40):
        (docs / f"note_{i:04d}.txt").write_text(f"Note {i}: the pump in bay {i % 7} was serviced on day {i}.\n")
    real, sizes = cli._embed, []

    def interrupted(embedder, chunks):
        sizes.append(len(chunks))
        if len(sizes) == 2:
            raise KeyboardInterrupt
        return real(embedder, chunks)

    monkeypatch.setattr(cli, "_embed", interrupted)
    monkeypatch.setenv("CHUNKING_CACHE", "off")  # every vector computed: nothing hides the re-run's work
    assert cli.main(["index", str(docs), "--path", str(tmp_path / "q")]) == 130
    assert sizes == [cli.EMBED_BATCH, 40]
    assert points(tmp_path / "q") == cli.EMBED_BATCH  # the first batch is in the store
    sizes.clear()
    monkeypatch.setattr(cli, "_embed", lambda embedder, chunks: sizes.append(len(chunks)) or real(embedder, chunks))
    capsys.readouterr()
    assert cli.main(["index", str(docs), "--path", str(tmp_path / "q")]) == 0
    total = cli.EMBED_BATCH + 40
    assert sizes == [40] and f": 40 written, 0 stale removed, {total} in the collection" in capsys.readouterr().out
