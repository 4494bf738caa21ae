"""Sizers: how long a text is in a unit — the one boundary between strategies and counting.

Strategies only find boundaries (sentences, paragraphs, sections) and pack them; every question
about length goes through a sizer. `resolve_unit(unit)` turns the `unit` option into one:
`Characters`, `Tokens` (cl100k_base, or another tiktoken encoding), `Sentences` or `Measured`
(any callable); a model's own word-pieces are `chunking.embed.WordPieces`, a sizer too.
A chunking call binds the sizer to its text once (`sizer.bind(text)`) and asks the bound sizer:
1. `estimate(spans)` — about how long is each piece where it stands? (cheap: to grow a chunk)
2. `count(start, end)` — exactly how long is `text[start:end]` cut out on its own? (the proof)
3. `cuts(start, end)` — where may a window of the unit end (any character; token boundaries on
   character edges), and how many units come before each place? (`chunking.windows` cuts them)
Sizers only measure. The speed lives here and only here: the tokens sizer encodes the text once (in parts, on
`threads` threads) and counts any span exactly from that one encoding (`chunking.counting`);
the others measure directly. `last_fitting` is the one search every sizer and packer uses.
Taught in notebook 01 (and by each notebook's choice of unit).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import tiktoken

from chunking.tokens import ENCODING_NAME, PART_CHARS, count_tokens, get_encoding, usable_threads
from chunking.types import Span

Cuts = tuple[Sequence[int], Sequence[int] | None]  # offsets where a window may end; units before each (or None)
UNITS = ("tokens", "characters", "sentences")


class Sizer:
    """A unit of length: `size(text)`, and `bind(text)` for what one chunking call asks about `text`."""

    name = "unit"

    def size(self, text: str) -> int:
        raise NotImplementedError

    def __call__(self, text: str) -> int:
        return self.size(text)

    def bind(self, text: str) -> Bound:
        return Bound(self, text)

    def __repr__(self) -> str:  # stable: configurations and collection names include it
        return f"{type(self).__name__}()"


class Bound:
    """A sizer bound to the text of one chunking call; what it learns (encodings, counts) dies with it.

    `additive`: is a span's length its end minus its start (characters)? Then packing can find where
    a chunk ends by offsets alone.
    """

    additive = False

    def __init__(self, sizer: Sizer, text: str) -> None:
        self.sizer, self.text = sizer, text

    def estimate(self, spans: Sequence[Span]) -> list[int]:
        """Each span's length where it stands (here: exactly, each measured on its own)."""
        return [self.count(s, e) for s, e in spans]

    def count(self, start: int, end: int) -> int:
        """The length of `text[start:end]` cut out on its own."""
        return self.sizer.size(self.text[start:end])

    def cuts(self, start: int, end: int) -> Cuts:
        """Where a window of the unit may end inside [start, end], and how many units come before
        each place (None: unknown, windows are then searched by counting)."""
        return range(start, end + 1), None


# --- the sizers -------------------------------------------------------------------------------------


class Characters(Sizer):
    """Length in characters (Python code points)."""

    name = "characters"

    def size(self, text: str) -> int:
        return len(text)

    def bind(self, text: str) -> Bound:
        return _CharactersBound(self, text)


class _CharactersBound(Bound):
    additive = True

    def estimate(self, spans: Sequence[Span]) -> list[int]:
        """Each span with the gap after it: a run of spans then estimates at its extent (or a gap more)."""
        ends = [max(end, following) for (_, end), (following, _) in zip(spans, spans[1:])]
        return [e - s for (s, _), e in zip(spans, [*ends, spans[-1][1]])] if spans else []

    def count(self, start: int, end: int) -> int:
        return end - start

    def cuts(self, start: int, end: int) -> Cuts:
        return range(start, end + 1), range(0, end - start + 1)


class Sentences(Sizer):
    """Length in sentences (`chunking.segment.split_sentences`), counted on each chunk itself."""

    name = "sentences"

    def size(self, text: str) -> int:
        from chunking.segment import split_sentences

        return len(split_sentences(text))

    def bind(self, text: str) -> Bound:
        return _SentencesBound(self, text)


class _SentencesBound(Bound):
    def estimate(self, spans: Sequence[Span]) -> list[int]:
        return [1] * len(spans)  # the pieces are sentences; `count` re-splits a run to be sure


class Tokens(Sizer):
    """Length in tokens of a tiktoken encoding (cl100k_base by default, offline).

    For cl100k_base one chunking call encodes its text once — a long text in parts of about
    `part_chars` characters on `threads` threads (default: the usable cores, at most 4) — and counts
    any span exactly from that encoding, encoding at most its first and last word again
    (`chunking.counting`). Another encoding counts each span by encoding it.
    """

    def __init__(self, encoding: str | object = ENCODING_NAME, *, threads: int | None = None,
                 part_chars: int = PART_CHARS) -> None:
        from chunking.options import check_int

        self.encoding = get_encoding(encoding) if isinstance(encoding, str) else encoding
        if not callable(getattr(self.encoding, "encode_ordinary", None)):
            raise TypeError(f"encoding must be a tiktoken encoding or its name, got {encoding!r:.60}")
        self.threads = usable_threads() if threads is None else check_int("threads", threads)
        self.part_chars = check_int("part_chars", part_chars, 64)
        self.fast = self.encoding.name == ENCODING_NAME  # the seam argument holds for cl100k's pattern
        self.name = "tokens" if self.fast else f"tokens:{self.encoding.name}"

    def size(self, text: str) -> int:
        return count_tokens(text) if self.fast else len(self.encoding.encode_ordinary(text))

    def bind(self, text: str) -> Bound:
        return _TokensBound(self, text) if self.fast else Bound(self, text)

    def __repr__(self) -> str:
        return f"Tokens({self.encoding.name})"


