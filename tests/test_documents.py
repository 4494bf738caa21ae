"""Your documents in: Word files, PDF pages, metadata on every chunk, folders read recursively,
table headers kept when a table is split, and small chunks merged."""

from __future__ import annotations

import json
import os
import re
import zipfile

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chunking import Document, chunk, chunk_document, chunk_documents, load_corpus, load_document
from chunking import markdown as markdown_strategy
from chunking.checks import check_chunks
from chunking.documents import DOCUMENT_KEYS, check_metadata
from chunking.load import docx_to_text
from chunking.packing import merge_small
from chunking.sizers import resolve_unit
from chunking.tokens import count_tokens
from tests.test_cli import run
from tests.test_load import tiny_pdf

CORPUS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "corpus")
docx = pytest.importorskip("docx", reason="python-docx is in the retrieval extra")


# --- Word files --------------------------------------------------------------------------------------

def word_file(path, title: str | None = "Ops manual"):
    """A .docx with a title, headings, lists at two levels, a table with a merged cell, and an empty paragraph."""
    d = docx.Document()
    if title:
        d.core_properties.title = title
    d.add_heading("Ops manual", 0)
    d.add_heading("Install", 1)
    d.add_paragraph("Run the installer.\tThen reboot.")
    d.add_paragraph("first step", style="List Bullet")
    d.add_paragraph("a detail", style="List Bullet 2")
    d.add_paragraph("second step", style="List Number")
    d.add_paragraph("")
    table = d.add_table(rows=3, cols=3)
    for i, row in enumerate([("name", "value", "note"), ("port", "8080", ""), ("host", "db 1", "main")]):
        for j, text in enumerate(row):
            table.cell(i, j).text = text
    table.cell(1, 1).merge(table.cell(1, 2))
    d.add_heading("Upgrade", 2)
    d.add_paragraph("Stop the service first.")
    d.add_heading("Very deep", 8)
    d.add_paragraph("End.")
    d.save(path)
    return path


def test_a_word_file_reads_as_markdown_like_text(tmp_path):
    document = load_document(word_file(tmp_path / "manual.docx"))
    assert document.kind == "docx" and document.title == "Ops manual" and document.doc_id == "manual.docx"
    assert document.text == (
        "# Ops manual\n\n# Install\n\nRun the installer.\tThen reboot.\n\n"
        "- first step\n  - a detail\n- second step\n\n"
        "name | value | note\nport | 8080\nhost | db 1 | main\n\n"
        "## Upgrade\n\nStop the service first.\n\n###### Very deep\n\nEnd."
    )
    assert docx_to_text(tmp_path / "manual.docx") == document.text


def test_a_table_nested_in_a_cell_is_not_lost(tmp_path):
    d = docx.Document()
    table = d.add_table(rows=1, cols=2)
    table.cell(0, 0).text = "outer"
    inner = table.cell(0, 1).add_table(rows=2, cols=2)
    inner.cell(0, 0).text, inner.cell(1, 1).text = "in a", "in d"
    run_ = table.cell(0, 1).paragraphs[0]
    run_.add_run("lead")
    run_.add_run().add_tab()
    run_.add_run("after tab")
    d.save(tmp_path / "nested.docx")
    assert load_document(tmp_path / "nested.docx").text == "outer | lead after tab in a in d"


def test_a_word_file_without_a_title_property_takes_its_first_heading(tmp_path):
    assert load_document(word_file(tmp_path / "m.docx", title=None)).title == "Ops manual"


def test_the_markdown_strategy_sees_a_word_files_sections(tmp_path):
    document = load_document(word_file(tmp_path / "manual.docx"))
    chunks = chunk_document(document, "markdown", chunk_size=20)
    check_chunks(document.text, chunks)
    paths = {c.metadata["heading_path"] for c in chunks}
    assert ("Install", "Upgrade") in paths
    assert all(document.text[c.start : c.end] == c.text for c in chunks)


@pytest.mark.parametrize("data", [b"not a zip at all", b"PK\x03\x04" + b"\x00" * 40, b""],
                         ids=["text", "bad-zip", "empty"])
