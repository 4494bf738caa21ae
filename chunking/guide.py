"""Which strategy, what size, for my documents? The decision guide as data: walked, drawn, and checked.

1. `GUIDE` is a small tree. Each `Question` asks one thing about your documents or your constraints; each
   answer leads to another question or to a `Recommendation`: a configuration of the showdown
   (`chunking.compare`'s defaults, measured by `make results` into `docs/results/results.csv`) and the
   rows that support it — the recommended row, and the row it is measured against.
2. `recommend(**answers)` walks the tree from keyword answers; `chunk_size_for(window_pieces, budget, k)` turns the
   embedder's window and the LLM's token budget into a size; `draw()` makes the flowchart from the same
   tree, so the picture cannot say something the advice does not.
3. `evidence(results)` puts each recommendation beside its measured rows (recall with its bootstrap
   interval, IoU, tokens handed over, truncation), so every line of advice points at a number.

Nothing here chunks or loads a model: notebook 13 and the docs' decision guide read it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

MEASURED_SIZE = 200  # cl100k tokens: the size the showdown measured against MiniLM's 256-piece window
MEASURED_WINDOW = 256  # word-pieces (all-MiniLM-L6-v2)
MEASURED_K = 5  # chunks handed over per question in the showdown


@dataclass(frozen=True)
class Recommendation:
    """A leaf of the guide: a configuration to start from, why, and the measured rows behind it.

    `config` names a row of the showdown's results; `baseline` the row it is compared with (the plain
    default a reader would otherwise ship); `options` are the strategy's options at the measured size.
    """

    config: str
    strategy: str
    options: Mapping[str, object]
    why: str
    baseline: str = "recursive-200"
    retrieval: str = "dense"


@dataclass(frozen=True)
class Question:
    """A node of the guide: `key` is the keyword `recommend` takes, `answers` map its values onward."""

    key: str
    text: str
    answers: Mapping[str, Question | Recommendation] = field(default_factory=dict)


EXACT_TERMS = "Will questions quote exact terms (error codes, flags, names)?"
MARKDOWN = Question("exact_terms", EXACT_TERMS, {
    "no": Recommendation(
        "markdown-200", "markdown", {"chunk_size": 200},
        "sections by their headings, tables and code kept whole, the heading path beside the text: recall "
        "within noise of the default, for the fewest tokens handed over of any 200-token row"),
    "yes": Recommendation(
        "contextual-heading-200-hybrid", "contextual", {"chunk_size": 200, "provider": "heading"},
        "the heading path in the embedded text and BM25 beside the dense vectors: the highest recall of "
        "any 200-token row, better than the default by more than noise", retrieval="hybrid"),
})
PROSE_TERMS = Question("exact_terms", EXACT_TERMS, {
    "no": Recommendation(
        "sentence-200", "sentence", {"chunk_size": 200},
        "whole sentences packed to the size, so no answer is cut mid-sentence; its gain over fixed-size "
        "windows is within noise here, its cost the same", baseline="fixed-200"),
    "yes": Recommendation(
        "recursive-200-hybrid", "recursive", {"chunk_size": 200},
        "BM25 finds the exact term a dense vector blurs, reciprocal rank fusion merges the two lists: a "
        "gain whose interval just touches zero here, for one more index",
        retrieval="hybrid"),
})
PROSE = Question("wide_answers", "Must the LLM see more than a passage, with room for about 2,000 tokens?", {
    "yes": Recommendation(
        "parent-child-128-in-512", "parent_child", {"chunk_size": 128, "parent_size": 512},
        "search small children, hand over their 512-token parents: the highest recall of all, better than "
        "the default by more than noise, at almost three times the tokens", retrieval="parents"),
    "no": PROSE_TERMS,
})
GUIDE = Question("documents", "What are your documents?", {
    "markdown": MARKDOWN,  # also HTML and Word with headings, and tables
    "prose": PROSE,  # articles, reports, transcripts, PDF text
    "code": Recommendation(
        "recursive-200", "recursive", {"chunk_size": 200},
        "blank lines, then lines: a definition stays whole where it fits (measured here on prose; "
        "no code questions are bundled yet)"),
})


def recommend(tree: Question = GUIDE, **answers: str) -> Recommendation:
    """Walk the guide with keyword answers to its questions; the leaf reached.

    >>> recommend(documents="markdown", exact_terms="no").config
    'markdown-200'
    >>> recommend(documents="prose", wide_answers="no", exact_terms="yes").retrieval
    'hybrid'
    >>> recommend(documents="slides")
    Traceback (most recent call last):
    ...
    ValueError: documents must be one of 'markdown', 'prose', 'code', got 'slides'
    """
    node: Question | Recommendation = tree
    while isinstance(node, Question):
        if node.key not in answers:
            raise TypeError(f"recommend() needs {node.key}= ({node.text} one of {', '.join(map(repr, node.answers))})")
        value = answers.pop(node.key)
        if value not in node.answers:
            raise ValueError(f"{node.key} must be one of {', '.join(map(repr, node.answers))}, got {value!r}")
        node = node.answers[value]
    if answers:
        raise TypeError(f"recommend() got answers this path never asks: {', '.join(sorted(answers))}")
    return node


def chunk_size_for(window_pieces: int = MEASURED_WINDOW, budget: int = 1000, k: int = MEASURED_K) -> int:
    """The chunk size, in cl100k tokens, for an embedder's window of `window_pieces` and an LLM `budget`.

    Two limits, whichever is smaller: the embedder must see the whole chunk (200 tokens fit MiniLM's 256
    pieces with room for the longer words; scale that share for another window), and `k` chunks must fit
    the budget. Rounded down to a multiple of 8.

    >>> chunk_size_for()
    200
    >>> chunk_size_for(window_pieces=512, budget=4000)
    400
    >>> chunk_size_for(budget=600)
    120
    """
    for name, value in (("window_pieces", window_pieces), ("budget", budget), ("k", k)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    size = min(window_pieces * MEASURED_SIZE // MEASURED_WINDOW, budget // k)
    if size < 8:
        raise ValueError(f"budget {budget} over k={k} leaves {budget // k} tokens a chunk: raise budget or lower k")
    return size // 8 * 8


def leaves(tree: Question = GUIDE) -> Iterator[tuple[tuple[tuple[str, str], ...], Recommendation]]:
    """Every recommendation with the path of (question key, answer) that reaches it, in the tree's order."""
    for answer, node in tree.answers.items():
        if isinstance(node, Recommendation):
            yield ((tree.key, answer),), node
        else:
            for path, leaf in leaves(node):
                yield ((tree.key, answer), *path), leaf


