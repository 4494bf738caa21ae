"""benchmarks/bench.py: a quick run end to end, and the checker it trusts with every chunker's offsets and bound.

Speed itself is not asserted (the machine is shared); the shape of the output and the checks are.
Peers run only if the `bench` extra is installed; CI's venv does not have it.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from tests.conftest import ROOT, load_benchmark

bench = load_benchmark("bench")
OUR_TASKS = [case.task for case in bench.cases(peers=False) if case.name == "chunking"]


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    """One `--quick` run as a subprocess (so its offline guard stays there); its stdout and output folder."""
    out = tmp_path_factory.mktemp("bench")
    command = [sys.executable, str(ROOT / "benchmarks" / "bench.py"), "--quick", "--out", str(out)]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout, out


def rows_of(markdown: str, heading: str) -> list[list[str]]:
    """The cells of the first table under `heading`, header first (the separator line dropped)."""
    section = markdown.split(heading, 1)[1]
    block = next(part for part in section.split("\n\n") if part.startswith("|"))
    lines = [line for line in block.splitlines() if not line.startswith("|---")]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines]


@pytest.fixture(scope="module")
def throughput(quick) -> list[dict[str, str]]:
    header, *rows = rows_of(quick[0], "## Throughput and checks")
    assert all(len(row) == len(header) for row in rows), "every row has a cell for every column"
    return [dict(zip(header, row)) for row in rows]


def test_quick_run_times_the_floor_and_every_structural_strategy(throughput):
    assert [row["task"] for row in throughput[:2]] == [bench.FLOOR, bench.FLOOR]  # one thread, then all
    assert [row["task"] for row in throughput if row["implementation"] == "chunking"] == OUR_TASKS
    assert list(throughput[0])[2:4] == ["0.2 MB, MB/s", "chunks (0.2 MB)"]


def test_our_rows_report_true_offsets_and_the_bound_held(throughput):
    ours = [row for row in throughput if row["implementation"] == "chunking"]
    assert [row["offsets true"] for row in ours] == ["✓"] * len(OUR_TASKS)
    assert all(row["size bound"].startswith("✓ ≤ ") for row in ours), [row["size bound"] for row in ours]
    assert all(int(row["chunks (0.2 MB)"].replace(",", "")) > 0 for row in ours)


def test_a_peer_row_appears_only_when_the_peer_is_installed(throughput):
    peers = {row["implementation"] for row in throughput if row["task"] != bench.FLOOR} - {"chunking"}
    installed = {case.name for case in bench.peer_cases() if not bench.missing(case)}
    assert peers <= installed


def test_quick_run_writes_the_page_with_the_tables_targets_and_plot(quick):
    stdout, out = quick
    page = (out / "benchmarks.md").read_text(encoding="utf-8")
    assert page.startswith("# Benchmarks\n")
    assert rows_of(page, "## Throughput and checks") == rows_of(stdout, "## Throughput and checks")
    targets = [row[0] for row in rows_of(page, "## Targets (issue 6)")[1:]]
    assert "sentence, 512 tokens ≥ 5 MB/s" in targets
    if importlib.util.find_spec("sentence_transformers"):
        assert "semantic ≤ 1.1× embedding every sentence once" in targets
        header, *backends = rows_of(page, "The embedding model's backends")
        share = header.index("of the sgemm peak")
        assert header[share - 1].startswith("GFLOP/s (batch ")
        assert [row[0] for row in backends] == ["torch", "onnx", "onnx-int8"]
        assert all(float(row[share - 1]) > 0 and row[share].endswith("%") for row in backends)
    if importlib.util.find_spec("matplotlib"):
        assert (out / "benchmarks.png").read_bytes().startswith(b"\x89PNG")


def test_checker_counts_wrong_offsets_and_chunks_over_the_bound():
    text = "alpha beta gamma delta"
    pieces = [(0, 5, "alpha"), (6, 10, "beta"), (11, 17, "gamma "), (16, 22, "delta")]  # text[16:22] is " delta"
    found = bench.check(text, pieces, unit="characters", bound=5)
    assert found == bench.Check(chunks=4, bad_offsets=1, over_bound=1, max_size=6)
    case = bench.Case("t", "broken", lambda: None, unit="characters", size=5)
    assert bench.check_cells(found, case) == ["✗ (1 of 4 wrong)", "✗ 1 over 5 characters (max 6)"]


def test_checker_finds_chunks_without_offsets_and_flags_text_not_in_the_source():
    text = "one two one two"
    pieces = [(None, None, "one two"), (None, None, "one two"), (None, None, "tw\ufffd")]  # a decoded half-character
    assert bench.locate(text, pieces) == [(0, 7), (8, 15), (-1, 2)]
    assert bench.check(text, pieces, unit="characters", bound=10).bad_offsets == 1


def test_checker_passes_a_correct_chunking():
    text = "Cats purr. Dogs bark."
    pieces = [(c.start, c.end, c.text) for c in bench.chunk(text, "sentence", chunk_size=4)]
    found = bench.check(text, pieces, unit="tokens", bound=4)
    assert (found.bad_offsets, found.over_bound) == (0, 0) and found.max_size <= 4


def test_readme_summary_is_replaced_between_its_markers(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{bench.SUMMARY_START}\nold\n{bench.SUMMARY_END}\nrest\n", encoding="utf-8")
    bench.replace_summary(readme, "| new |")
    assert readme.read_text(encoding="utf-8") == f"intro\n{bench.SUMMARY_START}\n| new |\n{bench.SUMMARY_END}\nrest\n"
    assert bench.SUMMARY_START in (ROOT / "README.md").read_text(encoding="utf-8")


def test_quick_run_times_the_pathological_families_on_every_target(quick):
    header, *rows = rows_of(quick[0], "## Pathological input")
    targets = set(bench.pathological().targets())
    assert header[:2] == ["family", "kind"] and set(header[2:]) == targets
    assert [row[0] for row in rows] == ["dots", "html-open-tags"]
    assert all(cell.split(" ")[0].replace(".", "").isdigit() for row in rows for cell in row[2:])


def test_make_bench_times_at_least_twenty_families_of_every_shape():
    module = bench.pathological()
    kinds = {module.FAMILIES[name][0] for name in module.DEFAULT_FAMILIES}
    assert len(module.DEFAULT_FAMILIES) >= 20 and set(module.DEFAULT_FAMILIES) <= set(module.FAMILIES)
    assert kinds == {"punctuation run", "unclosed construct", "deep nesting", "one character", "markup storm"}