def test_a_file_that_is_not_a_word_file_is_one_clear_error(tmp_path, data):
    path = tmp_path / "broken.docx"
    path.write_bytes(data)
    with pytest.raises(ValueError, match=r"broken\.docx.*not a readable \.docx") as error:
        load_document(path)
    assert "\n" not in str(error.value)


def test_a_zip_without_a_document_inside_is_one_clear_error(tmp_path):
    path = tmp_path / "empty.docx"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("hello.txt", "hi")
    with pytest.raises(ValueError, match=r"empty\.docx.*not a readable \.docx"):
        load_document(path)


# --- PDF pages ---------------------------------------------------------------------------------------

PAGES = [f"Page {n} says the pump number {n} runs at {n * 10} litres a minute." for n in range(1, 6)]


def test_a_pdf_remembers_where_each_page_starts(tmp_path):
    document = load_document(tiny_pdf(tmp_path / "pumps.pdf", PAGES))
    assert len(document.pages) == len(PAGES)
    for n, start in enumerate(document.pages):
        assert document.text[start:].startswith(f"Page {n + 1} says")
    assert document.page_range(document.pages[2], document.pages[2] + 5) == (3, 3)
    assert document.page_range(document.pages[1] + 3, document.pages[3] + 2) == (2, 4)
    assert load_document(tmp_path / "pumps.pdf").chunk_metadata(0, 1)["page_start"] == 1


def test_every_chunk_of_a_pdf_knows_its_pages(tmp_path):
    document = load_document(tiny_pdf(tmp_path / "pumps.pdf", PAGES))
    for size in (8, 20, 60):
        chunks = chunk_document(document, "sentence", chunk_size=size)
        for c in chunks:
            first = max(i for i, s in enumerate(document.pages) if s <= c.start) + 1
            last = max(i for i, s in enumerate(document.pages) if s < c.end) + 1
            assert (c.metadata["page_start"], c.metadata["page_end"]) == (first, last)
        assert any(c.metadata["page_start"] < c.metadata["page_end"] for c in chunks) == (size == 60)


def test_a_pdf_with_empty_pages_still_maps_offsets_to_pages(tmp_path):
    document = load_document(tiny_pdf(tmp_path / "gaps.pdf", ["First words here.", "", "Third page words."]))
    chunks = chunk_document(document, "sentence", chunk_size=5)
    assert [(c.text, c.metadata["page_start"]) for c in chunks] == [("First words here.", 1), ("Third page words.", 3)]


def test_the_command_line_prints_pages_and_metadata(tmp_path):
    tiny_pdf(tmp_path / "pumps.pdf", PAGES)
    result = run("chunk", str(tmp_path / "pumps.pdf"), "--strategy", "sentence", "--chunk-size", "20",
                 "--metadata", '{"team": "ops", "year": 2026}')
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["metadata"]["page_start"] for r in rows] == [1, 2, 3, 4, 5]
    assert all(r["metadata"]["team"] == "ops" and r["metadata"]["year"] == 2026 for r in rows)
    assert all(r["metadata"]["kind"] == "pdf" and r["metadata"]["source"].endswith("pumps.pdf") for r in rows)


# --- metadata carried through, kept apart from the payload's own keys --------------------------------

def test_a_documents_metadata_reaches_every_chunk(tmp_path):
    (tmp_path / "a.md").write_text("# Alpha\n\nOne two.\n\n## Beta\n\nThree four.\n", encoding="utf-8")
    document = load_document(tmp_path / "a.md", metadata={"team": "ops", "tags": ["x", "y"]})
    chunks = chunk_document(document, "markdown", chunk_size=50)
    assert [dict(c.metadata) for c in chunks] == [
        {"heading_path": ("Alpha",), "title": "Alpha", "kind": "markdown", "source": (tmp_path / "a.md").as_posix(),
         "team": "ops", "tags": ["x", "y"]},
        {"heading_path": ("Alpha", "Beta"), "title": "Alpha", "kind": "markdown",
         "source": (tmp_path / "a.md").as_posix(), "team": "ops", "tags": ["x", "y"]},
    ]
    assert all(c.doc_id == "a.md" for c in chunks)


