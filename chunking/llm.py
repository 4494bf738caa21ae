"""An LLM that writes chunk context, over any OpenAI-compatible chat-completions endpoint.

1. `ChatContextualizer.contextualize(document, chunk)` asks the model the question of Anthropic's
   Contextual Retrieval: the document inside <document> tags, the chunk inside <chunk> tags, then a
   request for a short, succinct context that situates the chunk in the document to improve its
   search retrieval, answered with that context alone. One POST to `{base_url}/chat/completions`,
   temperature 0, standard library only (urllib): Ollama, vLLM, llama.cpp's server and OpenAI all work.
2. `base_url` and `model` come from the arguments, else `$CHUNKING_LLM_BASE_URL` (default: Ollama on
   localhost) and `$CHUNKING_LLM_MODEL`. The API key is read from the environment variable named by
   `api_key_env` at each request and sent as a Bearer header — never stored, shown, cached or put in
   an error message.
3. Answers are cached on disk (SQLite, beside the embedding cache) by sha256 of (base URL, model,
   prompt), so a re-run never asks twice. `cache=False` or `CHUNKING_CACHE=off` turns it off.
4. A document over `max_document_tokens` is cut to its beginning, and the prompt says so. Keeping the
   head (not a window around each chunk) keeps the prompt prefix the same for every chunk of a
   document, so servers with prefix caching (vLLM, llama.cpp) read the document once.
5. Bounded: `timeout` (60 s) is one deadline for the whole request, on `time.monotonic`: connecting,
   TLS, sending, the status line, the headers and the body each wait only for the time left, so a
   server dripping a byte at a time fails at the deadline (`chunking.deadline`; the DNS lookup is the
   system's own). The body is read in blocks and refused past `MAX_REPLY_BYTES` (1 MiB); an error
   body is read up to `ERROR_DETAIL_BYTES` (64 KiB) for its message; redirects are refused. The context is the answer
   without its reasoning (`strip_reasoning`, linear), cut — not refused, see `_context` — to
   `MAX_CONTEXT_TOKENS` (1,000 cl100k tokens, 5x `max_tokens`).
6. Any failure — connection refused, timeout, HTTP error, a reply too big or not a chat completion —
   is one `RuntimeError` line naming the URL and the status.

`DryRun` stands in for the model and counts what a run would send (calls, prompt tokens) before you
pay for it. It does not retry, stream, follow redirects or run requests in parallel. Ollama silently
cuts prompts to its context window (4k tokens by default on small GPUs): raise `OLLAMA_CONTEXT_LENGTH`
or lower the limit. Prompt after Anthropic, "Introducing Contextual Retrieval" (September 2024),
https://www.anthropic.com/news/contextual-retrieval. Taught in notebook 09.
"""

from __future__ import annotations

import functools
import hashlib
import http.client
import json
import os
import re
import string
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

from chunking import deadline
from chunking.cache import open_cache
from chunking.contextual import truncate_to_tokens
from chunking.documents import valid_text
from chunking.options import check_int, check_number
from chunking.tokens import count_tokens

BASE_URL_ENV, MODEL_ENV = "CHUNKING_LLM_BASE_URL", "CHUNKING_LLM_MODEL"
DEFAULT_BASE_URL = "http://localhost:11434/v1"  # Ollama's OpenAI-compatible API
MAX_DOCUMENT_TOKENS = 6000
MAX_ANSWER_TOKENS = 200  # Anthropic's contexts run 50–100 tokens
# A reply of MAX_ANSWER_TOKENS is a few KB: 200 tokens of text, each character JSON-escaped to at most 6 bytes
# (\uXXXX), is ~5 KB beside a JSON envelope (id, usage, fingerprint) under 2 KB. Even 200 tokens of 128
# characters (cl100k's longest) all escaped would be 154 KB, so 1 MiB refuses only what no completion is.
MAX_REPLY_BYTES = 1 << 20
ERROR_DETAIL_BYTES = 64 << 10  # an error body is read this far for its message (OpenAI's and vLLM's are < 4 KB)
# A server that honours max_tokens sends MAX_ANSWER_TOKENS of its model's tokens at most, seldom worth two cl100k
# tokens each (more only in scripts cl100k reads byte by byte): 5x leaves a server that ignores max_tokens to cut.
MAX_CONTEXT_TOKENS = 5 * MAX_ANSWER_TOKENS
MAX_CONTEXT_CHARS = 8 * MAX_CONTEXT_TOKENS  # of an answer, the most the tokenizer reads (and a context can hold)
PROMPT = """<document>
{document}
</document>
{note}Here is a chunk of the document above that we want to place in context:
<chunk>
{chunk}
</chunk>
Write a short, succinct context that situates this chunk within the whole document, to improve search \
retrieval of the chunk. Reply with the context only, nothing else."""
TRUNCATION_NOTE = "(The document was cut to its first {limit} tokens; the chunk may come from the part not shown.)\n"
_FENCE = re.compile(r"</?\s*(?:document|chunk)\b", re.IGNORECASE)  # the prompt's own tags; linear: `\s*` stops at `<`
_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)  # keeps every offset, unlike str.lower
_BLOCK_BYTES = 64 << 10  # a body is read this much at a time


