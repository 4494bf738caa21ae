"""Late chunking's pooling step, the plain version: one vector per span, from token vectors.

Late chunking runs the model over the document first and cuts afterwards, so each token's vector
was computed with its neighbours in view ("It" knows which mill it means). Given the model's
output, a vector and a character span for each of its tokens, what is left is:
1. For each span `[start, end)`, take the tokens whose character spans overlap it (a token cut by
   a span boundary counts for both spans).
2. Average their vectors and L2-normalise the mean; a span that holds no token gets zeros.
`chunk` also makes the spans: sentences packed up to `chunk_size` cl100k_base tokens, as
`chunking/sentence.py` does (the same spans, given its splitter through `split=`).

What `chunking/late.py` adds is the model's part: it tokenises the whole document with the model's
fast tokenizer (offsets give each word-piece its characters), runs the transformer over windows of
256 word-pieces ([CLS] and [SEP] included: MiniLM's limit) overlapping by 64, and keeps each piece's
vector from the window where it sits farthest from the edge. A span that holds no piece (NULs,
zero-width characters: the tokenizer drops them) is embedded on its own there, not given zeros.
It finds each span's pieces by binary search over the sorted piece spans; a mask reads more simply.
Taught in notebook 11.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable, Sequence

import numpy as np
import tiktoken

Span = tuple[int, int]
# A sentence ends after . ! ? … (and closing quotes or brackets) before whitespace, after 。！？, or at a blank line.
SENTENCE_END = re.compile(r"(?<![.!?…])[.!?…]+[\"'”’)\]]*(?=\s)|[。！？]+[」』）]*|\n[ \t]*\n")


def chunk(
    text: str, chunk_size: int, token_vectors: np.ndarray, token_spans: np.ndarray,
    *, split: Callable[[str], list[Span]] | None = None,
) -> tuple[list[Span], np.ndarray]:
    """Sentence-packed spans of `text` (each at most `chunk_size` tokens) and one pooled vector per span."""
    if not isinstance(text, str):
        raise TypeError(f"text must be str, got {type(text).__name__}: {text!r:.60}")
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int):
        raise TypeError(f"chunk_size must be an int, got {chunk_size!r}")
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be > 0, got {chunk_size!r}")
    spans = _pack(text, (split or split_sentences)(text), chunk_size, _split_sentence)
    return spans, pool(token_vectors, token_spans, spans)


def pool(token_vectors: np.ndarray, token_spans: np.ndarray, spans: Sequence[Span]) -> np.ndarray:
    """Mean of the vectors of the tokens overlapping each span, L2-normalised: shape (len(spans), dim)."""
    vectors = np.asarray(token_vectors, dtype=np.float64)
    edges = np.asarray(token_spans, dtype=np.int64).reshape(-1, 2)
    if vectors.ndim != 2 or len(vectors) != len(edges):
        raise ValueError(f"token_vectors must have shape (n, dim) for the n = {len(edges)} token_spans, "
                         f"got shape {vectors.shape}")
    out = np.zeros((len(spans), vectors.shape[1]))
    for i, (start, end) in enumerate(spans):
        inside = (edges[:, 1] > start) & (edges[:, 0] < end)  # overlaps [start, end) by a character at least
        if inside.any():
            mean = vectors[inside].mean(axis=0)
            out[i] = mean / max(float(np.linalg.norm(mean)), 1e-12)
    return out


def split_sentences(text: str) -> list[Span]:
    """Sentence spans: cut at every end mark followed by whitespace, CJK end mark and blank line."""
    cuts = [0, *(m.end() for m in SENTENCE_END.finditer(text)), len(text)]
    return [span for a, b in zip(cuts, cuts[1:]) if (span := _trim(text, a, b))[0] < span[1]]


def _pack(text: str, pieces: list[Span], size: int, cut: Callable[[str, Span, int], list[Span]]) -> list[Span]:
    """Greedy packing: grow a chunk while text[its start:next piece's end] fits; a piece too big alone is `cut`."""
    chunks: list[Span] = []
    growing = False  # may the last chunk take the next piece?
    for start, end in pieces:
        if _tokens(text[start:end]) > size:
            chunks += cut(text, (start, end), size)
            growing = False  # the parts of a cut piece stand alone: nothing is packed across them
        elif growing and _tokens(text[chunks[-1][0] : end]) <= size:
            chunks[-1] = (chunks[-1][0], end)
        else:
            chunks.append((start, end))
            growing = True
    return chunks


def _split_sentence(text: str, span: Span, size: int) -> list[Span]:
    """A sentence too big for a chunk: its words packed, a word too big cut into token windows."""
    words = [(span[0] + m.start(), span[0] + m.end()) for m in re.finditer(r"\S+", text[span[0] : span[1]])]
    return _pack(text, words, size, _token_windows)


def _token_windows(text: str, span: Span, size: int) -> list[Span]:
    """Windows of at most `size` tokens of the word's own encoding, each cut between two characters."""
    enc, word = _encoding(), text[span[0] : span[1]]
    char_at = dict(zip(itertools.accumulate((len(c.encode()) for c in word), initial=0), range(len(word) + 1)))
    byte_ends = itertools.accumulate(len(enc.decode_single_token_bytes(t)) for t in enc.encode_ordinary(word))
    # (tokens so far, offset in text) at every token boundary that falls between two characters
    cuts = [(0, span[0]), *((k + 1, span[0] + char_at[b]) for k, b in enumerate(byte_ends) if b in char_at)]
    spans, p = [], 0
    while p < len(cuts) - 1:
        # the farthest boundary within `size` tokens whose text, encoded alone, still fits
        q = next((q for q in range(len(cuts) - 1, p, -1)
                  if cuts[q][0] - cuts[p][0] <= size and _tokens(text[cuts[p][1] : cuts[q][1]]) <= size), None)
        a, b = cuts[p][1], cuts[q or p + 1][1]
        while a < b:  # one window; or, if not even the next character fits, its code points
            stop = b if q else next(k for k in range(b, a, -1) if k == a + 1 or _tokens(text[a:k]) <= size)
            spans.append((a, stop))
            a = stop
        p = q or p + 1
    return spans


def _trim(text: str, start: int, end: int) -> Span:
    piece = text[start:end]
    return start + len(piece) - len(piece.lstrip()), start + len(piece.rstrip())


def _tokens(text: str) -> int:
    return len(_encoding().encode_ordinary(text))  # special-token strings count as plain text


@functools.cache
def _encoding() -> tiktoken.Encoding:
    return tiktoken.get_encoding("cl100k_base")
