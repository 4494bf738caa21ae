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
5. Any failure — connection refused, timeout, HTTP error, a reply that is not a chat completion — is
   one `RuntimeError` line naming the URL and the status.

`DryRun` stands in for the model and counts what a run would send (calls, prompt tokens) before you
pay for it. It does not retry, stream or run requests in parallel. Ollama silently cuts prompts to its
context window (4k tokens by default on small GPUs): raise `OLLAMA_CONTEXT_LENGTH` or lower the limit.
Prompt after Anthropic, "Introducing Contextual Retrieval" (September 2024),
https://www.anthropic.com/news/contextual-retrieval. Taught in notebook 09.
"""

from __future__ import annotations

import functools
import hashlib
import http.client
import json
import os
import re
import urllib.error
import urllib.request
from pathlib import Path
from typing import NoReturn

from chunking.cache import open_cache
from chunking.options import check_int, check_number
from chunking.sizers import Tokens
from chunking.tokens import count_tokens

BASE_URL_ENV, MODEL_ENV = "CHUNKING_LLM_BASE_URL", "CHUNKING_LLM_MODEL"
DEFAULT_BASE_URL = "http://localhost:11434/v1"  # Ollama's OpenAI-compatible API
MAX_DOCUMENT_TOKENS = 6000
MAX_ANSWER_TOKENS = 200  # Anthropic's contexts run 50–100 tokens
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
_FENCE = re.compile(r"</?\s*(?:document|chunk)\b", re.IGNORECASE)  # the prompt's own tags
_THINKING = re.compile(r"<think>.*?</think>", re.DOTALL)  # reasoning models may answer with their thoughts first


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
        self.timeout = check_number("timeout", timeout, 1e-3)
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
            return found[key].decode("utf-8")
        answer = self._complete(prompt)
        if self._cache is not None:
            self._cache.put({key: answer.encode("utf-8")})
        return answer

    def prompt(self, document: str, chunk: str) -> str:
        """The exact user message sent for this document and chunk."""
        shown = truncate_to_tokens(document, self.max_document_tokens)
        note = TRUNCATION_NOTE.format(limit=self.max_document_tokens) if len(shown) < len(document.strip()) else ""
        return PROMPT.format(document=_quoted(shown), note=note, chunk=_quoted(chunk))

    def __repr__(self) -> str:  # no key, ever: only the name of the variable that holds it
        return f"ChatContextualizer(base_url={self.base_url!r}, model={self.model!r}, api_key_env={self.api_key_env!r})"

    def _complete(self, prompt: str) -> str:
        """POST one chat completion and return the stripped answer."""
        body = {"model": self.model, "messages": [{"role": "user", "content": prompt}], "temperature": 0,
                "max_tokens": MAX_ANSWER_TOKENS}
        key = os.environ.get(self.api_key_env)
        raw = self._post(json.dumps(body).encode(), key)
        if (answer := _answer(raw)) is None:
            self._fail(f"returned HTTP 200 but not a chat completion: {raw[:120]!r}", key)
        return _THINKING.sub("", answer).strip()

    def _post(self, data: bytes, key: str | None) -> bytes:
        """The response body, or a one-line RuntimeError naming the URL and what went wrong."""
        headers = {"Content-Type": "application/json"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        request = urllib.request.Request(self.url, data=data, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return response.read()
        except urllib.error.HTTPError as error:
            detail = _error_detail(error)
            self._fail(f"returned HTTP {error.code} {error.reason}" + (f": {detail}" if detail else ""), key)
        except urllib.error.URLError as error:
            if isinstance(error.reason, TimeoutError):
                self._fail(f"timed out: no answer within {self.timeout} s", key)
            self._fail(f"is unreachable ({error.reason}); is the server running? ${BASE_URL_ENV} sets the URL", key)
        except TimeoutError:
            self._fail(f"timed out: no answer within {self.timeout} s", key)
        except (OSError, http.client.HTTPException) as error:
            self._fail(f"failed: {type(error).__name__} {error}".rstrip(), key)

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


def truncate_to_tokens(text: str, limit: int) -> str:
    """The longest start of `text` (stripped) within `limit` cl100k tokens, cut at a character boundary.

    >>> truncate_to_tokens("one two three four", 2)
    'one two'
    """
    text = text.strip()
    if count_tokens(text) <= limit:
        return text
    spans = Tokens().bind(text).windows(0, len(text), limit)
    return text[: spans[0][1]].rstrip() if spans else ""


def _answer(raw: bytes) -> str | None:
    """The first choice's message content, or None if `raw` is not a chat completion."""
    try:
        content = json.loads(raw)["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        return None
    return content if isinstance(content, str) else None


def _error_detail(response: urllib.error.HTTPError) -> str:
    """The server's error message on one short line (OpenAI and Ollama: {"error": {"message": …}})."""
    try:
        raw = response.read()
    except (OSError, http.client.HTTPException):
        return ""
    try:
        error = json.loads(raw).get("error", "")
        message = error.get("message", "") if isinstance(error, dict) else str(error)
    except (ValueError, AttributeError):
        message = raw.decode("utf-8", "replace")
    return " ".join(message.split())[:160]


def _quoted(text: str) -> str:
    """`text` with its own `<document>`/`<chunk>` tags defused, so it cannot close the prompt's.

    A backslash goes after the `<` (`<\\/document>`); the model still reads every word. Nothing
    can stop instructions inside a document from being read as such — but the answer only ever
    becomes a chunk's `context`, never its text (see docs/security.md).
    """
    return _FENCE.sub(lambda m: "<\\" + m.group(0)[1:], text)
