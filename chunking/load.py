"""Loading documents: the exact text a chunker sees, so chunk offsets point into it.

1. `read_text` reads a file as strict UTF-8 with `newline=""`: CRLF and lone CR stay as they are
   (a BOM stays as U+FEFF), so for .txt and .md an offset into the text is an offset into the file
   as decoded.
2. `html_to_text` walks the HTML with the standard library's parser (not regexes): it drops
   script, style, head, template and noscript; turns block elements into line or blank-line breaks,
   table cells into `a | b | c` rows, list items into `- ` lines and headings into `# ` lines the
   markdown strategy can use; decodes entities; collapses spaces except inside `<pre>`.
3. `pdf_to_text` takes pypdf's text extraction page by page, pages joined by a blank line.
4. `load_document` picks the reader by suffix and returns a `Document` (id, text, title, kind);
   `load_corpus` loads every supported, non-hidden file of one folder, sorted by name.

For .html and .pdf the offsets refer to the extracted text, so keep `Document.text` beside the
chunks, not the file. It does not guess encodings, run OCR, apply CSS (text hidden with
`display: none` stays), follow links or look into subfolders. Used from notebook 00 on.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

SUPPORTED = (".txt", ".md", ".markdown", ".html", ".htm", ".pdf")
KINDS = {".txt": "text", ".md": "markdown", ".markdown": "markdown", ".html": "html", ".htm": "html",
         ".pdf": "pdf"}
TITLE_CHARS = 100  # a first line used as a title is cut here (an essay's first line is a paragraph)
PREVIEW_CHARS = 40

SKIPPED = {"script", "style", "head", "template", "noscript"}
HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
# Newlines wanted around each block element: 2 is a blank line, 1 a line break.
BREAKS = {
    **dict.fromkeys(HEADINGS, 2),
    **dict.fromkeys(("p", "table", "section", "article", "nav", "header", "footer", "pre", "blockquote",
                     "ul", "ol", "dl", "hr", "main", "aside", "figure", "form", "details"), 2),
    **dict.fromkeys(("div", "li", "tr", "br", "dt", "dd", "caption", "summary", "figcaption"), 1),
}
CELLS = ("td", "th")
CELL_SEPARATOR = " | "
HTML_SPACE = re.compile(r"[ \t\n\r\f]+")  # HTML's own whitespace: U+00A0 (&nbsp;) is text, not space


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


def html_to_text(html: str) -> tuple[str, str]:
    """(text, title) of an HTML page: readable text with markdown-style headings, and its `<title>`.

    >>> html_to_text("<title>T</title><h1>Fares</h1><p>Adults &euro;49,<br>children   free.</p>")
    ('# Fares\\n\\nAdults €49,\\nchildren free.', 'T')
    """
    if not isinstance(html, str):
        raise TypeError(f"html must be a str, got {type(html).__name__}")
    parser = _HtmlText()
    parser.feed(html)
    parser.close()
    return parser.text(), parser.title()


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
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").parse(text)
    for tok, nxt in zip(tokens, tokens[1:]):
        if tok.type == "heading_open" and nxt.content.strip():
            return nxt.content.strip()
    return ""


def _first_line(text: str) -> str:
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1].rstrip() + "…"


class _HtmlText(HTMLParser):
    """Collects text block by block: inline text waits in `line` until a block boundary flushes it."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[str] = []  # finished text, breaks included
        self.line: list[str] = []  # inline text of the block being read, spaces not yet collapsed
        self.breaks = 0  # newlines owed before the next text
        self.skipping: list[str] = []  # open script/style/head/... elements
        self.pre: list[str] | None = None  # raw text of the open <pre>, else None
        self.prefix = ""  # "## " for a heading, "- " for a list item
        self.lists: list[int] = []  # per open list: 0 for <ul>, else the next <ol> number
        self.cells = 0  # cells seen in the current table row
        self.title_parts: list[str] | None = None  # text of <title> while inside it
        self.titles: list[str] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag == "body" and "head" in self.skipping:
            self.skipping.clear()  # </head> is optional: the body ends the head
        if tag == "title":
            self.title_parts = []
        if tag in SKIPPED:
            self.skipping.append(tag)
        if self.skipping or self.pre is not None:
            return
        if tag in BREAKS:
            self._flush(1 if tag in ("ul", "ol") and self.lists else BREAKS[tag])  # nested lists stay tight
        if tag in HEADINGS:
            self.prefix = "#" * HEADINGS[tag] + " "
        elif tag in ("ul", "ol"):
            self.lists.append(0 if tag == "ul" else 1)
        elif tag == "li":
            self._start_item()
        elif tag == "tr":
            self.cells = 0
        elif tag in CELLS:
            self.line.append(CELL_SEPARATOR if self.cells else "")
            self.cells += 1
        elif tag == "pre":
            self.pre = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "title" and self.title_parts is not None:
            self.titles.append(HTML_SPACE.sub(" ", "".join(self.title_parts)).strip(" "))
            self.title_parts = None
        if tag in self.skipping:
            del self.skipping[self.skipping.index(tag) :]
            return
        if self.skipping:
            return
        if tag == "pre" and self.pre is not None:
            self._flush_pre()
        elif self.pre is None and tag in BREAKS:
            self._flush(1 if tag in ("ul", "ol") and len(self.lists) > 1 else BREAKS[tag])
            if tag in HEADINGS or tag == "li":
                self.prefix = ""  # an empty heading or item must not lend its prefix to the next block
            elif tag in ("ul", "ol") and self.lists:
                self.lists.pop()

    def handle_data(self, data: str) -> None:
        if self.title_parts is not None:
            self.title_parts.append(data)
        elif self.skipping:
            return
        elif self.pre is not None:
            self.pre.append(data)
        else:
            self.line.append(data)

    def text(self) -> str:
        self._flush(0)
        if self.pre is not None:  # an unclosed <pre> runs to the end
            self._flush_pre()
        lines = [line.rstrip(" \t") for line in "".join(self.blocks).split("\n")]
        return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip("\n")

    def title(self) -> str:
        return self.titles[0] if self.titles else ""

    def _start_item(self) -> None:
        indent = "  " * max(len(self.lists) - 1, 0)
        if self.lists and self.lists[-1]:
            self.prefix = f"{indent}{self.lists[-1]}. "
            self.lists[-1] += 1
        else:
            self.prefix = f"{indent}- "

    def _flush(self, breaks: int) -> None:
        """End the current block: emit its collapsed text (if any), then owe `breaks` newlines."""
        text = HTML_SPACE.sub(" ", "".join(self.line)).strip(" ")
        if text:
            self._emit(self.prefix + text)
            self.prefix = ""  # a prefix waits for the first text of its heading or item, then is spent
        self.line = []
        self.breaks = max(self.breaks, breaks)

    def _flush_pre(self) -> None:
        raw = "".join(self.pre).replace("\r\n", "\n").replace("\r", "\n")
        self.pre = None
        raw = raw[1:] if raw.startswith("\n") else raw  # HTML ignores a newline right after <pre>
        if raw.strip():
            self._emit(raw.rstrip("\n"))
        self.breaks = max(self.breaks, 2)

    def _emit(self, text: str) -> None:
        if self.blocks:
            self.blocks.append("\n" * self.breaks)
        self.blocks.append(text)
        self.breaks = 0
