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

import os
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
    doc_id = doc_id or path.name
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


def read_text(path: str | os.PathLike) -> str:
    """The file decoded as strict UTF-8, newlines untouched (as `open(..., newline="")` reads it)."""
    data = Path(path).read_bytes()  # one decode of the whole file, so error offsets count from byte 0
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        bad = error.object[error.start : error.end].hex(" ")
        raise ValueError(
            f"file {str(path)!r} is not valid UTF-8: cannot decode byte(s) {bad} at byte offset {error.start}"
        ) from None


def pdf_to_text(path: str | os.PathLike) -> str:
    """The text pypdf extracts from each page, pages joined by a blank line ("\\n\\n")."""
    return _read_pdf(Path(path))[0]


def _read_pdf(path: Path) -> tuple[str, str]:
    """(text, metadata title) of a PDF; a file pypdf cannot read is a ValueError naming it."""
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(path)
        if reader.is_encrypted and not reader.decrypt(""):
            raise ValueError(f"file {str(path)!r} is an encrypted PDF that needs a password")
        pages = [(page.extract_text() or "").strip() for page in reader.pages]
        title = (reader.metadata.title if reader.metadata else None) or ""
    except PdfReadError as error:
        raise ValueError(f"file {str(path)!r} is not a readable PDF: {error}") from None
    return "\n\n".join(pages), str(title).strip()


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
