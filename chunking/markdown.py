"""Markdown chunking: sections by heading, blocks packed, the heading path kept beside.

1. Cut the document into sections at headings (`chunking.blocks`: markdown-it-py, CommonMark plus
   tables, so ATX and setext headings are found and a `#` line inside a code block is not one);
   a section's heading path is the list of headings above it, e.g. `("Guide", "Install", "Linux")`.
2. Within a section, pack its top-level blocks (paragraphs, lists, fenced code, tables…) up to
   `chunk_size` (`blocks.pack_section`). A chunk never crosses a section boundary, and a fenced
   code block or table is never split unless it alone exceeds `chunk_size` — then at line ends.
   Other oversize blocks are cut at paragraphs, lines, sentences, then words.
3. Every chunk carries `metadata["heading_path"]`; with `include_heading_path` (default)
   the path goes into `context`, so the embedder sees it while `text` and offsets stay exact.
4. A table split across chunks keeps its header: each later piece gets the header and delimiter
   rows in `metadata["table_header"]` and, with `include_table_header` (default), in `context`
   after the heading path — so a row is never read without its column names (each of the two
   rows cut to `HEADER_ROW_CHARS`: a table of thousands of columns repeats only their start).

Without any heading the whole text is one section, still packed by blocks — never one giant
chunk. `chunk_size` bounds `text`; the heading path and a repeated table header in `context` come
on top (count both with `embed_text` against the embedder's window). It parses any text as
CommonMark, so a plain-text line followed by `=====` becomes a setext heading; it does not parse
HTML or reStructuredText.
Taught in notebook 04.
"""

from __future__ import annotations

from chunking.blocks import LINE_END, PATH_SEPARATOR, Section, pack_section, sections
from chunking.options import check_flag, check_text, resolve_minimum, resolve_sizes
from chunking.sizers import Unit, resolve_unit
from chunking.types import Chunk, Span, make_chunks

STRATEGY = "markdown"
HEADER_ROW_CHARS = 500  # a repeated table header's rows are cut here: every later piece of a table carries them


def chunk(
    text: str,
    *,
    chunk_size: int = 200,
    chunk_overlap: int | float = 0,
    unit: Unit = "tokens",
    include_heading_path: bool = True,
    include_table_header: bool = True,
    min_chunk_size: int | None = None,
    doc_id: str = "",
) -> list[Chunk]:
    """Heading-aware chunks of a markdown document, each with its heading path.

    `min_chunk_size` (in the unit) merges a chunk measuring less into a neighbour of the same
    section when the merged text still fits `chunk_size` (never across a heading).

    >>> doc = "# Guide\\n\\nIntro.\\n\\n## Install\\n\\nRun it.\\n"
    >>> [(c.text, c.metadata["heading_path"]) for c in chunk(doc)]
    [('# Guide\\n\\nIntro.', ('Guide',)), ('## Install\\n\\nRun it.', ('Guide', 'Install'))]
    """
    text = check_text(text)
    size, overlap = resolve_sizes(chunk_size, chunk_overlap)
    bound = resolve_unit(unit).bind(text)
    check_flag("include_heading_path", include_heading_path)
    check_flag("include_table_header", include_table_header)
    minimum = resolve_minimum(min_chunk_size, size)
    spans, paths, headers = [], [], []
    for section in sections(text):
        section_spans = pack_section(section, bound, size, overlap, minimum)
        spans += section_spans
        paths += [section.path] * len(section_spans)
        headers += _table_headers(text, section, section_spans)
    shown = [(PATH_SEPARATOR.join(p) if include_heading_path else "", h if include_table_header else "")
             for p, h in zip(paths, headers)]
    context = ["\n\n".join(part for part in pair if part) for pair in shown]
    metadata = [{"heading_path": p, **({"table_header": h} if h else {})} for p, h in zip(paths, headers)]
    return make_chunks(text, spans, strategy=STRATEGY, doc_id=doc_id, metadata=metadata, context=context)


def _table_headers(text: str, section: Section, spans: list[Span]) -> list[str]:
    """For each chunk of a section, the header and delimiter rows of the table it starts inside of
    (a later piece of a split table), else "". Spans and tables are in order: one merge-like pass."""
    tables = [span for span, kind in section.blocks if kind == "table_open"]
    headers, t, header = [], 0, None
    for start, _ in spans:
        while t < len(tables) and tables[t][1] <= start:
            t, header = t + 1, None
        inside = t < len(tables) and tables[t][0] < start
        if inside and header is None:
            header = _header_rows(text, tables[t])  # once per table, however many pieces it has
        headers.append(header if inside else "")
    return headers


def _header_rows(text: str, table: Span) -> str:
    """The first two lines of a table: its header row and the delimiter row under it, each cut to
    `HEADER_ROW_CHARS` (every later piece of the table carries them: a table of thousands of columns
    must not copy its whole header row into each)."""
    start, end = table
    lines = []
    for _ in range(2):
        found = LINE_END.search(text, start, end)
        stop = found.start() if found else end
        row = text[start : min(stop, start + HEADER_ROW_CHARS + 1)].rstrip()
        lines.append(row if len(row) <= HEADER_ROW_CHARS else row[: HEADER_ROW_CHARS - 1] + "…")
        start = found.end() if found else end
    return "\n".join(line for line in lines if line)
