"""One deadline for a whole HTTP request: a server that accepts and then sends a byte every few seconds
fails at the deadline instead of holding the caller for ever.

A socket timeout bounds one wait, not a request. Both HTTP clients the package uses are given sockets
whose every wait gets only the time left before the request's deadline (on `time.monotonic`):
- `opener(seconds)`: a `urllib.request` opener (`chunking.llm`'s chat client): connecting (each
  address for the time left), the TLS handshake as a whole, every read and write; redirects are
  refused (urllib would read a redirect's body whole and turn the POST into a GET). The DNS lookup is
  the system's own.
- `httpx_transport(url, seconds)`: an httpx transport (qdrant-client's, `chunking.store.connect`) whose
  connections and streams work to a deadline set as each request starts, so the client's reading of
  the body after `handle_request` returns is inside it too. httpx offers no option for the network
  backend, so the transport's pool is given one (`_pool._network_backend`); tests/test_store.py holds
  it to a dripping server.
"""

from __future__ import annotations

import contextvars
import functools
import http.client
import io
import socket
import time
import urllib.request


def opener(seconds: float) -> urllib.request.OpenerDirector:
    """A urllib opener whose every request finishes within `seconds` of its start, or raises TimeoutError."""
    return urllib.request.build_opener(_DeadlineHandler(time.monotonic() + seconds), _NoRedirects)


# --- urllib (the chat client) ------------------------------------------------------------------------

