"""Loading documents: newlines kept, HTML and PDF turned into text, titles, kinds, a corpus folder."""

from __future__ import annotations

import os
import re
import socket
from pathlib import Path

import pytest

from chunking import check_chunks, chunk
from chunking.documents import TITLE_CHARS, Document, document_title, short_title
from chunking.load import html_to_text, load_corpus, load_document, pdf_to_text, read_text
from tests.conftest import DATA

CORPUS = DATA / "corpus"

PAGE = """<!DOCTYPE html>
<html><head><title>The  Night
 Train</title>
<style>body { color: red; }</style>
<script>var x = "<p>not text</p>"; if (a < b) {}</script>
</head>
<body>
<nav><a href="#a">Home</a> <a href="#b">Fares</a></nav>
<h1>Fares &amp; tickets</h1>
<p>Adults pay&nbsp;&euro;49,
   children   <em>half</em>   price.</p>
<template><p>template text</p></template><noscript>Enable JavaScript</noscript>
<h2>Table</h2>
<table><caption>Fares</caption>
<tr><th>Class</th><th>Adult</th></tr>
<tr><td>Seat</td><td>&euro;49</td></tr>
</table>
<ul><li>one</li><li>two<ol><li>first</li><li>second</li></ol></li></ul>
<pre>
  keep   this
    as is</pre>
<h3></h3>
<p>Line one<br>line two &lt;3</p>
</body></html>"""

PAGE_TEXT = """Home Fares

# Fares & tickets

Adults pay\u00a0€49, children half price.

## Table

Fares
Class | Adult
Seat | €49

- one
- two
  1. first
  2. second

  keep   this
    as is

Line one
line two <3"""


def write(tmp_path, name: str, data: bytes):
    path = tmp_path / name
    path.write_bytes(data)
    return path


def tiny_pdf(path, pages: list[str], title: str | None = None):
    """Write a PDF whose pages show `pages` in Helvetica, built by hand with pypdf (no other tool)."""
    pypdf = pytest.importorskip("pypdf")
    from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

    writer = pypdf.PdfWriter()
    font = writer._add_object(DictionaryObject({
        NameObject("/Type"): NameObject("/Font"),
        NameObject("/Subtype"): NameObject("/Type1"),
        NameObject("/BaseFont"): NameObject("/Helvetica"),
    }))
    for text in pages:
        page = writer.add_blank_page(width=300, height=200)
        page[NameObject("/Resources")] = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})}
        )
        stream = DecodedStreamObject()
        stream.set_data(f"BT /F1 12 Tf 20 150 Td ({text}) Tj ET".encode("latin-1"))
        page[NameObject("/Contents")] = writer._add_object(stream)
    if title:
        writer.add_metadata({"/Title": title})
    with open(path, "wb") as file:
        writer.write(file)
    return path


def test_read_text_keeps_crlf_and_lone_cr_exactly(tmp_path):
    path = write(tmp_path, "notes.txt", "Café\r\nline two\rthree\n".encode())
    assert read_text(path) == "Café\r\nline two\rthree\n"


def test_crlf_offsets_point_into_the_loaded_text(tmp_path):
    path = write(tmp_path, "notes.txt", b"First paragraph.\r\n\r\nSecond paragraph.\r\n")
    doc = load_document(path)
    chunks = chunk(doc.text, "paragraph", chunk_size=None)
    check_chunks(doc.text, chunks)
    assert [(c.start, c.end) for c in chunks] == [(0, 16), (20, 37)]


@pytest.mark.parametrize("offset", [4, 70_000])
def test_a_file_that_is_not_utf8_is_a_value_error_naming_it(tmp_path, offset):
    path = write(tmp_path, "latin1.txt", b"a" * offset + "é".encode("latin-1"))
    where = rf"latin1\.txt:1: not valid UTF-8 \(byte 0xe9 at column {offset + 1}, byte offset {offset}\)"
    with pytest.raises(ValueError, match=where):
        load_document(path)


@pytest.mark.parametrize(("doc_id", "error"), [(7, TypeError), ("", ValueError)])
def test_a_bad_doc_id_is_rejected(tmp_path, doc_id, error):
    with pytest.raises(error, match="doc_id"):
        load_document(write(tmp_path, "a.txt", b"x"), doc_id=doc_id)


def test_html_to_text_golden():
    assert html_to_text(PAGE) == (PAGE_TEXT, "The Night Train")


