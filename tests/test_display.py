"""Display helpers: escaped chunk views, overlaps marked, stable tables, plots written."""

from __future__ import annotations

from chunking import chunk
from chunking.display import (
    OVERLAP,
    format_table,
    hits_table,
    plot_chunk_sizes,
    plot_distances,
    plot_recall_vs_tokens,
    plot_size_histogram,
    show_chunks,
)

TEXT = "Intro <script>alert('x')</script> text. Second sentence here. Third one."


def test_chunk_text_is_escaped():
    html = show_chunks(TEXT, chunk(TEXT, "sentence", chunk_size=5))._repr_html_()
    assert "<script>" not in html and "&lt;script&gt;" in html


def test_overlaps_are_marked():
    chunks = chunk(TEXT, "fixed", chunk_size=20, chunk_overlap=5, unit="characters")
    assert OVERLAP in show_chunks(TEXT, chunks)._repr_html_()


def test_no_overlap_no_overlap_colour():
    assert OVERLAP not in show_chunks(TEXT, chunk(TEXT, "sentence", chunk_size=8))._repr_html_()


def test_every_chunk_start_is_numbered():
    chunks = chunk(TEXT, "sentence", chunk_size=8)
    html = show_chunks(TEXT, chunks)._repr_html_()
    assert all(f">{c.index}</sup>" in html for c in chunks)


ROWS = [
    {"config": "a", "chunks": 3, "recall": 0.5, "recall_low": 0.4, "recall_high": 0.6, "retrieved_tokens": 100.0},
    {"config": "bb", "chunks": 10, "recall": 0.25, "recall_low": 0.2, "recall_high": 0.3, "retrieved_tokens": 50.0},
]


def test_table_rounds_and_aligns():
    table = format_table(ROWS, ("config", "chunks", "recall", "retrieved_tokens"))
    assert table.splitlines() == [
        "config  chunks  recall  retrieved_tokens",
        "------  ------  ------  ----------------",
        "a            3   0.500             100.0",
        "bb          10   0.250              50.0",
    ]


def test_hits_table_marks_evidence():
    chunks = chunk(TEXT, "sentence", chunk_size=8, doc_id="d")
    table = hits_table(chunks[:2], [("d", chunks[1].start, chunks[1].end)], preview=10)
    lines = table.splitlines()
    assert lines[0].split() == ["rank", "score", "doc", "span", "evidence", "text"]
    assert "yes" not in lines[2] and "yes" in lines[3]


def test_plots_are_written(tmp_path):
    from chunking.types import Chunk

    plot_recall_vs_tokens(ROWS, tmp_path / "r.png")
    plot_chunk_sizes({"a": [1, 2, 3], "bb": [5, 6]}, tmp_path / "s.png")
    ended = [Chunk("ab", 0, 2, 0, metadata={"end_reason": "breakpoint"}),
             Chunk("c", 2, 3, 1, metadata={"end_reason": "size"})]
    plot_distances(ended, [(0, 1), (1, 2), (2, 3), (3, 4)], [0.2, 0.9, 0.3], threshold=0.8, path=tmp_path / "d.png")
    plot_size_histogram([10, 300, 120], path=tmp_path / "h.png")
    assert all((tmp_path / f"{n}.png").stat().st_size > 1000 for n in "rsdh")