def _left(deadline: float) -> float:
    """Seconds until `deadline` (on `time.monotonic`); a TimeoutError once it has passed."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("the request's deadline passed")
    return left


def _open_socket(address: tuple[str, int], timeout: object = None, source_address: tuple[str, int] | None = None,
                 *, deadline: float) -> _DeadlineSocket:
    """`socket.create_connection`, each address tried only for the time left (`timeout` is not used)."""
    error: OSError = OSError(f"no address found for {address[0]!r}")
    for family, kind, proto, _, target in socket.getaddrinfo(*address, type=socket.SOCK_STREAM):
        sock = socket.socket(family, kind, proto)
        try:
            sock.settimeout(_left(deadline))
            if source_address:
                sock.bind(source_address)
            sock.connect(target)
            return _DeadlineSocket(sock, deadline)
        except OSError as failure:
            sock.close()
            error = failure
    raise error


class _DeadlineSocket:
    """A socket whose every wait is given only the time left before `deadline`; the rest passes through.

    A socket timeout bounds one wait: a server sending a byte every few seconds would hold it forever.
    """

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        self._sock, self._deadline, self._readers, self._closed = sock, deadline, 0, False

    def __getattr__(self, name: str):  # setsockopt, fileno, getpeername, detach, … are the socket's own
        return getattr(self._sock, name)

    def gettimeout(self) -> float:  # what `SSLContext.wrap_socket` gives the TLS handshake as a whole
        return _left(self._deadline)

    def recv_into(self, buffer) -> int:
        self._sock.settimeout(_left(self._deadline))
        return self._sock.recv_into(buffer)

    def sendall(self, data) -> None:
        view = memoryview(data).cast("B")
        while view:  # part by part: SSLSocket.sendall gives each part the whole timeout again
            self._sock.settimeout(_left(self._deadline))
            view = view[self._sock.send(view):]

    def makefile(self, mode: str = "rb", buffering: int | None = None) -> io.BufferedReader:
        if mode != "rb":
            raise ValueError(f"mode must be 'rb', got {mode!r}")
        self._readers += 1
        return io.BufferedReader(_DeadlineReader(self))

    def close(self) -> None:  # as socket.socket's: closed for real once the last reader is (urllib relies on it)
        self._closed = True
        if self._readers == 0:
            self._sock.close()

    def release(self) -> None:
        self._readers -= 1
        if self._closed:
            self.close()


class _DeadlineReader(io.RawIOBase):
    """The raw stream under `_DeadlineSocket.makefile`: http.client reads status, headers and body here."""

    def __init__(self, sock: _DeadlineSocket) -> None:
        super().__init__()
        self._sock = sock

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        return self._sock.recv_into(buffer)

    def close(self) -> None:
        if not self.closed:
            self._sock.release()
        super().close()


class _DeadlineHTTPConnection(http.client.HTTPConnection):
    def __init__(self, host: str, *, deadline: float, **options) -> None:
        super().__init__(host, **options)
        self.deadline = deadline
        # http.client's one hook for its socket; the proxy tunnel (CONNECT) is read through it too
        self._create_connection = functools.partial(_open_socket, deadline=deadline)


class _DeadlineHTTPSConnection(_DeadlineHTTPConnection, http.client.HTTPSConnection):
    def connect(self) -> None:
        super().connect()  # TCP and tunnel on a deadline socket; the handshake is given the time left as a whole
        self.sock = _DeadlineSocket(self.sock, self.deadline)


class _DeadlineHandler(urllib.request.HTTPHandler, urllib.request.HTTPSHandler):
    """Opens http:// and https:// connections whose sockets all work to one deadline."""

    def __init__(self, deadline: float) -> None:
        super().__init__()
        self.deadline = deadline

    def http_open(self, request: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(functools.partial(_DeadlineHTTPConnection, deadline=self.deadline), request)

    def https_open(self, request: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(functools.partial(_DeadlineHTTPSConnection, deadline=self.deadline), request)


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """A redirect is an HTTP error: urllib would read its body whole, and turn the POST into a GET."""

    def redirect_request(self, req, fp, code, msg, headers, newurl) -> None:
        return None


# --- httpx (qdrant-client) ---------------------------------------------------------------------------

_DEADLINE: contextvars.ContextVar[tuple[float, str] | None] = contextvars.ContextVar("qdrant_deadline", default=None)


def httpx_transport(url: str, seconds: float):
    """An httpx transport whose sockets stop reading and writing `seconds` after each request starts."""
    import httpcore
    import httpx

    class Stream(httpcore.NetworkStream):
        def __init__(self, stream: httpcore.NetworkStream) -> None:
            self.stream = stream

        def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
            return _within_deadline(self.stream.read, max_bytes, timeout=timeout)

        def write(self, buffer: bytes, timeout: float | None = None) -> None:
            _within_deadline(self.stream.write, buffer, timeout=timeout)

        def close(self) -> None:
            self.stream.close()

        def start_tls(self, ssl_context, server_hostname=None, timeout=None) -> httpcore.NetworkStream:
            return Stream(_within_deadline(self.stream.start_tls, ssl_context, server_hostname, timeout=timeout))

        def get_extra_info(self, info: str):
            return self.stream.get_extra_info(info)

    class Backend(httpcore.NetworkBackend):
        def __init__(self, backend: httpcore.NetworkBackend) -> None:
            self.backend = backend

        def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
            return Stream(_within_deadline(self.backend.connect_tcp, host, port, timeout=timeout,
                                           local_address=local_address, socket_options=socket_options))

        def sleep(self, seconds: float) -> None:
            self.backend.sleep(seconds)

    class Transport(httpx.HTTPTransport):
        def handle_request(self, request: httpx.Request) -> httpx.Response:
            _DEADLINE.set((time.monotonic() + seconds, f"Qdrant at {url!r} gave no full answer within {seconds:g} s"))
            return super().handle_request(request)  # the client then reads the body: the deadline still holds

    transport = Transport()
    transport._pool._network_backend = Backend(transport._pool._network_backend)  # httpx offers no option for it
    return transport


def _within_deadline(call, *args, timeout: float | None, **kwargs):
    """`call(*args, timeout=...)` with the timeout cut to what is left of the current request's deadline."""
    import httpcore

    deadline = _DEADLINE.get()
    if deadline is None:
        return call(*args, timeout=timeout, **kwargs)
    left = deadline[0] - time.monotonic()
    if left <= 0:
        raise httpcore.ReadTimeout(deadline[1])
    try:
        return call(*args, timeout=left if timeout is None else min(timeout, left), **kwargs)
    except httpcore.TimeoutException:
        if deadline[0] - time.monotonic() <= 0:
            raise httpcore.ReadTimeout(deadline[1]) from None
        raise
