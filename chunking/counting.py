"""Exact cl100k token counts of chunks, without re-encoding the text they are made of.

A chunker must prove every chunk fits, but encoding each candidate chunk again costs a
second pass over the text (and more when a chunk is re-tried). The fact that saves it:
1. Two places are boundaries of cl100k's pre-tokenizer in *any* text: a space followed by a
   character that is not whitespace, and the end of a line break ("\n") followed by one. The
   pattern has no look-behind, and none of its alternatives takes either pair: letters and
   punctuation may start with that space but take no whitespace after their first character
   (letters refuse a "\n" before them, punctuation takes line breaks only at its end), digits and
   contractions take none, and a whitespace run leaves its last space to what follows or ends at
   its last line break — the pattern's whitespace lying within `str.isspace`. BPE never merges
   across these boundaries, the *seams*: a text's token count is the sum of its parts' counts.
2. `TokenCounter` encodes a region once (the whole text, shared by every level of a
   recursive split). A span's count is the region's tokens between the span's first and last
   seam, plus its first and last word encoded alone — nothing to encode when the span starts
   and ends at seams or at the region's edges. `estimate` gives many spans at once the tokens
   that end inside them (or in the gap after them): close, and what packing grows chunks by
   before settling exactly.
3. `chunking.sizers.Tokens` keeps, for one chunking call, these counters and every edge word they
   have encoded (the same few words recur: " The", " and").
Text with no seams (CJK, one long word) is simply encoded; a span across a cut the region's
encoding had to make inside a long seamless stretch (see `tokens.seam_cuts`) too. `count` equals
`count_tokens(text[start:end])` exactly; tests/test_counting.py checks that on random text.
This is specific to cl100k_base's pre-tokenizer pattern; other units are measured directly.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

import numpy as np

from chunking.tokens import PART_CHARS, count_tokens, token_boundaries
from chunking.types import Span

SEARCH_LIMIT = 32  # spaces or line breaks before whitespace ("    "), to skip before encoding a span whole
LINE_WINDOW = 512  # characters searched for a line seam from a span's edge (a table's rows are shorter)


class TokenCounter:
    """Counts of any span inside one region of `text`, from a single encoding of the region."""

    def __init__(self, text: str, start: int = 0, end: int | None = None, *, encoded=count_tokens,
                 threads: int = 1, part_chars: int = PART_CHARS) -> None:
        end = len(text) if end is None else end
        self.text, self.start, self.end, self.encoded = text, start, end, encoded
        self.bytes, chars, self.aligned, forced = token_boundaries(text[start:end], threads=threads,
                                                                  part_chars=part_chars)
        self.chars = chars + start if start else chars  # every token boundary, as an offset of `text`
        self.forced = [start + cut for cut in forced]  # cuts inside long seamless stretches (rare)

    def estimate(self, spans: Sequence[Span]) -> list[int]:
        """For each span (in order), the region's tokens that end inside it or in the gap before the
        next span: every token is counted once, so a run of spans is off by a token or so at its edges.

        A token can end in a gap: cl100k has `".\n\n"` and `"-\n"`. Counted nowhere, text made of
        such tokens would estimate at zero, and packing would settle every chunk from far too long.
        """
        edges = np.asarray(spans, dtype=self.chars.dtype).reshape(-1, 2)  # one dtype: see `_boundary`
        upper = edges[:, 1].copy()
        upper[:-1] = np.maximum(upper[:-1], edges[1:, 0])
        ends = np.searchsorted(self.chars, upper, side="right")
        return (ends - np.searchsorted(self.chars, edges[:, 0], side="right")).tolist()

    def count(self, start: int, end: int) -> int:
        """Exactly `count_tokens(text[start:end])`, for a span inside the region."""
        first = start if self._cuts_at(start) else first_seam(self.text, start, end)
        if first is None:
            return self.encoded(self.text[start:end])
        last = end if self._cuts_at(end) else last_seam(self.text, first, end)
        if self.forced and bisect.bisect_right(self.forced, first) < bisect.bisect_left(self.forced, last):
            return self.encoded(self.text[start:end])  # a forced cut inside: the region's tokens may be off there
        head = self.encoded(self.text[start:first]) if first > start else 0
        tail = self.encoded(self.text[last:end]) if last < end else 0
        return head + self._boundary(last) - self._boundary(first) + tail

    def _cuts_at(self, offset: int) -> bool:
        """Does the region's encoding split at `offset` as any text would: its ends, or a seam?"""
        if offset in (self.start, self.end):
            return True
        text = self.text
        if text[offset - 1] == "\n":
            return not text[offset].isspace()
        return text[offset] == " " and offset + 1 < self.end and not text[offset + 1].isspace()

    def _boundary(self, offset: int) -> int:
        """Index of the token boundary at `offset` (the last one: earlier ones end mid-character)."""
        # the needle in the array's own dtype: a mixed-type search would copy the whole array each time
        return int(self.chars.searchsorted(self.chars.dtype.type(offset), "right")) - 1


def first_seam(text: str, start: int, end: int) -> int | None:
    """A seam in `text[start:end]` followed by a character of the span — the first one, unless the
    spaces or line breaks to skip ran out (`SEARCH_LIMIT`) or a line is long (`LINE_WINDOW`) — or None."""
    line = _line_seam(text, start, min(end - 1, start + LINE_WINDOW))
    space = _space_seam(text, start, end - 1 if line is None else line)  # only an earlier one helps
    return line if space is None else space


def last_seam(text: str, first: int, end: int) -> int:
    """The last seam in `text[first:end]` (as far as `first_seam` looks), given `first`, a seam
    (returned if no other is found)."""
    line, at = first, end - 1
    for _ in range(SEARCH_LIMIT):
        at = text.rfind("\n", max(first, end - 1 - LINE_WINDOW), at)
        if at == -1:
            break
        if not text[at + 1].isspace():
            line = at + 1
            break
    at = end - 1  # then a space seam past it (`text[line]` is not whitespace unless `line` is `first`)
    for _ in range(SEARCH_LIMIT):
        at = text.rfind(" ", max(line, first + 1), at)
        if at == -1:
            break
        if not text[at + 1].isspace():
            return at
    return line


def _space_seam(text: str, start: int, stop: int) -> int | None:
    """The first space in `text[start:stop]` followed by a non-whitespace character (which may lie at `stop`)."""
    at = start
    for _ in range(SEARCH_LIMIT):
        at = text.find(" ", at, stop)
        if at == -1:
            return None
        if not text[at + 1].isspace():
            return at
        at += 1
    return None


def _line_seam(text: str, start: int, stop: int) -> int | None:
    """The offset after the first line break in `text[start:stop]` followed by a non-whitespace character."""
    at = start
    for _ in range(SEARCH_LIMIT):
        at = text.find("\n", at, stop)
        if at == -1:
            return None
        if not text[at + 1].isspace():
            return at + 1
        at += 1
    return None
