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
4. `docx_to_text` (`chunking.docx_text`: one walk over the XML, linear whatever the number of
   styles) reads what Word shows in its final view by the rules of the HTML reader: headings
   become `# ` lines, list paragraphs `- ` lines, table rows `a | b | c`, paragraphs blank-line
   separated; text boxes, content controls, fields' results and tracked insertions are read,
   deletions and field codes are not; footnotes and endnotes follow the body as `[^1]: ` lines.
5. `load_document` picks the reader by suffix and returns a `Document` (id, text, title, kind,
   pages, and metadata of your own); `load_corpus` loads every supported, non-hidden file of a
   folder (and its subfolders with `recursive`), sorted by path.
6. `Document.chunk_metadata(start, end)` is what reaches each chunk and its Qdrant payload: title,
   source path, kind, the pages a span lies on (PDF), then your own keys.

For .html, .docx and .pdf the offsets refer to the extracted text, so keep `Document.text` beside
the chunks, not the file. It does not guess encodings, run OCR, apply CSS (text hidden with
`display: none` stays), read Word's headers, footers, comments or hidden text (a warning per
file counts what it left out), or follow links.
Used from notebook 00 on; your own documents in notebook 14.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import re
import stat
import warnings
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from chunking.documents import (
    PAGE_SEPARATOR,
    Document,
    check_metadata,
    document_title,
    first_line,
    readable_name,
    short_title,
    valid_text,
)
from chunking.html_text import html_to_text
from chunking.options import check_flag

SUPPORTED = (".txt", ".md", ".markdown", ".html", ".htm", ".pdf", ".docx")
KINDS = {".txt": "text", ".md": "markdown", ".markdown": "markdown", ".html": "html", ".htm": "html",
         ".pdf": "pdf", ".docx": "docx"}
PREVIEW_CHARS = 40
_NON_SPACE = re.compile(r"\S")
_LINE_BREAK = re.compile(r"[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]")  # where str.splitlines breaks
SPECIAL_FILES = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
                 (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder"))


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
    title = short_title(title or first_line(text) or doc_id)
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


def read_text(path: str | os.PathLike) -> str:
    """The file decoded as strict UTF-8, newlines untouched (as `open(..., newline="")` reads it)."""
    return decode_utf8(read_bytes(path), str(path))  # one decode of the whole file: offsets from byte 0


def decode_utf8(data: bytes, where: str) -> str:
    """`data` as strict UTF-8; bytes that are not are a ValueError naming `where` (a file), the line,
    the column (in characters) and the byte offset: `notes.txt:3: not valid UTF-8 (byte 0xe9 at
    column 12, byte offset 150)`. Lines end at \n, \r\n or \r, as text mode reads them."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        at = error.start
        line_start = max(data.rfind(b"\n", 0, at), data.rfind(b"\r", 0, at)) + 1
        line = 1 + data.count(b"\n", 0, at) + data.count(b"\r", 0, at) - data.count(b"\r\n", 0, at)
        column = len(data[line_start:at].decode("utf-8")) + 1  # the bytes before the first bad one decode
        bad = " ".join(f"0x{b:02x}" for b in data[at : error.end])
        plural = "s" if error.end - at > 1 else ""
        raise ValueError(f"{where}:{line}: not valid UTF-8 (byte{plural} {bad} at column {column}, byte offset "
                         f"{at})") from None


def read_bytes(path: str | os.PathLike) -> bytes:
    """The bytes of a regular file; an error reading them names the file (a read error alone does not).

    A FIFO, a device or a socket is refused before anything is read from it: reading one may wait for
    ever (a pipe with no writer) or never end (`/dev/zero`). It is opened without blocking to find out.
    """
    try:
        _regular(path, os.stat(path).st_mode)  # a socket cannot even be opened
        handle = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
        with open(handle, "rb", closefd=True) as file:
            _regular(path, os.fstat(file.fileno()).st_mode)  # what was opened, should the path have changed
            return file.read()
    except OSError as error:
        raise OSError(error.errno, f"cannot read file {str(path)!r}: {error.strerror or error}") from None


def _regular(path: str | os.PathLike, mode: int) -> None:
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in SPECIAL_FILES if test(mode)), "not a regular file")
        raise ValueError(f"file {str(path)!r} is {kind}, not a regular file: give a file's path (a pipe or "
                         "device could be read without end)")


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
                pages = [valid_text(page.extract_text() or "").strip() for page in reader.pages]
                title = valid_text(str((reader.metadata.title if reader.metadata else None) or ""))
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
    """(text, core-properties title) of a .docx file, read by `chunking.docx_text`; one python-docx
    cannot open is a ValueError naming it, and what it leaves out (headers, footers, comments…) is
    one warning naming it, with counts."""
    from chunking.docx_text import read_docx

    document = read_docx(read_bytes(path), name=str(path))
    return document.text, document.title


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
