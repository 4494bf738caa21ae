"""Words as search terms: what BM25 indexes and the extractive summary weighs.

`tokenize(text)` lowercases (Unicode case folding, NFKC), keeps runs of letters, digits, underscores
and combining marks (so "हिन्दी" is one word), drops English stopwords, and cuts runs of kana and CJK
ideographs — scripts written without spaces — into character bigrams. It does not stem, or know any
other language's stopwords. Used by `chunking.bm25` and the contextual strategy's summary.
"""

from __future__ import annotations

import functools
import re
import sys
import unicodedata

STOPWORDS = frozenset(
    "a about above after again against all am an and any are as at be because been before being below between "
    "both but by can could did do does doing down during each few for from further had has have having he her "
    "here hers herself him himself his how i if in into is it its itself just me more most my myself no nor not "
    "of off on once only or other our ours ourselves out over own same she should so some such than that the "
    "their theirs them themselves then there these they this those through to too under until up very was we "
    "were what when where which while who whom why will with would you your yours yourself yourselves".split()
)
# Kana and CJK ideographs: scripts written without spaces between words.
CJK = "\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
_CJK_RUN = re.compile(f"([{CJK}]+)|([^{CJK}]+)")


def tokenize(text: str) -> list[str]:
    """Lowercase word tokens of `text`, stopwords dropped, CJK runs as character bigrams.

    >>> tokenize("The E-4471 error: ef_search is 64, not 128!")
    ['e', '4471', 'error', 'ef_search', '64', '128']
    >>> tokenize("抹茶の点て方")
    ['抹茶', '茶の', 'の点', '点て', 'て方']
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be str, got {type(text).__name__}")
    tokens = []
    for word in _word_pattern().findall(unicodedata.normalize("NFKC", text).casefold()):
        for cjk, other in _CJK_RUN.findall(word):
            if cjk:
                tokens += [cjk[i : i + 2] for i in range(len(cjk) - 1)] or [cjk]
            elif (other := other.strip("_")) and other not in STOPWORDS:
                tokens.append(other)
    return tokens


@functools.cache
def _word_pattern() -> re.Pattern:
    """Runs of letters, digits, underscores and combining marks (Python's \\w alone splits "हिन्दी")."""
    marks, start = [], None
    for code in range(sys.maxunicode + 2):
        is_mark = code <= sys.maxunicode and unicodedata.category(chr(code))[0] == "M"
        if is_mark and start is None:
            start = code
        elif not is_mark and start is not None:
            marks.append(f"{re.escape(chr(start))}-{re.escape(chr(code - 1))}")
            start = None
    return re.compile(f"[^\\W_][\\w{''.join(marks)}]*")
