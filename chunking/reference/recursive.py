"""Recursive chunking, the plain version: split at the coarsest level that occurs, pack back up to size.

1. Cut the text at the first level of `separators` that occurs in it (a level leaving one piece is skipped).
2. Pack the pieces greedily: each chunk is the longest run of whole pieces whose text, cut out alone,
   has at most `chunk_size` tokens. With `chunk_overlap`, the next chunk starts with the previous
   one's trailing pieces totalling at most that many tokens (never all of them).
3. A piece too long alone is split at the next level, its parts packed among themselves: a chunk
   never straddles a boundary coarser than the one it was cut at.
4. Below the last level, token windows: the most whole tokens (at most `chunk_size`) that end on a
   character edge and fit; a character needing more than `chunk_size` tokens stands alone.

Compared with `chunking/recursive.py`: it encodes every candidate chunk again, where the engine
encodes the text once and counts any span from that (10 MB stays fast); it takes only level names and
tokens (the engine also literal and regex separators, other units, fraction overlaps). Its sentence
splitter is compact: it knows no abbreviation and cuts even before a lowercase word, so on the corpus
it also cuts after "vs." (in a line of coastal_sensor_report.md), "cf." and "e.g." (in a line of
greenfield_data_policy.txt); given the engine's sentence splitter as `levels`, its spans are the engine's.
Taught in notebook 06.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping, Sequence

import tiktoken

Span = tuple[int, int]
Splitter = Callable[[str], list[Span]]  # a text -> the trimmed spans of its pieces
SEPARATORS = ("paragraphs", "lines", "sentences", "words")
# Each level cuts its text after every match of its pattern.
PATTERNS = {
    "paragraphs": r"(?:\r\n|\r(?!\n)|\n)(?:[ \t\f\v]*(?:\r\n|\r(?!\n)|\n))+",  # CRLF is one line break, not two
    "lines": r"\r\n|\r|\n",
    "sentences": r"(?<![.!?…])[.!?…]+[\"')\]”’»]*(?=\s)|[。！？]+[」』）]*",
    "words": r"\s+",
}


def chunk(text: str, chunk_size: int, *, chunk_overlap: int = 0, separators: Sequence[str] = SEPARATORS,
          levels: Mapping[str, Splitter] | None = None) -> list[Span]:
    """Spans of `text`, each at most `chunk_size` cl100k tokens, cut at the coarsest levels that allow it.

    `levels` may replace a level's splitter, e.g. `{"sentences": chunking.segment.split_sentences}`.

    >>> chunk("One. Two.\\n\\nThree four five.", 3)  # paragraphs, then sentences, then words
    [(0, 4), (5, 9), (11, 21), (22, 27)]
    """
    _check(text, chunk_size, chunk_overlap)
    splitters = {name: functools.partial(_pieces, pattern) for name, pattern in PATTERNS.items()} | dict(levels or {})
    if isinstance(separators, str) or not all(name in splitters for name in separators):
        raise ValueError(f"separators must be a sequence of names from {sorted(splitters)}, got {separators!r}")
    return _split(text, 0, len(text), chunk_size, chunk_overlap, [splitters[name] for name in separators])


def _split(text: str, start: int, end: int, size: int, overlap: int, levels: list) -> list[Span]:
    """Chunks of `text[start:end]`, which may be too long, using `levels` in order."""
    start, end = _trim(text, start, end)
    if start >= end:
        return []
    if not levels:
        return _windows(text, start, end, size, overlap)
    pieces = [(start + a, start + b) for a, b in levels[0](text[start:end])]
    if len(pieces) == 1:  # this level does not occur here: try the next one
        return _split(text, start, end, size, overlap, levels[1:])
    return _pack(text, pieces, size, overlap, lambda a, b: _split(text, a, b, size, overlap, levels[1:]))


def _pack(text: str, pieces: list[Span], size: int, overlap: int, split_finer: Callable) -> list[Span]:
    """Greedy runs of whole pieces that fit; a piece too long alone goes to `split_finer`."""
    fits = lambda i, j: _fits(text, pieces[i][0], pieces[j][1], size)  # noqa: E731
    chunks: list[Span] = []
    first = new = 0  # the chunk's first piece (overlap included); the first piece no chunk holds yet
    while new < len(pieces):
        if not fits(new, new):  # its parts are packed among themselves, and no overlap crosses it
            chunks += split_finer(*pieces[new])
            first = new = new + 1
            continue
        while not fits(first, new):  # drop overlap that leaves no room for the new piece
            first += 1
        last = new
        while last + 1 < len(pieces) and fits(first, last + 1):
            last += 1
        chunks.append((pieces[first][0], pieces[last][1]))
        begun, first = first, last + 1
        while overlap and first - 1 > begun and _tokens(text[pieces[first - 1][0] : pieces[last][1]]) <= overlap:
            first -= 1
        new = last + 1
    return chunks


def _windows(text: str, start: int, end: int, size: int, overlap: int) -> list[Span]:
    """Token windows over `text[start:end]`: the longest run of at most `size` whole tokens that ends on
    a character edge and fits when cut out; if none does, its first such run is cut by code points.
    Each next window starts `overlap` tokens before the previous one ended (on a character edge)."""
    edges = _token_edges(text, start, end)
    spans, i = [], 0
    while True:
        (k, a), ends = edges[i], range(len(edges) - 1, i, -1)
        j = next((j for j in ends if edges[j][0] <= k + size and _fits(text, a, edges[j][1], size)), None)
        if j is None:  # a token (or one character's tokens) needs more than `size` alone: cut at code points
            j = i + 1
            spans += _pack(text, [(c, c + 1) for c in range(a, edges[j][1])], size, 0, lambda c, d: [(c, d)])
        else:
            spans.append((a, edges[j][1]))
        if j == len(edges) - 1:
            return spans
        i = next(q for q in range(i + 1, j + 1) if edges[q][0] >= max(edges[j][0] - overlap, k + 1))


def _token_edges(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """(tokens so far, character offset) at every token boundary of `text[start:end]` between characters."""
    encoding, data = _encoding(), text[start:end].encode("utf-8")
    edges, at, chars = [(0, start)], 0, start
    for k, token in enumerate(encoding.encode_ordinary(text[start:end]), 1):
        piece = encoding.decode_single_token_bytes(token)
        at += len(piece)
        chars += sum(1 for byte in piece if byte & 0xC0 != 0x80)  # a UTF-8 continuation byte starts no character
        if at == len(data) or data[at] & 0xC0 != 0x80:  # a token may end inside a character (an emoji)
            edges.append((k, chars))
    return edges


def _pieces(pattern: str, text: str) -> list[Span]:
    """The trimmed, non-empty pieces of `text` cut after every match of `pattern`."""
    cuts = [0, *(m.end() for m in re.finditer(pattern, text)), len(text)]
    return [span for a, b in zip(cuts, cuts[1:]) if (span := _trim(text, a, b))[0] < span[1]]


def _trim(text: str, start: int, end: int) -> Span:
    """`[start, end)` without its leading and trailing whitespace; `(end, end)` if nothing else is left."""
    piece = text[start:end]
    if not piece.strip():
        return end, end
    return start + len(piece) - len(piece.lstrip()), start + len(piece.rstrip())


def _fits(text: str, start: int, end: int, size: int) -> bool:
    return _tokens(text[start:end]) <= size


def _tokens(text: str) -> int:
    return len(_encoding().encode_ordinary(text))


@functools.cache
def _encoding() -> tiktoken.Encoding:
    return tiktoken.get_encoding("cl100k_base")


def _check(text: object, chunk_size: object, chunk_overlap: object) -> None:
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}: {text!r:.60}")
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size <= 0:
        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
    if isinstance(chunk_overlap, bool) or not isinstance(chunk_overlap, int) or not 0 <= chunk_overlap < chunk_size:
        raise ValueError(f"chunk_overlap must be an int >= 0 and < chunk_size={chunk_size}, got {chunk_overlap!r}")
