"""Text segmentation with exact offsets: paragraphs, lines, sentences, words.

Every splitter returns `(start, end)` spans of its input, trimmed of surrounding whitespace,
in order, non-empty, together covering every non-whitespace character. Whitespace between
spans belongs to no span; nothing else is ever dropped or rewritten.

The sentence splitter is hand-written and rule-based:
1. Candidate ends are runs of `.!?…‽` (then closing quotes/brackets) followed by
   whitespace, and CJK `。！？` anywhere; blank lines; line starts that open a list item or
   a markdown heading; a short title-like line followed by a capitalised line.
2. A Latin candidate is rejected when the next word starts in lowercase, when the word
   before is a title or reference abbreviation ("Dr.", "e.g.", "Fig.", "No."), a single
   initial ("J."), a list number ("1." at a line start), or an initialism ("U.S.") that is
   not followed by a typical sentence opener.
It does not know every abbreviation or language; `notebooks/02_sentence.ipynb` compares it
with pysbd and syntok on `data/eval/sentence_cases.jsonl`.
"""

from __future__ import annotations

import re

from chunking.types import Span, trim

NEWLINE = r"(?:\r\n|\r(?!\n)|\n)"  # CRLF is one line break, never two
BLANK_LINE = re.compile(rf"{NEWLINE}(?:[ \t\f\v]*{NEWLINE})+")
# A line's trimmed span: from its first to its last non-whitespace character (re's \s is str.isspace).
LINE_PIECE = re.compile(r"\S(?:[^\r\n]*\S)?")
# The same two for text without a "\r" (most text): a blank line then starts with one literal
# character, which re finds by a fast scan instead of trying an alternation at every position,
# and a line's run of [^\n] is a tight loop. Ten times faster on 1 MB of chat or code.
_BLANK_LINE_LF = re.compile(r"\n(?:[ \t\f\v]*\n)+")
_LINE_PIECE_LF = re.compile(r"\S(?:[^\n]*\S)?")

# Abbreviations (lowercase, without the final dot) after which a period...
# ...never ends a sentence: titles before names, Latin connectives.
NO_BREAK_AFTER = frozenset(
    "mr mrs ms mx dr prof sr rev gen col lt sgt capt gov sen rep hon mt ft approx ca cf vs v "
    "e.g i.e viz dept univ".split()
)
# ...does not end a sentence when a number follows ("Fig. 3", "No. 5", "Jan. 12").
BEFORE_NUMBER = frozenset(
    "fig figs eq eqs no nos vol vols pp p ch sec ref refs art jan feb mar apr jun jul aug sep "
    "sept oct nov dec".split()
)
# ...ends a sentence only when a typical sentence opener follows ("Elm St. It opens").
AMBIGUOUS = frozenset("st al etc inc ltd co corp jr bros".split())
# Words that typically open a sentence: after "U.S." or "a.m." they signal a real end.
SENTENCE_OPENERS = frozenset(
    "the a an we i it this that these those they he she there then but and so however in on "
    "at for if when after before our its his her their you what why how our my".split()
)
# Words that rarely end a heading-like line (so "the editors of\nThe Review" is one sentence).
FUNCTION_WORDS = frozenset("a an the of to in on at by for and or but with from as is are was".split())
# Every candidate starts with one of `_MARKS`. Each match first skips the characters that are not
# (possessive: in C, never re-tried), then is a candidate, or one mark that starts none (no group),
# or the text's end; so every match succeeds, and no position is scanned twice. (A pattern that
# starts with a look-ahead is tried at every position: twice the time.)
_MARKS = "。！？.!?‽…\r\n"
_CANDIDATE = re.compile(
    rf"""[^{_MARKS}]*+"""
    r"""(?:(?P<cjk>[。！？]+[」』）"'”’]*)"""
    # A run of end marks is tried from its first mark only (the look-behinds): tried from every
    # mark, a long run not followed by whitespace was rescanned to its end each time (quadratic).
    r"""|(?P<end>(?:(?<![.!?‽])[.!?‽]+|(?<!…)…+)[)\]"'”’»]*)(?=\s|$)"""
    rf"""|(?P<blank>{NEWLINE}(?:[ \t\f\v]*{NEWLINE})+)"""
    rf"""|(?P<item>{NEWLINE})(?=[ \t]*(?:[-*+•]|\d{{1,3}}[.)]|[A-Za-z][.)]|\#{{1,6}})[ \t])"""
    rf"""|(?P<line>{NEWLINE})(?=[ \t]*[A-Z0-9])"""
    rf"""|[{_MARKS}]|\Z)"""
)
_MARK = re.compile(rf"[{_MARKS}]")
_INITIALISM = re.compile(r"(?:[A-Za-z]\.){2,}$")
_LIST_NUMBER = re.compile(r"(?:^|\n|\r)[ \t]*\d{1,3}\.$")
_TITLE_MAX_WORDS = 10
_TITLE_MAX_CHARS = 200
_CJK_CLOSERS = "」』）\"'”’"
_HIRAGANA = re.compile(r"[\u3041-\u309f]")
_EMOJI = r"[\u2600-\u27bf\U0001F000-\U0001FAFF\u200d\ufe0f]"
_SYMBOLS = re.compile(rf"[ \t]*{_EMOJI}+(?=\s|$)")


