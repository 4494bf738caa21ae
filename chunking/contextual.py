"""Contextual chunking: each chunk keeps its exact span and gains a context that situates it.

1. Start from chunks of any strategy (`chunking.chunk(text, "contextual", base="recursive", ...)`
   makes them with the given `chunk_size` and unit), so the size bound holds on the source text;
   the context comes on top of it. This module imports no other strategy: it is given the chunks.
2. Give every chunk a context from one provider:
   - "heading": the document title and the headings above the chunk ("Guide > Install > Linux");
     from the markdown strategy's heading paths, or else from the section holding most of the chunk;
   - "summary": the title and an extractive summary of the whole document — its most central
     sentences by TF-IDF, in document order, at most 80 tokens — the same for every chunk, offline;
   - "llm": a chat model writes it from the document and the chunk, as in Anthropic's Contextual
     Retrieval (an `llm` such as `chunking.llm.ChatContextualizer`), one call per chunk.
3. The context goes in `chunk.context`, so `embed_text` is context + blank line + text for the
   embedder and for BM25 (`chunking.bm25`); `text`, offsets and ids stay exact.
   `metadata["context_tokens"]` counts the context, which shares the embedder's window with the text.

Trade-offs: headings are free but say nothing in a document without them; a summary tells the topic,
not the place; the LLM tells both but costs a model call per chunk. A small embedder can lose more than
it gains: with MiniLM on the bundled corpus, heading and summary contexts did not cut dense retrieval
failures, while BM25 over `embed_text` did (`benchmarks/contextual_failures.py`). It does not rerank.
Taught in notebook 09.
"""

from __future__ import annotations

import bisect
import math
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from chunking import blocks
from chunking.blocks import PATH_SEPARATOR
from chunking.documents import document_title
from chunking.options import check_int, check_text
from chunking.segment import split_sentences
from chunking.terms import tokenize
from chunking.tokens import count_tokens, token_boundaries
from chunking.types import Chunk, make_chunks

STRATEGY = "contextual"
PROVIDERS = ("heading", "summary", "llm")
SUMMARY_SENTENCES = 3
SUMMARY_TOKENS = 80  # about 60 English words
MIN_SENTENCE_TERMS = 5  # shorter "sentences" are headings, labels and table cells
Contextualizer = Any  # anything with `contextualize(document: str, chunk: str) -> str`
PROSE = re.compile(r"[^#|`~].*[.!?。！？][)\]\"'”’*_]*", re.DOTALL)  # not a heading, table row or code


def chunk(
    text: str,
    *,
    chunks: Sequence[Chunk],
    provider: str = "heading",
    title: str | None = None,
    llm: Contextualizer | None = None,
) -> list[Chunk]:
    """`chunks` (of `text`, from any strategy) each with a `context` from `provider`; text, offsets and
    the document id unchanged, the base strategy's name in `metadata["base_strategy"]`.

    `title` defaults to the first markdown heading, else the first line. `llm` (provider "llm" only) is
    anything with `contextualize(document, chunk) -> str`, such as `chunking.llm.ChatContextualizer`.
    `chunking.chunk(text, "contextual", base="recursive", ...)` makes the base chunks and passes the
    default model for you.

    >>> from chunking import recursive
    >>> doc = "# Guide\\n\\nIntro.\\n\\n## Install\\n\\nRun it.\\n"
    >>> [(c.text, c.context) for c in chunk(doc, chunks=recursive.chunk(doc, chunk_size=6))]
    [('# Guide\\n\\nIntro.', 'Guide'), ('## Install\\n\\nRun it.', 'Guide > Install')]
    """
    text = check_text(text)
    check_provider(provider, llm, title)
    pieces = _checked_chunks(text, chunks)
    title = document_title(text) if title is None else title
    paths = heading_paths(text, pieces) if provider == "heading" else None
    if paths is not None:
        contexts = [PATH_SEPARATOR.join(_with_title(title, path)) for path in paths]
    elif provider == "summary":
        contexts = ["\n".join(part for part in (title, summarize(text)) if part)] * len(pieces)
    else:
        contexts = _llm_contexts(text, pieces, llm)
    metadata = [
        {**piece.metadata, **({"heading_path": paths[i]} if paths is not None else {}),
         "base_strategy": piece.strategy, "context_provider": provider, "context_tokens": count_tokens(context)}
        for i, (piece, context) in enumerate(zip(pieces, contexts))
    ]
    doc_id = pieces[0].doc_id if pieces else ""
    return make_chunks(text, [(c.start, c.end) for c in pieces], strategy=STRATEGY, doc_id=doc_id, metadata=metadata,
                       context=contexts)


