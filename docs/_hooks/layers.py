"""The package's three layers, read from the code's own imports: the table, and the picture.

One table assigns every module of `chunking/` its layer; `tests/test_layers.py` holds the imports
to it (every import points down), the README's "Architecture" section and the docs' architecture
page show it (`table()`, checked equal by the tests), and `draw()` makes `docs/architecture.png`
from the imports as they are. `python docs/_hooks/layers.py` redraws the picture and rewrites the
README's table; the tests check both against the code, so a stale one fails.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "chunking"
PICTURE = Path(__file__).resolve().parents[1] / "architecture.png"
CORE = ("options", "types", "documents", "checks", "segment", "sizers", "tokens", "counting", "packing", "windows",
        "models", "blocks", "terms")
STRATEGIES = ("fixed", "sentence", "paragraph", "markdown", "sliding", "recursive", "semantic", "late",
              "parent_child", "contextual")
PIPELINE = ("registry", "load", "html_text", "docx_text", "embed", "onnx_model", "cache", "store", "deadline", "bm25",
            "llm", "indexing", "retrieval", "compare", "evaluate", "questions", "display", "datasets", "parallel",
            "ray_index", "langchain_splitter", "llamaindex_parser", "arguments", "configs", "playground", "guide",
            "cli", "__main__")
LAYERS = {**dict.fromkeys(CORE, "core"), **dict.fromkeys(STRATEGIES, "strategies"),
          **dict.fromkeys(PIPELINE, "pipeline"), "__init__": "root"}
ALLOWED = {"core": {"core"}, "strategies": {"core"}, "reference": {"core"}, "root": set(),
           "pipeline": {"core", "strategies", "pipeline"}}
WHAT = {
    "core": "the chunk and its contract, one check per option, segmentation, sizers that measure, the offline "
            "tokenizer, packing, windows, markdown blocks, terms, and the protocol a strategy asks of a model",
    "strategies": "one module each: find boundaries, hand lengths to a sizer; they import only the core",
    "reference": "the plain versions to copy, one file each, importing nothing from the package (their `__init__` "
                 "only makes tiktoken's `cl100k_base` offline, from the core's `tokens`)",
    "root": "`chunking/__init__.py`: re-exports the public names, each loaded on first use (PEP 562)",
    "pipeline": "readers, the embedder, the store, BM25, the LLM client, the one indexing pipeline, retrieval, "
                "evaluation, the registry of names, the command line",
}


def module_names() -> list[str]:
    """Every module of the package: "fixed", "reference.fixed", …"""
    return sorted(str(p.relative_to(PACKAGE).with_suffix("")).replace("/", ".") for p in PACKAGE.rglob("*.py"))


def layer(module: str) -> str:
    return "reference" if module.startswith("reference") else LAYERS.get(module, "unassigned")


def imports(module: str) -> set[str]:
    """The package modules `module` imports, at any depth (`from chunking import store` included)."""
    tree = ast.parse((PACKAGE / (module.replace(".", "/") + ".py")).read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name.removeprefix("chunking.") for a in node.names if a.name.startswith("chunking.")}
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "chunking":
            base = node.module.removeprefix("chunking").removeprefix(".")
            for alias in node.names:
                name = f"{base}.{alias.name}" if base else alias.name
                found.add(name if (PACKAGE / (name.replace(".", "/") + ".py")).is_file() else base or "__init__")
    return found - {module, ""}


def graph() -> dict[str, list[str]]:
    """Module -> the package modules it imports, sorted."""
    return {m: sorted(imports(m)) for m in module_names()}


def table(link=lambda module: f"chunking/{module.replace('.', '/')}.py") -> str:
    """The layer table in Markdown: each layer, what it holds, its modules (each linked to `link(module)`:
    by default its file, as the README links it), what it may import."""
    rows = ["| layer | holds | modules | may import |", "|---|---|---|---|"]
    names = module_names()
    for name in ("root", "pipeline", "strategies", "reference", "core"):
        members = [m for m in names if layer(m) == name and m != "__main__" and not m.endswith(".__init__")]
        links = ", ".join(f"[`{m.removeprefix('reference.')}`]({link(m)})" for m in members)
        may = (["its own layer"] if name in ALLOWED[name] else []) + sorted(ALLOWED[name] - {name})
        rows.append(f"| {name} | {WHAT[name]} | {links} | {', '.join(may) or 'nothing'} |")
    return "\n".join(rows)


def draw(path: Path = PICTURE) -> None:
    """Every module as a box in its layer's band, every import into another layer as an arrow down to
    what it imports (imports within the pipeline and within the core are left out of the drawing, not
    of the metadata). All the imports are recorded in the PNG's metadata, so a test can tell a stale
    picture."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    edges = graph()
    bands = [("pipeline", 3.0), ("strategies", 2.0), ("reference", 1.0), ("core", 0.0)]
    place = {}
    for name, y in bands:
        members = [m for m in edges if layer(m) == name and m != "__main__"]
        for i, m in enumerate(members):
            place[m] = ((i + 0.5) / len(members), y + (0.18 if i % 2 else -0.18) * (name in ("pipeline", "core")))
    fig, ax = plt.subplots(figsize=(16, 8), dpi=80)
    for m, targets in edges.items():
        for t in targets:
            if m in place and t in place and layer(m) != layer(t):
                (x0, y0), (x1, y1) = place[m], place[t]
                ax.annotate("", (x1, y1 + 0.09), (x0, y0 - 0.09),
                            arrowprops={"arrowstyle": "-|>", "color": "#1f4e79", "alpha": 0.18, "lw": 0.8})
    colours = {"pipeline": "#d08c2b", "strategies": "#1f4e79", "reference": "#6b8e23", "core": "#555555"}
    for m, (x, y) in place.items():
        ax.text(x, y, m.removeprefix("reference."), ha="center", va="center", fontsize=8, color="white",
                bbox={"boxstyle": "round,pad=0.3", "fc": colours[layer(m)], "ec": "none"})
    for name, y in bands:
        ax.text(-0.02, y, name, ha="right", va="center", fontsize=11, fontweight="bold", color=colours[name])
    ax.set_xlim(-0.12, 1.02)
    ax.set_ylim(-0.5, 3.5)
    ax.axis("off")
    ax.set_title("chunking: every import points down (drawn from the code's own imports)")
    fig.savefig(path, metadata={"Description": json.dumps(edges, sort_keys=True), "Software": None},
                bbox_inches="tight")
    plt.close(fig)


def drawn_edges(path: Path = PICTURE) -> dict[str, list[str]]:
    """The imports a picture was drawn from (its metadata)."""
    from PIL import Image

    with Image.open(path) as image:
        return json.loads(image.text["Description"])


README = PACKAGE.parent / "README.md"
README_TABLE = re.compile(r"(<!-- layers: [^\n]*-->\n).*?(\n<!-- /layers -->)", re.S)


def write_readme(path: Path = README) -> None:
    """Put the current table between the README's layer markers."""
    text = path.read_text(encoding="utf-8")
    path.write_text(README_TABLE.sub(lambda m: m.group(1) + table() + m.group(2), text, count=1), encoding="utf-8")


if __name__ == "__main__":
    draw(Path(sys.argv[1]) if len(sys.argv) > 1 else PICTURE)
    write_readme()