EVIDENCE = ("recall", "recall_low", "recall_high", "iou", "retrieved_tokens", "truncated")


def evidence(results: Sequence[Mapping[str, object]], per_question: Sequence[Mapping[str, object]] = (),
             tree: Question = GUIDE) -> list[dict]:
    """Each recommendation beside its measured row and its baseline's.

    `results` are the rows of results.csv, `per_question` those of per_question.csv (dicts, e.g. from
    `csv.DictReader`; numbers come back as floats). With `per_question`, each row also gets the paired
    difference in recall against the baseline, question by question, and its 95% bootstrap interval
    (`difference`, `low`, `high`): whether the advice beats the default by more than noise.

    >>> rows = [{"config": c, **dict.fromkeys(EVIDENCE, "0.5")} for c in ("markdown-200", "recursive-200")]
    >>> evidence(rows, tree=Question("documents", "?", {"markdown": MARKDOWN.answers["no"]}))[0]["recall"]
    0.5
    """
    by_config = {row["config"]: row for row in results}
    out = []
    for path, leaf in leaves(tree):
        for name in (leaf.config, leaf.baseline):
            if name not in by_config:
                raise ValueError(f"the guide recommends {name!r}, but the results have no such row")
        row, base = by_config[leaf.config], by_config[leaf.baseline]
        found = {"path": " › ".join(f"{key}={answer}" for key, answer in path), "config": leaf.config,
                 "strategy": leaf.strategy,
                 **{key: float(row[key]) for key in EVIDENCE},
                 "baseline": leaf.baseline, "baseline_recall": float(base["recall"])}
        if per_question:
            found.update(paired(per_question, leaf.config, leaf.baseline))
        out.append(found)
    return out


