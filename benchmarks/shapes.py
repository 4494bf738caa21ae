"""Shapes of real text for the benchmark: the same chunkers on prose, lines, tables, code and chat.

The bundled docs have a blank line every few hundred characters, so a recursive chunker rarely goes
below paragraphs there. Real text often does not: reports, papers and encyclopedia pages have long
paragraphs, chat logs and exports have no blank lines at all. Each shape is built offline and
deterministically from text already on this machine (the same Python and packages give the same text):

- `docs`: the bundled English documents (data/corpus, .md and .txt), as `bench.py` uses them.
- `prose`: long paragraphs, few blank lines. Python's own documentation (`pydoc_data.topics`, the
  stdlib's help texts), the bundled documents, Python's LICENSE.txt and the long descriptions
  (READMEs) of the installed peers and tiktoken, numpy: each paragraph's lines joined into one, and
  every `PARAGRAPHS_JOINED` paragraphs into one (about 2,000–4,000 characters each).
- `lines`: no blank lines. The same paragraphs, each on one line, separated by single newlines.
- `tables`: rows of numbers. matplotlib's sample stock prices (`mpl-data/sample_data/Stocks.csv`,
  Yahoo Finance, 1990–2017) as a markdown table and as CSV, then the bundled documents' markdown tables;
  without matplotlib, numpy's float validation data (`_core/tests/data/umath-validation-set-*.csv`).
- `code`: Python sources of the standard library (the modules in `CODE_MODULES`).
- `chat`: a chat log, one message a line, no blank lines: `[hh:mm] Name: ` and one to three real
  sentences (from `pydoc_data.topics` and the bundled documents, in order), the speaker and the number
  of sentences drawn from a seeded random generator.

`base(name)` is a shape's text once; `bench.py` repeats it to each size (varied copies, see `vary`).
It does not fetch anything, and a shape whose sources are missing raises naming them.

    python benchmarks/shapes.py  # each shape's length and its line and blank-line statistics
"""

from __future__ import annotations

import csv
import importlib.metadata
import importlib.util
import io
import random
import re
import sys
import sysconfig
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "data" / "corpus"
PARAGRAPHS_JOINED = 8
DESCRIPTIONS = ("chonkie", "semchunk", "semantic-text-splitter", "langchain-text-splitters", "tiktoken", "numpy")
CODE_MODULES = ("argparse.py", "difflib.py", "textwrap.py", "json/decoder.py", "json/encoder.py",
                "collections/__init__.py", "dataclasses.py", "inspect.py", "typing.py", "pathlib.py", "functools.py",
                "tokenize.py")
SPEAKERS = ("Ana", "Bram", "Chen", "Dara", "Emeka", "Farah", "Goran", "Hiro")
_BLANK = re.compile(r"\n[ \t]*\n\s*")


def docs() -> str:
    """The bundled English documents, joined by blank lines (as bench.py's default text)."""
    english = [p for p in sorted(CORPUS.glob("*")) if p.suffix in (".md", ".txt") and "_ja" not in p.stem]
    return "\n\n".join(p.read_text(encoding="utf-8") for p in english)


def paragraphs() -> list[str]:
    """Every paragraph of the prose sources, its lines joined by spaces."""
    from pydoc_data.topics import topics

    sources = [topics[key] for key in sorted(topics)] + [docs(), _python_license()] + _descriptions()
    return [" ".join(p.split()) for text in sources for p in _BLANK.split(text.replace("\r\n", "\n")) if p.strip()]


def prose() -> str:
    found = paragraphs()
    joined = [" ".join(found[i : i + PARAGRAPHS_JOINED]) for i in range(0, len(found), PARAGRAPHS_JOINED)]
    return "\n\n".join(joined)


def lines() -> str:
    return "\n".join(paragraphs())