@pytest.mark.parametrize(
    ("html", "expected"),
    [
        ("", ""),
        ("plain   text", "plain text"),
        ("<h2></h2><p>not a heading</p>", "not a heading"),
        ("<li></li><p>not an item</p>", "not an item"),
        ("<head><style>p {}</style><body><p>no closing head tag</p>", "no closing head tag"),
        ("<p>a</p><p></p><div></div><p>b</p>", "a\n\nb"),
        ("<ul><li>a<ul><li>b</li></ul></li><li>c</li></ul><p>d</p>", "- a\n  - b\n- c\n\nd"),
        ("<pre>x\r\n\r\n\r\n\r\ny   </pre>", "x\n\ny"),
        ("<p>trailing &nbsp; space&#32;</p>", "trailing \u00a0 space"),
        ("<table><tr><td>a</td><td></td><td>c</td></tr></table>", "a | | c"),
        ("<p>&lt;b&gt;escaped&lt;/b&gt;</p>", "<b>escaped</b>"),
    ],
)
def test_html_to_text_awkward_cases(html, expected):
    assert html_to_text(html)[0] == expected


def test_html_to_text_rejects_bytes():
    with pytest.raises(TypeError, match="html must be a str, got bytes"):
        html_to_text(b"<p>x</p>")


@pytest.fixture(scope="module")
def handbook() -> Document:
    return load_document(CORPUS / "night_train_handbook.html")


def test_handbook_has_no_markup_or_code(handbook):
    # The one "<" in the text is the handbook's own "Children &lt; 4 years".
    assert handbook.text.replace("Children < 4 years", "").count("<") == 0
    for code in ("LANTERN_CONFIG", "function", "font-family", "addEventListener", "--night-blue", "&euro;"):
        assert code not in handbook.text


def test_handbook_keeps_its_headings_and_title(handbook):
    lines = handbook.text.splitlines()
    assert "# Lantern Line Night Express: Passenger Handbook" in lines
    assert "## Fares" in lines and "### Is smoking allowed?" in lines
    assert lines.count("### Baggage") == 4
    assert handbook.title == "Lantern Line Night Express – Passenger Handbook 2025"


def test_handbook_headings_reach_the_markdown_strategy(handbook):
    chunks = chunk(handbook.text, "markdown", doc_id=handbook.doc_id)
    check_chunks(handbook.text, chunks)
    paths = [c.metadata["heading_path"] for c in chunks]
    baggage = {path[-2] for path in paths if path[-1:] == ("Baggage",)}
    assert baggage == {"Reclining Seat Car (Class C)", "Couchette (Class B)", "Sleeper Cabin (Class A)",
                       "Aurora Suite"}


def test_pdf_pages_come_back_joined_by_a_blank_line(tmp_path):
    path = tiny_pdf(tmp_path / "tiny.pdf", ["Night trains run daily.", "Page two."])
    assert pdf_to_text(path) == "Night trains run daily.\n\nPage two."


def test_pdf_document_takes_its_metadata_title(tmp_path):
    doc = load_document(tiny_pdf(tmp_path / "tiny.pdf", ["Body text."], title="Tiny Handbook"))
    assert (doc.doc_id, doc.kind, doc.title, doc.text) == ("tiny.pdf", "pdf", "Tiny Handbook", "Body text.")


def test_a_broken_pdf_is_a_value_error_naming_it(tmp_path):
    pytest.importorskip("pypdf")
    path = write(tmp_path, "broken.pdf", b"this is not a pdf")
    with pytest.raises(ValueError, match=r"broken\.pdf"):
        load_document(path)


@pytest.mark.parametrize(
    ("name", "data", "kind", "title"),
    [
        ("a.md", b"```\n# not a heading\n```\n\nIntro\n=====\n", "markdown", "Intro"),
        ("b.markdown", b"\n\nNo heading here.\nSecond line.\n", "markdown", "No heading here."),
        ("c.txt", b"\n  Title line  \nbody\n", "text", "Title line"),
        ("d.htm", b"<h2>Only a heading</h2><p>x</p>", "html", "Only a heading"),
        ("e.TXT", b"", "text", "e.TXT"),
    ],
)
def test_kind_and_title(tmp_path, name, data, kind, title):
    doc = load_document(write(tmp_path, name, data))
    assert (doc.kind, doc.title) == (kind, title)


def test_a_long_first_line_is_cut_for_the_title(tmp_path):
    doc = load_document(write(tmp_path, "essay.txt", b"word " * 100))
    assert len(doc.title) == 100 and doc.title.endswith("…")


def test_doc_id_defaults_to_the_file_name_and_can_be_given(tmp_path):
    path = write(tmp_path, "notes.md", b"# Notes\n")
    assert load_document(path).doc_id == "notes.md"
    assert load_document(path, doc_id="guide-v2").doc_id == "guide-v2"


def test_document_repr_is_short_and_stable(handbook):
    assert repr(handbook) == (
        "Document(doc_id='night_train_handbook.html', kind='html', "
        f"title='Lantern Line Night Express – Passenger …', chars={len(handbook.text)})"
    )


def test_unsupported_suffix_is_a_value_error_naming_the_file(tmp_path):
    with pytest.raises(ValueError, match=r"notes\.rst.*'\.rst'"):
        load_document(write(tmp_path, "notes.rst", b"x"))