def test_metadata_set_by_the_package_cannot_be_overwritten():
    for key in DOCUMENT_KEYS:
        with pytest.raises(ValueError, match=rf"metadata key '{key}' is set from the document"):
            Document(doc_id="d", text="x", title="t", metadata={key: 1})
    document = Document(doc_id="d", text="# A\n\nB.", title="A", kind="markdown", metadata={"heading_path": "mine"})
    with pytest.raises(ValueError, match=r"\['heading_path'\] of document 'd' are also set by the 'markdown'"):
        chunk_document(document, "markdown")
    with pytest.raises(TypeError, match="doc_id comes from the document"):
        chunk_document(document, "paragraph", doc_id="other")


@pytest.mark.parametrize(("metadata", "message"), [
    ({"n": float("nan")}, r"metadata\['n'\] must be a JSON value"),
    ({"f": object()}, r"metadata\['f'\] must be a JSON value"),
    ({1: "x"}, "metadata keys must be non-empty str, got 1"),
    ({"": "x"}, "metadata keys must be non-empty str, got ''"),
    (["a"], "metadata must be a mapping"),
    ({"a": "x\ud800"}, r"metadata\['a'\] holds a lone surrogate '\\ud800'"),
    ({"a": {"deep": ["ok", "\udfff"]}}, r"metadata\['a'\] holds a lone surrogate '\\udfff'"),
    ({"k\ud800": 1}, r"metadata\['k\\ud800'\] holds a lone surrogate"),
])
def test_bad_metadata_is_a_clear_error(metadata, message):
    with pytest.raises((TypeError, ValueError), match=message):
        check_metadata(metadata)


@pytest.mark.parametrize("field", ["doc_id", "title"])
def test_a_document_whose_id_or_title_is_not_valid_unicode_is_refused(field):
    fields = {"doc_id": "d", "text": "Text.", "title": "T", field: "bad \ud800"}
    with pytest.raises(ValueError, match=f"{field} holds a lone surrogate"):
        Document(**fields)


@pytest.mark.parametrize("field", ["context", "metadata"])
def test_what_cannot_be_stored_is_refused_before_the_store_not_when_read_back(field):
    from dataclasses import replace

    from chunking import store

    [c] = chunk("Alpha beta.", "sentence", doc_id="d")
    bad = replace(c, context="ctx \ud800") if field == "context" else replace(c, metadata={"k": "\ud800"})
    with pytest.raises(ValueError, match=f"chunk 0 of document 'd': its {field} holds a lone surrogate"):
        store.payload(bad)


def test_the_payload_keeps_user_keys_apart_from_its_own():
    from chunking import store

    document = Document(doc_id="d", text="Alpha beta. Gamma delta.", title="T",
                        metadata={"text": "not the text", "start": -1, "doc_id": "evil"})
    [c] = chunk_document(document, "sentence")
    data = store.payload(c)
    assert (data["text"], data["start"], data["doc_id"]) == ("Alpha beta. Gamma delta.", 0, "d")
    assert data["metadata"]["text"] == "not the text" and data["metadata"]["doc_id"] == "evil"
    assert store.chunk_from_payload(data) == c and dict(store.chunk_from_payload(data).metadata) == dict(c.metadata)


def test_a_payload_written_before_metadata_had_its_own_key_still_reads():
    from chunking import store

    old = {"doc_id": "d", "start": 0, "end": 5, "index": 0, "text": "Alpha", "strategy": "markdown", "context": "",
           "heading_path": ["A", "B"]}
    assert dict(store.chunk_from_payload(old).metadata) == {"heading_path": ("A", "B")}


