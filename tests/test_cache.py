"""The on-disk cache never stops the work it speeds up: damaged, read-only or full, it says so once.

Each fault is made for real: bytes written over the file, a folder in its place, a process whose file
size limit is a full disk (RLIMIT_FSIZE), a process of another user that may not write the file.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import warnings

import numpy as np
import pytest

from chunking import cache
from chunking.embed import Embedder

TEXTS = ["backups run nightly", "the valve opens at 40 kPa", "restore from the last snapshot"]


def toy(texts):
    """A deterministic stand-in model (a callable is cached under its name): 3 dimensions from the text."""
    return np.array([[len(t), t.count(" ") + 1, sum(map(ord, t)) % 97 + 1] for t in texts], dtype=np.float32)


def expected(texts=TEXTS):
    vectors = toy(texts)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


@pytest.fixture(autouse=True)
def fresh_warnings(monkeypatch):
    monkeypatch.setattr(cache, "_warned", set())


def truncated(path):
    Embedder(toy, name="toy", cache=path.parent).embed(TEXTS * 200 + [str(i) for i in range(2000)])
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])


def garbage(path):
    path.write_bytes(b"\x00not a database\xff" * 500)


def wrong_schema(path):
    sqlite3.connect(path).executescript("CREATE TABLE entries (id INTEGER, key TEXT, value BLOB);")


def wrong_values(path):
    """Rows under the right keys holding what no embedder wrote: text, odd lengths, NaN, a long vector."""
    keys = [Embedder(toy, name="toy", cache=path.parent)._key(t) for t in TEXTS]
    db = sqlite3.connect(path)
    values = ["text, not bytes", b"\x01\x02\x03", np.array([np.nan, 1, 0], np.float32).tobytes()]
    db.executemany("INSERT INTO entries VALUES (?, ?)", list(zip(keys, values)))
    db.commit()


def folder_in_its_place(path):
    path.mkdir()


@pytest.mark.parametrize("damage", [truncated, garbage, wrong_schema, folder_in_its_place])
def test_a_damaged_cache_file_is_not_used_and_said_once(tmp_path, damage):
    path = tmp_path / "embeddings.sqlite"
    damage(path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = Embedder(toy, name="toy", cache=tmp_path).embed(TEXTS)
        again = Embedder(toy, name="toy", cache=tmp_path).embed(TEXTS)
    assert np.allclose(first, expected()) and np.allclose(again, expected())
    messages = [str(w.message) for w in caught]
    assert len(messages) == 1 and str(path) in messages[0] and "delete it" in messages[0], messages


def test_values_that_no_embedder_wrote_are_computed_again_and_replaced(tmp_path):
    wrong_values(tmp_path / "embeddings.sqlite")
    assert np.allclose(Embedder(toy, name="toy", cache=tmp_path).embed(TEXTS), expected())
    calls = []
    again = Embedder(lambda texts: calls.append(texts) or toy(texts), name="toy", cache=tmp_path).embed(TEXTS)
    assert np.allclose(again, expected()) and calls == []  # the replacements were kept


def test_vectors_of_another_size_in_the_cache_are_not_mixed_with_fresh_ones(tmp_path):
    keys = [Embedder(toy, name="toy", cache=tmp_path)._key(t) for t in TEXTS]
    other = np.array([1, 0, 0, 0], np.float32).tobytes()  # unit length, but 4 dimensions, not 3
    cache.Cache(tmp_path / "embeddings.sqlite").put({keys[0]: other})
    assert np.allclose(Embedder(toy, name="toy", cache=tmp_path).embed(TEXTS), expected())


def run_limited(script: str, env: dict, **popen) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", script], env={**os.environ, **env}, capture_output=True, text=True,
                          timeout=300, **popen)


FULL_DISK = """
import resource, signal, sys
import numpy as np
sys.path.insert(0, {tests!r})
from test_cache import toy, TEXTS
from chunking.embed import Embedder
warm = Embedder(toy, name="toy").embed(TEXTS)  # the file exists and holds these
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG), as on a full disk
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
texts = [f"text number {{i}} " * 40 for i in range(2000)]
vectors = Embedder(toy, name="toy").embed(texts)
again = Embedder(toy, name="toy").embed(TEXTS)
print(len(vectors), np.allclose(again, warm))
"""


def test_a_full_disk_keeps_what_was_computed_and_says_so_once(tmp_path):
    done = run_limited(FULL_DISK.format(tests=os.path.dirname(__file__)), {"CHUNKING_CACHE_DIR": str(tmp_path)})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["2000", "True"]  # every vector came back; the old ones are still read
    assert done.stderr.count("RuntimeWarning") == 1 and "cannot be written" in done.stderr


def embed_as_another_user(folder: str, texts: list[str]) -> int:
    """Fork, become user `nobody`, embed `texts` with the cache in `folder`; the exit status says what
    happened (0: the right vectors and exactly one warning that the file cannot be written)."""
    pid = os.fork()
    if pid == 0:  # the child: everything it needs is imported already (it may not read root's files)
        code = 3
        try:
            os.setgid(65534)
            os.setuid(65534)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                vectors = Embedder(toy, name="toy", cache=folder).embed(texts)
            said = [str(w.message) for w in caught]
            code = 0 if np.allclose(vectors, expected(texts)) and len(said) == 1 and "cannot be written" in said[0] \
                else 1
        finally:
            os._exit(code)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


@pytest.mark.skipif(not hasattr(os, "fork") or os.geteuid() != 0, reason="the file is made read-only for another "
                    "user: needs root to become that user (CI runs as root; for root every file is writable)")
def test_a_read_only_cache_is_read_and_not_written(tmp_path):
    folder = tempfile.mkdtemp(prefix="read-only-cache-")  # outside tmp_path, whose parents others may not enter
    try:
        Embedder(toy, name="toy", cache=folder).embed(TEXTS)
        os.chmod(folder, 0o755)
        os.chmod(os.path.join(folder, "embeddings.sqlite"), 0o644)  # readable by all, writable by root only
        status = embed_as_another_user(folder, [*TEXTS, "a new text", "another"])
        rows = sqlite3.connect(os.path.join(folder, "embeddings.sqlite")).execute("SELECT COUNT(*) FROM entries")
        assert status == 0 and rows.fetchone()[0] == len(TEXTS)
    finally:
        shutil.rmtree(folder)