def test_load_corpus_reads_the_bundled_documents():
    docs = load_corpus(CORPUS)
    assert {d.doc_id: d.kind for d in docs} == {
        "coastal_sensor_report.md": "markdown",
        "greenfield_data_policy.txt": "text",
        "harbor_cycles_faq.md": "markdown",
        "kyoto_tea_guide_ja.md": "markdown",
        "lumendb_operator_guide.md": "markdown",
        "lumendb_release_notes.md": "markdown",
        "night_train_handbook.html": "html",
        "platform_sync_transcript.txt": "text",
        "tidal_mills_essay.txt": "text",
    }
    assert [d.doc_id for d in docs] == sorted(d.doc_id for d in docs)


def test_load_corpus_skips_hidden_and_unsupported_files(tmp_path):
    for name in ("b.md", "a.txt", ".hidden.md", "image.png"):
        write(tmp_path, name, b"text")
    (tmp_path / "sub.md").mkdir()
    assert [d.doc_id for d in load_corpus(tmp_path)] == ["a.txt", "b.md"]
    assert [d.doc_id for d in load_corpus(tmp_path, suffixes=(".MD",))] == ["b.md"]


def test_load_corpus_with_no_supported_file_is_a_value_error(tmp_path):
    write(tmp_path, ".hidden.md", b"x")
    with pytest.raises(ValueError, match="has no file with a suffix"):
        load_corpus(tmp_path)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"suffixes": ".md"}, TypeError, "suffixes must be a tuple"),
        ({"suffixes": (".rst",)}, ValueError, r"suffixes \['\.rst'\] are not supported"),
    ],
)
def test_load_corpus_bad_suffixes(tmp_path, kwargs, error, match):
    with pytest.raises(error, match=match):
        load_corpus(tmp_path, **kwargs)


def test_load_corpus_on_a_missing_folder_is_a_value_error(tmp_path):
    with pytest.raises(ValueError, match=r"missing.*is not a directory"):
        load_corpus(tmp_path / "missing")


# --- what is not a file, and what is copied into every chunk --------------------------------------

def fifo(tmp_path):
    path = tmp_path / "pipe.txt"
    os.mkfifo(path)  # no writer: reading it would wait for ever
    return path


def unix_socket(tmp_path):
    path = tmp_path / "socket.txt"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    return path


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs and devices are POSIX")
@pytest.mark.parametrize("special, kind", [(fifo, "a FIFO"), (lambda _: Path("/dev/zero"), "a character device"),
                                           (unix_socket, "a socket")])
def test_a_pipe_device_or_socket_is_refused_before_anything_is_read(tmp_path, special, kind):
    path = special(tmp_path)
    with pytest.raises(ValueError, match=f"{re.escape(str(path))}.* is {kind}.*not a regular file"):
        read_text(path)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_the_command_line_names_a_pipe_and_exits(tmp_path):
    from chunking.cli import main

    path = fifo(tmp_path)
    assert main(["chunk", str(path)]) == 1  # returns: nothing waited for a writer


@pytest.mark.parametrize("name, page, title", [
    ("long.html", lambda title: f"<title>{title}</title><p>Body text.</p>".encode(), "A title\nthat goes  on "),
    ("long.txt", lambda title: f"{title}\n\nBody text.".encode(), "A title that goes\ton "),
])
def test_a_title_is_one_short_line_whatever_the_source(tmp_path, name, page, title):
    title += "and on " * 40_000  # 280 KB
    document = load_document(write(tmp_path, name, page(title)))
    assert document.title == short_title(title) and len(document.title) <= TITLE_CHARS
    assert document.title.startswith("A title that goes on and on") and "\n" not in document.title


def test_a_pdf_metadata_title_is_cut_short(tmp_path):
    document = load_document(tiny_pdf(tmp_path / "t.pdf", ["Words on a page."], title="Pumps " * 20_000))
    assert len(document.title) == TITLE_CHARS and document.title.endswith("…")


def test_finding_a_first_line_copies_out_only_its_start():
    text = " " * 10_000 + "x" * 10_000_000
    assert document_title(text) == "x" * (TITLE_CHARS - 1) + "…"


@pytest.mark.parametrize("pages, offsets, expected", [
    (["First words here.", "", "Third page words."], "separator after the empty page", (3, 3)),
    (["First words here.", "", "Third page words."], "separator after the first page", (3, 3)),
    (["First words here.", "Second page."], "end in the separator", (1, 1)),
    (["First words here.", "", "", "Fourth."], "all of it", (1, 4)),
])
def test_a_span_is_on_the_pages_whose_text_it_overlaps(tmp_path, pages, offsets, expected):
    document = load_document(tiny_pdf(tmp_path / "gaps.pdf", pages))
    starts, text = document.pages, document.text
    span = {"separator after the empty page": (starts[1] + 1, len(text)),
            "separator after the first page": (starts[1] - 1, len(text)),
            "end in the separator": (0, starts[1] - 1),
            "all of it": (0, len(text))}[offsets]
    assert document.page_range(*span) == expected
