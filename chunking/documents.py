"""The document a chunk comes from: its id, text, title, kind, pages, and metadata of your own.

1. A `Document` holds the exact text a chunker sees, so chunk offsets are offsets into `text`;
   `pages` holds where each page starts in it (PDF), and `page_range` the pages a span lies on.
2. `Document.chunk_metadata(start, end)` is what reaches each chunk made from it and its Qdrant
   payload: title, source, kind, pages, then your own keys.
3. `check_metadata` keeps your metadata JSON-ready and valid Unicode, and away from the keys the
   package sets (`DOCUMENT_KEYS`); `valid_text` replaces what a file's text may hold that is not.
4. `document_title(text)`: the first markdown heading, else the first line that is not blank, on one
   line and cut to `TITLE_CHARS`; `short_title` cuts any title so (it is copied into every chunk).
Reading files into documents is `chunking.load`'s; nothing here reads a file.
"""

from __future__ import annotations

import bisect
import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from chunking import blocks
from chunking.options import check_text, one_line

PAGE_SEPARATOR = "\n\n"  # between the pages of a PDF (`chunking.load`); `Document.pages` counts with it
PREVIEW_CHARS = 40
TITLE_CHARS = 100  # a document's title is cut here (a first line used as one may be a whole paragraph)
_NON_SPACE = re.compile(r"\S")
_LINE_BREAK = re.compile(r"[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]")  # where str.splitlines breaks
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
        for name in ("doc_id", "title"):
            check_text(getattr(self, name), name)  # they reach every chunk, its id and its payload
        object.__setattr__(self, "metadata", MappingProxyType(check_metadata(self.metadata)))
        object.__setattr__(self, "pages", tuple(self.pages))

    def __reduce__(self):
        """Pickled as its fields, the metadata as a plain dict (pickle cannot take the frozen view)."""
        return Document, (self.doc_id, self.text, self.title, self.path, self.kind, self.pages, dict(self.metadata))

    def page_range(self, start: int, end: int) -> tuple[int, int] | None:
        """The first and last page (1-based) whose text `text[start:end]` overlaps; None without pages.

        The blank line between two pages is on neither, and an empty page holds no text: a span that
        starts in a separator starts on the next page with text, one that ends in it ends on the page
        before. A span of separators alone is on the page after them.
        """
        if not self.pages:
            return None
        starts, ends, numbers = self._pages_with_text
        if not numbers:
            return 1, 1
        first = numbers[min(bisect.bisect_right(ends, start), len(numbers) - 1)]  # its text ends after start
        last = bisect.bisect_left(starts, max(end, start + 1)) - 1  # the last whose text starts before end
        return first, max(first, numbers[last] if last >= 0 else first)

    @functools.cached_property
    def _pages_with_text(self) -> tuple[list[int], list[int], list[int]]:
        """Where the text of each page that has some starts and ends, and its number (1-based)."""
        ends = [*(s - len(PAGE_SEPARATOR) for s in self.pages[1:]), len(self.text)]
        filled = [(s, e, n) for n, (s, e) in enumerate(zip(self.pages, ends), 1) if e > s]
        return [s for s, _, _ in filled], [e for _, e, _ in filled], [n for _, _, n in filled]

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
            as_json = json.dumps({key: value}, allow_nan=False, ensure_ascii=False)
        except (TypeError, ValueError) as error:
            raise ValueError(f"{name}[{key!r}] must be a JSON value (str, number, bool, None, list, dict), "
                             f"got {one_line(error)}") from None
        try:
            as_json.encode("utf-8")  # JSON lines and the store are UTF-8: a lone surrogate cannot be written
        except UnicodeEncodeError as error:
            raise ValueError(f"{name}[{key!r}] holds a lone surrogate {as_json[error.start]!r}: not valid Unicode; "
                             "decode its source with errors='replace'") from None
    return dict(metadata)


def readable_name(path: Path, name: str | None = None) -> str:
    """A file's name (or `name`, a path made from it) as valid text: bytes that are not UTF-8 (kept by
    the OS as lone surrogates) become U+FFFD, so it can go into a chunk id, JSON and a vector store."""
    return (path.name if name is None else name).encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def document_title(text: str) -> str:
    """A title for any text: its first markdown heading, else its first non-empty line (cut short)."""
    return _first_heading(text) or first_line(text)


def _first_heading(text: str) -> str:
    """Text of the first markdown heading (ATX or setext; a `#` line in a code block is not one)."""
    tokens = blocks.parse(text)
    for tok, nxt in zip(tokens, tokens[1:]):
        if tok.type == "heading_open" and nxt.content.strip():
            return blocks.short_heading(nxt.content.strip())
    return ""


def short_title(title: str) -> str:
    """A title on one line of at most `TITLE_CHARS` characters: it is copied into every chunk's metadata,
    so a page whose `<title>` (or a PDF's or Word file's metadata title) holds a whole text costs no more."""
    title = " ".join(title[: 4 * TITLE_CHARS].split())  # a bounded prefix: the rest is never shown
    return title if len(title) <= TITLE_CHARS else title[: TITLE_CHARS - 1].rstrip() + "…"


def first_line(text: str) -> str:
    """The first line that is not blank, on one line and cut short (only its start is read)."""
    found = _NON_SPACE.search(text)
    if found is None:
        return ""
    stop = _LINE_BREAK.search(text, found.start(), found.start() + 4 * TITLE_CHARS)
    return short_title(text[found.start() : stop.start() if stop else found.start() + 4 * TITLE_CHARS])


def valid_text(text: str) -> str:
    """`text` with each lone surrogate made U+FFFD, as a decoder does with errors="replace" (a PDF's
    broken text map or JSON's "\\ud800" escape yields them): nothing else changes, and the text can then
    be written as UTF-8."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
