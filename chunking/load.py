"""Loading documents: the exact text a chunker sees, so chunk offsets point into it.

1. `read_text` reads a file as strict UTF-8 with `newline=""`: CRLF and lone CR stay as they are
   (a BOM stays as U+FEFF), so for .txt and .md an offset into the text is an offset into the file
   as decoded.
2. `html_to_text` (`chunking.html_text`: a tokenizer linear on any markup) drops script, style,
   head, template and noscript; turns block elements into line or blank-line breaks, table cells
   into `a | b | c` rows, list items into `- ` lines and headings into `# ` lines the markdown
   strategy can use; decodes entities; collapses spaces except inside `<pre>`.
3. `pdf_to_text` takes pypdf's text extraction page by page, pages joined by a blank line;
   `Document.pages` keeps where each page starts, so a chunk knows its pages.
4. `docx_to_text` reads a Word file (python-docx) by the rules of the HTML reader: headings
   become `# ` lines, list paragraphs `- ` lines, table rows `a | b | c`, paragraphs blank-line
   separated.
5. `load_document` picks the reader by suffix and returns a `Document` (id, text, title, kind,
   pages, and metadata of your own); `load_corpus` loads every supported, non-hidden file of a
   folder (and its subfolders with `recursive`), sorted by path.
6. `Document.chunk_metadata(start, end)` is what reaches each chunk and its Qdrant payload: title,
   source path, kind, the pages a span lies on (PDF), then your own keys.

For .html, .docx and .pdf the offsets refer to the extracted text, so keep `Document.text` beside
the chunks, not the file. It does not guess encodings, run OCR, apply CSS (text hidden with
`display: none` stays), read Word's headers, footers, comments or text boxes, or follow links.
Used from notebook 00 on; your own documents in notebook 12.
"""

from __future__ import annotations

import bisect
import contextlib
import io
import json
import logging
import os
import re
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from chunking.html_text import CELL_SEPARATOR, html_to_text
from chunking.options import check_flag, one_line

SUPPORTED = (".txt", ".md", ".markdown", ".html", ".htm", ".pdf", ".docx")
KINDS = {".txt": "text", ".md": "markdown", ".markdown": "markdown", ".html": "html", ".htm": "html",
         ".pdf": "pdf", ".docx": "docx"}
PAGE_SEPARATOR = "\n\n"  # between the pages of a PDF
MAX_LIST_INDENT = 8  # as the HTML reader: deeper list levels are indented no further
TITLE_CHARS = 100  # a first line used as a title is cut here (an essay's first line is a paragraph)
PREVIEW_CHARS = 40


# What `Document.chunk_metadata` sets itself; your own metadata uses other keys.
DOCUMENT_KEYS = ("title", "source", "kind", "page_start", "page_end")


@dataclass(frozen=True)
class Document:
    """One loaded document: chunk offsets are offsets into `text`.

    `pages` holds where each page starts in `text` (PDF; empty otherwise); `metadata` is your own,
    JSON-ready, and reaches every chunk made by `chunking.chunk_document` and its Qdrant payload.
    """

    doc_id: str
    text: str
    title: str
    path: Path | None = None
    kind: str = "text"  # text | markdown | html | pdf | docx
    pages: tuple[int, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "metadata", MappingProxyType(check_metadata(self.metadata)))
        object.__setattr__(self, "pages", tuple(self.pages))

    def __reduce__(self):
        """Pickled as its fields, the metadata as a plain dict (pickle cannot take the frozen view)."""
        return Document, (self.doc_id, self.text, self.title, self.path, self.kind, self.pages, dict(self.metadata))

    def page_range(self, start: int, end: int) -> tuple[int, int] | None:
        """The first and last page (1-based) that `text[start:end]` lies on; None without pages."""
        if not self.pages:
            return None
        first = bisect.bisect_right(self.pages, start)
        return first, max(first, bisect.bisect_right(self.pages, max(start, end - 1)))

    def chunk_metadata(self, start: int, end: int) -> dict[str, Any]:
        """What a chunk of `text[start:end]` carries of its document: title, source path, kind, its
        pages (PDF), then the document's own metadata."""
        meta: dict[str, Any] = {"title": self.title, "kind": self.kind}
        if self.path is not None:
            meta["source"] = readable_name(self.path, self.path.as_posix())
        if pages := self.page_range(start, end):
            meta["page_start"], meta["page_end"] = pages
        return {**meta, **self.metadata}

    def __repr__(self) -> str:
        title = self.title if len(self.title) <= PREVIEW_CHARS else self.title[: PREVIEW_CHARS - 1] + "…"
        chars = len(self.text)
        pages = f", pages={len(self.pages)}" if self.pages else ""
        meta = f", metadata={dict(self.metadata)!r}" if self.metadata else ""
        return f"Document(doc_id={self.doc_id!r}, kind={self.kind!r}, title={title!r}, chars={chars}{pages}{meta})"


