"""Display helpers: a comparison table as text, and the plots the notebooks and the demo share.

1. `format_table` renders result rows as an aligned text table (3 decimals, no pandas needed).
2. `plot_recall_vs_tokens` places each configuration by the tokens it hands to the LLM and the
   recall it gets, with bootstrap intervals: the trade-off chunk size really buys.
3. `plot_chunk_sizes` shows each configuration's chunk-size distribution in tokens.

matplotlib is imported only when a plot is drawn. Used by notebooks 00–12 and `make demo`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

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


def plot_recall_vs_tokens(rows: Sequence[Mapping], path: str | Path | None = None, *, metric: str = "recall"):
    """Recall (with its interval) against mean retrieved tokens, one point per configuration."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for row in rows:
        err = [[row[metric] - row[f"{metric}_low"]], [row[f"{metric}_high"] - row[metric]]]
        ax.errorbar(row["retrieved_tokens"], row[metric], yerr=err, fmt="o", capsize=3)
        ax.annotate(row["config"], (row["retrieved_tokens"], row[metric]), textcoords="offset points",
                    xytext=(5, 4), fontsize=8)
    ax.set_xlabel("mean tokens retrieved per question (top k)")
    ax.set_ylabel(f"{metric} (95% bootstrap interval)")
    ax.set_title(f"{metric} vs retrieved tokens")
    ax.grid(alpha=0.3)
    return _finish(fig, path)


def plot_chunk_sizes(sizes: Mapping[str, Sequence[int]], path: str | Path | None = None, *, limit: int | None = 256):
    """Box plots of chunk sizes (tokens) per configuration, with the embedder's window marked."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 0.45 * len(sizes) + 1.5))
    ax.boxplot(list(sizes.values()), vert=False, showfliers=True)
    ax.set_yticks(range(1, len(sizes) + 1), list(sizes))
    if limit:
        ax.axvline(limit, color="crimson", linestyle="--", label=f"embedder window ({limit} pieces)")
        ax.legend(loc="lower right", fontsize=8)
    ax.set_xlabel("chunk size (cl100k tokens)")
    ax.set_title("chunk size distribution")
    return _finish(fig, path)


def _finish(fig, path):
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=120)
        import matplotlib.pyplot as plt

        plt.close(fig)
    return fig


def _cell(value, column: str) -> str:
    if isinstance(value, float):
        return f"{value:.1f}" if column.endswith("tokens") or column.endswith("pieces") else f"{value:.3f}"
    return str(value)
