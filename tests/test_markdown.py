"""Markdown chunking: heading paths, code and tables kept whole, graceful fallback, exact offsets."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunking import blocks as markdown_blocks
from chunking import count_tokens, markdown

DOC = """# Guide

Welcome to the guide.

## Install

### Linux

```bash
# this is a comment, not a heading
apt install tool
```

### Windows

Run the installer.

Setext heading
--------------

| key | value |
|-----|-------|
| a   | 1     |
"""


def paths(chunks):
    return [c.metadata["heading_path"] for c in chunks]


def test_sections_carry_their_heading_path():
    got = markdown.chunk(DOC)
    assert paths(got) == [
        ("Guide",),
        ("Guide", "Install", "Linux"),
        ("Guide", "Install", "Windows"),
        ("Guide", "Setext heading"),
    ]


def test_a_bare_heading_joins_the_next_section():
    got = markdown.chunk(DOC)
    assert got[1].text.startswith("## Install\n\n### Linux")


def test_hash_lines_inside_code_are_not_headings():
    got = markdown.chunk(DOC)
    assert all("this is a comment" not in part for c in got for part in c.metadata["heading_path"])


def test_context_holds_the_path_and_text_stays_exact():
    got = markdown.chunk(DOC)
    assert got[2].context == "Guide > Install > Windows"
    assert got[2].embed_text == "Guide > Install > Windows\n\n### Windows\n\nRun the installer."
    assert all(DOC[c.start : c.end] == c.text for c in got)


def test_heading_path_can_be_left_out_of_the_embedding():
    got = markdown.chunk(DOC, include_heading_path=False)
    assert all(c.context == "" and c.embed_text == c.text for c in got)


def test_code_block_and_table_are_never_split_when_they_fit():
    got = markdown.chunk(DOC, chunk_size=30)
    fence = DOC.index("```bash")
    fence_end = DOC.index("```\n", fence + 3) + 3
    assert any(c.start <= fence and c.end >= fence_end for c in got)
    table = DOC.index("| key")
    assert any(c.start <= table and c.end == len(DOC.rstrip()) for c in got)


def test_oversize_code_block_is_split_at_line_ends():
    code = "```python\n" + "".join(f"value_{i} = compute({i})\n" for i in range(80)) + "```\n"
    got = markdown.chunk("# Code\n\n" + code, chunk_size=40)
    assert len(got) > 2
    assert got[0].text == "# Code"
    assert all(c.text.endswith(("```", ")")) for c in got[1:])  # every cut is at a line end
    assert all(count_tokens(c.text) <= 40 for c in got)


def test_no_headings_is_never_one_giant_chunk():
    text = "\n\n".join(f"Paragraph {i} has a few words in it." for i in range(100))
    got = markdown.chunk(text, chunk_size=50)
    assert len(got) > 10 and all(c.metadata["heading_path"] == () for c in got)


def test_seven_hashes_is_a_paragraph_not_a_heading():
    got = markdown.chunk("####### not a heading\n\ntext")
    assert paths(got) == [()]


def test_text_before_the_first_heading_has_an_empty_path():
    got = markdown.chunk("Preamble line.\n\n# Title\n\nBody.")
    assert paths(got) == [(), ("Title",)]


def test_sections_are_not_merged_across_headings():
    got = markdown.chunk("# A\n\none\n\n# B\n\ntwo", chunk_size=500)
    assert [c.text for c in got] == ["# A\n\none", "# B\n\ntwo"]


def test_link_reference_definitions_are_kept():
    text = "# T\n\nSee [x].\n\n[x]: https://example.org\n"
    got = markdown.chunk(text)
    assert "https://example.org" in "".join(c.text for c in got)


BLOCKS = [
    "# Title", "## Sub heading", "####### seven", "Setext\n======", "Para one.\nStill para.", "- item\n- item two",
    "1. first\n\n   # not a heading? (indented)", "> quote\n\n# after quote", "```\n\n# in code\n\n```",
    "~~~~\n\n# code\n~~~", "```python\n# comment\n", "````\n```\n\n# still code\n````", "    indented code\n\n# x",
    "| a | b |\n|---|---|\n| 1 | 2 |", "- list\n\n  ```\n\n# inside a list fence?\n  ```", "[ref]: /url", "***",
    "Text\r\n\r\n# crlf heading\r\n", "> ```\n> code\n\n# after", "```js `tick`\n\n# not a fence opener",
]


@given(st.lists(st.sampled_from(BLOCKS), min_size=1, max_size=40), st.sampled_from(["\n\n", "\n", "\n\n\n"]))
@settings(max_examples=300, deadline=None, derandomize=True)
def test_parsing_a_long_document_in_parts_gives_the_same_chunks(blocks, separator):
    text = separator.join(blocks)
    whole = [(c.start, c.end, c.metadata["heading_path"]) for c in markdown.chunk(text, chunk_size=40)]
    saved, markdown_blocks.PART_CHARS = markdown_blocks.PART_CHARS, 20  # cut wherever cutting is allowed
    try:
        parts = [(c.start, c.end, c.metadata["heading_path"]) for c in markdown.chunk(text, chunk_size=40)]
    finally:
        markdown_blocks.PART_CHARS = saved
    assert parts == whole


def wide_table(columns: int, rows: int) -> str:
    header = "| " + " | ".join(f"column {i}" for i in range(columns)) + " |"
    delimiter = "|" + "---|" * columns
    body = ["| " + " | ".join(f"{r}.{i}" for i in range(columns)) + " |" for r in range(rows)]
    return "# Wide\n\n" + "\n".join([header, delimiter, *body]) + "\n"


@pytest.mark.parametrize("columns, rows", [(20, 200), (3000, 3), (30_000, 1)])
def test_a_repeated_table_header_is_bounded_however_wide_the_table(columns, rows):
    text = wide_table(columns, rows)
    chunks = markdown.chunk(text, chunk_size=64)
    headers = [c.metadata["table_header"] for c in chunks if "table_header" in c.metadata]
    assert headers and all(len(row) <= markdown.HEADER_ROW_CHARS for h in headers for row in h.split("\n"))
    longest = len("Wide") + 2 + 2 * markdown.HEADER_ROW_CHARS + 1  # the path, a blank line, two rows
    assert max(len(c.context) for c in chunks) <= longest  # was the whole header: 4,459x the text on 295 KB
    if columns == 20:  # a table of ordinary width repeats its header whole
        assert headers[0] == "\n".join(text.split("\n")[2:4])


def test_a_split_table_finds_its_header_once(monkeypatch):
    calls = []
    found = markdown._header_rows
    monkeypatch.setattr(markdown, "_header_rows", lambda *a: calls.append(a) or found(*a))
    chunks = markdown.chunk(wide_table(20, 500) + "\n" + wide_table(10, 300).replace("# Wide", "# Second"),
                            chunk_size=64)
    assert len(chunks) > 50 and len(calls) == 2
