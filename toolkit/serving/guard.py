"""What keeps ``toolkit serve`` answering when clients are slow, vanish or flood it, and lets it stop.

uvicorn times out nothing but idle keep-alive connections, so without this a client that stops
half-way through its request holds its connection for ever, and SIGTERM waits for it for ever
(uvicorn's graceful shutdown waits for every connection with a request under way). Three parts:

- :class:`Guard`, an ASGI middleware, reads each request's body before the app sees it, within
  ``client_timeout`` seconds of the request's head (else a 408 and the connection is closed), at
  most ``max_body`` bytes of it (else a 413), and gives up at once when the server starts to stop
  (a 503). A client that leaves half-way is one log line. Requests whose body has arrived go on to
  the app and are answered, within the server's graceful-shutdown time once it stops.
- :func:`protocol_class`, uvicorn's h11 protocol with two more bounds: a request's head must arrive
  within ``client_timeout`` seconds of the connection opening (or of the previous response on a
  kept-alive connection), and a client that stops reading its response for ``client_timeout``
  seconds is cut off. Connections past ``max_connections`` are answered 503 at once, without a
  request being read, and closed.
- :class:`Server`, uvicorn's server, tells the guard when it starts to stop.

Needs the ``serve`` extra; imported by :func:`toolkit.serving.server.serve` only.
"""

import asyncio
import json
import logging
from http import HTTPStatus
from typing import Any

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

logger = logging.getLogger(__name__)

Scope = dict[str, Any]


def error_body(message: str) -> bytes:
    return json.dumps({"error": message}).encode()


def raw_response(status: int, message: str) -> bytes:
    """A whole HTTP/1.1 response that closes the connection, for a protocol that has no request to answer yet."""
    body = error_body(message)
    head = f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\nconnection: close\r\n\r\n"
    return head.encode("ascii") + body


def too_large(size: int | None, limit: int) -> str:
    """What a 413 says (the app says the same)."""
    if size is not None:
        return f"the body is {size:,} bytes, more than the {limit:,} this server takes"
    return f"the body is more than the {limit:,} bytes this server takes"


def peer(client: tuple[str, int] | None) -> str:
    return f"{client[0]}:{client[1]}" if client else "a client"


def who(scope: Scope) -> str:
    """``HOST:PORT METHOD PATH`` of a request, for one log line."""
    return f"{peer(scope.get('client'))} {scope.get('method', '')} {scope.get('path', '')}"


def declared_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", []):
        if name == b"content-length" and value.isdigit():
            return int(value)
    return None


class TimedOut(Exception):
    pass


class Stopping(Exception):
    pass


class Guard:
    """An ASGI middleware: the body read whole, in time and within the limit, before *app* runs (see the module)."""

    def __init__(self, app, max_body: int, client_timeout: float):
        self.app, self.max_body, self.client_timeout = app, max_body, client_timeout
        self.stopping = asyncio.Event()

    def stop(self) -> None:
        """The server is stopping: bodies still arriving are not waited for."""
        self.stopping.set()

    async def __call__(self, scope: Scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracked_send(message: dict[str, Any]) -> None:
            nonlocal started
            started = True
            await send(message)

        body = await self.read_body(scope, receive, tracked_send)
        if body is None:  # answered already, or the client left
            return
        delivered = False

        async def replay() -> dict[str, Any]:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        try:
            await self.app(scope, replay, tracked_send)
        except asyncio.CancelledError:
            if not self.stopping.is_set():
                raise
            # uvicorn's graceful-shutdown time is over and it cancels what is left: say so, in one line
            logger.warning("%s: not answered, the server stopped first", who(scope))
            if not started:
                await self.answer(tracked_send, 503, "the server stopped before this request was answered")
        except Exception:
            # Starlette has answered (a 500) and logged it, then re-raises for the server to log it again
            if not started:
                logger.exception("%s failed", who(scope))
                await self.answer(tracked_send, 500, "internal error; the server's log has the details")

    async def read_body(self, scope: Scope, receive, send) -> bytes | None:
        """The whole body, or ``None`` once the client is answered (408, 413, 503) or gone."""
        declared = declared_length(scope)
        if declared is not None and declared > self.max_body:
            await self.answer(send, 413, too_large(declared, self.max_body))
            return None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.client_timeout
        body = bytearray()
        expected = f"{declared:,}" if declared is not None else "?"
        while True:
            try:
                message = await self.within(receive, deadline)
            except TimedOut:
                logger.info("%s: 408, %d of %s bytes of the body in %g s", who(scope), len(body), expected, self.client_timeout)
                await self.answer(send, 408, f"the request's body did not arrive within {self.client_timeout:g} s ({len(body):,} of {expected} bytes came)")
                return None
            except Stopping:
                logger.info("%s: 503, the server is stopping and %d of %s bytes of the body had come", who(scope), len(body), expected)
                await self.answer(send, 503, "the server is stopping")
                return None
            if message["type"] == "http.disconnect":
                logger.info("%s: the client left, %d of %s bytes of its body read", who(scope), len(body), expected)
                return None
            body += message.get("body", b"")
            if len(body) > self.max_body:
                await self.answer(send, 413, too_large(None, self.max_body))
                return None
            if not message.get("more_body", False):
                return bytes(body)

    async def within(self, receive, deadline: float) -> dict[str, Any]:
        """The next message from *receive*, unless *deadline* passes (:class:`TimedOut`) or the server stops (:class:`Stopping`) first."""
        receiving = asyncio.ensure_future(receive())  # first, so that a body already here wins over a stop
        stopping = asyncio.ensure_future(self.stopping.wait())
        try:
            timeout = max(0.0, deadline - asyncio.get_running_loop().time())
            await asyncio.wait({receiving, stopping}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopping.cancel()
            if not receiving.done():
                receiving.cancel()
        if receiving.done() and not receiving.cancelled():
            return receiving.result()
        if self.stopping.is_set():
            raise Stopping
        raise TimedOut

    @staticmethod
    async def answer(send, status: int, message: str) -> None:
        """A JSON error that closes the connection (the rest of the body is not read)."""
        body = error_body(message)
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), (b"connection", b"close")]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body, "more_body": False})