class _TokensBound(Bound):
    """cl100k_base over one text: one encoding shared by every level of packing, counts memoised."""

    def __init__(self, sizer: Tokens, text: str) -> None:
        super().__init__(sizer, text)
        self.words: dict[str, int] = {}  # edge words encoded alone (" The", " and" recur)
        self.counters: dict[Span, object] = {}

    def counter(self, start: int = 0, end: int | None = None):
        """A `TokenCounter` over `text[start:end]`, made on first use."""
        from chunking.counting import TokenCounter

        region = (start, len(self.text) if end is None else end)
        if region not in self.counters:
            self.counters[region] = TokenCounter(self.text, *region, encoded=self._word, threads=self.sizer.threads,
                                                 part_chars=self.sizer.part_chars)
        return self.counters[region]

    def estimate(self, spans: Sequence[Span]) -> list[int]:
        return self.counter().estimate(spans) if len(spans) else []

    def count(self, start: int, end: int) -> int:
        return self.counter().count(start, end)

    def cuts(self, start: int, end: int) -> Cuts:
        counter = self.counter(start, end)  # its own encoding: the region's edges are token boundaries
        edges = np.flatnonzero(counter.aligned)  # cut only on character edges
        return counter.chars[edges], edges

    def _word(self, text: str) -> int:
        n = self.words.get(text)
        if n is None:
            n = self.words[text] = count_tokens(text)
        return n


class Measured(Sizer):
    """Length by any callable `str -> int`, checked on every call."""

    def __init__(self, function: Callable[[str], int]) -> None:
        self.function = function
        self.name = f"callable:{getattr(function, '__name__', type(function).__name__)}"

    def size(self, text: str) -> int:
        n = self.function(text)
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise TypeError(f"unit {self.name.split(':', 1)[1]} must return an int >= 0, got {n!r} for {text[:40]!r}")
        return int(n)

    def __repr__(self) -> str:
        return f"Measured({self.name.split(':', 1)[1]})"


# What a strategy's `unit` option takes: a name in UNITS, a `Sizer`, a tiktoken encoding, or a callable
# str -> int (`resolve_unit` makes a sizer of any of them).
Unit = str | Sizer | tiktoken.Encoding | Callable[[str], int]


def resolve_unit(unit: Unit, *, sentences: bool = False) -> Sizer:
    """The sizer for a `unit` option: "tokens", "characters", "sentences" (where allowed), a `Sizer`
    (`chunking.embed.WordPieces(tokenizer)` is one), a tiktoken encoding, or any callable `str -> int`."""
    if isinstance(unit, Sizer):
        if isinstance(unit, Sentences) and not sentences:
            raise ValueError("unit='sentences' is only for the sentence and sliding strategies")
        return unit
    if isinstance(unit, str):
        if unit == "tokens":
            return Tokens()
        if unit == "characters":
            return Characters()
        if unit == "sentences":
            return resolve_unit(Sentences(), sentences=sentences)
    elif callable(getattr(unit, "encode_ordinary", None)):
        return Tokens(unit)
    elif hasattr(unit, "convert_tokens_to_ids"):  # a Hugging Face tokenizer is callable, but not a length
        raise TypeError("a tokenizer is not a unit: pass chunking.embed.WordPieces(tokenizer) to measure in its "
                        "word-pieces")
    elif callable(unit):
        return Measured(unit)
    raise ValueError(f"unit must be one of {UNITS}, a Sizer (such as chunking.embed.WordPieces), a tiktoken "
                     f"encoding or a callable str -> int, got {unit!r:.60}")


# --- the search every sizer and packer uses ----------------------------------------------------------


def last_fitting(fits: Callable[[int], bool], low: int, high: int, *, down: bool = False) -> int:
    """The largest x in [low, high] with fits(x), probing from one end in steps that double.

    Upwards, `fits(low)` is taken as known: probes go low + 1, low + 3, low + 7… With `down` they go
    high, high - 1, high - 3, high - 7…, and `low - 1` means nothing fits. Then halving between the
    last good and the first bad probe. So an estimate off by a piece costs two or three probes, and
    one off by many costs O(log) probes, not one per piece. For a `fits` that is not monotone the
    answer is a value seen to fit, perhaps not the largest.
    """
    if down:
        bad, step = high + 1, 1
        while not fits(probe := max(bad - step, low)):
            if probe == low:
                return low - 1
            step = 1 if bad > high else step * 2
            bad = probe
        good = probe
    else:
        good, bad, step = low, high + 1, 1
        while good + step < bad and fits(good + step):
            good, step = good + step, step * 2
        bad = min(bad, good + step)
    while bad - good > 1:
        middle = (good + bad) // 2
        good, bad = (middle, bad) if fits(middle) else (good, middle)
    return good


def first_fitting(fits: Callable[[int], bool], low: int, high: int) -> int:
    """The smallest x in [low, high] with fits(x), probing up from `low` as `last_fitting` does;
    `high` when nothing smaller fits (whether or not `high` itself does)."""
    if low >= high or fits(low):
        return min(low, high)
    bad, step = low, 1
    while bad + step < high and not fits(bad + step):
        bad, step = bad + step, step * 2
    good = min(bad + step, high)
    while good - bad > 1:
        middle = (good + bad) // 2
        bad, good = (bad, middle) if fits(middle) else (middle, good)
    return good
