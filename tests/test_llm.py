"""The chat-completions client against a real local HTTP server: request, key, cache, errors, end to end.

`ChatServer` (http.server) answers like an endpoint; `RawServer` writes raw bytes at any pace, for the
replies http.server cannot send: a byte at a time, a body that never ends, a TLS handshake that stalls.
"""

from __future__ import annotations

import ipaddress
import json
import re
import socket
import ssl
import threading
import time
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from chunking import chunk, llm
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


class RawServer:
    """A TCP server on 127.0.0.1 that answers each connection with `respond(connection, stop)`.

    With `read_request`, the request (head and Content-Length body) is read first, so closing the
    connection never resets it under a reply the client has not read yet.
    """

    def __init__(self, respond, *, read_request: bool = True, tls: ssl.SSLContext | None = None) -> None:
        self.respond, self.read_request, self.tls, self.connections = respond, read_request, tls, 0
        self.stop = threading.Event()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.05)
        self.port = self.listener.getsockname()[1]
        self.base_url = f"{'https' if tls else 'http'}://127.0.0.1:{self.port}/v1"
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.stop.set()
        self.thread.join()
        self.listener.close()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                connection, _ = self.listener.accept()
            except TimeoutError:
                continue
            self.connections += 1
            threading.Thread(target=self._answer, args=(connection,), daemon=True).start()

    def _answer(self, connection: socket.socket) -> None:
        connection.settimeout(10)
        try:
            if self.tls:
                connection = self.tls.wrap_socket(connection, server_side=True)
        except OSError:
            connection.close()
            return
        with connection:
            try:
                if self.read_request:
                    _read_request(connection)
                self.respond(connection, self.stop)
            except OSError:
                pass  # the client hung up: what its deadline and caps are for


def _read_request(connection: socket.socket) -> None:
    data = b""
    while b"\r\n\r\n" not in data:
        data += connection.recv(65536)
    head, body = data.split(b"\r\n\r\n", 1)
    length = int(re.search(rb"content-length: *(\d+)", head, re.IGNORECASE).group(1))
    while len(body) < length:
        body += connection.recv(65536)


def drip(fast: bytes, slow: bytes, every: float = 0.2):
    """Send `fast` at once, then `slow` one byte every `every` seconds."""
    def respond(connection: socket.socket, stop: threading.Event) -> None:
        connection.sendall(fast)
        for byte in slow:
            if stop.wait(every):
                return
            connection.sendall(bytes([byte]))
    return respond


def endless(head: bytes, block: bytes):
    """Send `head`, then `block` again and again until the client hangs up."""
    def respond(connection: socket.socket, stop: threading.Event) -> None:
        connection.sendall(head)
        while not stop.is_set():
            connection.sendall(block)
    return respond


@pytest.fixture
def raw_server():
    servers = []

    def start(respond, **options) -> RawServer:
        servers.append(RawServer(respond, **options))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


