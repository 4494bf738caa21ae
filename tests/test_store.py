"""The Qdrant store: payloads round-trip, ids make indexing idempotent, mismatches fail safely."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import numpy as np
import pytest

from chunking import chunk, store
from tests.conftest import held_open

DOC = "# Guide\n\nIntro text here.\n\n## Install\n\nRun the installer. Then restart.\n"


def vectors(n: int, dim: int = 8, seed: int = 0) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=(n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


@pytest.fixture
def client():
    c = store.connect(":memory:")
    yield c
    c.close()


@pytest.fixture
def indexed(client):
    chunks = chunk(DOC, "markdown", doc_id="guide.md") + chunk("Other doc. Two.", "sentence", doc_id="other.txt")
    store.ensure_collection(client, "c", 8)
    store.index(client, "c", chunks, vectors(len(chunks)))
    return chunks


def test_search_returns_the_exact_chunk_back(client, indexed):
    query = vectors(len(indexed))[1]
    hits = store.search(client, "c", query, k=1)
    assert hits[0].chunk == indexed[1]
    assert hits[0].chunk.metadata["heading_path"] == ("Guide", "Install")
    assert hits[0].score == pytest.approx(1.0, abs=1e-5)


def test_indexing_twice_leaves_the_same_points(client, indexed):
    store.index(client, "c", indexed, vectors(len(indexed)))
    assert client.count("c").count == len(indexed)


def test_interrupted_indexing_completes_without_duplicates(client):
    chunks = chunk(DOC * 20, "sentence", chunk_size=10, doc_id="d")
    store.ensure_collection(client, "half", 8)
    store.index(client, "half", chunks[: len(chunks) // 2], vectors(len(chunks))[: len(chunks) // 2])
    store.index(client, "half", chunks, vectors(len(chunks)), batch_size=7)
    assert client.count("half").count == len(chunks)


def test_document_filter_keeps_one_document(client, indexed):
    hits = store.search(client, "c", vectors(1, seed=3)[0], k=10, doc_id="other.txt")
    assert {h.chunk.doc_id for h in hits} == {"other.txt"}


def test_hits_are_best_first(client, indexed):
    scores = [h.score for h in store.search(client, "c", vectors(1, seed=5)[0], k=10)]
    assert scores == sorted(scores, reverse=True)


def test_mismatched_collection_is_an_error_and_is_not_deleted(client, indexed):
    with pytest.raises(ValueError, match="different vectors"):
        store.ensure_collection(client, "c", 16)
    assert client.count("c").count == len(indexed)


def test_recreate_replaces_a_mismatched_collection(client, indexed):
    store.ensure_collection(client, "c", 16, recreate=True)
    assert client.count("c").count == 0


def test_on_disk_store_survives_reopening(tmp_path):
    chunks = chunk(DOC, "paragraph", doc_id="guide.md")
    client = store.connect(tmp_path / "qdrant")
    store.ensure_collection(client, "disk", 8)
    store.index(client, "disk", chunks, vectors(len(chunks)))
    client.close()
    reopened = store.connect(tmp_path / "qdrant")
    assert reopened.count("disk").count == len(chunks)
    reopened.close()


def test_collection_name_is_stable_and_depends_on_options():
    a = store.collection_name("corpus", "fixed", {"chunk_size": 200, "chunk_overlap": 0})
    assert a == store.collection_name("corpus", "fixed", {"chunk_overlap": 0, "chunk_size": 200})
    assert a != store.collection_name("corpus", "fixed", {"chunk_size": 300, "chunk_overlap": 0})


def test_bad_k_is_rejected(client, indexed):
    with pytest.raises(ValueError, match="k must be an int >= 1, got 0"):
        store.search(client, "c", vectors(1)[0], k=0)


def test_unreachable_url_fails_fast_naming_it(monkeypatch):
    monkeypatch.setenv("QDRANT_URL", "http://127.0.0.1:9")
    with pytest.raises(ConnectionError, match="127.0.0.1:9"):
        store.connect(timeout=2)


class FakeQdrant(BaseHTTPRequestHandler):
    """Answers the one REST call `connect` makes, and remembers the headers it saw."""

    seen: list[dict] = []

    def do_GET(self):  # noqa: N802 (http.server's naming)
        FakeQdrant.seen.append(dict(self.headers))
        body = json.dumps({"result": {"collections": []}, "status": "ok", "time": 0.0}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_url_and_api_key_come_from_the_environment(monkeypatch):
    server = HTTPServer(("127.0.0.1", 0), FakeQdrant)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("QDRANT_URL", f"http://127.0.0.1:{server.server_port}")
        monkeypatch.setenv("QDRANT_API_KEY", "secret-key")
        client = store.connect()
        assert client.get_collections().collections == []
    finally:
        server.shutdown()
    assert FakeQdrant.seen and FakeQdrant.seen[0].get("api-key") == "secret-key"


def test_a_folder_open_in_another_process_gives_a_clear_error(tmp_path):
    folder = tmp_path / "qdrant"
    with held_open(folder), pytest.raises(RuntimeError, match="open in another process"):
        store.connect(folder)


def test_changed_lists_only_missing_or_edited_chunks(client, indexed):
    assert store.changed(client, "c", indexed) == []
    edited = chunk(DOC.replace("installer", "setup tool"), "markdown", doc_id="guide.md")
    assert store.changed(client, "c", edited) == [i for i, c in enumerate(edited) if c not in indexed]


def test_remove_stale_deletes_only_the_named_documents_old_points(client, indexed):
    keep = {c.id for c in indexed if c.doc_id == "guide.md"}
    assert store.remove_stale(client, "c", ["other.txt"], keep) == sum(c.doc_id == "other.txt" for c in indexed)
    assert client.count("c").count == len(keep)
    assert store.remove_stale(client, "c", ["guide.md"], keep) == 0


def test_dense_size_names_the_collections_there_are(client, indexed):
    assert store.dense_size(client, "c") == 8
    with pytest.raises(ValueError, match="no collection 'missing'; the collections there are 'c'"):
        store.dense_size(client, "missing")


def test_an_explicit_folder_can_ignore_qdrant_url(tmp_path, monkeypatch):
    monkeypatch.setenv(store.URL_ENV, "http://127.0.0.1:9")
    client = store.connect(tmp_path / "q", use_env=False)
    assert client.get_collections().collections == []
    client.close()


FULL_DISK = """
import resource, signal, sys
import numpy as np
from chunking import chunk, store
chunks = chunk("A sentence about pumps and valves. " * 3000, "fixed", chunk_size=50, doc_id="d")
client = store.connect(sys.argv[1], use_env=False)
store.ensure_collection(client, "c", 4)
store.index(client, "c", chunks[:5], np.eye(4, dtype=np.float32)[[0, 1, 2, 3, 0]])
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG), as on a full disk
resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, 200_000))
try:
    store.index(client, "c", chunks, np.tile(np.eye(4, dtype=np.float32), (len(chunks) // 4 + 1, 1))[:len(chunks)])
except RuntimeError as error:
    print(error)
"""


def test_a_full_disk_under_a_local_store_is_one_error_saying_what_to_do(tmp_path):
    done = subprocess.run([sys.executable, "-c", FULL_DISK, str(tmp_path / "qdrant")], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("cannot write to collection 'c'") and "free disk space" in done.stdout