class ChatContextualizer:
    """Writes a chunk's context with a chat model behind an OpenAI-compatible endpoint.

    >>> ChatContextualizer("http://localhost:8000/v1", "qwen2.5:3b", cache=False)
    ChatContextualizer(base_url='http://localhost:8000/v1', model='qwen2.5:3b', api_key_env='OPENAI_API_KEY')
    """

    def __init__(
        self,
        base_url: str | None = None,
        model: str | None = None,
        *,
        api_key_env: str = "OPENAI_API_KEY",
        timeout: float = 60,
        cache: bool | str | Path = True,
        max_document_tokens: int = MAX_DOCUMENT_TOKENS,
    ) -> None:
        self.base_url = (base_url or os.environ.get(BASE_URL_ENV) or DEFAULT_BASE_URL).rstrip("/")
        if not self.base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must start with http:// or https://, got {self.base_url!r}")
        self.model = model or os.environ.get(MODEL_ENV) or ""
        if not self.model:
            raise ValueError(f"model must be given or set in ${MODEL_ENV} (e.g. 'qwen2.5:3b'), got {model!r}")
        if not isinstance(api_key_env, str) or not api_key_env:
            raise ValueError(f"api_key_env must name an environment variable, got {api_key_env!r}")
        self.api_key_env = api_key_env
        self.timeout = check_number("timeout", timeout, 1e-3)  # seconds for the whole request, not for each read
        self.max_document_tokens = check_int("max_document_tokens", max_document_tokens)
        self.url = f"{self.base_url}/chat/completions"
        self._cache = open_cache("contexts.sqlite", cache)

    def contextualize(self, document: str, chunk: str) -> str:
        """A short context situating `chunk` within `document`, from the model (or the cache)."""
        if not isinstance(document, str) or not isinstance(chunk, str):
            raise TypeError(f"document and chunk must be str, got {type(document).__name__} and {type(chunk).__name__}")
        prompt = self.prompt(document, chunk)
        key = hashlib.sha256(f"{self.base_url}\x00{self.model}\x00{prompt}".encode()).hexdigest()
        if self._cache is not None and (found := self._cache.get([key])):
            try:
                return found[key].decode("utf-8")
            except UnicodeDecodeError:  # a damaged row: ask again, and overwrite it
                pass
        answer = self._complete(prompt)
        if self._cache is not None:
            self._cache.put({key: answer.encode("utf-8")})
        return answer

    def prompt(self, document: str, chunk: str) -> str:
        """The exact user message sent for this document and chunk."""
        shown, cut = _shown(document, self.max_document_tokens)
        note = TRUNCATION_NOTE.format(limit=self.max_document_tokens) if cut else ""
        return PROMPT.format(document=_quoted(shown), note=note, chunk=_quoted(chunk))

    def __repr__(self) -> str:  # no key, ever: only the name of the variable that holds it
        return f"ChatContextualizer(base_url={self.base_url!r}, model={self.model!r}, api_key_env={self.api_key_env!r})"

    def _complete(self, prompt: str) -> str:
        """POST one chat completion and return its context (`_context`)."""
        body = {"model": self.model, "messages": [{"role": "user", "content": prompt}], "temperature": 0,
                "max_tokens": MAX_ANSWER_TOKENS}
        key = os.environ.get(self.api_key_env)
        raw = self._post(json.dumps(body).encode(), key)
        if (answer := _answer(raw)) is None:
            shown = raw.replace(key.encode(), b"***") if key else raw  # before the cut, which could halve the key
            self._fail(f"returned HTTP 200 but not a chat completion: {shown[:120]!r}", key)
        return _context(answer)

    def _post(self, data: bytes, key: str | None) -> bytes:
        """The response body, or a one-line RuntimeError naming the URL and what went wrong."""
        headers = {"Content-Type": "application/json"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        request = urllib.request.Request(self.url, data=data, headers=headers, method="POST")
        opener = deadline.opener(self.timeout)
        try:
            with opener.open(request, timeout=self.timeout) as response:
                raw = _read_at_most(response, MAX_REPLY_BYTES)
        except urllib.error.HTTPError as error:
            detail = _error_detail(error, key)
            self._fail(f"returned HTTP {error.code} {error.reason}" + (f": {detail}" if detail else ""), key)
        except urllib.error.URLError as error:
            if isinstance(error.reason, TimeoutError):
                self._fail(f"timed out: no answer within {self.timeout:g} s", key)
            self._fail(f"is unreachable ({error.reason}); is the server running? ${BASE_URL_ENV} sets the URL", key)
        except TimeoutError:
            self._fail(f"timed out: no answer within {self.timeout:g} s", key)
        except (OSError, http.client.HTTPException) as error:
            self._fail(f"failed: {type(error).__name__} {error}".rstrip(), key)
        if len(raw) > MAX_REPLY_BYTES:
            self._fail(f"sent a reply over the {MAX_REPLY_BYTES:,}-byte cap (MAX_REPLY_BYTES); a chat completion of "
                       f"{MAX_ANSWER_TOKENS} tokens is a few KB", key)
        return raw

    def _fail(self, problem: str, key: str | None) -> NoReturn:
        if key:  # servers may echo what they were sent
            problem = problem.replace(key, "***")
        raise RuntimeError(f"LLM endpoint {self.url} {problem}") from None


class DryRun:
    """What `provider="llm"` would send, without sending it: each call answers "" and is counted.

    >>> dry = DryRun(ChatContextualizer("http://localhost:11434/v1", "any-model", cache=False))
    >>> dry.contextualize("A document. Two sentences.", "Two sentences.")
    ''
    >>> dry.calls, dry.prompt_tokens > 0
    (1, True)
    """

    def __init__(self, model: ChatContextualizer | None = None) -> None:
        self.model = model if model is not None else default_contextualizer()
        self.calls, self.prompt_tokens = 0, 0

    def contextualize(self, document: str, chunk: str) -> str:
        self.calls += 1
        self.prompt_tokens += count_tokens(self.model.prompt(document, chunk))
        return ""

    def __repr__(self) -> str:
        return f"DryRun(calls={self.calls}, prompt_tokens={self.prompt_tokens}, model={self.model!r})"


@functools.cache
def default_contextualizer() -> ChatContextualizer:
    """The shared default, configured from the environment (nothing is contacted until first use)."""
    return ChatContextualizer()


def strip_reasoning(reply: str) -> str:
    """`reply` without the thoughts a reasoning model writes in `<think>` tags, in one left-to-right scan.

    The tags match in any ASCII case. A thought runs from `<think>` to the next `</think>` — thoughts do
    not nest, an opening tag inside one is part of it — or, never closed, to the end of the reply (a
    reply cut short while thinking has no answer). A `</think>` outside any thought closes one that
    began where the last one ended, or at the start: servers whose chat template opens `<think>` in the
    prompt (DeepSeek-R1, Qwen3) send only the close. Other tags (`<thinking>`, `< think>`) are text.

    >>> strip_reasoning("<think>Ports?</think>The Ports section.")
    'The Ports section.'
    >>> strip_reasoning("The Ports section.<THINK>unfinished")
    'The Ports section.'
    >>> strip_reasoning("opened by the prompt</think>The Ports section.")
    'The Ports section.'
    """
    kept, start, thinking = [], 0, False  # `start`: where the text being kept, or thought, began
    for tag_start, tag_end, opening in _think_tags(reply.translate(_ASCII_LOWER)):
        if opening and thinking:
            continue
        if opening:
            kept.append(reply[start:tag_start])
        start, thinking = tag_end, opening
    return "".join(kept) if thinking else "".join(kept) + reply[start:]


@functools.lru_cache(maxsize=4)
def _shown(document: str, limit: int) -> tuple[str, bool]:
    """The start of `document` the prompt shows, and whether it was cut.

    Memoised: every chunk of a document asks for the same start, and without the memo each one
    re-reads the whole document — O(n) per chunk, O(n^2) per document, before any request is sent.
    """
    shown = truncate_to_tokens(document, limit)
    return shown, len(shown) < len(document.strip())


def _answer(raw: bytes) -> str | None:
    """The first choice's message content, or None if `raw` is not a chat completion."""
    try:
        content = json.loads(raw)["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError, RecursionError):  # "[[[[…" deeper than json can go
        return None
    return content if isinstance(content, str) else None


def _context(answer: str) -> str:
    """The context an answer gives: without its reasoning, stripped, and cut to `MAX_CONTEXT_TOKENS`.

    Cut, not refused: at temperature 0 the answer is the same on every run, so a refusal would lose
    the whole document's contexts for good; the head of an over-long answer, where the model puts what
    situates the chunk, is what a server that honours `max_tokens` would have sent anyway.
    """
    context = truncate_to_tokens(strip_reasoning(answer).strip()[:MAX_CONTEXT_CHARS], MAX_CONTEXT_TOKENS)
    return valid_text(context)  # JSON's "\ud800" escape decodes to a lone surrogate, which UTF-8 cannot store


def _error_detail(response: urllib.error.HTTPError, key: str | None) -> str:
    """The server's error message on one short line (OpenAI and Ollama: {"error": {"message": …}})."""
    try:
        raw = _read_at_most(response, ERROR_DETAIL_BYTES)[:ERROR_DETAIL_BYTES]
    except (OSError, http.client.HTTPException):
        return ""
    finally:  # now, not when the RuntimeError (whose __context__ this is) goes: the server may still be sending
        response.close()
    try:
        error = json.loads(raw).get("error", "")
        message = error.get("message", "") if isinstance(error, dict) else str(error)
    except (ValueError, AttributeError, RecursionError):
        message = raw.decode("utf-8", "replace")
    if key:  # before the cut, which could keep half of an echoed key
        message = message.replace(key, "***")
    return " ".join(message.split())[:160]


def _read_at_most(stream, limit: int) -> bytes:
    """`stream`'s body up to `limit + 1` bytes, read in blocks: more than the limit means it was longer,
    and since no more is ever read, a body that never ends costs `limit` bytes, not all of memory."""
    blocks, size = [], 0
    while size <= limit and (block := stream.read(min(_BLOCK_BYTES, limit + 1 - size))):
        blocks.append(block)
        size += len(block)
    return b"".join(blocks)


def _think_tags(lowered: str) -> Iterator[tuple[int, int, bool]]:
    """(start, end, is it `<think>`) of each `<think>` and `</think>` in `lowered`, in order.

    One `find` for what the two tags end with, each starting where the last stopped: every character
    is scanned once, whatever mix of tags the text holds (a lazy regex rescans to the end per tag).
    """
    at = lowered.find("think>")
    while at >= 0:
        if at >= 1 and lowered[at - 1] == "<":
            yield at - 1, at + 6, True
        elif at >= 2 and lowered[at - 2 : at] == "</":
            yield at - 2, at + 6, False
        at = lowered.find("think>", at + 6)


def _quoted(text: str) -> str:
    """`text` with its own `<document>`/`<chunk>` tags defused, so it cannot close the prompt's.

    A backslash goes after the `<` (`<\\/document>`); the model still reads every word. Nothing
    can stop instructions inside a document from being read as such — but the answer only ever
    becomes a chunk's `context`, never its text (see docs/security.md).
    """
    return _FENCE.sub(lambda m: "<\\" + m.group(0)[1:], text)