def check_metadata(metadata: object, name: str = "metadata") -> dict[str, Any]:
    """Your metadata as a plain dict: str keys other than `DOCUMENT_KEYS`, JSON values (it goes into
    JSON lines and Qdrant payloads), so it can never overwrite what the package sets."""
    if not isinstance(metadata, Mapping):
        raise TypeError(f"{name} must be a mapping of str keys to JSON values, got {type(metadata).__name__}")
    for key, value in metadata.items():
        if not isinstance(key, str) or not key:
            raise ValueError(f"{name} keys must be non-empty str, got {key!r}")
        if key in DOCUMENT_KEYS:
            raise ValueError(f"{name} key {key!r} is set from the document itself (one of {DOCUMENT_KEYS}); "
                             "use another name")
        try:
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError) as error:
            raise ValueError(f"{name}[{key!r}] must be a JSON value (str, number, bool, None, list, dict), "
                             f"got {one_line(error)}") from None
    return dict(metadata)


def load_document(
    path: str | os.PathLike, *, doc_id: str | None = None, metadata: Mapping[str, Any] | None = None
) -> Document:
    """Load a .txt, .md, .html, .pdf or .docx file; `doc_id` defaults to the file name.

    The title is the first markdown heading (.md), the `<title>` (.html), the PDF's or Word file's
    metadata title, falling back to the first heading, then the first non-empty line, then the
    doc_id. `metadata` (your own keys, JSON values) travels with every chunk of the document.
    """
    path = Path(path)
    kind = KINDS.get(path.suffix.lower())
    if kind is None:
        raise ValueError(f"path {str(path)!r} has suffix {path.suffix!r}; supported suffixes are {SUPPORTED}")
    if doc_id is not None and not isinstance(doc_id, str):
        raise TypeError(f"doc_id must be a str or None, got {type(doc_id).__name__}")
    if doc_id == "":
        raise ValueError("doc_id must not be empty; leave it out to use the file name")
    metadata = check_metadata({} if metadata is None else metadata)
    doc_id = doc_id or readable_name(path)
    title, pages = "", ()
    if kind == "html":
        text, title = html_to_text(read_text(path).removeprefix("\ufeff"))  # offsets are into the extraction
    elif kind == "pdf":
        text, title, pages = _read_pdf(path)
    elif kind == "docx":
        text, title = _read_docx(path)
    else:
        text = read_text(path)
    if kind != "text":
        title = title or document_title(text)
    title = title or _first_line(text) or doc_id
    return Document(doc_id=doc_id, text=text, title=title, path=path, kind=kind, pages=pages, metadata=metadata)


def load_corpus(
    folder: str | os.PathLike,
    *,
    suffixes: tuple[str, ...] = SUPPORTED,
    recursive: bool = False,
    metadata: Mapping[str, Any] | Callable[[Path], Mapping[str, Any]] | None = None,
) -> list[Document]:
    """Every supported file in `folder` (and its subfolders, with `recursive`), sorted by path.

    Hidden files and folders are skipped, and symbolic links to folders are not followed. A
    document's id is its path below `folder` ("guide.md", "ops/runbook.md"), so two files of the
    same name in different folders stay apart. `metadata` is added to every document: a mapping,
    or a function of the file's path that returns one.
    """
    if not (metadata is None or isinstance(metadata, Mapping) or callable(metadata)):
        raise TypeError(f"metadata must be a mapping, a function of the path, or None, got {type(metadata).__name__}")
    documents = []
    for path, doc_id in corpus_files(folder, suffixes=suffixes, recursive=recursive):
        extra = metadata(path) if callable(metadata) else metadata
        documents.append(load_document(path, doc_id=doc_id, metadata=extra))
    return documents


