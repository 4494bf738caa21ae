"""Pathological input: time every loader and strategy on text built to find superlinear paths.

1. Families: each builds a text of any length from one hostile pattern — runs of one punctuation
   mark, unclosed constructs (HTML tags, comments, markdown links), deep nesting (lists, quotes,
   tags), one character repeated, markup storms — the shapes that made earlier versions quadratic.
2. Targets: the readers (HTML, Word, a page loaded and chunked, the title finder, an LLM reply's
   reasoning strip) and every strategy (cl100k tokens, 64 per chunk).
   Semantic and parent_child's semantic parents get a bag-of-words embedder: this measures the
   chunker's own work, not MiniLM's (embedding costs the same per sentence whatever the shape).
3. Each (family, target) is timed once at 10k, 100k and 1M characters, in this process, with a
   time limit per call; `growth` is time(1M) / time(100k): about 10 for linear work, 100 for
   quadratic. A case over the limit at 100k is not tried at 1M.
4. Output: a markdown table (seconds per size, growth) and the cases whose growth passes
   `SUPERLINEAR` — `benchmarks/bench.py` puts both in docs/benchmarks.md.

Tests count work on the same families (tests/test_linear.py); this file only times them.

    python benchmarks/pathological.py [--sizes 10000,100000,1000000] [--families a,b|all] [--targets x,y]
"""

from __future__ import annotations

import argparse
import io
import re
import signal
import sys
import time
import zipfile
import zlib
from collections.abc import Callable
from xml.sax.saxutils import escape

import numpy as np

SIZES = (10_000, 100_000, 1_000_000)
LIMIT = 60.0  # seconds a single call may take before the case is reported as over the limit
SUPERLINEAR = 25.0  # time(1M) / time(100k) above this is flagged (linear is about 10)
NOISE = 0.05  # seconds: growth is not judged when the 1M time is below this