@pytest.fixture(scope="module")
def certificate(tmp_path_factory):
    """A self-signed certificate for 127.0.0.1: its PEM file (key and certificate) and a server context."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.now(timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(1).not_valid_before(now - timedelta(days=1)).not_valid_after(now + timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
            .sign(key, hashes.SHA256()))
    path = tmp_path_factory.mktemp("tls") / "127.0.0.1.pem"
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()) + cert.public_bytes(serialization.Encoding.PEM))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(path)
    return path, context


@pytest.fixture
def tls(certificate, monkeypatch):
    """The server side of TLS; the client trusts the certificate through $SSL_CERT_FILE, as a user would."""
    monkeypatch.setenv("SSL_CERT_FILE", str(certificate[0]))
    return certificate[1]


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


def test_an_answer_that_is_not_valid_unicode_becomes_a_context_that_can_be_stored(server, tmp_path):
    server.reply = lambda body: (200, b'{"choices": [{"message": {"content": "Ports \\ud800 section."}}]}')
    assert client(server, tmp_path).contextualize(DOCUMENT, CHUNK) == "Ports \ufffd section."


def test_a_damaged_cache_row_is_asked_again_and_replaced(server, tmp_path):
    first = client(server, tmp_path)
    first.contextualize(DOCUMENT, CHUNK)
    [(key,)] = first._cache.db.execute("SELECT key FROM entries").fetchall()
    first._cache.put({key: b"\xff\xfe not UTF-8"})
    assert client(server, tmp_path).contextualize(DOCUMENT, CHUNK) == "From the Ports section of the LumenDB guide."
    assert len(server.requests) == 2 and client(server, tmp_path).contextualize(DOCUMENT, CHUNK) and \
        len(server.requests) == 2


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
        (lambda body: (200, b"[" * 100_000), "not a chat completion"),
        (lambda body: (500, b"[" * 100_000), "HTTP 500"),
    ],
    ids=["500", "401", "not-json", "no-choices", "dropped", "nested-too-deep", "error-nested-too-deep"],
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
    got = chunk(DOCUMENT, "contextual", provider="llm", llm=client(server, tmp_path), chunk_size=12)
    assert [c.context for c in got] == [f"Context for {c.text.split()[-1]!r}." for c in got]
    assert all(DOCUMENT[c.start : c.end] == c.text for c in got)
    assert len(server.requests) == len(got) > 1


# --- bounded waits: one deadline for the whole request ------------------------------------------------

HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
DRIPS = {  # what is sent at once, then what drips: 100 bytes, a byte every 0.2 s, would take 20 s
    "status-line": (b"", b"HTTP/1.1 200 OK\r\n" + b"X-Slow: " + b"a" * 75),
    "headers": (HEAD, b"X-Slow: " + b"a" * 92),
    "body": (HEAD + b"Content-Length: 100\r\n\r\n", b" " * 100),
}


@pytest.mark.parametrize("scheme", ["http", "https"])
@pytest.mark.parametrize("stage", list(DRIPS))
def test_a_server_dripping_a_byte_at_a_time_fails_at_the_deadline(raw_server, tmp_path, request, stage, scheme):
    server = raw_server(drip(*DRIPS[stage]), tls=request.getfixturevalue("tls") if scheme == "https" else None)
    started = time.monotonic()
    with pytest.raises(RuntimeError, match="timed out: no answer within 1 s") as error:
        llm.ChatContextualizer(server.base_url, "m", cache=tmp_path, timeout=1).contextualize(DOCUMENT, CHUNK)
    assert time.monotonic() - started < 5  # bounded, not fast: the drip alone would take 20 s
    assert f"{server.base_url}/chat/completions" in str(error.value)


def test_a_tls_handshake_that_drips_fails_at_the_deadline(raw_server, tmp_path):
    record = b"\x16\x03\x03\x40\x00"  # a TLS handshake record of 16 KB is coming: the client waits for all of it
    server = raw_server(drip(record, b"\x00" * 100), read_request=False)
    url = f"https://127.0.0.1:{server.port}/v1"
    started = time.monotonic()
    with pytest.raises(RuntimeError, match="timed out: no answer within 1 s"):
        llm.ChatContextualizer(url, "m", cache=tmp_path, timeout=1).contextualize(DOCUMENT, CHUNK)
    assert time.monotonic() - started < 5


def test_a_completion_over_https_is_read(raw_server, tmp_path, tls):
    payload = completion("From the Ports section.")
    head = HEAD + f"Content-Length: {len(payload)}\r\n\r\n".encode()
    server = raw_server(drip(head + payload, b""), tls=tls)
    context = llm.ChatContextualizer(server.base_url, "m", cache=tmp_path).contextualize(DOCUMENT, CHUNK)
    assert server.base_url.startswith("https://") and context == "From the Ports section."


# --- bounded replies: the body, the error body, the context --------------------------------------------

def padded(payload: bytes, size: int) -> bytes:
    return payload + b" " * (size - len(payload))  # JSON allows whitespace after the value


def test_a_reply_at_the_cap_is_read(server, tmp_path):
    server.reply = lambda body: (200, padded(completion("Ports section."), llm.MAX_REPLY_BYTES))
    assert client(server, tmp_path).contextualize(DOCUMENT, CHUNK) == "Ports section."


def test_a_reply_one_byte_over_the_cap_is_refused(server, tmp_path):
    server.reply = lambda body: (200, padded(completion("Ports section."), llm.MAX_REPLY_BYTES + 1))
    with pytest.raises(RuntimeError, match=f"over the {llm.MAX_REPLY_BYTES:,}-byte cap") as error:
        client(server, tmp_path).contextualize(DOCUMENT, CHUNK)
    assert f"{server.base_url}/chat/completions" in str(error.value) and "\n" not in str(error.value)


BLOCK = b" " * 0x10000
ENDLESS = {  # the head, then the block sent again and again
    "until-close": (HEAD + b"Connection: close\r\n\r\n", BLOCK),
    "declared-100MB": (HEAD + b"Content-Length: 104857600\r\n\r\n", BLOCK),
    "chunked": (HEAD + b"Transfer-Encoding: chunked\r\n\r\n", b"10000\r\n" + BLOCK + b"\r\n"),
}


@pytest.mark.parametrize("framing", list(ENDLESS))
def test_a_body_that_never_ends_stops_at_the_cap(raw_server, tmp_path, framing):
    server = raw_server(endless(*ENDLESS[framing]))
    with pytest.raises(RuntimeError, match=f"{server.base_url}/chat/completions sent a reply over the"):
        llm.ChatContextualizer(server.base_url, "m", cache=tmp_path, timeout=30).contextualize(DOCUMENT, CHUNK)


def test_an_endless_error_body_is_read_only_for_its_message(raw_server, tmp_path):
    server = raw_server(endless(b"HTTP/1.1 500 Internal Server Error\r\nConnection: close\r\n\r\n", b"x" * 0x10000))
    # read whole, the body would run to the deadline and the message would be lost
    with pytest.raises(RuntimeError, match="HTTP 500 Internal Server Error: x{100}") as error:
        llm.ChatContextualizer(server.base_url, "m", cache=tmp_path, timeout=30).contextualize(DOCUMENT, CHUNK)
    assert "\n" not in str(error.value) and len(str(error.value)) < 300


def test_a_redirect_is_an_error_not_followed(raw_server, tmp_path):
    respond = drip(b"HTTP/1.1 302 Found\r\nLocation: /elsewhere\r\nContent-Length: 0\r\n\r\n", b"")
    server = raw_server(respond)
    with pytest.raises(RuntimeError, match="HTTP 302 Found"):
        llm.ChatContextualizer(server.base_url, "m", cache=tmp_path).contextualize(DOCUMENT, CHUNK)
    assert server.connections == 1


@pytest.mark.parametrize(
    "reply",
    [lambda body: (500, json.dumps({"error": {"message": "x" * 140 + f" {KEY}"}}).encode()),
     lambda body: (200, b"y" * 110 + KEY.encode())],
    ids=["error-detail", "not-a-completion"],
)
def test_a_key_echoed_where_the_message_is_cut_is_not_shown_in_part(server, tmp_path, monkeypatch, reply):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    server.reply = reply
    with pytest.raises(RuntimeError) as error:
        client(server, tmp_path).contextualize(DOCUMENT, CHUNK)
    assert not any(KEY[i : i + 6] in str(error.value) for i in range(len(KEY) - 5))


def test_a_server_ignoring_max_tokens_gets_its_context_cut(server, tmp_path):
    server.reply = lambda body: (200, completion("From the Ports section. " * 40_000))  # 960 KB, under the cap
    context = client(server, tmp_path).contextualize(DOCUMENT, CHUNK)
    assert context.startswith("From the Ports section. From")
    assert count_tokens(context) <= llm.MAX_CONTEXT_TOKENS and len(context) <= llm.MAX_CONTEXT_CHARS


def test_an_answer_within_max_tokens_is_not_cut(server, tmp_path):
    answer = " ".join(["Ports"] * llm.MAX_ANSWER_TOKENS)
    server.reply = lambda body: (200, completion(answer))
    assert client(server, tmp_path).contextualize(DOCUMENT, CHUNK) == answer


# --- linear work on a hostile reply --------------------------------------------------------------------

@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("", ""),
        ("No reasoning at all.", "No reasoning at all."),
        ("<think>a</think>B", "B"),
        ("<think>a</think>B<think>c</think>D", "BD"),
        ("<THINK>a</Think>B", "B"),
        ("Answer first.<think>then a thought never closed", "Answer first."),
        ("<think>a<think>b</think>c</think>D", "D"),  # no nesting: the first close ends it, the second is stray
        ("opened by the prompt's template</think>B", "B"),
        ("</think></think>B", "B"),
        ("<think>x<think>x<think>x</think>B", "B"),
        ("<thinking>kept</thinking> < think> <think >", "<thinking>kept</thinking> < think> <think >"),
        ("<thin\u212a>Kelvin sign, not a k</thin\u212a>", "<thin\u212a>Kelvin sign, not a k</thin\u212a>"),
        ("\u0130stanbul <think>x</think>B", "\u0130stanbul B"),  # İ lowers to two characters: offsets must hold
        ("think> </ <think", "think> </ <think"),
    ],
    ids=["empty", "none", "one", "two", "case", "unclosed", "nested", "prompt-opened", "stray-closes",
         "opens-inside", "not-tags", "kelvin", "dotted-I", "fragments"],
)
def test_reasoning_is_stripped(reply, expected):
    assert llm.strip_reasoning(reply) == expected


class Scanned(str):
    """Text that counts the characters its `find` calls pass over."""

    scanned = 0

    def find(self, sub, start=0, end=None):
        found = super().find(sub, start, len(self) if end is None else end)
        self.scanned += (found + len(sub) if found >= 0 else len(self)) - start
        return found


HOSTILE_REPLIES = {
    "opens": "<think>" * 20_000,
    "opens-then-one-close": "<think>x" * 20_000 + "</think>",
    "closes": "</think>" * 20_000,
    "mixed": "<think>a</think>b</think><think>c<think></ think>" * 5_000,
}


@pytest.mark.parametrize("name", list(HOSTILE_REPLIES))
def test_the_reasoning_scan_reads_each_character_once(name):
    reply = HOSTILE_REPLIES[name]
    lowered = Scanned(reply.lower())
    tags = list(llm._think_tags(lowered))
    assert lowered.scanned <= len(reply) + 6  # each find starts where the last one stopped
    assert len(tags) == reply.count("<think>") + reply.count("</think>")


@pytest.mark.parametrize("name", list(HOSTILE_REPLIES))
def test_a_hostile_reply_leaves_no_reasoning(name):
    assert "think>" not in llm.strip_reasoning(HOSTILE_REPLIES[name]).replace("</ think>", "")


def test_a_document_is_tokenized_once_for_all_its_chunks(characters_encoded):
    document = "Words of one long document, asked about chunk by chunk. " * 2_000
    contextualizer = llm.ChatContextualizer("http://127.0.0.1:1/v1", "m", cache=False, max_document_tokens=50)
    prompts = [contextualizer.prompt(document, f"chunk {i}") for i in range(20)]
    assert characters_encoded[0] <= 3 * len(document) + sum(map(len, prompts))
