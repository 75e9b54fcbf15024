"""A loopback HTTP server in a thread that misbehaves on demand: it trickles, never ends, claims a length it does not send.

Each path is served by a *behaviour*, a function that writes the whole response, status line and
headers included, to the raw connection. Writing stops when the client hangs up or the server closes.
"""

from __future__ import annotations

import http.server
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import BinaryIO

Behaviour = Callable[[BinaryIO, threading.Event], None]
HANGUPS = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError)


def headers(length: int | None = None) -> bytes:
    return b"HTTP/1.1 200 OK\r\n" + (f"Content-Length: {length}\r\n".encode() if length is not None else b"") + b"Connection: close\r\n\r\n"


def whole(body: bytes, claimed: int | None = None) -> Behaviour:
    """The body at once, with a Content-Length: its own, or the *claimed* one."""
    return lambda out, stop: out.write(headers(len(body) if claimed is None else claimed) + body)


def trickle(body: bytes, every: float) -> Behaviour:
    """The body's Content-Length at once, then its bytes one at a time, one every *every* seconds."""

    def send(out: BinaryIO, stop: threading.Event) -> None:
        out.write(headers(len(body)))
        for byte in body:
            if stop.wait(every):
                return
            out.write(bytes([byte]))

    return send


def endless(start: bytes = b"", chunk: int = 1 << 16) -> Behaviour:
    """No Content-Length, *start*, then zeros for ever."""

    def send(out: BinaryIO, stop: threading.Event) -> None:
        out.write(headers() + start)
        zeros = bytes(chunk)
        while not stop.is_set():
            out.write(zeros)

    return send


def slow_headers(every: float) -> Behaviour:
    """A status line, then a header that never ends, a byte every *every* seconds."""

    def send(out: BinaryIO, stop: threading.Event) -> None:
        out.write(b"HTTP/1.1 200 OK\r\nX-Slow: ")
        while not stop.wait(every):
            out.write(b"a")

    return send


class Server:
    """The running server: :meth:`serve` a path with a behaviour, then ask :meth:`url` for it."""

    def __init__(self) -> None:
        self.routes: dict[str, Behaviour] = {}
        self.requests: list[str] = []
        self.stop = threading.Event()
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                server.requests.append(self.path)
                behaviour = server.routes.get(self.path)
                if behaviour is None:
                    self.send_error(404)
                    return
                with suppress(*HANGUPS):
                    behaviour(self.wfile, server.stop)
                self.close_connection = True

            def log_message(self, *args) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def serve(self, path: str, behaviour: Behaviour) -> str:
        """Serve *path* with *behaviour*; its URL."""
        self.routes[path] = behaviour
        return self.url(path)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.httpd.server_port}{path}"

    def close(self) -> None:
        self.stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@contextmanager
def misbehaving_server() -> Iterator[Server]:
    server = Server()
    try:
        yield server
    finally:
        server.close()