def split_sentences(text: str) -> list[Span]:
    """Sentence spans of `text` (see the module docstring for the rules)."""
    cuts = []
    for m in _CANDIDATE.finditer(text):
        kind = m.lastgroup
        if kind is not None:
            cut = _confirmed(text, kind, m.start(kind), m.end())
            if cut is not None:
                cuts.append(cut)
    return _spans_between(text, cuts)


class SentenceEnds:
    """The sentence ends of `text` that a packer asks about, found and confirmed only where it asks.

    A packer needs one end near where each chunk must stop, so this class scans for candidates only
    in a window before that point (then in the rest of the chunk, if none there is confirmed), and
    asks the rules about a candidate once. `last_within(first, limit)` and `next_cut(first)` give the cuts
    `split_sentences(text)` makes, without splitting the whole text first.

    Why a scan may start mid-text: `_CANDIDATE`'s matches are contiguous, and a match's characters
    after its leading run of non-marks are marks, closing quotes/brackets or line breaks, or spaces
    between two line breaks. So a scan started where the previous character is a letter or digit, or
    whitespace before a non-space, finds exactly the full scan's candidates from there on (`_synced`
    picks such a position; a chunk's first character is always one; tests/test_segment.py checks).
    """

    WINDOW = 256  # characters scanned first before where a chunk must stop: a sentence or two of prose
    SYNC_LOOKBACK = 64  # characters stepped back at most to find where a scan may start

    def __init__(self, text: str) -> None:
        self.text = text
        self.confirmed = 0  # how many candidates the rules were asked about (work counts for tests)
        self.scanned = 0  # how many characters were scanned for candidates
        self._cuts: dict[int, int | None] = {}  # a candidate's end -> its cut, or None

    def last_within(self, first: int, limit: int) -> tuple[int, int] | None:
        """(cut, end of the sentence before it) for the last confirmed cut after `first` (a chunk's
        first character) whose sentence ends by `limit`, or None. A cut past `limit` can qualify only
        across whitespace (a line break)."""
        text = self.text
        limit = min(limit, len(text))
        stop = trim(text, limit, len(text))[0]  # a sentence ending by `limit` is cut by here
        begin = self._synced(max(first, limit - self.WINDOW), first)
        # The window before `limit` first; if no end there is confirmed, the rest of the chunk (once:
        # a scan runs on to the next end mark, which may be far, so windows are not widened step by step).
        for low, high in [(begin, stop), (first, begin)] if begin > first else [(first, stop)]:
            for kind, start, end in reversed(self._candidates(low, high)):
                cut = self._cut(kind, start, end)
                if cut is not None and cut > first:
                    last = trim(text, first, cut)[1]
                    if last <= limit:
                        return cut, last
        return None

    def next_cut(self, first: int) -> int:
        """The first confirmed cut after `first` (a chunk's first character), or the text's end."""
        for m in _CANDIDATE.finditer(self.text, first):
            kind = m.lastgroup
            if kind is not None:
                cut = self._cut(kind, m.start(kind), m.end())
                if cut is not None and cut > first:
                    self.scanned += m.end() - first
                    return cut
        self.scanned += len(self.text) - first
        return len(self.text)

    def _candidates(self, begin: int, stop: int) -> list[tuple[str, int, int]]:
        """(kind, start of its group, end) of the full scan's candidates from `begin` ending by `stop`."""
        if not _MARK.search(self.text, begin, stop):  # every candidate starts with a mark
            return []  # (and a scan would run on to the next mark, which may be far)
        found, end = [], begin
        for m in _CANDIDATE.finditer(self.text, begin):
            end = m.end()
            if end > stop:
                break
            if m.lastgroup:
                found.append((m.lastgroup, m.start(m.lastgroup), end))
        self.scanned += end - begin
        return found

    def _synced(self, position: int, floor: int) -> int:
        """A position in [floor, position] from which a scan finds the full scan's candidates: near
        `position`, else `floor` (which must be one)."""
        text = self.text
        for q in range(position, max(floor, position - self.SYNC_LOOKBACK), -1):
            before = text[q - 1]
            if before.isalnum() or before.isspace() and not text[q].isspace():
                return q
        return floor

    def _cut(self, kind: str, start: int, end: int) -> int | None:
        if end not in self._cuts:
            self.confirmed += 1
            self._cuts[end] = _confirmed(self.text, kind, start, end)
        return self._cuts[end]