def tables() -> str:
    rows = _stock_rows() or _numpy_rows()
    markdown = ["| " + " | ".join(row) + " |" for row in rows]
    markdown.insert(1, "|" + "---|" * len(rows[0]))
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    corpus_tables = [block for block in _BLANK.split(docs()) if block.lstrip().startswith("|")]
    return "\n\n".join(["\n".join(markdown), out.getvalue().strip(), *corpus_tables])


def code() -> str:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    missing = [name for name in CODE_MODULES if not (stdlib / name).is_file()]
    if missing:
        raise FileNotFoundError(f"shape 'code' needs the standard library's sources; missing {missing} in {stdlib}")
    return "\n\n".join((stdlib / name).read_text(encoding="utf-8") for name in CODE_MODULES)


def chat() -> str:
    from pydoc_data.topics import topics

    from chunking.segment import split_sentences

    source = " ".join(paragraphs()[: len(topics) * 40])  # the docs and topics, not the license and READMEs
    sentences = [" ".join(source[s:e].split()) for s, e in split_sentences(source)]
    rng, out, i, minute = random.Random(18), [], 0, 9 * 60
    while i < len(sentences):
        take = rng.choice((1, 1, 1, 2, 2, 3))
        said = " ".join(sentences[i : i + take])
        out.append(f"[{minute // 60 % 24:02d}:{minute % 60:02d}] {rng.choice(SPEAKERS)}: {said}")
        i, minute = i + take, minute + rng.choice((0, 0, 1, 1, 2, 5))
    return "\n".join(out)


SHAPES: dict[str, Callable[[], str]] = {"docs": docs, "prose": prose, "lines": lines, "tables": tables,
                                        "code": code, "chat": chat}


def base(name: str) -> str:
    """The text of shape `name` once."""
    if name not in SHAPES:
        raise ValueError(f"shape must be one of {sorted(SHAPES)}, got {name!r}")
    return SHAPES[name]()


def _python_license() -> str:
    path = Path(sysconfig.get_paths()["stdlib"]) / "LICENSE.txt"
    return path.read_text(encoding="utf-8") if path.is_file() else ""


def _descriptions() -> list[str]:
    found = []
    for dist in DESCRIPTIONS:
        try:
            metadata = importlib.metadata.metadata(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
        found.append(metadata.get_payload() or metadata.get("Description") or "")
    return found


def _stock_rows() -> list[list[str]]:
    spec = importlib.util.find_spec("matplotlib")
    if spec is None or not spec.origin:
        return []
    path = Path(spec.origin).parent / "mpl-data" / "sample_data" / "Stocks.csv"
    if not path.is_file():
        return []
    rows = list(csv.reader(line for line in path.read_text(encoding="utf-8").splitlines() if not line.startswith("#")))
    return [rows[0]] + [[_short(cell) for cell in row] for row in rows[1:] if any(row[1:])]


def _numpy_rows() -> list[list[str]]:
    spec = importlib.util.find_spec("numpy")
    folder = Path(spec.origin).parent / "_core" / "tests" / "data"
    paths = sorted(folder.glob("umath-validation-set-*.csv"))
    if not paths:
        raise FileNotFoundError(f"shape 'tables' needs matplotlib's Stocks.csv or numpy's validation data in {folder}")
    rows = [["function", "dtype", "input", "output", "ulp"]]
    for path in paths:
        name = path.stem.rsplit("-", 1)[-1]
        rows += [[name, *line.split(",")] for line in path.read_text().splitlines()[1:] if line and line[0] != "$"]
    return rows


def _short(cell: str) -> str:
    """A price as a report prints it: two decimals."""
    try:
        return f"{float(cell):.2f}"
    except ValueError:
        return cell


def main() -> None:
    for name in SHAPES:
        text = base(name)
        blanks = len(_BLANK.findall(text))
        print(f"{name:7} {len(text):>9,} characters, {text.count(chr(10)) + 1:>6,} lines, {blanks:>5,} blank lines, "
              f"a blank line every {len(text) // max(blanks, 1):,} characters", file=sys.stdout)


if __name__ == "__main__":
    main()
