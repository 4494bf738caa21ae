"""The invariants every strategy must keep, checked on its chunks (tests, notebooks, your own code).

`check_chunks` verifies, for chunks of one source: `source[start:end] == text`; spans inside the
source and non-empty; starts and ends in order; indices `0..n-1`; no whitespace-only chunk;
every non-whitespace character of the source in some chunk; and, given a length and a size, the
size bound — but for a chunk of one code point, the documented exception. It raises one
`ValueError` listing every broken invariant (the first ten). Taught in notebook 00.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from chunking.types import Chunk


def check_chunks(
    source: str,
    chunks: Sequence[Chunk],
    *,
    chunk_size: int | None = None,
    length: Callable[[str], int] | None = None,
    coverage: bool = True,
) -> None:
    """Raise `ValueError` listing every broken invariant; return `None` when all hold.

    Checks: `source[start:end] == text`; `0 <= start < end <= len(source)`; starts and ends
    non-decreasing; indices `0..n-1`; no whitespace-only chunk; with `coverage`, every
    non-whitespace character of `source` inside some chunk; with `chunk_size` and `length`,
    `length(text) <= chunk_size` for every chunk but one of a single code point (the documented
    exception: a code point that alone measures more than `chunk_size` gets a chunk of its own).
    """
    problems = []
    for i, c in enumerate(chunks):
        if c.index != i:
            problems.append(f"chunk {i}: index is {c.index}, expected {i}")
        if not 0 <= c.start < c.end <= len(source):
            problems.append(f"chunk {i}: span ({c.start}, {c.end}) is empty or outside 0..{len(source)}")
        elif source[c.start : c.end] != c.text:
            problems.append(f"chunk {i}: text differs from source[{c.start}:{c.end}]")
        if not c.text.strip():
            problems.append(f"chunk {i}: text is whitespace only")
        if i and (c.start < chunks[i - 1].start or c.end < chunks[i - 1].end):
            problems.append(f"chunk {i}: span ({c.start}, {c.end}) is out of order")
        if chunk_size is not None and length is not None and len(c.text) > 1 and (n := length(c.text)) > chunk_size:
            problems.append(f"chunk {i}: length {n} exceeds chunk_size={chunk_size}")
    if coverage and (lost := _first_lost_character(source, chunks)) is not None:
        problems.append(f"character {lost} ({source[lost]!r}) is in no chunk")
    if problems:
        shown = "; ".join(problems[:10]) + (f"; … {len(problems) - 10} more" if len(problems) > 10 else "")
        raise ValueError(f"{len(problems)} chunk invariant(s) broken: {shown}")


def _first_lost_character(source: str, chunks: Sequence[Chunk]) -> int | None:
    """Offset of the first non-whitespace character no chunk covers, or None."""
    covered_to = 0
    for c in sorted(chunks, key=lambda c: c.start):
        if c.start > covered_to and source[covered_to : c.start].strip():
            gap = source[covered_to : c.start]
            return covered_to + len(gap) - len(gap.lstrip())
        covered_to = max(covered_to, c.end)
    tail = source[covered_to:]
    if tail.strip():
        return covered_to + len(tail) - len(tail.lstrip())
    return None
