"""Display helpers: chunk boundaries in colour, a comparison table, and the shared plots.

1. `show_chunks` renders a text with every chunk in its own colour, overlaps marked, an answer's
   span boxed, and the text HTML-escaped (a `<script>` in a document stays text). Any notebook.
2. `format_table` renders result rows as an aligned text table (3 decimals, no pandas needed).
3. `plot_recall_vs_tokens` ranks the configurations by recall, with bootstrap intervals, beside the
   tokens each hands to the LLM: the trade-off chunk size really buys.
4. `plot_chunk_sizes`, `plot_size_histogram`: size distributions against the embedder's window.
5. `plot_distances`: semantic chunking's distance curve, its threshold, and where chunks ended.
6. `plot_overlap_cost`, `plot_term_saturation`, `plot_neighbour_similarity`, `plot_metric_scatter`:
   what overlap costs, how BM25 saturates, what late chunking does to neighbours, one metric against another.

matplotlib is imported only when a plot is drawn. Used by notebooks 00–15 and `make demo`.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from chunking.types import Chunk

PALETTE = ("#fde68a", "#bfdbfe", "#bbf7d0", "#fbcfe8", "#ddd6fe", "#fed7aa")
OVERLAP = "#f87171"
MARKERS = {"dense": "o", "hybrid": "s", "late": "D"}  # how a configuration searches its chunks
SERIES = ("#60a5fa", "#fbbf24", "#34d399", "#f472b6", "#a78bfa", "#9ca3af")  # one colour per plotted series


class ChunkView:
    """HTML view of chunk boundaries; `_repr_html_` makes notebooks render it."""

    def __init__(self, body: str) -> None:
        self.body = body

    def _repr_html_(self) -> str:
        return self.body

    def __repr__(self) -> str:
        return f"<ChunkView: {len(self.body)} characters of HTML>"


def show_chunks(
    text: str, chunks: Sequence[Chunk], *, start: int = 0, end: int | None = None,
    highlight: Sequence[tuple[int, int]] = (),
) -> ChunkView:
    """Colour each chunk of `text[start:end]`; overlapping stretches are red, uncovered ones plain.

    A small grey number marks where each chunk begins; the spans in `highlight` (the answer to a
    question, say) are boxed in black, so you see which chunks hold it, cut it, or miss it.
    """
    end = len(text) if end is None else end
    visible = [c for c in chunks if c.start < end and c.end > start]
    marks = [(max(a, start), min(b, end)) for a, b in highlight if a < end and b > start]
    edges = {start, end, *(p for c in visible for p in (c.start, c.end)), *(p for m in marks for p in m)}
    cuts = sorted(p for p in edges if start <= p <= end)
    opening: dict[int, list[Chunk]] = {}
    for c in visible:
        opening.setdefault(max(c.start, start), []).append(c)
    active: dict[int, Chunk] = {}  # the chunks covering the current stretch, by index (a sweep: no rescans)
    parts = []
    for lo, hi in zip(cuts, cuts[1:]):
        for c in opening.get(lo, ()):
            active[c.index] = c
        for index in [i for i, c in active.items() if c.end <= lo]:
            del active[index]
        if starting := [c.index for c in opening.get(lo, ()) if c.start == lo]:
            parts.append(f'<sup style="color:#6b7280">{min(starting)}</sup>')
        piece = html.escape(text[lo:hi])
        if active:
            colour = OVERLAP if len(active) > 1 else PALETTE[next(iter(active)) % len(PALETTE)]
            piece = f'<span style="background:{colour}">{piece}</span>'
        if any(a <= lo and hi <= b for a, b in marks):
            piece = f'<span style="outline:2px solid #111;outline-offset:1px">{piece}</span>'
        parts.append(piece)
    style = "white-space:pre-wrap;font-family:monospace;font-size:12px;line-height:1.6"
    return ChunkView(f'<div style="{style}">{"".join(parts)}</div>')


TABLE_COLUMNS = (
    "config", "chunks", "mean_tokens", "max_pieces", "truncated", "recall", "precision", "iou",
    "precision_omega", "hit", "reciprocal_rank", "recall_at_budget", "retrieved_tokens",
)


def format_table(rows: Sequence[Mapping], columns: Sequence[str] = TABLE_COLUMNS) -> str:
    """Rows as an aligned text table; floats to 3 decimals (1 for token means)."""
    cells = [[_cell(row.get(c, ""), c) for c in columns] for row in rows]
    widths = [max(len(c), *(len(r[i]) for r in cells)) for i, c in enumerate(columns)]
    line = lambda values: "  ".join(v.ljust(w) if i == 0 else v.rjust(w)  # noqa: E731
                                    for i, (v, w) in enumerate(zip(values, widths)))
    return "\n".join([line(columns), line(["-" * w for w in widths]), *(line(r) for r in cells)])


def hits_table(hits: Sequence, references: Sequence[tuple[str, int, int]] = (), *, preview: int = 70) -> str:
    """Search results as a text table: rank, score, document, span, whether it touches a reference.

    `hits` are `store.Hit`s, `retrieval.ParentHit`s (the parent is shown) or bare chunks;
    `references` are (doc, start, end) spans.
    """
    rows = []
    for rank, hit in enumerate(hits, 1):
        c = getattr(hit, "parent", None) or getattr(hit, "chunk", hit)
        touches = any(d == c.doc_id and s < c.end and c.start < e for d, s, e in references)
        rows.append({
            "rank": rank, "score": float(getattr(hit, "score", float("nan"))), "doc": c.doc_id,
            "span": f"{c.start}-{c.end}", "evidence": "yes" if touches else "",
            "text": c.text[:preview].replace("\n", " ") + ("…" if len(c.text) > preview else ""),
        })
    return format_table(rows, ("rank", "score", "doc", "span", "evidence", "text"))


def plot_recall_vs_tokens(rows: Sequence[Mapping], path: str | Path | None = None, *, metric: str = "recall"):
    """Each configuration's recall with its interval, best first, beside the tokens it hands the LLM.

    One row per configuration, sorted by `metric` (ties by name), its name on the left: a dot at the
    mean and a line across its 95% bootstrap interval, then a bar and the number of mean retrieved
    tokens on the right. The colour is the strategy (`row["strategy"]`, else the name's first word),
    one colour per strategy; the marker is how the chunks are searched (`MARKERS`: a name holding the
    word `hybrid` or `late`, else dense). Names stand beside their rows, so configurations with
    about the same tokens or recall never hide each other.
    """
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.transforms import blended_transform_factory

    def strategy(row) -> str:
        return row.get("strategy") or row["config"].split("-")[0]

    def search(row) -> str:
        return next((s for s in ("hybrid", "late") if s in row["config"].split("-")), "dense")

    order = sorted(rows, key=lambda row: (-row[metric], row["config"]))
    strategies = list(dict.fromkeys(strategy(row) for row in order))
    palette = plt.get_cmap("tab10" if len(strategies) <= 10 else "tab20")
    colours = {name: palette(i % palette.N) for i, name in enumerate(strategies)}
    most = max((row["retrieved_tokens"] for row in order), default=0) or 1

    fig, ax = plt.subplots(figsize=(9, 4.8))
    right = blended_transform_factory(ax.transAxes, ax.transData)  # x: past the axes' right edge; y: a row
    for y, row in enumerate(order):
        colour = colours[strategy(row)]
        ax.plot([row[f"{metric}_low"], row[f"{metric}_high"]], [y, y], color=colour, lw=2, alpha=0.55)
        ax.plot(row[metric], y, MARKERS[search(row)], color=colour, markeredgecolor="black", markeredgewidth=0.5)
        ax.annotate(f"{row[metric]:.3f}", (row[metric], y), xytext=(0, 4), textcoords="offset points",
                    fontsize=6.5, ha="center", va="bottom", color="0.3")
        width = 0.22 * row["retrieved_tokens"] / most
        ax.add_patch(plt.Rectangle((1.03, y - 0.3), width, 0.6, transform=right, color=colour, alpha=0.55,
                                   clip_on=False))
        ax.text(1.04 + width, y, f"{row['retrieved_tokens']:,.0f}", transform=right, fontsize=7.5, va="center")
    ax.set_yticks(range(len(order)), [row["config"] for row in order], fontsize=8)
    ax.set_ylim(len(order) - 0.5, -0.8)  # room above the top row for its value
    ax.set_xlabel(f"mean {metric} (dot) and its 95% bootstrap interval (line)")
    ax.set_title(f"{metric} per configuration, best first", fontsize=10, loc="left")
    ax.text(1.03, 1.01, "mean tokens handed over", transform=ax.transAxes, fontsize=9, va="bottom")
    ax.grid(axis="x", alpha=0.3)
    searches = [s for s in MARKERS if any(search(row) == s for row in order)]
    if len(searches) > 1:
        names = {"dense": "dense", "hybrid": "hybrid (dense + BM25)", "late": "late chunking"}
        handles = [Line2D([], [], marker=MARKERS[s], ls="", color="0.6", markeredgecolor="black",
                          markeredgewidth=0.5, label=names[s]) for s in searches]
        ax.legend(handles=handles, loc="lower right", fontsize=7.5, title="search", title_fontsize=7.5)
    fig.subplots_adjust(left=0.23, right=0.74, top=0.92, bottom=0.11)
    return _finish(fig, path, tight=False)


def plot_heatmaps(tables: Mapping[str, Any], *, label: str = "mean recall", vmin: float = 0.0, vmax: float = 1.0,
                  path: str | Path | None = None):
    """Tables side by side as heatmaps sharing their rows, each cell labelled with its value.

    `tables` maps a title to a pandas DataFrame (rows: configurations, say; columns: kinds of
    question or documents); all must have the same rows in the same order. One colour bar from
    `vmin` to `vmax`; cell text white on dark cells, black on light ones.
    """
    import matplotlib.pyplot as plt
    import numpy as np

    frames = list(tables.values())
    if not frames or any(list(f.index) != list(frames[0].index) for f in frames):
        raise ValueError("tables must be one or more DataFrames with the same rows in the same order")
    widths = [max(f.shape[1], 1) for f in frames]
    fig, axes = plt.subplots(1, len(frames), figsize=(2.2 + 1.05 * sum(widths), 1.2 + 0.42 * len(frames[0])),
                             sharey=True, squeeze=False, gridspec_kw={"width_ratios": widths})
    for ax, (title, frame) in zip(axes[0], tables.items()):
        values = frame.to_numpy(dtype=float)
        image = ax.imshow(values, cmap="viridis", vmin=vmin, vmax=vmax, aspect="auto")
        middle = (vmin + vmax) / 2
        for (row, column), value in np.ndenumerate(values):
            ax.text(column, row, f"{value:.3f}", ha="center", va="center", fontsize=7.5,
                    color="white" if value < middle else "black")
        ax.set_xticks(range(frame.shape[1]), [str(c) for c in frame.columns], rotation=35, ha="right")
        ax.set_title(title)
    axes[0][0].set_yticks(range(len(frames[0])), [str(i) for i in frames[0].index])
    fig.colorbar(image, ax=axes[0].tolist(), label=label, shrink=0.6, pad=0.02)
    return _finish(fig, path, tight=False)


def plot_chunk_sizes(sizes: Mapping[str, Sequence[int]], path: str | Path | None = None, *, limit: int | None = 256,
                     unit: str = "cl100k tokens", title: str = "chunk size distribution"):
    """Box plots of chunk sizes per configuration (or document), with the embedder's window marked.

    `unit` names what the sizes count; pass `limit=None` when they are not in the window's unit.
    """
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 0.45 * len(sizes) + 1.5))
    ax.boxplot(list(sizes.values()), orientation="horizontal", showfliers=True)
    ax.set_yticks(range(1, len(sizes) + 1), list(sizes))
    if limit:
        ax.axvline(limit, color="crimson", linestyle="--", label=f"embedder window ({limit} pieces)")
        ax.legend(loc="lower right", fontsize=8)
    ax.set_xlabel(f"chunk size ({unit})")
    ax.set_title(title)
    return _finish(fig, path)


def plot_distances(
    chunks: Sequence[Chunk], sentences: Sequence[tuple[int, int]], distances: Sequence[float], *,
    threshold: float | None = None, title: str = "distance between neighbouring sentences",
    path: str | Path | None = None,
):
    """Semantic chunking's picture: the distance after each sentence, the threshold, and where chunks
    ended — red dots at breakpoints, grey lines where the size cap cut.

    `sentences` and `distances` come from `semantic.distances`; `chunks` from `semantic.chunk`
    (their metadata says why each one ended).
    """
    import matplotlib.pyplot as plt

    boundary_after = {end: i for i, (_, end) in enumerate(sentences[:-1])}
    fig, ax = plt.subplots(figsize=(11, 3.8))
    ax.plot(range(len(distances)), distances, color="#4b5563", linewidth=0.8, label="distance to next sentence")
    if threshold is not None:
        ax.axhline(threshold, color="crimson", linestyle="--", label=f"threshold = {threshold:.3f}")
    ends = [(boundary_after[c.end], c.metadata.get("end_reason")) for c in chunks if c.end in boundary_after]
    for i, reason in ends:
        if reason != "breakpoint":
            ax.axvline(i, color="#9ca3af", alpha=0.5, linewidth=0.8)
    chosen = [i for i, reason in ends if reason == "breakpoint"]
    ax.scatter(chosen, [distances[i] for i in chosen], color="crimson", zorder=3, label="chunk ends at a breakpoint")
    ax.plot([], [], color="#9ca3af", label="chunk ends for size")
    ax.set_xlabel("boundary (after sentence i)")
    ax.set_ylabel("cosine distance")
    ax.set_title(title)
    ax.legend(loc="lower right", fontsize=8)
    return _finish(fig, path)


def plot_size_histogram(
    sizes: Sequence[int] | Mapping[str, Sequence[int]], *, limit: int | None = 256, unit: str = "tokens",
    bins: int | Sequence[float] = 40, log: bool = False, title: str | None = None, limit_label: str = "window",
    path: str | Path | None = None,
):
    """Histogram of chunk sizes, with the embedder's window marked (chunks past it lose their tail).

    `sizes` is one list, or a mapping label → sizes to compare several series side by side; with a
    `limit`, each series' legend entry says how many of its chunks are over it. `log` puts the counts
    on a log scale, so a few very long chunks stay visible beside many short ones.
    """
    import matplotlib.pyplot as plt

    series = dict(sizes) if isinstance(sizes, Mapping) else {"": list(sizes)}
    fig, ax = plt.subplots(figsize=(7, 3.5))
    labels = [_over(label, values, limit) for label, values in series.items()]
    ax.hist(list(series.values()), bins=bins, label=labels, color=list(SERIES[:len(series)]), edgecolor="white")
    if limit:
        ax.axvline(limit, color="crimson", linestyle="--", label=f"{limit_label} ({limit})")
        ax.legend(fontsize=8)
    if log:
        ax.set_yscale("log")
    ax.set_xlabel(f"chunk size ({unit})")
    ax.set_ylabel("chunks (log scale)" if log else "chunks")
    if title:
        ax.set_title(title)
    return _finish(fig, path)


def plot_overlap_cost(measured: Mapping[float, float], *, title: str | None = None, path: str | Path | None = None):
    """What overlap costs: index size (× the corpus) against the overlap fraction f.

    Windows that step by (1 − f) of their size store each character 1 / (1 − f) times; `measured`
    maps each f tried to the stored/corpus character ratio actually found, drawn over that curve.
    """
    import matplotlib.pyplot as plt

    top = min(max(measured, default=0.5) + 0.05, 0.95)
    grid = [top * i / 100 for i in range(101)]
    fig, ax = plt.subplots(figsize=(6, 3.2))
    ax.plot(grid, [1 / (1 - f) for f in grid], color="#9ca3af", label="1 / (1 − f)")
    ax.plot(list(measured), list(measured.values()), "o", color="#dc2626",
            label="measured: stored / corpus characters")
    ax.set_xlabel("overlap fraction f")
    ax.set_ylabel("index size (× corpus)")
    if title:
        ax.set_title(title)
    ax.legend()
    return _finish(fig, path)


def plot_term_saturation(*, k1: float = 1.2, max_count: int = 10, path: str | Path | None = None):
    """BM25's term weight against how often the term occurs in a chunk of average length.

    The weight `tf·(k1 + 1) / (tf + k1)` rises fast, then flattens towards k1 + 1: the tenth
    occurrence adds far less than the second (`bm25.BM25Encoder`, notebook 10).
    """
    import matplotlib.pyplot as plt

    counts = range(max_count + 1)
    fig, ax = plt.subplots(figsize=(6, 3))
    ax.plot(counts, counts, "--", color="grey", label="raw count")
    ax.plot(counts, [tf * (k1 + 1) / (tf + k1) for tf in counts], "o-", label=f"BM25 (k1 = {k1:g})")
    ax.axhline(k1 + 1, color="crimson", linestyle=":", label="limit k1 + 1")
    ax.set_xlabel("occurrences of the term in the chunk")
    ax.set_ylabel("term weight")
    ax.set_ylim(0, 1.8 * (k1 + 1))
    ax.legend()
    return _finish(fig, path)


def plot_neighbour_similarity(
    series: Mapping[str, Sequence[float]], *, marked: Sequence[int] = (), marked_label: str = "marked chunks",
    title: str | None = None, path: str | Path | None = None,
):
    """Cosine similarity of each chunk to the one before it, one line per way of embedding.

    Each series holds, at position i, the similarity of chunk i + 1 to chunk i. `marked` chunk
    indices are dotted on the last series — say, chunks that open with a pronoun (notebook 11).
    """
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 3))
    for (label, values), colour in zip(series.items(), SERIES):
        ax.plot(range(1, len(values) + 1), values, color=colour, label=label)
    if marked and series:
        last = list(series.values())[-1]
        ax.scatter(marked, [last[i - 1] for i in marked], color="crimson", zorder=3, s=15, label=marked_label)
    ax.set_xlabel("chunk index")
    ax.set_ylabel("cosine similarity to previous chunk")
    ax.set_ylim(0, 1)
    if title:
        ax.set_title(title)
    ax.legend(loc="lower right", fontsize=8)
    return _finish(fig, path)


def plot_metric_scatter(
    rows: Sequence[Mapping], *, x: str, y: str = "recall", label_above: float | None = None,
    xlabel: str | None = None, path: str | Path | None = None,
):
    """One point per configuration, `rows[x]` against `rows[y]` (columns of a comparison table).

    Configurations whose x is above `label_above` are named (all of them when it is None), so
    the outliers can be read off without crowding the rest.
    """
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    ax.scatter([row[x] for row in rows], [row[y] for row in rows])
    for row in rows:
        if label_above is None or row[x] > label_above:
            ax.annotate(row["config"], (row[x], row[y]), textcoords="offset points", xytext=(5, 3), fontsize=8)
    ax.set_xlabel(xlabel or x)
    ax.set_ylabel(y)
    ax.grid(alpha=0.3)
    return _finish(fig, path)


def _finish(fig, path, tight: bool = True):
    if tight:
        fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=120)
        import matplotlib.pyplot as plt

        plt.close(fig)
    return fig


def _over(label: str, values: Sequence[int], limit: int | None) -> str:
    if not limit:
        return label
    return f"{label or 'chunks'} ({sum(v > limit for v in values)} of {len(values)} over)"


def _cell(value, column: str) -> str:
    if isinstance(value, float):
        return f"{value:.1f}" if column.endswith("tokens") or column.endswith("pieces") else f"{value:.3f}"
    return str(value)
