"""The chat-completions client against a real local HTTP server: request, key, cache, errors, end to end."""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from chunking import contextual, llm
from chunking.tokens import count_tokens

KEY = "sk-test-0123456789abcdef"
DOCUMENT = "# LumenDB Operator Guide\n\nLumenDB stores vectors.\n\n## Ports\n\nThe daemon listens on port 7471.\n"
CHUNK = "The daemon listens on port 7471."


def completion(content: str) -> bytes:
    return json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]}).encode()


class ChatServer:
    """An OpenAI-style chat-completions server on 127.0.0.1 that records what it is sent."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.reply = lambda body: (200, completion("  From the Ports section of the LumenDB guide.\n"))
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                status, payload = server.reply(body)
                if status is None:  # drop the connection without answering
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True)

    def user_message(self, i: int = -1) -> str:
        return self.requests[i]["body"]["messages"][0]["content"]


@pytest.fixture(autouse=True)
def no_proxy_no_global_cache(monkeypatch):
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY",
                 "CHUNKING_CACHE", "CHUNKING_LLM_BASE_URL", "CHUNKING_LLM_MODEL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def server():
    s = ChatServer()
    s.thread.start()
    yield s
    s.httpd.shutdown()
    s.httpd.server_close()


def client(server, tmp_path, **kwargs) -> llm.ChatContextualizer:
    return llm.ChatContextualizer(server.base_url, "tiny-model", cache=tmp_path, **kwargs)


def test_posts_one_chat_completion_with_temperature_zero(server, tmp_path):
    client(server, tmp_path).contextualize(DOCUMENT, CHUNK)
    (request,) = server.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["body"]["model"] == "tiny-model" and request["body"]["temperature"] == 0
    assert [m["role"] for m in request["body"]["messages"]] == ["user"]


def test_document_and_chunk_are_inside_their_tags(server, tmp_path):
    client(server, tmp_path).contextualize(DOCUMENT, CHUNK)
    message = server.user_message()
    assert re.search(r"<document>\n(.*)\n</document>", message, re.DOTALL).group(1) == DOCUMENT.strip()
    assert re.search(r"<chunk>\n(.*)\n</chunk>", message, re.DOTALL).group(1) == CHUNK
    assert message.index("</document>") < message.index("<chunk>")
    assert "search retrieval" in message and "only" in message


def test_the_answer_is_stripped(server, tmp_path):
    assert client(server, tmp_path).contextualize(DOCUMENT, CHUNK) == "From the Ports section of the LumenDB guide."


def test_reasoning_before_the_answer_is_dropped(server, tmp_path):
    server.reply = lambda body: (200, completion("<think>\nThe chunk is about ports.\n</think>\n\nPorts section."))
    assert client(server, tmp_path).contextualize(DOCUMENT, CHUNK) == "Ports section."


def test_the_bearer_key_comes_from_the_named_environment_variable(server, tmp_path, monkeypatch):
    monkeypatch.setenv("MY_LLM_KEY", KEY)
    client(server, tmp_path, api_key_env="MY_LLM_KEY").contextualize(DOCUMENT, CHUNK)
    assert server.requests[0]["headers"]["Authorization"] == f"Bearer {KEY}"


def test_no_key_in_the_environment_sends_no_authorization(server, tmp_path):
    client(server, tmp_path).contextualize(DOCUMENT, CHUNK)
    assert "Authorization" not in server.requests[0]["headers"]


def test_the_key_is_not_kept_in_the_object(server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    contextualizer = client(server, tmp_path)
    contextualizer.contextualize(DOCUMENT, CHUNK)
    assert KEY not in repr(contextualizer) and KEY not in repr(vars(contextualizer))


def test_the_cache_prevents_a_second_request(server, tmp_path):
    first = client(server, tmp_path).contextualize(DOCUMENT, CHUNK)
    again = client(server, tmp_path).contextualize(DOCUMENT, CHUNK)
    assert first == again and len(server.requests) == 1


def test_the_key_is_never_written_to_the_cache(server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    client(server, tmp_path).contextualize(DOCUMENT, CHUNK)
    assert (tmp_path / "contexts.sqlite").exists()
    assert all(KEY.encode() not in path.read_bytes() for path in tmp_path.iterdir())


def test_another_model_is_another_cache_entry(server, tmp_path):
    client(server, tmp_path).contextualize(DOCUMENT, CHUNK)
    llm.ChatContextualizer(server.base_url, "other-model", cache=tmp_path).contextualize(DOCUMENT, CHUNK)
    assert len(server.requests) == 2


def test_cache_off_by_environment_asks_every_time(server, tmp_path, monkeypatch):
    monkeypatch.setenv("CHUNKING_CACHE", "off")
    for _ in range(2):
        client(server, tmp_path).contextualize(DOCUMENT, CHUNK)
    assert len(server.requests) == 2 and not (tmp_path / "contexts.sqlite").exists()


def test_endpoint_and_model_come_from_the_environment(server, tmp_path, monkeypatch):
    monkeypatch.setenv("CHUNKING_LLM_BASE_URL", server.base_url + "/")
    monkeypatch.setenv("CHUNKING_LLM_MODEL", "env-model")
    llm.ChatContextualizer(cache=tmp_path).contextualize(DOCUMENT, CHUNK)
    assert server.requests[0]["body"]["model"] == "env-model"


def test_the_default_endpoint_is_ollama():
    assert llm.ChatContextualizer(model="m", cache=False).url == "http://localhost:11434/v1/chat/completions"


def test_a_missing_model_is_named():
    with pytest.raises(ValueError, match="CHUNKING_LLM_MODEL"):
        llm.ChatContextualizer("http://127.0.0.1:1/v1", cache=False)


def test_a_long_document_is_cut_with_a_note(server, tmp_path):
    document = "First words stay. " + "filler " * 500 + "LAST WORDS GO."
    client(server, tmp_path, max_document_tokens=20).contextualize(document, "filler filler")
    shown = re.search(r"<document>\n(.*)\n</document>", server.user_message(), re.DOTALL).group(1)
    assert shown.startswith("First words stay.") and count_tokens(shown) <= 20 and "LAST" not in shown
    assert "first 20 tokens" in server.user_message()


@pytest.mark.parametrize(
    ("reply", "status"),
    [
        (lambda body: (500, json.dumps({"error": {"message": f"boom with key {KEY}"}}).encode()), "HTTP 500"),
        (lambda body: (401, b'{"error": "invalid api key"}'), "HTTP 401"),
        (lambda body: (200, b"this is not json"), "not a chat completion"),
        (lambda body: (200, b'{"choices": []}'), "not a chat completion"),
        (lambda body: (None, b""), "failed: RemoteDisconnected"),
    ],
    ids=["500", "401", "not-json", "no-choices", "dropped"],
)
def test_server_errors_name_the_url_and_status_not_the_key(server, tmp_path, monkeypatch, reply, status):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    server.reply = reply
    with pytest.raises(RuntimeError) as error:
        client(server, tmp_path).contextualize(DOCUMENT, CHUNK)
    message = str(error.value)
    assert f"{server.base_url}/chat/completions" in message and status in message
    assert KEY not in message and "\n" not in message


def test_connection_refused_names_the_url_not_the_key(tmp_path, monkeypatch):
    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    contextualizer = llm.ChatContextualizer(f"http://127.0.0.1:{port}/v1", "m", cache=tmp_path)
    with pytest.raises(RuntimeError, match=f"127.0.0.1:{port}/v1/chat/completions is unreachable") as error:
        contextualizer.contextualize(DOCUMENT, CHUNK)
    assert KEY not in str(error.value)


def test_a_slow_server_times_out(server, tmp_path):
    server.reply = lambda body: (time.sleep(1.0), (200, completion("late")))[1]
    with pytest.raises(RuntimeError, match="timed out"):
        client(server, tmp_path, timeout=0.2).contextualize(DOCUMENT, CHUNK)


def test_contextual_chunks_get_their_context_from_the_server(server, tmp_path):
    def situate(body):
        chunk = re.search(r"<chunk>\n(.*)\n</chunk>", body["messages"][0]["content"], re.DOTALL).group(1)
        return 200, completion(f"Context for {chunk.split()[-1]!r}.")

    server.reply = situate
    got = contextual.chunk(DOCUMENT, provider="llm", llm=client(server, tmp_path), chunk_size=12)
    assert [c.context for c in got] == [f"Context for {c.text.split()[-1]!r}." for c in got]
    assert all(DOCUMENT[c.start : c.end] == c.text for c in got)
    assert len(server.requests) == len(got) > 1