def corpus_files(
    folder: str | os.PathLike, *, suffixes: tuple[str, ...] = SUPPORTED, recursive: bool = False
) -> list[tuple[Path, str]]:
    """The files `load_corpus` loads, with their document ids, without reading them: (path, doc_id)
    pairs sorted by path. What a many-process indexer (`chunking.ray_index`) hands its workers."""
    folder = Path(folder)
    if isinstance(suffixes, str):
        raise TypeError(f"suffixes must be a tuple of suffixes such as ('.md',), got the str {suffixes!r}")
    suffixes = tuple(s.lower() for s in suffixes)
    if unknown := [s for s in suffixes if s not in SUPPORTED]:
        raise ValueError(f"suffixes {unknown} are not supported; supported suffixes are {SUPPORTED}")
    check_flag("recursive", recursive)
    if not folder.is_dir():
        raise ValueError(f"folder {str(folder)!r} is not a directory")
    paths = sorted((p for p in _files(folder, recursive) if p.suffix.lower() in suffixes),
                   key=lambda p: p.relative_to(folder).parts)
    if not paths:
        where = "or its subfolders " if recursive else ""
        raise ValueError(f"folder {str(folder)!r} {where}has no file with a suffix in {suffixes}")
    return [(path, readable_name(path, path.relative_to(folder).as_posix())) for path in paths]


def _files(folder: Path, recursive: bool) -> Iterator[Path]:
    """The non-hidden files of `folder`, and with `recursive` of its non-hidden subfolders."""
    for root, dirs, files in os.walk(folder, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".")) if recursive else []
        for name in files:
            if not name.startswith(".") and (path := Path(root, name)).is_file():
                yield path


def readable_name(path: Path, name: str | None = None) -> str:
    """A file's name (or `name`, a path made from it) as valid text: bytes that are not UTF-8 (kept by
    the OS as lone surrogates) become U+FFFD, so it can go into a chunk id, JSON and a vector store."""
    return (path.name if name is None else name).encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def read_text(path: str | os.PathLike) -> str:
    """The file decoded as strict UTF-8, newlines untouched (as `open(..., newline="")` reads it)."""
    data = read_bytes(path)  # one decode of the whole file, so error offsets count from byte 0
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        bad = error.object[error.start : error.end].hex(" ")
        raise ValueError(
            f"file {str(path)!r} is not valid UTF-8: cannot decode byte(s) {bad} at byte offset {error.start}"
        ) from None


def read_bytes(path: str | os.PathLike) -> bytes:
    """The file's bytes; an error reading them names the file (a read error alone does not)."""
    try:
        return Path(path).read_bytes()
    except OSError as error:
        raise OSError(error.errno, f"cannot read file {str(path)!r}: {error.strerror or error}") from None


def pdf_to_text(path: str | os.PathLike) -> str:
    """The text pypdf extracts from each page, pages joined by a blank line ("\\n\\n")."""
    return _read_pdf(Path(path))[0]


def _read_pdf(path: Path) -> tuple[str, str, tuple[int, ...]]:
    """(text, metadata title, where each page starts) of a PDF; a file pypdf cannot read is a
    ValueError naming it.

    pypdf raises its own errors on damaged files (and KeyError, zlib.error, RecursionError… on
    mutated ones): every one becomes that one-line ValueError. Its recovery warnings are silenced:
    a PDF that loads is a success. PDFs encrypted with an empty password (as many are) load.
    """
    from pypdf import PdfReader

    data = read_bytes(path)
    pages, title = [], ""
    try:
        with _quiet("pypdf"):
            reader = PdfReader(io.BytesIO(data))
            locked = reader.is_encrypted and not reader.decrypt("")
            if not locked:
                pages = [(page.extract_text() or "").strip() for page in reader.pages]
                title = (reader.metadata.title if reader.metadata else None) or ""
    except Exception as error:  # any failure inside pypdf means: not readable
        detail = " ".join(str(error).split())[:200] or "no detail"
        raise ValueError(f"file {str(path)!r} is not a readable PDF ({type(error).__name__}: {detail})") from None
    if locked:
        raise ValueError(f"file {str(path)!r} is an encrypted PDF that needs a password")
    starts = [0]
    for page in pages[:-1]:
        starts.append(starts[-1] + len(page) + len(PAGE_SEPARATOR))
    return PAGE_SEPARATOR.join(pages), str(title).strip(), tuple(starts) if pages else ()


def docx_to_text(path: str | os.PathLike) -> str:
    """The text of a Word file: `# ` headings, `- ` list items, `a | b` table rows, blank-line paragraphs."""
    return _read_docx(Path(path))[0]


