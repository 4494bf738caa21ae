"""Display helpers: escaped chunk views, overlaps marked, stable tables, plots written."""

from __future__ import annotations

from chunking import chunk
from chunking.display import (
    OVERLAP,
    format_table,
    hits_table,
    plot_chunk_sizes,
    plot_distances,
    plot_metric_scatter,
    plot_neighbour_similarity,
    plot_overlap_cost,
    plot_recall_vs_tokens,
    plot_size_histogram,
    plot_term_saturation,
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


def test_size_histogram_compares_series_on_a_log_scale(tmp_path):
    fig = plot_size_histogram({"short": [10, 20, 30], "long": [200, 300, 900]}, bins=range(0, 1000, 50), log=True,
                              title="two series", path=tmp_path / "h.png")
    assert (tmp_path / "h.png").stat().st_size > 1000
    assert fig.axes[0].get_yscale() == "log"


def test_size_histogram_legend_counts_chunks_over_the_limit(tmp_path):
    fig = plot_size_histogram({"a": [10, 300], "b": [5]}, limit=256, limit_label="MiniLM window",
                              path=tmp_path / "h.png")
    assert (tmp_path / "h.png").stat().st_size > 1000
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert labels == ["a (1 of 2 over)", "b (0 of 1 over)", "MiniLM window (256)"]


def test_chunk_sizes_in_another_unit_without_a_window(tmp_path):
    fig = plot_chunk_sizes({"a": [100, 900], "b": [50]}, tmp_path / "s.png", limit=None, unit="characters")
    assert (tmp_path / "s.png").stat().st_size > 1000
    assert fig.axes[0].get_xlabel() == "chunk size (characters)" and fig.axes[0].get_legend() is None


def test_overlap_cost_is_written(tmp_path):
    plot_overlap_cost({0.0: 1.0, 0.25: 1.3, 0.5: 1.9}, title="cost", path=tmp_path / "o.png")
    assert (tmp_path / "o.png").stat().st_size > 1000


def test_term_saturation_is_written(tmp_path):
    plot_term_saturation(k1=1.5, max_count=5, path=tmp_path / "t.png")
    assert (tmp_path / "t.png").stat().st_size > 1000


def test_neighbour_similarity_marks_chunks(tmp_path):
    fig = plot_neighbour_similarity({"naive": [0.2, 0.4, 0.3], "late": [0.7, 0.8, 0.75]}, marked=[2],
                                    marked_label="pronoun", path=tmp_path / "n.png")
    assert (tmp_path / "n.png").stat().st_size > 1000
    assert fig.axes[0].collections[0].get_offsets().tolist() == [[2, 0.8]]  # chunk 2 against chunk 1


def test_metric_scatter_names_only_points_past_the_cut(tmp_path):
    fig = plot_metric_scatter(ROWS, x="retrieved_tokens", label_above=75, path=tmp_path / "m.png")
    assert (tmp_path / "m.png").stat().st_size > 1000
    assert [t.get_text() for t in fig.axes[0].texts] == ["a"]
