"""First use on an empty cache: several processes at once, and a process killed half-way.

A warm cache hides these: every test here starts from a cache folder of its own (`tmp_path`).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from chunking import onnx_model
from chunking.embed import default_model_path, folder_fingerprint

pytestmark = pytest.mark.xdist_group("first-use")  # heavy: exports run on one worker, one after another

EMBED = """
import hashlib, sys
from chunking.embed import Embedder
vector = Embedder(backend=sys.argv[1]).embed(["First use, by several processes at once."])
print(hashlib.sha256(vector.tobytes()).hexdigest())
"""
EXPORT = "import sys; from chunking import onnx_model; onnx_model.exported(sys.argv[1], sys.argv[2])"
PROCESSES = 3


def environment(cache) -> dict[str, str]:
    return {**os.environ, "CHUNKING_CACHE_DIR": str(cache), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def model_home(cache):
    return cache / "onnx" / folder_fingerprint(str(default_model_path().resolve()))[:16]


def test_processes_starting_together_on_an_empty_cache_all_get_one_vector(tmp_path):
    """int8 needs the ONNX export and then the quantization: both first-use steps, three processes at once."""
    starts = [subprocess.Popen([sys.executable, "-c", EMBED, "onnx-int8"], env=environment(tmp_path),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(PROCESSES)]
    results = [process.communicate(timeout=900) for process in starts]
    assert [p.returncode for p in starts] == [0] * PROCESSES, [err[-1500:] for _, err in results]
    assert len({out.strip() for out, _ in results}) == 1
    home = model_home(tmp_path)
    assert sorted(p.name for p in home.iterdir()) == [onnx_model.LOCK, "export.json", "model-int8.onnx", "model.onnx"]


def test_an_export_killed_half_way_leaves_nothing_once_the_next_one_runs(tmp_path, monkeypatch):
    folder = default_model_path()
    fingerprint = folder_fingerprint(str(folder.resolve()))[:16]
    home = model_home(tmp_path)
    process = subprocess.Popen([sys.executable, "-c", EXPORT, str(folder), fingerprint], env=environment(tmp_path),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 600
        while not any(home.glob(f"{onnx_model.SCRATCH_PREFIX}*/*")):  # it is writing: kill it now
            assert process.poll() is None and time.monotonic() < deadline, "the export ended before it wrote"
            time.sleep(0.05)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    assert any(home.glob(f"{onnx_model.SCRATCH_PREFIX}*"))  # no code ran after the kill: its scratch is there
    monkeypatch.setenv("CHUNKING_CACHE_DIR", str(tmp_path))
    path = onnx_model.exported(folder, fingerprint)
    assert path == home / "model.onnx" and path.is_file()
    assert sorted(p.name for p in home.iterdir()) == [onnx_model.LOCK, "export.json", "model.onnx"]
