"""Sizers: how long a text is in a unit — the one boundary between strategies and counting.

Strategies only find boundaries (sentences, paragraphs, sections) and pack them; every question
about length goes through a sizer. `resolve_unit(unit)` turns the `unit` option into one:
`Characters`, `Tokens` (cl100k_base, or another tiktoken encoding), `Sentences`, `WordPieces`
(a Hugging Face tokenizer, such as the embedding model's own) or `Measured` (any callable).
A chunking call binds the sizer to its text once (`sizer.bind(text)`) and asks the bound sizer:
1. `estimate(spans)` — about how long is each piece where it stands? (cheap: to grow a chunk)
2. `count(start, end)` — exactly how long is `text[start:end]` cut out on its own? (the proof)
3. `windows(start, end, size, overlap)` — windows of at most `size` units, cut only where the unit
   has edges (any character; token boundaries on character edges; any code point for a
   callable), each counted to fit: the fixed strategy, and every strategy's last resort.
The speed lives here and only here: the tokens sizer encodes the text once (in parts, on
`threads` threads) and counts any span exactly from that one encoding (`chunking.counting`);
the others measure directly. `last_fitting` is the one search every sizer and packer uses.
Taught in notebook 01 (and by each notebook's choice of unit).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Sequence

import numpy as np

from chunking.segment import trim as trim_span
from chunking.tokens import ENCODING_NAME, PART_CHARS, count_tokens, get_encoding, usable_threads

Span = tuple[int, int]
Cuts = tuple[Sequence[int], Sequence[int] | None]  # offsets where a window may end; units before each (or None)
UNITS = ("tokens", "characters", "sentences")
_NOT_SPACE = re.compile(r"\S")


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

    def windows(self, start: int, end: int, size: int, overlap: int = 0, word_safe: bool = False,
                trim: bool = False) -> list[Span]:
        """Windows over `text[start:end]` of at most `size` units, each next one starting `overlap`
        units before the previous one ended (at a word edge with `word_safe`); whitespace-only
        windows are dropped, and with `trim` the rest are trimmed of whitespace (a window that then
        measures more — "indirectly," is 4 tokens, " indirectly," 2 — is cut again). Each window
        is counted; a code point too big alone is a window alone.

        A unit that does not grow with the text (WordPiece reads a 101-character word as one
        `[UNK]`) can measure an overlap longer than the window it came from: a window that would
        not end past the previous one starts where the previous one ended instead.
        """
        offsets, units = self.cuts(start, end)
        spans: list[Span] = []
        i, previous = 0, -1  # the window's first cut; the last cut of the window before
        while i < len(offsets) - 1:
            j = self._window_end(offsets, units, i, size)
            if j is None:  # not even the next cut fits: the characters up to it, by code points
                spans += self._code_point_windows(offsets[i], offsets[i + 1], size)
                i, previous = i + 1, i + 1
                continue
            if j <= previous:
                i = previous
                continue
            spans.append((int(offsets[i]), int(offsets[j])))
            if j == len(offsets) - 1:
                break
            i, previous = self._next_start(offsets, units, i, j, overlap, word_safe), j
        spans = [(s, e) for s, e in spans if not self.text[s:e].isspace()]
        return self._trimmed(spans, size) if trim else spans

    def _trimmed(self, spans: list[Span], size: int) -> list[Span]:
        trimmed = []
        for s, e in spans:
            t = trim_span(self.text, s, e)
            trimmed += [t] if t == (s, e) or self.count(*t) <= size else self.windows(*t, size, trim=True)
        return trimmed

    def _window_end(self, offsets: Sequence[int], units, i: int, size: int) -> int | None:
        """The last cut after `i` whose window from cut `i` fits: at most `size` units on by the
        units (then counted, and moved back while too long), or searched by counting."""
        def fits(k: int) -> bool:
            return self.count(offsets[i], offsets[k]) <= size

        last = len(offsets) - 1
        if units is None:
            return last_fitting(fits, i + 1, last) if fits(i + 1) else None
        j = max(i + 1, _last_within(units, units[i] + size))
        if fits(j):
            return j
        j = last_fitting(fits, i + 1, j - 1, down=True) if j > i + 1 else i
        return j if j > i else None

    def _next_start(self, offsets: Sequence[int], units, i: int, j: int, overlap: int, word_safe: bool) -> int:
        """The cut the window after cuts (i, j) starts at: `overlap` units before j, but after i."""
        k = j
        if overlap and units is not None:
            k = _first_at_least(units, units[j] - overlap)
        elif overlap:
            k = j - last_fitting(lambda m: self.count(offsets[j - m], offsets[j]) <= overlap, 0, j - i - 1)
        k = max(k, i + 1)
        if word_safe:
            k = self._word_edge(offsets, k, j)
        return k

    def _word_edge(self, offsets: Sequence[int], k: int, j: int) -> int:
        """From cut k (before cut j): the first cut not inside a word — or, if whitespace follows it
        and a cut lies where the next word begins, that one. So a character window starts at the
        word itself, and a token window at the space its first token begins with."""
        text = self.text
        while k < j and _inside_word(text, offsets[k]):
            k += 1
        word = _NOT_SPACE.search(text, offsets[k], offsets[j]) if k < j else None  # bounded: no rescans
        m = _first_at_least(offsets, word.start()) if word else j
        return m if m < j and offsets[m] == word.start() else k

    def _code_point_windows(self, start: int, end: int, size: int) -> list[Span]:
        """The few characters between two neighbouring cuts (a token, or one character's tokens:
        128 bytes at most), cut by code points, each window as long as fits."""
        spans = []
        while start < end:
            stop = start + 1
            while stop < end and self.count(start, stop + 1) <= size:
                stop += 1
            spans.append((start, stop))
            start = stop
        return spans


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


class WordPieces(Sizer):
    """Length in a Hugging Face tokenizer's pieces, e.g. the embedding model's own.

    With `special_tokens` (the default) a text's length includes the pieces the model adds
    around every input ([CLS] and [SEP] for MiniLM), so `chunk_size` can equal the model's window
    (256 for all-MiniLM-L6-v2) and no chunk is ever truncated.
    """

    def __init__(self, tokenizer, *, special_tokens: bool = True) -> None:
        from chunking.options import check_flag

        if not callable(tokenizer) or not hasattr(tokenizer, "convert_tokens_to_ids"):
            raise TypeError(f"tokenizer must be a Hugging Face tokenizer, got {tokenizer!r:.60}")
        self.tokenizer, self.special_tokens = tokenizer, check_flag("special_tokens", special_tokens)
        self.extra = tokenizer.num_special_tokens_to_add() if special_tokens else 0
        self.name = f"word-pieces:{getattr(tokenizer, 'name_or_path', type(tokenizer).__name__)}"

    def size(self, text: str) -> int:
        return len(self.tokenizer(text, add_special_tokens=False)["input_ids"]) + self.extra

    def __repr__(self) -> str:
        return f"WordPieces({self.name.split(':', 1)[1]}, special_tokens={self.special_tokens})"


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


def resolve_unit(unit: object, *, sentences: bool = False) -> Sizer:
    """The sizer for a `unit` option: "tokens", "characters", "sentences" (where allowed), a `Sizer`,
    a tiktoken encoding, a Hugging Face tokenizer, or any callable `str -> int`."""
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
    elif hasattr(unit, "convert_tokens_to_ids"):
        return WordPieces(unit)
    elif callable(unit):
        return Measured(unit)
    raise ValueError(f"unit must be one of {UNITS}, a Sizer, a tiktoken encoding, a Hugging Face tokenizer or a "
                     f"callable str -> int, got {unit!r:.60}")


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


def _inside_word(text: str, at: int) -> bool:
    return 0 < at < len(text) and not text[at - 1].isspace() and not text[at].isspace()


def _last_within(units: Sequence[int], limit: int) -> int:
    """The index of the last unit count <= limit (units ascend)."""
    if isinstance(units, np.ndarray):
        return int(units.searchsorted(units.dtype.type(limit), "right")) - 1
    return bisect.bisect_right(units, limit) - 1


def _first_at_least(units: Sequence[int], value: int) -> int:
    """The index of the first unit count >= value (units ascend)."""
    if isinstance(units, np.ndarray):
        return int(units.searchsorted(units.dtype.type(max(value, 0)), "left"))
    return bisect.bisect_left(units, value)