def repeat(unit: str) -> Callable[[int], str]:
    """A family made of `unit` repeated to the length."""
    return lambda n: (unit * (n // len(unit) + 1))[:n]


def nested(open_: str, close: str = "", leaf: str = "x") -> Callable[[int], str]:
    """`open_` repeated to about half the length, a leaf, then `close` as often (unbalanced if empty)."""
    def build(n: int) -> str:
        depth = max(1, n // (2 * max(len(open_) + len(close), 1)))
        return open_ * depth + leaf + close * depth
    return build


def indented(line: str) -> Callable[[int], str]:
    """Lines of `line`, each indented one level deeper (two spaces) than the one before."""
    def build(n: int) -> str:
        out, size, depth = [], 0, 0
        while size < n:
            out.append("  " * depth + line + "\n")
            size += len(out[-1])
            depth += 1
        return "".join(out)[:n]
    return build


def wide_table(n: int) -> str:
    """One markdown table as wide as the length allows: a header row of about n/4 characters of
    column names, its delimiter row, and two rows of cells as wide (every later piece repeats the header)."""
    columns = max(1, n // 32)
    row = "|" + "".join(f" c{i % 1000:03d} |" for i in range(columns))
    return "\n".join([row, "|" + "---|" * columns, row.replace("c", "v"), row.replace("c", "w")])[:n]


# name -> (kind, builder); kinds group the table
FAMILIES: dict[str, tuple[str, Callable[[int], str]]] = {
    "dots": ("punctuation run", repeat(".")),
    "bang-question": ("punctuation run", repeat("!?")),
    "ellipsis": ("punctuation run", repeat("…")),
    "dot-closer": ("punctuation run", repeat('.)"')),
    "cjk-stops": ("punctuation run", repeat("。」")),
    "tiny-sentences": ("punctuation run", repeat("x. ")),
    "abbreviations": ("punctuation run", repeat("e.g. Dr. U.S. ")),
    "dash-lines": ("punctuation run", repeat("-\n")),
    "one-letter": ("one character", repeat("a")),
    "spaces": ("one character", repeat(" ")),
    "newlines": ("one character", repeat("\n")),
    "carriage-returns": ("one character", repeat("\r")),
    "cjk": ("one character", repeat("漢")),
    "emoji": ("one character", repeat("🎉")),
    "combining": ("one character", repeat("a\u0301")),
    "devanagari": ("one character", repeat("ज्ञान")),
    "html-open-tags": ("unclosed construct", repeat("<a ")),
    "html-end-opens": ("unclosed construct", repeat("</")),
    "html-comment-opens": ("unclosed construct", repeat("<!--")),
    "html-cdata-opens": ("unclosed construct", repeat("<![CDATA[")),
    "html-pi-opens": ("unclosed construct", repeat("<?")),
    "think-opens": ("unclosed construct", repeat("<think>")),  # a reasoning model's reply (llm.strip_reasoning)
    "html-quoted-attribute": ("unclosed construct", repeat('<a b="')),
    "md-image-opens": ("unclosed construct", repeat("![")),
    "md-brackets": ("unclosed construct", repeat("[")),
    "md-link-opens": ("unclosed construct", repeat("[a](")),
    "md-emphasis": ("unclosed construct", repeat("*a")),
    "md-underscores": ("unclosed construct", repeat("_a")),
    "md-backticks": ("unclosed construct", repeat("`")),
    "md-fence-storm": ("markup storm", repeat("```\n")),
    "md-headings": ("markup storm", repeat("# h\n")),
    "md-setext": ("markup storm", repeat("a\n=\n")),
    "md-long-headings": ("markup storm", repeat("## " + "word " * 300 + "\n\nA line.\n\n")),
    "md-table-pipes": ("markup storm", repeat("|a")),
    "html-entities": ("markup storm", repeat("&amp;&#x;&")),
    "html-tags": ("markup storm", repeat("<b>x</i>")),
    "html-nested-lists": ("deep nesting", nested("<ul><li>x")),
    "html-nested-divs": ("deep nesting", nested("<div>", "</div>")),
    "html-nested-templates": ("deep nesting", nested("<template>", "</template>")),
    "md-blockquotes": ("deep nesting", nested(">")),
    "md-nested-lists": ("deep nesting", indented("- x")),
    "parentheses": ("deep nesting", nested("(", ")")),
    "md-wide-table": ("markup storm", wide_table),
    "html-long-title": ("markup storm", lambda n: "<title>" + repeat("word ")(n) + "</title><p>Body.</p>"),
    "docx-many-styles": ("markup storm", repeat("A line in a style of its own.\n")),  # docx_to_text: a style each
}


# The families `make bench` times (every kind; `--pathological-families all` times all of them).
DEFAULT_FAMILIES = ("dots", "bang-question", "ellipsis", "dot-closer", "cjk-stops", "tiny-sentences", "dash-lines",
                    "one-letter", "spaces", "newlines", "cjk", "emoji", "devanagari",
                    "html-open-tags", "html-comment-opens", "html-quoted-attribute", "md-image-opens",
                    "md-link-opens", "md-emphasis", "md-headings", "md-fence-storm", "html-entities",
                    "html-nested-lists", "md-blockquotes", "md-nested-lists", "md-wide-table", "html-long-title",
                    "think-opens", "docx-many-styles")


def bag_of_words(texts: list[str]) -> np.ndarray:
    """A cheap deterministic embedding: hashed word counts in 64 dimensions (crc32, not `hash`)."""
    vectors = np.zeros((len(texts), 64), dtype=np.float32)
    for row, text in enumerate(texts):
        for word in text.split() or [text]:
            vectors[row, zlib.crc32(word.encode("utf-8", "replace")) % 64] += 1.0
        vectors[row, 63] += 1.0  # never all zeros
    return vectors


def targets() -> dict[str, Callable[[str], object]]:
    """name -> the call to time: the loaders' parsers and every strategy."""
    from chunking import chunk, chunk_document
    from chunking.documents import document_title
    from chunking.docx_text import read_docx
    from chunking.embed import Embedder
    from chunking.llm import strip_reasoning
    from chunking.load import html_to_text

    words = Embedder(bag_of_words, name="bag-of-words-64", cache=False)
    size = {"chunk_size": 64}
    return {
        "html_to_text": html_to_text,
        "document_title": document_title,
        # chunking.llm's reasoning strip, on the text as if a model had replied it
        "strip_reasoning": strip_reasoning,
        # a page loaded as a file (its title cut short, once) and chunked: each chunk carries the title
        "load_document, html": lambda t: chunk_document(_as_file(t, ".html"), "fixed", **size),
        # a Word file of the text, one paragraph per line, each in a style of its own, built then read
        "docx_to_text": lambda t: read_docx(text_to_docx(t)),
        "fixed": lambda t: chunk(t, "fixed", **size, chunk_overlap=8),
        "sentence": lambda t: chunk(t, "sentence", **size),
        "paragraph": lambda t: chunk(t, "paragraph", **size),
        "markdown": lambda t: chunk(t, "markdown", **size),
        "sliding": lambda t: chunk(t, "sliding", **size, overlap_fraction=0.25),
        "recursive": lambda t: chunk(t, "recursive", **size),
        "recursive, characters": lambda t: chunk(t, "recursive", chunk_size=256, unit="characters"),
        "semantic": lambda t: chunk(t, "semantic", **size, embedder=words),
        "parent_child": lambda t: chunk(t, "parent_child", **size, parent_size=256),
        "contextual, heading": lambda t: chunk(t, "contextual", **size),
        "contextual, summary": lambda t: chunk(t, "contextual", **size, provider="summary"),
    }


def _as_file(text: str, suffix: str):
    """`text` written to a temporary file and loaded as a document (the file removed again)."""
    import tempfile
    from pathlib import Path

    from chunking.load import load_document

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"page{suffix}"
        path.write_text(text, encoding="utf-8")
        return load_document(path)


class OverLimit(Exception):
    """A call ran past `LIMIT` seconds."""


def timed(call: Callable[[str], object], text: str, limit: float) -> float:
    """Seconds one call takes; `inf` past `limit` (a SIGALRM interrupts it)."""
    def interrupt(signum, frame):
        raise OverLimit

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, limit)
    started = time.perf_counter()
    try:
        call(text)
        return time.perf_counter() - started
    except OverLimit:
        return float("inf")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def run(families: list[str], names: list[str], sizes: tuple[int, ...] = SIZES, limit: float = LIMIT,
        progress: Callable[[str], None] | None = None) -> list[dict]:
    """One row per (family, target): seconds at each size (`None`: not tried) and the growth."""
    calls = targets()
    rows = []
    for family in families:
        kind, build = FAMILIES[family]
        texts = {n: build(n) for n in sizes}
        for name in names:
            seconds: dict[int, float | None] = dict.fromkeys(sizes)
            for n in sizes:
                seconds[n] = timed(calls[name], texts[n], limit)
                if seconds[n] == float("inf"):
                    break
            rows.append({"family": family, "kind": kind, "target": name, "seconds": seconds,
                         "growth": growth(seconds, sizes)})
            if progress:
                progress(format_row(rows[-1], sizes))
    return rows


def growth(seconds: dict[int, float | None], sizes: tuple[int, ...]) -> float | None:
    """time(largest) / time(second largest), or None when either is missing or too small to judge."""
    if len(sizes) < 2:
        return None
    small, big = seconds[sizes[-2]], seconds[sizes[-1]]
    if small is None or big is None:
        return float("inf") if small == float("inf") or big == float("inf") else None
    if big < NOISE:
        return None
    return big / max(small, 1e-4)


def superlinear(rows: list[dict]) -> list[dict]:
    return [r for r in rows if r["growth"] is not None and r["growth"] > SUPERLINEAR]


def format_row(row: dict, sizes: tuple[int, ...]) -> str:
    cells = [_seconds(row["seconds"][n]) for n in sizes]
    g = row["growth"]
    return f"{row['family']:24} {row['target']:22} " + " ".join(f"{c:>8}" for c in cells) + (
        f"  growth {g:6.1f}" if g is not None else "")


def markdown(rows: list[dict], sizes: tuple[int, ...]) -> str:
    """A matrix (family × target: seconds at the largest size, and the growth), then every time in full."""
    targets_ = list(dict.fromkeys(row["target"] for row in rows))
    by_family: dict[str, dict[str, dict]] = {}
    for row in rows:
        by_family.setdefault(row["family"], {})[row["target"]] = row
    heads = [_size(n) for n in sizes]
    lines = ["| family | kind | " + " | ".join(targets_) + " |", "|" + "---|" * (len(targets_) + 2)]
    for family, cells in by_family.items():
        kind = next(iter(cells.values()))["kind"]
        lines.append(f"| {family} | {kind} | " + " | ".join(_cell(cells.get(t), sizes) for t in targets_) + " |")
    matrix = "\n".join(lines)
    full = [f"| family | target | {' | '.join(f'{h} (s)' for h in heads)} | growth |", "|" + "---|" * (len(heads) + 3)]
    for row in rows:
        g = row["growth"]
        full.append(f"| {row['family']} | {row['target']} | " + " | ".join(_seconds(row["seconds"][n]) for n in sizes)
                     + f" | {'—' if g is None else f'{g:.1f}'} |")
    return (f"Seconds at {heads[-1]} characters, and in brackets the growth from {heads[-2]} "
            f"(— where too fast to judge; ⚠ above {SUPERLINEAR:g}):\n\n{matrix}\n\n"
            f"<details><summary>Every time, at {', '.join(heads)}</summary>\n\n" + "\n".join(full) + "\n\n</details>")


def _cell(row: dict | None, sizes: tuple[int, ...]) -> str:
    if row is None:
        return ""
    g = row["growth"]
    growth = "—" if g is None else f"{g:.0f}" + (" ⚠" if g > SUPERLINEAR else "")
    return f"{_seconds(row['seconds'][sizes[-1]])} ({growth})"


def _size(n: int) -> str:
    return f"{n / 1e6:g}M" if n >= 1_000_000 else f"{n / 1000:g}k"


def _seconds(value: float | None) -> str:
    if value is None:
        return "–"
    if value == float("inf"):
        return "over"
    return f"{value:.3f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="characters, comma-separated")
    parser.add_argument("--families", help="comma-separated family names, or all (default: DEFAULT_FAMILIES)")
    parser.add_argument("--targets", help="comma-separated target names (default: all), e.g. "
                        "'sentence,recursive, characters'")
    parser.add_argument("--limit", type=float, default=LIMIT, help="seconds one call may take")
    args = parser.parse_args(argv)
    sizes = tuple(int(s) for s in args.sizes.split(","))
    families = list(FAMILIES) if args.families == "all" else args.families.split(",") if args.families else list(
        DEFAULT_FAMILIES)
    # Names hold ", " ("recursive, characters"): only a comma without a space after it separates two.
    names = re.split(r",(?! )", args.targets) if args.targets else list(targets())
    unknown = [n for n in names if n not in targets()] + [f for f in families if f not in FAMILIES]
    if unknown:
        parser.error(f"unknown target or family {unknown[0]!r}; targets: {', '.join(targets())}; "
                     f"families: {', '.join(FAMILIES)}")
    rows = run(families, names, sizes, args.limit, progress=lambda line: print(line, flush=True))
    flagged = superlinear(rows)
    print(f"\n{len(rows)} cases, {len(flagged)} superlinear (growth > {SUPERLINEAR:g})")
    for row in flagged:
        print("  " + format_row(row, sizes))
    return 1 if flagged else 0

# --- Word files of a text, for the docx family (and tests/test_docx.py) ---------------------------------

_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")  # not allowed in XML 1.0


def text_to_docx(text: str) -> bytes:
    """A Word file of `text`, one paragraph per line, each paragraph in a style of its own.

    The many-styles shape (n styles, n paragraphs) this benchmark and tests/test_docx.py read, written as
    XML in linear time (python-docx's `add_paragraph(style=…)` finds a style by scanning them all).
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    lines = _NOT_XML.sub("\ufffd", text).split("\n")
    body = "".join(f'<w:p><w:pPr><w:pStyle w:val="S{i}"/></w:pPr><w:r><w:t xml:space="preserve">'
                   f'{escape(line, {chr(13): "&#13;"})}</w:t></w:r></w:p>' for i, line in enumerate(lines))
    styles = "".join(f'<w:style w:type="paragraph" w:customStyle="1" w:styleId="S{i}"><w:name w:val="Style {i}"/>'
                     '<w:basedOn w:val="Normal"/></w:style>' for i in range(len(lines)))
    return _package(f"<w:body>{body}<w:sectPr/></w:body>", '<w:style w:type="paragraph" w:default="1" '
                    f'w:styleId="Normal"><w:name w:val="Normal"/></w:style>{styles}')


def _package(body: str, styles: str) -> bytes:
    """A minimal .docx: a main document and its styles, in the WordprocessingML namespace."""
    ns = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
    head = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    main = "application/vnd.openxmlformats-officedocument.wordprocessingml"
    parts = {
        "[Content_Types].xml": f'{head}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
        '<Default Extension="xml" ContentType="application/xml"/>'
        f'<Override PartName="/word/document.xml" ContentType="{main}.document.main+xml"/>'
        f'<Override PartName="/word/styles.xml" ContentType="{main}.styles+xml"/></Types>',
        "_rels/.rels": f'{head}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
        f'<Relationship Id="rId1" Type="{rel}/officeDocument" Target="word/document.xml"/></Relationships>',
        "word/_rels/document.xml.rels": f'{head}<Relationships '
        'xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
        f'<Relationship Id="rId1" Type="{rel}/styles" Target="styles.xml"/></Relationships>',
        "word/document.xml": f"{head}<w:document {ns}>{body}</w:document>",
        "word/styles.xml": f"{head}<w:styles {ns}>{styles}</w:styles>",
    }
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, xml in parts.items():
            archive.writestr(name, xml.encode("utf-8"))
    return out.getvalue()


if __name__ == "__main__":
    sys.exit(main())