def _read_docx(path: Path) -> tuple[str, str]:
    """(text, core-properties title) of a .docx file; one that python-docx cannot read is a ValueError
    naming it. Body paragraphs and tables in document order (tables nested in cells flattened into
    their cell's text); what Word keeps outside the body (headers, footers, comments) is left out."""
    import docx

    data = read_bytes(path)
    try:
        with _quiet("docx"):
            document = docx.Document(io.BytesIO(data))
            blocks = [_docx_block(item) for item in document.iter_inner_content()]
            title = document.core_properties.title or ""
    except Exception as error:  # a zip that is not a Word file, broken XML, missing parts…
        detail = " ".join(str(error).split())[:200] or "no detail"
        kind = type(error).__name__
        raise ValueError(f"file {str(path)!r} is not a readable .docx file ({kind}: {detail})") from None
    return _join_docx_blocks([b for b in blocks if b[1].strip()]), title.strip()


def _docx_block(item) -> tuple[str, str]:
    """(kind, text) of one body item: "item" for a list paragraph, "block" for the rest."""
    if hasattr(item, "rows"):  # a table: one line per row, merged cells once
        rows = []
        for row in item.rows:
            cells, seen = [], set()
            for cell in row.cells:
                if id(cell._tc) not in seen:
                    seen.add(id(cell._tc))
                    cells.append(_cell_text(cell._tc))
            rows.append(CELL_SEPARATOR.join(cells).strip())
        return "block", "\n".join(r for r in rows if r)
    text = item.text.strip()
    style = (item.style.name if item.style is not None else "") or ""
    level = _heading_level(style)
    properties = item._p.pPr
    numbering = properties.numPr if properties is not None else None
    if level:
        return "block", f"{'#' * level} {' '.join(text.split())}"
    if numbering is not None or style.startswith("List"):
        if numbering is not None and numbering.ilvl is not None:
            depth = numbering.ilvl.val  # the paragraph's own list level
        else:  # the style's: "List Bullet 2" is the second level
            depth = int(m.group(1)) - 1 if (m := re.search(r" ([0-9]{1,3})$", style)) else 0
        return "item", f"{'  ' * min(max(depth, 0), MAX_LIST_INDENT)}- {text}"
    return "block", text


def _cell_text(cell) -> str:
    """All the text of a table cell on one line, a table nested in it included (python-docx's
    `cell.text` leaves nested tables out): one pass over its text, tab and break elements."""
    from docx.oxml.ns import qn

    text, tab, breaks = qn("w:t"), qn("w:tab"), (qn("w:br"), qn("w:cr"), qn("w:p"))
    parts = [e.text or "" if e.tag == text else " " for e in cell.iter(text, tab, *breaks)]
    return " ".join("".join(parts).split())


def _heading_level(style: str) -> int:
    """1–6 for Word's "Title" and "Heading 1" … "Heading 9" styles (deeper ones are 6), else 0."""
    if style == "Title":
        return 1
    name, _, number = style.partition(" ")
    return min(int(number), 6) if name == "Heading" and number.isdigit() and int(number) > 0 else 0


def _join_docx_blocks(blocks: list[tuple[str, str]]) -> str:
    """Blocks separated by a blank line; consecutive list items by a line break, as one list."""
    parts = []
    for i, (kind, text) in enumerate(blocks):
        if i:
            parts.append("\n" if kind == "item" and blocks[i - 1][0] == "item" else "\n\n")
        parts.append(text)
    return "".join(parts)


@contextlib.contextmanager
def _quiet(logger: str) -> Iterator[None]:
    """Silence a library's warnings (logging and `warnings`) for the duration of the block."""
    log = logging.getLogger(logger)
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        log.setLevel(level)


def document_title(text: str) -> str:
    """A title for any text: its first markdown heading, else its first non-empty line (cut short)."""
    return _first_heading(text) or _first_line(text)


def _first_heading(text: str) -> str:
    """Text of the first markdown heading (ATX or setext; a `#` line in a code block is not one)."""
    from chunking.markdown import parse, short

    tokens = parse(text)
    for tok, nxt in zip(tokens, tokens[1:]):
        if tok.type == "heading_open" and nxt.content.strip():
            return short(nxt.content.strip())
    return ""


def _first_line(text: str) -> str:
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1].rstrip() + "…"