def check_provider(provider: str, llm: object = None, title: object = None) -> None:
    """Refuse a provider, an `llm` or a `title` that `chunk` could not use (before any base chunking)."""
    if provider not in PROVIDERS:
        raise ValueError(f"provider must be one of {PROVIDERS}, got {provider!r}")
    if llm is not None and provider != "llm":
        raise ValueError(f"llm is used only with provider='llm', got provider={provider!r}")
    if provider == "llm" and llm is None:
        raise TypeError("provider='llm' needs an llm: pass a ChatContextualizer (chunking.llm), or call "
                        "chunking.chunk(text, 'contextual', provider='llm'), which passes the default one")
    if llm is not None and not callable(getattr(llm, "contextualize", None)):
        raise TypeError(f"llm must have a contextualize(document, chunk) method, got {type(llm).__name__}")
    if title is not None and not isinstance(title, str):
        raise TypeError(f"title must be a str or None, got {type(title).__name__}")


def heading_paths(text: str, chunks: Sequence[Chunk]) -> list[tuple[str, ...]]:
    """Each chunk's heading path: its own (markdown strategy) or the section holding most of it."""
    if all("heading_path" in c.metadata for c in chunks):
        return [tuple(c.metadata["heading_path"]) for c in chunks]
    sections = blocks.sections(text)
    starts = [s.blocks[0][0][0] for s in sections]
    ends = starts[1:] + [len(text)]
    paths = []
    for c in chunks:
        i = max(bisect.bisect_right(starts, c.start) - 1, 0)
        best, most = (), 0
        while i < len(sections) and starts[i] < c.end:
            shared = min(ends[i], c.end) - max(starts[i], c.start)
            if shared > most:  # strictly more: ties go to the earlier section
                best, most = sections[i].path, shared
            i += 1
        paths.append(best)
    return paths


def summarize(text: str, *, sentences: int = SUMMARY_SENTENCES, max_tokens: int = SUMMARY_TOKENS) -> str:
    """An extractive summary: the most central sentences by TF-IDF, in document order, cut to `max_tokens`.

    A sentence's centrality is its cosine similarity summed over all sentences — its dot product
    with the sum of all the (unit) sentence vectors — so it costs one pass, not all pairs.
    """
    check_int("sentences", sentences)
    check_int("max_tokens", max_tokens)
    candidates = []
    for start, end in split_sentences(text):
        sentence = " ".join(text[start:end].split())
        terms = tokenize(sentence)
        if len(terms) >= MIN_SENTENCE_TERMS and PROSE.fullmatch(sentence) and " | " not in sentence:
            candidates.append((sentence, Counter(terms)))
    document_frequency = Counter(term for _, counts in candidates for term in counts)
    n = len(candidates)
    vectors = [_unit({t: tf * (math.log((1 + n) / (1 + document_frequency[t])) + 1) for t, tf in counts.items()})
               for _, counts in candidates]
    total: Counter = Counter()
    for vector in vectors:
        total.update(vector)
    centrality = [round(sum(w * total[t] for t, w in v.items()), 9) for v in vectors]
    top = sorted(sorted(range(n), key=lambda i: (-centrality[i], i))[:sentences])
    summary = " ".join(candidates[i][0] for i in top)
    cut = truncate_to_tokens(summary, max_tokens)
    return cut if cut == summary else cut + "…"


def _checked_chunks(text: str, chunks: object) -> list[Chunk]:
    """`chunks` as a list, each a span of `text` from one document."""
    if isinstance(chunks, (str, Chunk)) or not isinstance(chunks, Sequence):
        raise TypeError(f"chunks must be a list of Chunk objects of text, got {type(chunks).__name__}")
    for i, c in enumerate(chunks):
        if not isinstance(c, Chunk) or text[c.start : c.end] != c.text or c.doc_id != chunks[0].doc_id:
            raise ValueError(f"chunks[{i}] is not a chunk of text from one document: {c!r:.80}")
    return list(chunks)


def _llm_contexts(text: str, pieces: list[Chunk], llm: Contextualizer) -> list[str]:
    contexts = []
    for piece in pieces:
        context = llm.contextualize(text, piece.text)
        if not isinstance(context, str):
            raise TypeError(f"llm.contextualize must return a str, got {type(context).__name__}")
        contexts.append(context.strip())
    return contexts


def _with_title(title: str, path: tuple[str, ...]) -> tuple[str, ...]:
    """The title above the heading path, unless the path already starts with it."""
    if not title or (path and path[0].strip().casefold() == title.strip().casefold()):
        return path
    return (title, *path)


def _unit(vector: dict[str, float]) -> dict[str, float]:
    norm = math.sqrt(sum(w * w for w in vector.values())) or 1.0
    return {t: w / norm for t, w in vector.items()}


def truncate_to_tokens(text: str, limit: int) -> str:
    """The longest start of `text` (stripped) within `limit` cl100k tokens, cut at a character edge
    (a prompt's document, a summary): at the last token boundary on a character edge after at most
    `limit` tokens, moved back while the cut-out start counts more (a token can split differently alone).

    >>> truncate_to_tokens("one two three four", 2)
    'one two'
    """
    text = text.strip()
    if count_tokens(text) <= limit:
        return text
    _, chars, aligned, _ = token_boundaries(text)
    edges = [int(chars[i]) for i in range(min(limit, len(chars) - 1), 0, -1) if aligned[i]]
    return next((start for edge in edges if count_tokens(start := text[:edge].rstrip()) <= limit), "")
