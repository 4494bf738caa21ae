"""Loading documents: the exact text a chunker sees, so chunk offsets point into it.

1. `read_text` reads a file as strict UTF-8 with `newline=""`: CRLF and lone CR stay as they are
   (a BOM stays as U+FEFF), so for .txt and .md an offset into the text is an offset into the file
   as decoded.
2. `html_to_text` (`chunking.html_text`: a tokenizer linear on any markup) drops script, style,
   head, template and noscript; turns block elements into line or blank-line breaks, table cells
   into `a | b | c` rows, list items into `- ` lines and headings into `# ` lines the markdown
   strategy can use; decodes entities; collapses spaces except inside `<pre>`.
3. `pdf_to_text` takes pypdf's text extraction page by page, pages joined by a blank line.
4. `load_document` picks the reader by suffix and returns a `Document` (id, text, title, kind);
   `load_corpus` loads every supported, non-hidden file of one folder, sorted by name.

For .html and .pdf the offsets refer to the extracted text, so keep `Document.text` beside the
chunks, not the file. It does not guess encodings, run OCR, apply CSS (text hidden with
`display: none` stays), follow links or look into subfolders. Used from notebook 00 on.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from chunking.html_text import html_to_text

SUPPORTED = (".txt", ".md", ".markdown", ".html", ".htm", ".pdf")
KINDS = {".txt": "text", ".md": "markdown", ".markdown": "markdown", ".html": "html", ".htm": "html",
         ".pdf": "pdf"}
TITLE_CHARS = 100  # a first line used as a title is cut here (an essay's first line is a paragraph)
PREVIEW_CHARS = 40


@dataclass(frozen=True)
class Document:
    """One loaded document: chunk offsets are offsets into `text`."""

    doc_id: str
    text: str
    title: str
    path: Path | None = None
    kind: str = "text"  # text | markdown | html | pdf

    def __repr__(self) -> str:
        title = self.title if len(self.title) <= PREVIEW_CHARS else self.title[: PREVIEW_CHARS - 1] + "…"
        chars = len(self.text)
        return f"Document(doc_id={self.doc_id!r}, kind={self.kind!r}, title={title!r}, chars={chars})"


def load_document(path: str | os.PathLike, *, doc_id: str | None = None) -> Document:
    """Load a .txt, .md, .html or .pdf file; `doc_id` defaults to the file name.

    The title is the first markdown heading (.md), the `<title>` (.html) or the PDF's metadata
    title, falling back to the first heading, then the first non-empty line, then the doc_id.
    """
    path = Path(path)
    kind = KINDS.get(path.suffix.lower())
    if kind is None:
        raise ValueError(f"path {str(path)!r} has suffix {path.suffix!r}; supported suffixes are {SUPPORTED}")
    if doc_id is not None and not isinstance(doc_id, str):
        raise TypeError(f"doc_id must be a str or None, got {type(doc_id).__name__}")
    if doc_id == "":
        raise ValueError("doc_id must not be empty; leave it out to use the file name")
    doc_id = doc_id or readable_name(path)
    title = ""
    if kind == "html":
        text, title = html_to_text(read_text(path).removeprefix("\ufeff"))  # offsets are into the extraction
    elif kind == "pdf":
        text, title = _read_pdf(path)
    else:
        text = read_text(path)
    if kind != "text":
        title = title or document_title(text)
    title = title or _first_line(text) or doc_id
    return Document(doc_id=doc_id, text=text, title=title, path=path, kind=kind)


def load_corpus(folder: str | os.PathLike, *, suffixes: tuple[str, ...] = SUPPORTED) -> list[Document]:
    """Every supported file directly in `folder` (hidden files skipped), sorted by file name."""
    folder = Path(folder)
    if isinstance(suffixes, str):
        raise TypeError(f"suffixes must be a tuple of suffixes such as ('.md',), got the str {suffixes!r}")
    suffixes = tuple(s.lower() for s in suffixes)
    if unknown := [s for s in suffixes if s not in SUPPORTED]:
        raise ValueError(f"suffixes {unknown} are not supported; supported suffixes are {SUPPORTED}")
    if not folder.is_dir():
        raise ValueError(f"folder {str(folder)!r} is not a directory")
    paths = sorted(
        (p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in suffixes and p.name[0] != "."),
        key=lambda p: p.name,
    )
    if not paths:
        raise ValueError(f"folder {str(folder)!r} has no file with a suffix in {suffixes}")
    return [load_document(p) for p in paths]


def readable_name(path: Path) -> str:
    """The file name as valid text: bytes that are not UTF-8 (kept by the OS as lone surrogates)
    become U+FFFD, so the name can go into a chunk id, JSON and a vector store."""
    return path.name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


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


def _read_pdf(path: Path) -> tuple[str, str]:
    """(text, metadata title) of a PDF; a file pypdf cannot read is a ValueError naming it.

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
    return "\n\n".join(pages), str(title).strip()


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