def paired(per_question: Sequence[Mapping[str, object]], config: str, baseline: str) -> dict:
    """`config`'s recall minus `baseline`'s, question by question (in the file's order of questions):
    the mean difference, its 95% percentile-bootstrap interval (`evaluate.bootstrap_ci`, seed 0) and the
    verdict: "better" or "worse" when the interval excludes zero, else "within noise"."""
    from chunking.evaluate import bootstrap_ci

    recall: dict[str, dict[str, float]] = {config: {}, baseline: {}}
    for row in per_question:
        if row["config"] in recall:
            recall[row["config"]][row["question"]] = float(row["recall"])
    if recall[config].keys() != recall[baseline].keys() or not recall[config]:
        raise ValueError(f"{config!r} and {baseline!r} were not measured on the same questions")
    differences = [recall[config][q] - recall[baseline][q] for q in recall[baseline]]
    low, high = bootstrap_ci(differences)
    verdict = "better" if low > 0 else "worse" if high < 0 else "within noise"
    return {"difference": sum(differences) / len(differences), "low": low, "high": high, "verdict": verdict}


def _layout(tree: Question) -> tuple[dict[int, tuple[float, float]], list[tuple[int, int, str]], list]:
    """Positions for a top-down drawing: leaves spread along the bottom, each question above its subtree."""
    nodes, edges, positions = [], [], {}

    def place(node, depth: int, next_x: list[float]) -> float:
        index = len(nodes)
        nodes.append(node)
        if isinstance(node, Recommendation):
            x = next_x[0]
            next_x[0] += 1.0
        else:
            xs = []
            for answer, child in node.answers.items():
                edges.append((index, len(nodes), answer))
                xs.append(place(child, depth + 1, next_x))
            x = sum(xs) / len(xs)
        positions[index] = (x, -depth)
        return x

    place(tree, 0, [0.0])
    return positions, edges, nodes


def draw(tree: Question = GUIDE):
    """The flowchart of `tree` as a matplotlib Figure: questions in boxes, answers on the arrows,
    recommendations (their configuration and strategy) at the leaves."""
    import textwrap

    import matplotlib.pyplot as plt

    positions, edges, nodes = _layout(tree)
    width = max(x for x, _ in positions.values()) + 1
    depth = -min(y for _, y in positions.values()) + 1
    fig, ax = plt.subplots(figsize=(2.3 * width + 1, 1.6 * depth + 0.5))
    for parent, child, answer in edges:
        (x0, y0), (x1, y1) = positions[parent], positions[child]
        ax.annotate("", xy=(x1, y1 + 0.22), xytext=(x0, y0 - 0.22),
                    arrowprops={"arrowstyle": "-|>", "color": "#555555", "lw": 1.2})
        ax.text((x0 + x1) / 2, (y0 + y1) / 2, answer, ha="center", va="center", fontsize=9,
                bbox={"boxstyle": "round,pad=0.2", "fc": "white", "ec": "none"})
    for index, node in enumerate(nodes):
        x, y = positions[index]
        if isinstance(node, Question):
            label, colour = textwrap.fill(node.text, 26), "#dbe9f6"
        else:
            label, colour = f"{node.config}\n({node.retrieval} search)", "#dff0d8"
        ax.text(x, y, label, ha="center", va="center", fontsize=9,
                bbox={"boxstyle": "round,pad=0.4", "fc": colour, "ec": "#333333"})
    ax.set_xlim(-0.7, width - 0.3)
    ax.set_ylim(-depth + 0.5, 0.6)
    ax.axis("off")
    fig.tight_layout()
    return fig
