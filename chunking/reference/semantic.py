"""Semantic chunking, the plain version: cut where the meaning of neighbouring sentences shifts.

1. Split the text into sentences (a compact splitter of our own, or any `split` passed in).
2. Embed every sentence once with `embed(list[str]) -> array (n, dim)`; the distance across each
   boundary is 1 - the cosine similarity of the vectors on either side.
3. A boundary is a breakpoint when its distance is above the `threshold_percentile` percentile of
   all the distances (95: only the sharpest 5% of shifts cut).
4. Between breakpoints, pack whole sentences greedily while the chunk's real cl100k_base token
   count stays within `chunk_size`. A sentence too big alone is cut at words, a word too big alone
   into windows of its own tokens.

What `chunking/semantic.py` adds: other thresholds (a fixed distance, mean + k·std, Q3 + k·IQR, a
percentile of the gradient, one searched for a `target_size`), distances between windows of several
sentences, overlap, `min_chunk_size` merging of slivers, metadata saying why each chunk ended, an
embedder that batches by length and caches on disk, and token counts from one encoding of the text
(here each candidate chunk is re-encoded: fine for a page, slow for 10 MB). Our splitter cuts after
every `. ! ? …` before whitespace, after `。！？` and at blank lines; the engine's knows abbreviations,
initials, list items and titles. Given its splitter (`split=chunking.segment.split_sentences`) and
the same vectors, the spans are the engine's. Taught in notebook 07.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable

import numpy as np
import tiktoken

Span = tuple[int, int]
# A sentence ends after . ! ? … (and closing quotes or brackets) before whitespace, after 。！？, or at a blank line.
SENTENCE_END = re.compile(r"(?<![.!?…])[.!?…]+[\"'”’)\]]*(?=\s)|[。！？]+[」』）]*|\n[ \t]*\n")


def chunk(
    text: str, chunk_size: int, embed: Callable[[list[str]], np.ndarray],
    *, threshold_percentile: float = 95.0, split: Callable[[str], list[Span]] | None = None,
) -> list[Span]:
    """Spans of `text` cut at the sharpest shifts of meaning, each at most `chunk_size` tokens."""
    _check(text, chunk_size, threshold_percentile)
    sentences = (split or split_sentences)(text)
    if len(sentences) < 2:  # one sentence has no boundary to measure: no need to embed
        return _pack(text, sentences, chunk_size, _split_sentence)
    dist = distances([text[s:e] for s, e in sentences], embed)
    ends = np.flatnonzero(dist > np.percentile(dist, threshold_percentile))  # a chunk ends after sentence i
    bounds = [0, *(ends + 1).tolist(), len(sentences)]
    spans = []
    for first, stop in zip(bounds, bounds[1:]):  # each run between breakpoints is packed on its own
        spans += _pack(text, sentences[first:stop], chunk_size, _split_sentence)
    return spans


def distances(sentences: list[str], embed: Callable[[list[str]], np.ndarray]) -> np.ndarray:
    """1 - cosine similarity of each sentence's vector with the next one's: n - 1 values in [0, 2]."""
    vectors = np.asarray(embed(sentences), dtype=np.float64)
    if vectors.ndim != 2 or len(vectors) != len(sentences):
        raise ValueError(f"embed must return an array of shape ({len(sentences)}, dim), got shape {vectors.shape}")
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)  # a zero vector stays zero
    return np.clip(1.0 - np.sum(vectors[:-1] * vectors[1:], axis=1), 0.0, 2.0)


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


def _check(text: object, chunk_size: object, threshold_percentile: object) -> None:
    if not isinstance(text, str):
        raise TypeError(f"text must be str, got {type(text).__name__}: {text!r:.60}")
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int):
        raise TypeError(f"chunk_size must be an int, got {chunk_size!r}")
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be > 0, got {chunk_size!r}")
    if isinstance(threshold_percentile, bool) or not isinstance(threshold_percentile, (int, float)) or not (
        0 <= threshold_percentile <= 100
    ):
        raise ValueError(f"threshold_percentile must be a number in [0, 100], got {threshold_percentile!r}")