def split_paragraphs(text: str) -> list[Span]:
    """Paragraph spans: blocks separated by one or more blank (whitespace-only) lines."""
    blank = BLANK_LINE if "\r" in text else _BLANK_LINE_LF
    # Each paragraph ends where its blank lines begin, so it is trimmed from a character that is
    # seldom whitespace (the trailing blank lines are not scanned again).
    starts, ends = [0], []
    for m in blank.finditer(text):
        ends.append(m.start())
        starts.append(m.end())
    ends.append(len(text))
    return [span for span in (trim(text, a, b) for a, b in zip(starts, ends)) if span[0] < span[1]]


def split_lines(text: str) -> list[Span]:
    """Line spans (CR, LF or CRLF line breaks); blank lines give no span."""
    return [m.span() for m in (LINE_PIECE if "\r" in text else _LINE_PIECE_LF).finditer(text)]


def split_words(text: str) -> list[Span]:
    """Whitespace-separated word spans."""
    return [m.span() for m in re.finditer(r"\S+", text)]


def _spans_between(text: str, cuts: list[int]) -> list[Span]:
    """Trimmed, non-empty spans between consecutive cut positions."""
    spans = []
    previous = 0
    for cut in [*cuts, len(text)]:
        start, end = trim(text, previous, cut)
        if start < end:
            spans.append((start, end))
        previous = max(previous, cut)
    return spans


def _confirmed(text: str, kind: str, start: int, end: int) -> int | None:
    """Where a candidate of `kind` (its group at `text[start:end]`) cuts the text, or None if it is no end."""
    if kind == "end":
        if not _ends_sentence(text, start, end):
            return None
        symbols = _SYMBOLS.match(text, end)  # "today! 🎉 Next" cuts after 🎉
        return symbols.end() if symbols else end
    if kind == "line":
        return end if _is_title_line(text, start) else None
    if kind != "cjk" or text[end - 1] not in _CJK_CLOSERS or not _HIRAGANA.match(text, end):
        return end  # not 「…。」と言った, where the quote is followed by a particle
    return None


def _ends_sentence(text: str, start: int, end: int) -> bool:
    """Is the punctuation run at `text[start:end]` (followed by whitespace) a real end?"""
    following = text[end : end + 40].lstrip()
    if not following:
        return True
    if following[0].islower() and not (len(following) > 1 and following[1].isupper()):
        return False  # a lowercase word continues the sentence; "eBay" or "iPhone" may start one
    if text[start] != "." or end - start > 1 and text[start + 1] == ".":
        return True  # "!", "?", a closing quote after the dot, or an ellipsis
    token = text[max(0, start - 40) : start + 1].rsplit(None, 1)[-1].lstrip("([\"'“‘")
    bare = token[:-1].lower()
    if bare in NO_BREAK_AFTER:
        return False
    if bare in BEFORE_NUMBER:
        return not following[0].isdigit()
    if bare in AMBIGUOUS:
        return _opens_sentence(following)
    if len(bare) == 1 and bare.isalpha() and token[0].isupper():
        return False  # an initial: "J. Smith"
    if bare.isdigit() and _LIST_NUMBER.search(text, max(0, start - 6), start + 1):
        return False  # a list marker: "1. Install"
    if "." in bare and _INITIALISM.search(token):
        return _opens_sentence(following)
    return True


def _opens_sentence(following: str) -> bool:
    word = re.match(r"[\w']+", following)
    return bool(word) and word.group(0).lower() in SENTENCE_OPENERS


def _is_title_line(text: str, newline_at: int) -> bool:
    """Does the line ending at `newline_at` look like a heading (short, no end punctuation)?"""
    lookback = max(0, newline_at - _TITLE_MAX_CHARS)  # bounded: a scan to the text's start is quadratic
    line_start = max(text.rfind("\n", lookback, newline_at), text.rfind("\r", lookback, newline_at)) + 1
    if line_start == 0 and lookback > 0:
        return False  # a line this long is not a title
    words = text[line_start:newline_at].split()
    return (
        0 < len(words) <= _TITLE_MAX_WORDS
        and words[-1][-1].isalnum()
        and words[-1].lower() not in FUNCTION_WORDS
    )


# The levels `chunking.packing.descend` cuts at, by name.
LEVELS = {"paragraphs": split_paragraphs, "lines": split_lines, "sentences": split_sentences, "words": split_words}