def test_pages_and_metadata_reach_qdrant_and_can_be_filtered(tmp_path):
    from qdrant_client import models

    from chunking import store
    from chunking.embed import Embedder

    document = load_document(tiny_pdf(tmp_path / "pumps.pdf", PAGES), metadata={"team": "ops"})
    chunks = chunk_document(document, "sentence", chunk_size=20)
    embedder = Embedder(lambda texts: [[len(t), t.count("p") + 1.0] for t in texts], name="toy", cache=False)
    client = store.connect(":memory:")
    store.ensure_collection(client, "pumps", embedder.dim)
    store.index(client, "pumps", chunks, embedder.embed([c.text for c in chunks]))
    hits = store.search(client, "pumps", embedder.embed_query("pump"), k=10)
    assert sorted(h.chunk.metadata["page_start"] for h in hits) == [1, 2, 3, 4, 5]
    assert all(h.chunk.metadata["team"] == "ops" for h in hits)
    only = models.Filter(must=[models.FieldCondition(key="metadata.page_start", range=models.Range(gte=4))])
    points, _ = client.scroll("pumps", scroll_filter=only, with_payload=True)
    assert sorted(p.payload["metadata"]["page_start"] for p in points) == [4, 5]


# --- many documents, folders read recursively --------------------------------------------------------

def folder_tree(root):
    for name, text in {"b.md": "# B\n\nBee.", "a.txt": "Ay.", "ops/a.txt": "Ops ay.", "ops/deep/c.md": "# C\n\nSea.",
                       ".hidden/x.md": "# X", "ops/.secret.md": "# S", "notes.bin": "?"}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def test_a_folder_is_read_recursively_when_asked(tmp_path):
    root = folder_tree(tmp_path)
    assert [d.doc_id for d in load_corpus(root)] == ["a.txt", "b.md"]
    documents = load_corpus(root, recursive=True, metadata=lambda path: {"folder": path.parent.name})
    assert [d.doc_id for d in documents] == ["a.txt", "b.md", "ops/a.txt", "ops/deep/c.md"]
    assert [d.metadata["folder"] for d in documents] == [tmp_path.name, tmp_path.name, "ops", "deep"]
    chunks = list(chunk_documents(documents, "paragraph"))
    assert [(c.doc_id, c.text) for c in chunks] == [
        ("a.txt", "Ay."), ("b.md", "# B\n\nBee."), ("ops/a.txt", "Ops ay."), ("ops/deep/c.md", "# C\n\nSea.")]
    assert len({c.id for c in chunks}) == 4  # same file name in two folders: two documents


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symbolic links here")
def test_a_symbolic_link_loop_is_not_followed(tmp_path):
    root = folder_tree(tmp_path)
    os.symlink(root, root / "ops" / "loop")
    assert [d.doc_id for d in load_corpus(root, recursive=True)] == ["a.txt", "b.md", "ops/a.txt", "ops/deep/c.md"]


def test_the_command_line_reads_folders_recursively(tmp_path):
    root = folder_tree(tmp_path / "docs")
    flat = run("chunk", str(root), "--strategy", "paragraph")
    deep = run("chunk", str(root), "--strategy", "paragraph", "--recursive")
    assert flat.returncode == 0 and deep.returncode == 0, flat.stderr + deep.stderr
    assert [json.loads(line)["doc"] for line in flat.stdout.splitlines()] == ["a.txt", "b.md"]
    assert [json.loads(line)["doc"] for line in deep.stdout.splitlines()] == [
        "a.txt", "b.md", "ops/a.txt", "ops/deep/c.md"]


@pytest.mark.parametrize(("value", "message"), [
    ("{", "not JSON"), ("[1]", "must be a JSON object"), ('{"title": "x"}', "is set from the document"),
    ('{"team": "ops \\ud800"}', "holds a lone surrogate"),  # JSON's escape makes a str no file can hold
])
def test_bad_metadata_on_the_command_line_is_one_line(tmp_path, value, message):
    (tmp_path / "a.txt").write_text("Ay.", encoding="utf-8")
    result = run("chunk", str(tmp_path / "a.txt"), "--metadata", value)
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr


# --- a split table keeps its header ------------------------------------------------------------------

