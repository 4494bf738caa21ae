"""Every runtime failure is one line (exit 1), nothing is silently empty, and bad input is named.

Damaged PDFs and stores, unsafe or broken config files, a slow server, files that cannot be read
or whose names are not UTF-8 — through the command line as a subprocess, and the same checks at
the API (`chunk`, `evaluate`, embedders). Tests build every broken file themselves.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import socket
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from chunking import chunk
from chunking.compare import Config, check_configs
from chunking.embed import Embedder
from chunking.evaluate import Question, Reference, load_questions, verify_questions
from chunking.load import load_document, read_text
from tests.test_cli import one_error_line, run
from tests.test_load import tiny_pdf

pypdf = pytest.importorskip("pypdf")


# --- PDFs -----------------------------------------------------------------------------------------

def encrypted_pdf(path: Path, user_password: str, algorithm: str = "AES-256") -> Path:
    plain = tiny_pdf(path.with_name("plain.pdf"), ["Secret page text."])
    writer = pypdf.PdfWriter(clone_from=str(plain))
    writer.encrypt(user_password=user_password, owner_password="owner", algorithm=algorithm)
    with open(path, "wb") as file:
        writer.write(file)
    return path


def test_an_aes_pdf_with_an_empty_password_loads(tmp_path):
    assert load_document(encrypted_pdf(tmp_path / "aes.pdf", "")).text == "Secret page text."


def test_a_password_protected_pdf_is_one_line_saying_so(tmp_path):
    path = encrypted_pdf(tmp_path / "locked.pdf", "secret")
    assert "needs a password" in one_error_line(run("chunk", str(path)))


@pytest.mark.parametrize("damage", ["truncated", "xref-size", "flate-bomb", "garbage", "mutated"])
def test_a_damaged_pdf_is_one_line_naming_it(tmp_path, damage):
    data = tiny_pdf(tmp_path / "good.pdf", ["Page one.", "Page two."]).read_bytes()
    if damage == "truncated":
        data = data[: len(data) // 3]
    elif damage == "xref-size":  # a trailer declaring billions of objects
        data = data.replace(b"/Size ", b"/Size 99999999999")
    elif damage == "flate-bomb":  # a stream that inflates to far more than it declares
        import zlib

        bomb = zlib.compress(b"0" * 50_000_000, 9)
        data = (b"%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n2 0 obj << /Type /Pages /Kids [3 0 R] "
                b"/Count 1 >> endobj\n3 0 obj << /Type /Page /Parent 2 0 R /Contents 4 0 R >> endobj\n4 0 obj "
                b"<< /Length " + str(len(bomb)).encode() + b" /Filter /FlateDecode >> stream\n" + bomb +
                b"\nendstream endobj\ntrailer << /Root 1 0 R >>\n%%EOF")
    elif damage == "garbage":
        data = b"%PDF-1.7\n" + bytes(range(256)) * 40
    else:  # every 7th byte flipped after the header
        data = data[:16] + bytes(b ^ 0x5A if i % 7 == 0 else b for i, b in enumerate(data[16:]))
    path = tmp_path / f"{damage}.pdf"
    path.write_bytes(data)
    result = run("chunk", str(path))
    if result.returncode == 0:  # pypdf recovered something: a success, and a quiet one
        assert result.stderr == ""
    else:
        assert f"{damage}.pdf" in one_error_line(result)


def test_pypdf_recovery_warnings_are_silenced(tmp_path, caplog):
    data = tiny_pdf(tmp_path / "good.pdf", ["Page one."]).read_bytes()
    path = tmp_path / "no-xref.pdf"
    path.write_bytes(data.replace(b"startxref", b"startxrefX"))  # pypdf warns and rebuilds the table
    with caplog.at_level(logging.WARNING):
        text = load_document(path).text
    assert text == "Page one."
    assert not [r for r in caplog.records if r.name.startswith("pypdf")]


# --- files ----------------------------------------------------------------------------------------

@pytest.mark.skipif(not Path("/proc/self/mem").exists(), reason="needs /proc")
def test_an_unreadable_file_is_named(tmp_path):
    link = tmp_path / "memory.txt"
    link.symlink_to("/proc/self/mem")  # opens, then every read fails with EIO
    with pytest.raises(OSError, match="memory.txt"):
        read_text(link)
    assert "memory.txt" in one_error_line(run("chunk", str(link)))


def test_a_file_name_that_is_not_utf8_still_gives_utf8_json(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    Path(os.fsdecode(bytes(folder) + b"/caf\xe9.txt")).write_text("Coffee is served all day.", encoding="utf-8")
    result = run("chunk", str(folder), "--format", "jsonl")
    assert result.returncode == 0, result.stderr
    row = json.loads(result.stdout)
    assert row["doc"] == "caf\ufffd.txt" and row["text"] == "Coffee is served all day."


def test_a_lone_surrogate_in_doc_id_fails_at_chunking_time():
    with pytest.raises(ValueError, match="doc_id holds a lone surrogate"):
        chunk("Some text.", "fixed", doc_id="bad\udcffname")


# --- config files and questions -------------------------------------------------------------------

@pytest.fixture
def corpus(tmp_path) -> tuple[Path, Path]:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text("The ferry leaves at nine. It returns at five.", encoding="utf-8")
    questions = tmp_path / "q.jsonl"
    reference = {"doc": "a.txt", "start": 0, "end": 25, "text": "The ferry leaves at nine."}
    questions.write_text(json.dumps({"question": "When does the ferry leave?", "references": [reference]}) + "\n")
    return folder, questions


def evaluate(corpus, config: Path | None = None, questions: Path | None = None):
    folder, default_questions = corpus
    args = ["evaluate", "--corpus", str(folder), "--questions", str(questions or default_questions),
            "--out", str(folder.parent / "out")]
    return run(*args, *(["--config", str(config)] if config else []))


@pytest.mark.parametrize(("name", "content", "expected"), [
    ("bad.yaml", "- name: a\n  strategy: [fixed\n", r"bad\.yaml.*not valid YAML at line \d"),
    ("unsafe.yaml", "- !!python/object/apply:os.system [echo hi]\n", r"unsafe\.yaml.*not valid YAML at line 1"),
    ("bad.json", '[{"name": "a",\n "strategy": }]', r"bad\.json.*not valid JSON at line 2"),
    ("dupes.json", '[{"name": "a", "strategy": "fixed"}, {"name": "a", "strategy": "sentence"}]',
     r"dupes\.json.*distinct.*\['a'\]"),
    ("unknown.json", '[{"name": "a", "strategy": "fixed", "retrievel": "hybrid"}]', r"unknown\.json.*retrievel"),
    ("empty.json", "[]", r"empty\.json.*non-empty list"),
    ("strategy.json", '[{"name": "a", "strategy": "semantc"}]', r"strategy\.json.*strategy must be one of"),
])
def test_config_errors_name_the_file(corpus, tmp_path, name, content, expected):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    assert re.search(expected, one_error_line(evaluate(corpus, path)))


def test_an_empty_questions_file_is_refused_before_any_work(corpus, tmp_path):
    empty = tmp_path / "none.jsonl"
    empty.write_text("\n\n", encoding="utf-8")
    result = evaluate(corpus, questions=empty)
    assert "holds no questions" in one_error_line(result)
    assert result.stdout == ""  # nothing was loaded, chunked or embedded


def test_a_config_file_can_evaluate_parent_child_hybrid_and_late(corpus, tmp_path):
    config = tmp_path / "c.json"
    config.write_text(json.dumps([
        {"name": "pc", "strategy": "parent_child", "options": {"chunk_size": 8, "parent_size": 20},
         "retrieval": "parents"},
        {"name": "hybrid", "strategy": "sentence", "options": {"chunk_size": 20}, "retrieval": "hybrid"},
        {"name": "late", "strategy": "sentence", "options": {"chunk_size": 20}, "embedding": "late"},
    ]))
    result = evaluate(corpus, config)
    assert result.returncode == 0, result.stderr
    assert {"pc", "hybrid", "late"} <= set(result.stdout.split())


def test_a_reference_past_the_end_of_its_document_is_rejected_even_when_empty():
    question = Question("q?", (Reference("a.txt", 50, 60, ""),))
    with pytest.raises(ValueError, match="ends past the end of a.txt"):
        verify_questions([question], {"a.txt": "short"})


def test_questions_files_without_questions_are_an_error(tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_text("")
    with pytest.raises(ValueError, match="holds no questions"):
        load_questions(path)


def test_configurations_need_distinct_names():
    with pytest.raises(ValueError, match="distinct"):
        check_configs([Config("a", "fixed"), Config("a", "sentence")])


# --- the API --------------------------------------------------------------------------------------

@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda: chunk("a. b.", ["fixed"]), ValueError, r"strategy must be one of .* got \['fixed'\]"),
    (lambda: chunk("One. Two.", "semantic", embedder="x"), TypeError, "embedder must be an EmbeddingModel"),
    (lambda: chunk("One. Two.", "parent_child", parent_mode="semantic", embedder=3), TypeError, "got int: 3"),
    (lambda: chunk("One. Two.", "semantic", embedder=Embedder(lambda t: np.ones(len(t)), cache=False)), ValueError,
     r"must return shape \(2, dim\) for 2 texts, got shape \(2,\)"),
    (lambda: Embedder(lambda t: np.full((len(t), 2), np.nan), cache=False).embed(["a"]), ValueError, "NaN"),
])
def test_bad_arguments_are_named(call, error, message):
    with pytest.raises(error, match=message):
        call()


# --- damaged stores and slow servers --------------------------------------------------------------

@pytest.fixture
def store_folder(tmp_path) -> Path:
    from chunking import store

    folder = tmp_path / "store"
    client = store.connect(folder)
    store.ensure_collection(client, "chunks", 3)
    store.index(client, "chunks", chunk("The ferry leaves at nine.", "fixed", doc_id="a"), np.eye(3)[:1])
    client.close()
    return folder


@pytest.mark.parametrize("damage", ["storage.sqlite", "meta.json"])
@pytest.mark.parametrize("command", ["search", "index"])
def test_a_damaged_store_is_one_line(store_folder, tmp_path, damage, command):
    target = store_folder / "meta.json" if damage == "meta.json" else store_folder / "collection" / "chunks" / damage
    target.write_bytes(target.read_bytes()[:20])
    (tmp_path / "a.txt").write_text("Some text.", encoding="utf-8")
    args = ["search", "ferry"] if command == "search" else ["index", str(tmp_path / "a.txt")]
    assert "looks damaged" in one_error_line(run(*args, "--path", str(store_folder)))


def test_searching_a_collection_whose_files_were_removed_says_so(store_folder):
    import shutil

    shutil.rmtree(store_folder / "collection" / "chunks")
    assert "holds no points" in one_error_line(run("search", "ferry", "--path", str(store_folder)))


@pytest.fixture
def dripping_server():
    """A server that answers one byte every 0.2 s, forever (an HTTP header that never ends)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    stop = threading.Event()

    def drip(connection):
        head = b"HTTP/1.1 200 OK\r\nX-Pad: "
        with connection, contextlib.suppress(OSError):  # the client hangs up when its deadline passes
            connection.recv(65536)
            for i in range(10_000):
                if stop.is_set():
                    return
                connection.send(head[i : i + 1] if i < len(head) else b"a")
                time.sleep(0.2)

    def accept():
        while not stop.is_set():
            try:
                connection, _ = server.accept()
            except OSError:
                return
            threading.Thread(target=drip, args=(connection,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    yield f"http://127.0.0.1:{server.getsockname()[1]}"
    stop.set()
    server.close()


@pytest.mark.parametrize("command", [["search", "ferry"], ["index", "a.txt"]])
def test_a_server_that_answers_a_byte_at_a_time_gives_up_naming_it(dripping_server, tmp_path, command):
    (tmp_path / "a.txt").write_text("Some text.", encoding="utf-8")
    # the subprocess timeout only guards the test from hanging; the deadline under test is --timeout
    result = run(*command, "--url", dripping_server, "--timeout", "1", cwd=tmp_path, timeout=120)
    assert dripping_server in one_error_line(result) and "within 1 s" in result.stderr


def test_the_api_takes_the_same_deadline(dripping_server):
    from chunking import store

    with pytest.raises(ConnectionError, match="within 1 s"):
        store.connect(url=dripping_server, timeout=1)


@pytest.mark.parametrize("timeout", [0, -1, float("inf"), "30", True])
def test_a_bad_timeout_is_named(timeout):
    from chunking import store

    with pytest.raises(ValueError, match="timeout"):
        store.connect(url="http://127.0.0.1:1", timeout=timeout)
