"""Three layers, every import pointing down: the table, read from the code's own imports.

Every module of the package has a layer in `docs/_hooks/layers.py` (a new one fails here until it is given one):
- core: the chunk, option checks, segmentation, sizers, tokens, packing, windows, the model protocol;
- strategies: one module each, importing only the core;
- pipeline: readers, models, the store, retrieval, evaluation, the command line — anything below it.
The plain versions (`chunking/reference/`) import only the core, like a strategy. Imports are read
with `ast` at every depth (inside functions too), so a lazy import cannot hide an upward one, and
no two modules may import each other, directly or round a longer loop.
"""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("chunking_layers", ROOT / "docs" / "_hooks" / "layers.py")
layers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(layers)
PACKAGE, CORE, STRATEGIES, ALLOWED = layers.PACKAGE, layers.CORE, layers.STRATEGIES, layers.ALLOWED
layer, imports, module_names = layers.layer, layers.imports, layers.module_names
HEAVY = ("qdrant_client", "onnxruntime", "torch", "pypdf", "docx", "sentence_transformers", "transformers")

GRAPH = {m: imports(m) for m in module_names()}


@pytest.mark.parametrize("module", module_names())
def test_every_module_has_a_layer_and_imports_only_below_it(module):
    assert layer(module) != "unassigned", f"give {module} a layer in docs/_hooks/layers.py"
    upward = sorted(i for i in GRAPH[module] if layer(i) not in ALLOWED[layer(module)] and i not in ("reference",))
    assert not upward, f"{module} ({layer(module)}) imports {[(i, layer(i)) for i in upward]}"


def test_no_module_imports_one_that_imports_it_back():
    loops, state = [], {}

    def visit(module: str, path: list[str]) -> None:
        state[module] = "open"
        for other in sorted(GRAPH.get(module, ())):
            if state.get(other) == "open":
                loops.append(path[path.index(other):] + [other])
            elif other not in state:
                visit(other, [*path, other])
        state[module] = "done"

    for module in GRAPH:
        if module not in state:
            visit(module, [module])
    assert not loops, loops


def loaded_by(statement: str) -> tuple[list[str], list[str]]:
    """The package modules and the heavy libraries in `sys.modules` after `statement`, in a fresh interpreter."""
    script = (f"import sys; {statement}; print(sorted(m for m in sys.modules if m.startswith('chunking')));"
              f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r})))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    package, heavy = out.splitlines()
    return ast.literal_eval(package), ast.literal_eval(heavy)


def test_importing_a_strategy_loads_the_core_and_that_strategy_only():
    package, _ = loaded_by("import chunking.fixed")
    assert {m.removeprefix("chunking.") for m in package} - {"chunking"} <= {*CORE, "fixed"}, package


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_strategy_loads_no_store_model_or_file_reader(strategy):
    package, heavy = loaded_by(f"import chunking.{strategy}")
    inside = [m for m in package if m != "chunking"]
    assert heavy == [] and all(layer(m.removeprefix("chunking.")) in ("core", "strategies") for m in inside), package


def code_lines(module: str) -> int:
    """Lines of code as cloc counts them: not blank, not a comment, not inside a docstring."""
    source = (PACKAGE / f"{module.replace('.', '/')}.py").read_text(encoding="utf-8")
    documentation = set()
    for node in ast.walk(ast.parse(source)):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef)) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            documentation.update(range(body[0].lineno, body[0].end_lineno + 1))
    return sum(1 for n, line in enumerate(source.splitlines(), 1)
               if line.strip() and not line.strip().startswith("#") and n not in documentation)


def closure(strategy: str) -> dict[str, int]:
    """The package modules one run of the strategy loads (its sizer's included: tokens and counting for
    the default unit), with their lines of code."""
    run = f"import chunking.{strategy} as s; s.chunk('One sentence here. Another one.', chunk_size=5)"
    if strategy in MODEL_STRATEGIES:  # they need a model to run: what importing them loads
        run = f"import chunking.{strategy}"
    package, _ = loaded_by(run)
    return {m: code_lines(m) for m in (name.removeprefix("chunking.") for name in package if name != "chunking")}


MODEL_STRATEGIES = ("semantic", "late", "parent_child", "contextual")


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_strategy_and_everything_it_loads_fit_on_a_few_screens(strategy):
    """1,000 lines of code for a structural strategy with its sizer, 1,500 for one that takes a model."""
    lines = closure(strategy)
    assert sum(lines.values()) <= (1500 if strategy in MODEL_STRATEGIES else 1000), lines


def test_the_readme_and_the_docs_show_the_layer_table_as_the_code_has_it():
    table = layers.table()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert table in readme, "README.md's Architecture table is stale: paste layers.table() (docs/_hooks/layers.py)"


def test_the_architecture_picture_is_drawn_from_the_imports_as_they_are():
    assert layers.drawn_edges() == layers.graph(), "docs/architecture.png is stale: python docs/_hooks/layers.py"


def test_no_function_of_the_package_is_longer_than_60_lines():
    long = []
    for module in module_names():
        tree = ast.parse((PACKAGE / (module.replace(".", "/") + ".py")).read_text(encoding="utf-8"))
        long += [f"{module}.{node.name}: {node.end_lineno - node.lineno + 1} lines" for node in ast.walk(tree)
                 if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno >= 60]
    assert not long, long