def table_document(rows: int = 60, newline: str = "\n") -> str:
    body = newline.join(f"| row {i} | value {i} with some words |" for i in range(rows))
    return newline.join(["# Guide", "", "## Limits", "", "Intro text.", "", "| name | value |", "|---|---|", body,
                         "", "After.", ""])


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_later_pieces_of_a_split_table_carry_its_header(newline):
    text = table_document(newline=newline)
    chunks = chunk(text, "markdown", chunk_size=120)
    check_chunks(text, chunks, chunk_size=120, length=count_tokens)
    pieces = [c for c in chunks if c.text.startswith("| row")]
    assert len(pieces) >= 3
    for c in pieces:
        assert c.metadata["table_header"] == "| name | value |\n|---|---|"
        assert c.context == "Guide > Limits\n\n| name | value |\n|---|---|"
        assert c.embed_text.endswith(c.text)
    first = next(c for c in chunks if "| name | value |" in c.text)
    assert "table_header" not in first.metadata and first.context == "Guide > Limits"
    assert chunks[-1].text == "After." and "table_header" not in chunks[-1].metadata


def test_the_header_can_stay_out_of_the_context():
    chunks = chunk(table_document(), "markdown", chunk_size=120, include_table_header=False,
                   include_heading_path=False)
    pieces = [c for c in chunks if c.text.startswith("| row")]
    assert pieces and all(c.context == "" and c.metadata["table_header"] for c in pieces)
    with pytest.raises(TypeError, match="include_table_header must be True or False, got 'yes'"):
        chunk("x", "markdown", include_table_header="yes")


def test_a_table_that_fits_gets_no_header_copy():
    chunks = chunk(table_document(rows=3), "markdown", chunk_size=200)
    assert all("table_header" not in c.metadata for c in chunks)


def test_finding_the_header_reads_two_lines_per_piece_not_the_table(monkeypatch):
    """Work count: a 20,000-row table cut into hundreds of pieces; the header search scans a few
    dozen characters per piece (splitting the whole table per piece would scan ~10^8)."""
    scanned = []
    real = markdown_strategy.LINE_END

    class Counting:
        def search(self, text, pos, endpos):
            found = real.search(text, pos, endpos)
            scanned.append((found.end() if found else endpos) - pos)
            return found

    monkeypatch.setattr(markdown_strategy, "LINE_END", Counting())
    text = table_document(rows=20_000)
    chunks = chunk(text, "markdown", chunk_size=100)
    pieces = [c for c in chunks if "table_header" in c.metadata]
    assert len(pieces) > 500
    assert sum(scanned) <= 2 * len("| name | value |\n|---|---|\n") * len(pieces)


# --- small chunks merged -----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def toy_embedder():
    """Sentences about tides near each other, the rest elsewhere (a semantic strategy without a model)."""
    from chunking.embed import Embedder

    return Embedder(lambda texts: [[1.0, 0.1] if "ide" in t else [0.1, 1.0] for t in texts], name="tide-words",
                    cache=False)


PROSE = ("Tide mills ground corn for seven centuries along the muddy estuaries of southern England and northern "
         "France, working whenever the tide allowed it and never when the miller liked it. Then they stopped.\n\n"
         "Steam came. Mills closed one by one across the coast.\n\n# Heading\n\nA long paragraph follows here with "
         "many words in it, enough to fill a chunk of thirty tokens or so and a bit more than that. It ends.\n\n"
         "Body text under it.\n")
# At chunk_size=30, an oversize sentence or paragraph is cut into parts whose tail is small; packing
# never merges across an oversize piece, so every strategy leaves a small chunk that could merge.


@pytest.mark.parametrize("strategy", ["sentence", "paragraph", "recursive", "markdown", "semantic"])
def test_min_chunk_size_merges_small_chunks_when_they_fit(strategy, toy_embedder):
    extra = {"embedder": toy_embedder} if strategy == "semantic" else {}
    plain = chunk(PROSE, strategy, chunk_size=30, **extra)
    merged = chunk(PROSE, strategy, chunk_size=30, min_chunk_size=8, **extra)
    check_chunks(PROSE, merged, chunk_size=30, length=count_tokens)
    assert len(merged) < len(plain)
    for i, c in enumerate(merged):
        if count_tokens(c.text) < 8:  # small only where neither neighbour could take it
            for j in (i - 1, i + 1):
                if 0 <= j < len(merged) and (strategy != "markdown" or merged[j].metadata == c.metadata):
                    a, b = sorted((c, merged[j]), key=lambda x: x.start)
                    assert count_tokens(PROSE[a.start : b.end]) > 30
    if strategy == "markdown":  # never across a heading
        assert all(c.metadata["heading_path"] in {(), ("Heading",)} for c in merged)