class Server(uvicorn.Server):
    """uvicorn's server, which tells *guard* when it starts to stop."""

    def __init__(self, config: uvicorn.Config, guard: Guard):
        super().__init__(config)
        self.guard = guard

    async def shutdown(self, sockets=None) -> None:
        self.guard.stop()
        await super().shutdown(sockets=sockets)


REFUSED_LINGER = 2.0  # seconds a refused connection is read from (and dropped) before it is closed


class Refusals:
    """Connections refused for being over the limit: the first logged at once, the next ones counted and logged every 10 s."""

    def __init__(self):
        self.count, self.waiting = 0, False

    def add(self, limit: int, loop: asyncio.AbstractEventLoop) -> None:
        self.count += 1
        if not self.waiting:
            self.report(limit, loop)

    def report(self, limit: int, loop: asyncio.AbstractEventLoop) -> None:
        self.waiting = self.count > 0
        if self.waiting:
            logger.warning("refused %d connection(s): %d were open, the most this server takes", self.count, limit)
            self.count = 0
            loop.call_later(10, self.report, limit, loop)


def protocol_class(client_timeout: float, max_connections: int) -> type[H11Protocol]:
    """The h11 protocol of uvicorn, with a deadline for each request's head, one for a stalled reader, and a cap on connections."""
    refusals = Refusals()

    class GuardedH11Protocol(H11Protocol):
        def connection_made(self, transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self.head_timer: asyncio.TimerHandle | None = None
            self.write_timer: asyncio.TimerHandle | None = None
            self.refused = len(self.connections) > max_connections
            if self.refused:
                # A 503 and FIN at once; what the client sends meanwhile is read and dropped, so that closing
                # does not reset the connection before it has read the 503 (a client still writing its
                # request would see a broken pipe instead). Closed when the client closes, or after REFUSED_LINGER.
                self.connections.discard(self)  # not one of the connections counted or waited for
                refusals.add(max_connections, self.loop)
                transport.write(raw_response(503, f"the server has {max_connections} connections open, the most it takes; retry later"))
                transport.write_eof()
                self.head_timer = self.loop.call_later(REFUSED_LINGER, transport.close)
                return
            self.await_head()

        def await_head(self) -> None:
            """From now the client has *client_timeout* seconds to send a whole request head."""
            self.head_bytes = 0
            if self.head_timer is not None:
                self.head_timer.cancel()
            self.head_timer = self.loop.call_later(client_timeout, self.head_timed_out)

        def between_requests(self) -> bool:
            return self.cycle is None or self.cycle.response_complete

        def data_received(self, data: bytes) -> None:
            if self.refused:
                return
            if self.between_requests():
                self.head_bytes += len(data)
            super().data_received(data)
            if not self.between_requests() and self.head_timer is not None:  # a head arrived: the guard times its body
                self.head_timer.cancel()
                self.head_timer = None

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing() and self.between_requests():
                self.await_head()

        def head_timed_out(self) -> None:
            self.head_timer = None
            if self.transport.is_closing() or not self.between_requests():
                return
            if self.head_bytes:  # part of a request came: say why it is closed
                logger.info("%s: 408, %d bytes of a request head in %g s", peer(self.client), self.head_bytes, client_timeout)
                self.transport.write(raw_response(408, f"no whole request head arrived within {client_timeout:g} s"))
            self.transport.close()  # an idle connection is closed without a word, as after keep-alive

        def pause_writing(self) -> None:
            super().pause_writing()
            if self.write_timer is None:
                self.write_timer = self.loop.call_later(client_timeout, self.write_timed_out)

        def resume_writing(self) -> None:
            super().resume_writing()
            if self.write_timer is not None:
                self.write_timer.cancel()
                self.write_timer = None

        def write_timed_out(self) -> None:
            self.write_timer = None
            logger.info("%s: cut off, it read none of its response for %g s", peer(self.client), client_timeout)
            self.transport.abort()

        def connection_lost(self, exc: Exception | None) -> None:
            for timer in (self.head_timer, self.write_timer):
                if timer is not None:
                    timer.cancel()
            self.head_timer = self.write_timer = None
            super().connection_lost(exc)

    return GuardedH11Protocol
