"""Security: no code path that runs data, safetensors weights only, no secrets in what is committed.

The LLM client's handling of its key (never in errors, repr or cache) is tested in test_llm.py, and
the HTML chunk view's escaping in test_display.py; docs/security.md is the threat model.
"""

from __future__ import annotations

import ast
import json
import os
import re
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

MODULES = sorted((ROOT / "chunking").glob("*.py"))
PICKLING_MODULES = {"pickle", "cPickle", "_pickle", "marshal", "shelve", "dill", "cloudpickle", "joblib"}
PICKLE_SUFFIXES = {".bin", ".pt", ".pth", ".pkl", ".pickle", ".ckpt", ".joblib"}
SECRET = re.compile(
    r"sk-[A-Za-z0-9_-]{16,}"  # OpenAI-style keys
    r"|Bearer\s+[A-Za-z0-9._~+/=-]{16,}"
    r"|hf_[A-Za-z0-9]{30,}"  # Hugging Face tokens
    r"|gh[pousr]_[A-Za-z0-9]{30,}"  # GitHub tokens
    r"|AKIA[0-9A-Z]{16}"  # AWS access key ids
)
PUBLISHED = sorted(
    [*(ROOT / "notebooks").glob("*.ipynb"), ROOT / "README.md", ROOT / "notebooks" / "README.md",
     *(p for p in (ROOT / "docs").rglob("*") if p.is_file() and "__pycache__" not in p.parts)]
)


def unsafe_calls(source: str) -> list[str]:
    """Every construct in `source` that could run data as code or unpickle it, as 'line: what'."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            found += [f"{node.lineno}: import {n}" for n in names if n.split(".")[0] in PICKLING_MODULES]
        if not isinstance(node, ast.Call):
            continue
        name = dotted(node.func)
        keywords = {k.arg: k.value for k in node.keywords}
        if name in ("eval", "exec", "__import__", "os.system", "os.popen", "torch.load", "yaml.unsafe_load",
                    "yaml.full_load"):
            found.append(f"{node.lineno}: {name}()")
        elif name == "yaml.load" and "Safe" not in dotted(keywords.get("Loader", ast.Constant(None))):
            found.append(f"{node.lineno}: yaml.load() without a SafeLoader")
        elif name.startswith("subprocess.") and is_true(keywords.get("shell")):
            found.append(f"{node.lineno}: {name}(shell=True)")
        elif is_true(keywords.get("allow_pickle")):
            found.append(f"{node.lineno}: {name}(allow_pickle=True)")
    return found


def dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{dotted(node.value)}.{node.attr}"
    return ""


def is_true(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_the_package_never_runs_or_unpickles_data(path):
    assert unsafe_calls(path.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize(
    "source",
    [
        "import pickle", "from marshal import loads", "import shelve", "eval(text)", "exec(code)",
        "torch.load(path)", "yaml.load(raw)", "yaml.load(raw, Loader=yaml.Loader)", "yaml.unsafe_load(raw)",
        "subprocess.run(command, shell=True)", "os.system(command)", "np.load(path, allow_pickle=True)",
    ],
)
def test_the_scanner_catches(source):
    assert len(unsafe_calls(source)) == 1


@pytest.mark.parametrize(
    "source",
    ["yaml.safe_load(raw)", "yaml.load(raw, Loader=yaml.SafeLoader)", "subprocess.run(['ls'])",
     "json.loads(raw)", "model.eval()", "np.load(path)"],
)
def test_the_scanner_passes(source):
    assert unsafe_calls(source) == []


@pytest.fixture(scope="module")
def model_folder() -> Path:
    from chunking.embed import default_model_path

    return default_model_path()


def test_the_bundled_model_ships_safetensors_and_no_pickled_weights(model_folder):
    files = [p.relative_to(model_folder).as_posix() for p in model_folder.rglob("*") if p.is_file()]
    assert "model.safetensors" in files
    assert [f for f in files if Path(f).suffix in PICKLE_SUFFIXES] == []


def test_the_weights_file_really_is_safetensors(model_folder):
    # 8-byte little-endian header length, then a JSON header; a pickle starts with 0x80, a torch zip with "PK"
    with open(model_folder / "model.safetensors", "rb") as f:
        (length,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(length))
    assert any(isinstance(v, dict) and "dtype" in v for v in header.values())


def test_loading_the_model_never_unpickles(model_folder):
    # A fresh process: this one may already hold the model. torch.load is the only pickle path for weights.
    probe = (
        "import pickle, sys, torch\n"
        "def refuse(*args, **kwargs): raise AssertionError('unpickling while loading the model')\n"
        "torch.load = pickle.load = pickle.loads = refuse\n"
        "from sentence_transformers import SentenceTransformer\n"
        "model = SentenceTransformer(sys.argv[1], device='cpu')\n"
        "print(model.encode(['a test sentence']).shape)\n"
    )
    result = subprocess.run([sys.executable, "-c", probe, str(model_folder)], capture_output=True, text=True,
                            timeout=300, env={**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "(1, 384)"


def secrets_in(text: str) -> list[str]:
    keys = [f"${k}" for k, v in os.environ.items() if k.endswith("_API_KEY") and len(v) >= 8 and v in text]
    return SECRET.findall(text) + keys


@pytest.mark.parametrize("path", PUBLISHED, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_nothing_published_holds_an_api_key(path):
    assert secrets_in(path.read_text(encoding="utf-8", errors="replace")) == []


@pytest.mark.parametrize(
    "text", ["key = 'sk-proj-AbCdEf0123456789xyz'", "Authorization: Bearer abcdefghijklmnop1234",
             "token hf_abcdefghijklmnopqrstuvwxyz0123456789"],
)
def test_the_key_pattern_catches(text):
    assert secrets_in(text)


def test_a_key_set_in_the_environment_is_caught(monkeypatch):
    monkeypatch.setenv("EXAMPLE_API_KEY", "plain-looking-value-42")
    assert secrets_in("output: plain-looking-value-42") == ["$EXAMPLE_API_KEY"]


def test_the_command_line_never_prints_the_qdrant_key(tmp_path):
    (tmp_path / "a.txt").write_text("Some text.")
    key = "qdrant-secret-0123456789"
    env = {**os.environ, "QDRANT_API_KEY": key, "HF_HUB_OFFLINE": "1"}
    env.pop("QDRANT_URL", None)
    result = subprocess.run([sys.executable, "-m", "chunking", "index", str(tmp_path / "a.txt"), "--url",
                             "http://127.0.0.1:9"], capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 1 and "127.0.0.1:9" in result.stderr
    assert key not in result.stdout + result.stderr
