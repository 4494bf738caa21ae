"""The command line, driven as a subprocess: output, files written, exit codes 0 / 1 / 2."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def run(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "chunking", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=300)


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


def test_chunk_prints_json_lines_with_exact_offsets(corpus):
    folder, _ = corpus
    result = run("chunk", str(folder / "a.md"), "--strategy", "markdown", "--chunk-size", "50")
    assert result.returncode == 0, result.stderr
    text = (folder / "a.md").read_text()
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert all(text[r["start"] : r["end"]] == r["text"] for r in rows)
    assert rows[1]["heading_path"] == ["Alpha", "Beta"]


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


def test_bad_usage_exits_2():
    result = run("chunk")
    assert result.returncode == 2 and "usage" in result.stderr


def test_unknown_strategy_exits_2():
    result = run("chunk", "x.txt", "--strategy", "nope")
    assert result.returncode == 2


def test_runtime_error_exits_1_with_one_line(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"ok \xff\xfe not utf-8")
    result = run("chunk", str(bad))
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and "bad.txt" in result.stderr and "UTF-8" in result.stderr


def test_wrong_offsets_in_questions_are_reported(corpus, tmp_path):
    folder, questions = corpus
    row = json.loads(questions.read_text())
    row["references"][0]["start"] += 1
    questions.write_text(json.dumps(row) + "\n")
    result = run("evaluate", "--corpus", str(folder), "--questions", str(questions), "--out", str(tmp_path / "o"))
    assert result.returncode == 1 and "references[0]" in result.stderr
