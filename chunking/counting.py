"""Exact cl100k token counts of chunks, without re-encoding the text they are made of.

A chunker must prove every chunk fits, but encoding each candidate chunk again costs a
second pass over the text (and more when a chunk is re-tried). The fact that saves it:
1. A space followed by a letter is a boundary of cl100k's pre-tokenizer in *any* text that
   contains both characters: the pattern has no look-behind, and each of its alternatives
   either starts at such a space or stops before it. BPE never merges across that boundary,
   so a text's token count is the sum of the counts of its parts cut at these *seams*.
2. `TokenCounter` encodes a region once; a span's count is then the region's tokens between
   the span's first and last seam, plus its first and last word encoded alone (nothing, when
   the span itself starts or ends at a seam or at the region's edge).
3. `PieceTokens` encodes each piece (sentence, paragraph) alone, once, and splits its count
   at its first and last seam; a run of pieces is then head + middles + the small junction
   strings between pieces (last word, whitespace, first word) + tail, from prefix sums.
   Every string is memoised by content, so repeated text is encoded once.
Text with no seams (CJK, one long word) is simply encoded. Both counts equal
`count_tokens(text[start:end])` exactly; tests/test_counting.py checks that on random text.
This is specific to cl100k_base's pre-tokenizer pattern; other units are measured directly.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import accumulate

import numpy as np

from chunking.tokens import count_tokens, token_boundaries

Span = tuple[int, int]
SEARCH_LIMIT = 32  # spaces before non-letters ("1 2 3 …") to skip before encoding a span whole


class TokenCounter:
    """Counts of any span inside one region of `text`, from a single encoding of the region."""

    def __init__(self, text: str, start: int = 0, end: int | None = None) -> None:
        end = len(text) if end is None else end
        self.text, self.start, self.end = text, start, end
        self.bytes, chars, self.aligned = token_boundaries(text[start:end])
        self.chars = chars + start if start else chars  # every token boundary, as an offset of `text`

    def count(self, start: int, end: int) -> int:
        """Exactly `count_tokens(text[start:end])`, for a span inside the region."""
        first = start if self._cuts_at(start) else first_seam(self.text, start, end)
        if first is None:
            return count_tokens(self.text[start:end])
        last = end if self._cuts_at(end) else last_seam(self.text, first, end)
        head = count_tokens(self.text[start:first]) if first > start else 0
        tail = count_tokens(self.text[last:end]) if last < end else 0
        return head + self._boundary(last) - self._boundary(first) + tail

    def _cuts_at(self, offset: int) -> bool:
        """Does the region's encoding split at `offset` as any text would: its ends, or a seam?"""
        if offset in (self.start, self.end):
            return True
        return self.text[offset] == " " and offset + 1 < self.end and self.text[offset + 1].isalpha()

    def _boundary(self, offset: int) -> int:
        """Index of the token boundary at `offset` (the last one: earlier ones end mid-character)."""
        # the needle in the array's own dtype: a mixed-type search would copy the whole array each time
        return int(np.searchsorted(self.chars, self.chars.dtype.type(offset), side="right")) - 1


class TokenMemo:
    """Token counts and piece summaries memoised by content, for the length of one chunking call.

    `resolve_unit("tokens")` makes a fresh one, so nothing carries over between calls.
    """

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self.pieces: dict[str, tuple[int, int, int, tuple[int, int] | None]] = {}

    def count(self, text: str) -> int:
        """`count_tokens(text)`, encoded once per distinct text."""
        n = self.counts.get(text)
        if n is None:
            n = self.counts[text] = count_tokens(text)
        return n

    def piece(self, text: str) -> tuple[int, int, int, tuple[int, int] | None]:
        """(tokens, tokens before the first seam, tokens after the last seam, the two seams or None)."""
        summary = self.pieces.get(text)
        if summary is None:
            n, first = self.count(text), first_seam(text, 0, len(text))
            if first is None:
                summary = (n, n, 0, None)
            else:
                last = last_seam(text, first, len(text))
                summary = (n, self.count(text[:first]), self.count(text[last:]), (first, last))
            self.pieces[text] = summary
        return summary


class PieceTokens:
    """Counts of runs of consecutive `pieces` of `text`: `sizes[k]` alone, `count(i, j)` exact."""

    def __init__(self, text: str, pieces: Sequence[Span], memo: TokenMemo | None = None) -> None:
        self.text, self.pieces = text, pieces
        self.memo = memo or TokenMemo()
        self.sizes, self.heads, self.tails, self.seams, middles = [], [], [], [], []
        for s, e in pieces:
            n, head, tail, seams = self.memo.piece(text[s:e])
            self.sizes.append(n)
            self.heads.append(head)
            self.tails.append(tail)
            self.seams.append(seams and (s + seams[0], s + seams[1]))
            middles.append(n - head - tail)
        self._prefix_middles(middles)

    def estimate(self, i: int, j: int) -> int:
        """The pieces' own counts added up: near the truth, short of the whitespace between them."""
        return self._sizes_before[j + 1] - self._sizes_before[i]

    def count(self, i: int, j: int) -> int:
        """Exactly `count_tokens(text[pieces[i][0]:pieces[j][1]])`."""
        a, b = self._next_seamed[i], self._last_seamed[j]
        start, end = self.pieces[i][0], self.pieces[j][1]
        encoded = self.memo.count
        if a > j:  # no seam in the run
            return encoded(self.text[start:end])
        head = self.heads[i] if a == i else encoded(self.text[start : self.seams[a][0]])
        tail = self.tails[j] if b == j else encoded(self.text[self.seams[b][1] : end])
        middle = self._middles_through[b] - self._middles_through[a] + self._middles[a]
        return head + middle + tail

    def _prefix_middles(self, middles: list[int]) -> None:
        """Running totals of middles and junctions over the pieces that have seams."""
        n = len(self.pieces)
        self._middles = middles
        self._sizes_before = [0, *accumulate(self.sizes)]
        self._middles_through = [0] * n  # middles and junctions from the first seamed piece to k
        self._next_seamed, self._last_seamed = [n] * (n + 1), [-1] * n
        previous, total = None, 0
        for k, seam in enumerate(self.seams):
            if seam:
                if previous is not None:
                    total += self.memo.count(self.text[self.seams[previous][1] : seam[0]])
                total += middles[k]
                previous = k
            self._middles_through[k] = total
            self._last_seamed[k] = -1 if previous is None else previous
        for k in range(n - 1, -1, -1):
            self._next_seamed[k] = k if self.seams[k] else self._next_seamed[k + 1]


def first_seam(text: str, start: int, end: int) -> int | None:
    """The first space in `text[start:end]` followed by a letter also in the span, or None."""
    at = start
    for _ in range(SEARCH_LIMIT):
        at = text.find(" ", at, end - 1)
        if at == -1:
            return None
        if text[at + 1].isalpha():
            return at
        at += 1
    return None


def last_seam(text: str, first: int, end: int) -> int:
    """The last seam in `text[first:end]`, given `first`, the first one (returned if no other)."""
    at = end - 1
    for _ in range(SEARCH_LIMIT):
        at = text.rfind(" ", first + 1, at)
        if at == -1:
            break
        if text[at + 1].isalpha():
            return at
    return first