def test_uncapped_paragraphs_merge_a_heading_line_into_the_text_under_it():
    chunks = chunk("# Title\n\nThe first paragraph of the text.\n\nAnother one here.\n\nEnd.", "paragraph",
                   chunk_size=None, min_chunk_size=5)
    assert [c.text for c in chunks] == ["# Title\n\nThe first paragraph of the text.", "Another one here.\n\nEnd."]


@pytest.mark.parametrize(("value", "message"), [
    (0, "min_chunk_size (at most chunk_size) must be an int >= 1 and <= 30, got 0"),
    (31, "min_chunk_size (at most chunk_size) must be an int >= 1 and <= 30, got 31"),
    (True, "got True"), (2.5, "got 2.5"),
])
@pytest.mark.parametrize("strategy", ["sentence", "paragraph", "recursive", "markdown"])
def test_a_bad_min_chunk_size_names_itself(strategy, value, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        chunk(PROSE, strategy, chunk_size=30, min_chunk_size=value)


def test_the_command_line_merges_small_chunks_and_says_which_strategies_can(tmp_path):
    (tmp_path / "p.txt").write_text(PROSE, encoding="utf-8")
    merged = run("chunk", str(tmp_path / "p.txt"), "--strategy", "paragraph", "--chunk-size", "30",
                 "--min-chunk-size", "8")
    plain = run("chunk", str(tmp_path / "p.txt"), "--strategy", "paragraph", "--chunk-size", "30")
    assert merged.returncode == 0 and len(merged.stdout.splitlines()) < len(plain.stdout.splitlines())
    wrong = run("chunk", str(tmp_path / "p.txt"), "--strategy", "fixed", "--min-chunk-size", "8")
    assert wrong.returncode != 0 and "--min-chunk-size is an option of" in wrong.stderr
    assert "Traceback" not in wrong.stderr


def merge_small_by_list_surgery(spans, count, size, minimum, gaps):
    """The semantic strategy's earlier merge (splicing a list: quadratic), kept as the reference."""
    spans, ends = list(spans), list(gaps)
    i = 0
    while i < len(spans):
        start, end = spans[i]
        if count(start, end) >= minimum:
            i += 1
            continue
        neighbours = [(ends[j], j) for j in (i - 1, i) if 0 <= j < len(spans) - 1]
        for _, j in sorted(neighbours, key=lambda d: (-1.0 if d[0] is None else d[0], d[1])):
            merged = (spans[j][0], spans[j + 1][1])
            if count(*merged) <= size:
                spans[j : j + 2], ends[j : j + 2] = [merged], [ends[j + 1]]
                i = j
                break
        else:
            i += 1
    return spans


@given(lengths=st.lists(st.integers(1, 12), min_size=1, max_size=40),
       gaps=st.lists(st.one_of(st.none(), st.floats(0, 1)), min_size=40, max_size=40),
       size=st.integers(5, 30), minimum=st.integers(1, 10))
def test_the_linear_merge_equals_the_earlier_one(lengths, gaps, size, minimum):
    text = " ".join("x" * n for n in lengths)
    spans, at = [], 0
    for n in lengths:
        spans.append((at, at + n))
        at += n + 1
    bound = resolve_unit("characters").bind(text)
    minimum = min(minimum, size)
    ours = merge_small(spans, bound, size, minimum, gaps[: len(spans)])
    assert ours == merge_small_by_list_surgery(spans, lambda a, b: b - a, size, minimum, gaps[: len(spans)])


def test_merging_measures_each_span_a_bounded_number_of_times():
    """Work count: 50,000 one-character spans under a minimum of 4 take O(n) counts, not O(n²) splices."""
    text = " ".join("x" * 50_000)
    spans = [(i, i + 1) for i in range(0, len(text), 2)]
    bound = resolve_unit("characters").bind(text)
    calls = []
    real = bound.count
    bound.count = lambda a, b: calls.append(b - a) or real(a, b)
    merged = merge_small(spans, bound, 20, 4)
    assert all(b - a >= 4 for a, b in merged[:-1])
    assert len(calls) <= 3 * len(spans) and sum(calls) <= 20 * 3 * len(spans)


# --- many documents in worker processes ------------------------------------------------------------------

STRUCTURAL = [("fixed", {}), ("fixed", {"unit": "characters", "chunk_size": 300}), ("sentence", {}),
              ("paragraph", {}), ("markdown", {}), ("sliding", {"overlap_fraction": 0.25}), ("recursive", {}),
              ("parent_child", {}), ("contextual", {})]


@pytest.mark.parametrize(("strategy", "options"), STRUCTURAL)
def test_workers_make_the_chunks_one_process_makes(strategy, options):
    """Every chunk, its metadata and its order, whatever the number of processes."""
    docs = load_corpus(CORPUS, metadata={"team": "ops", "tags": ["a", {"b": 1}]})
    options = {"chunk_size": 120, **options}
    alone = list(chunk_documents(docs, strategy, **options))
    shared = list(chunk_documents(docs, strategy, workers=2, **options))
    assert shared == alone
    assert [dict(c.metadata) for c in shared] == [dict(c.metadata) for c in alone]


def test_a_chunk_and_a_document_survive_pickling():
    import pickle

    document = Document("a.md", "# A\n\nOne.", "A", kind="markdown", pages=(0,), metadata={"team": {"x": [1]}})
    assert pickle.loads(pickle.dumps(document)) == document
    assert dict(pickle.loads(pickle.dumps(document)).metadata) == {"team": {"x": [1]}}
    for c in chunk_document(document, "markdown"):
        back = pickle.loads(pickle.dumps(c))
        assert back == c and dict(back.metadata) == dict(c.metadata)
        with pytest.raises(TypeError):
            back.metadata["title"] = "changed"  # still frozen


def test_workers_read_a_stream_of_documents_as_they_chunk_it(monkeypatch):
    """At most two batches per worker are out: the first chunk comes before the stream is read to its end."""
    from chunking import parallel

    monkeypatch.setattr(parallel, "BATCH_CHARS", 1)  # one document a batch
    pulled = []

    def stream():
        for k in range(200):
            pulled.append(k)
            yield Document(f"d{k}", f"Note {k}. The pump was serviced.", "")

    chunks = chunk_documents(stream(), "sentence", workers=2, chunk_size=50)
    first = next(chunks)
    assert first.doc_id == "d0" and len(pulled) <= 2 * 2 + 1
    assert [c.doc_id for c in [first, *chunks]] == [f"d{k}" for k in range(200)]


def test_bad_workers_and_what_workers_cannot_take_are_named(toy_embedder):
    docs = load_corpus(CORPUS)[:2]
    for value in (0, -1, 1.5, "2"):
        with pytest.raises(ValueError, match=rf"workers must be an int >= 1, got {re.escape(repr(value))}"):
            list(chunk_documents(docs, "fixed", workers=value))
    with pytest.raises(ValueError, match=r"workers must be 1 for a strategy given an embedder .* got 2"):
        list(chunk_documents(docs, "semantic", workers=2, embedder=toy_embedder))
    with pytest.raises(TypeError, match=r"unknown option\(s\) \['size'\]"):
        list(chunk_documents(docs, "fixed", workers=2, size=3))
    with pytest.raises(TypeError, match=r"documents must hold chunking.Document objects .* got str"):
        list(chunk_documents(["just text"], "fixed", workers=2))
    with pytest.raises(ValueError, match=r"chunk_size must be > 0, got -5"):  # raised in a worker
        list(chunk_documents(docs, "fixed", workers=2, chunk_size=-5))
