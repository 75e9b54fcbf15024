"""`toolkit serve` against clients that stall, vanish, flood it or send what is not JSON.

Raw sockets against a real server process on 127.0.0.1, with short timeouts: a stop (SIGTERM,
Ctrl-C) that does not wait for stalled clients, stalled clients closed with a 408, a client that
leaves mid-body as one log line, connections past the limit refused, a 1,500-deep JSON body as a
400. In-process: a client that stops reading its response is cut off, and no body at all is a 500.

No test here depends on how fast the machine is: the server's timeouts are short, but a test waits
for what it needs to have happened (a log line the runner writes, a socket's answer) rather than
sleeping, gives up only after ``GENEROUS`` seconds, and bounds no duration from above; a lower bound
is measured from before its cause, so a slow machine only makes it truer.

``python -m tests.test_serve_faults ARCHIVE [stops|stalls|departures|bodies|flood ...]`` measures the
same against ``toolkit serve ARCHIVE`` with its default options (about 4 minutes for all).
"""

import asyncio
import json
import random
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from tests.waiting import GENEROUS, wait_for
from toolkit.serving.launch import free_port, start_command

# `toolkit serve` as the CLI runs it, with serve()'s keyword options from argv[3] (a JSON object) and, for a
# test, events it can wait for: "trace_bodies" logs "reading the body of ..." as a request's body starts to be
# read; "decode_until" (a path) holds each decode until that file exists, after logging "decoding"; and
# "refused_linger" sets the seconds a refused connection is kept open for the client to finish writing.
RUNNER = r"""
import json, logging, os, sys, time
from toolkit import load_predictor
from toolkit.serving import guard
from toolkit.serving.server import listen, serve

archive, port, options = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
gate = options.pop("decode_until", None)
guard.REFUSED_LINGER = options.pop("refused_linger", guard.REFUSED_LINGER)
logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
if options.pop("trace_bodies", False):
    read_body = guard.Guard.read_body
    async def traced(self, scope, receive, send):
        logging.getLogger("test").info("reading the body of %s", guard.who(scope))
        return await read_body(self, scope, receive, send)
    guard.Guard.read_body = traced
sock = listen("127.0.0.1", port)
predictor = load_predictor(archive, device="cpu")
decode = predictor.predict_batch
if gate:
    def held(texts):
        logging.getLogger("test").info("decoding")
        for _ in range(100_000):  # a backstop of some 20 minutes, should the test never open the gate
            if os.path.exists(gate):
                break
            time.sleep(0.01)
        return decode(texts)
    predictor.predict_batch = held
try:
    serve(predictor, predictor.model.grammar.default_predictor, archive, sock, 8, 0.0, **options)
except KeyboardInterrupt:
    sys.exit(130)
"""


def start(archive, **options):
    port = free_port()
    return start_command([sys.executable, "-c", RUNNER, str(archive), str(port), json.dumps(options)], port, threads=1, timeout=GENEROUS)


@pytest.fixture
def servers(dependency_archive):
    """``servers(**options)`` starts a server; every one is killed at the end of the test."""
    started = []

    def run(**options):
        started.append(start(dependency_archive, **options))
        return started[-1]

    yield run
    for server in started:
        if server.process.poll() is None:
            server.process.kill()
            server.process.wait()


@pytest.fixture(scope="module")
def quick(dependency_archive):
    """One server for the module: a client has 1 s for a head and 1 s for a body; at most 40 connections."""
    server = start(dependency_archive, client_timeout=1.0, max_connections=40)
    yield server
    server.stop(GENEROUS)


def head(length: int, path: str = "/predict") -> bytes:
    return f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {length}\r\nConnection: close\r\n\r\n".encode()


def connect(port: int, data: bytes = b"") -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=GENEROUS)
    if data:
        sock.sendall(data)
    return sock


def read_all(sock: socket.socket, timeout: float) -> tuple[bytes, bool]:
    """What the server sends in *timeout* seconds, and whether it closed the connection."""
    sock.settimeout(timeout)
    said = b""
    try:
        while chunk := sock.recv(65536):
            said += chunk
    except TimeoutError:
        return said, False
    except OSError:  # reset: closed too
        pass
    return said, True


def so_far(sock: socket.socket) -> tuple[bytes, bool]:
    """What *sock* has received so far, without waiting, and whether the server has closed it."""
    said = b""
    sock.setblocking(False)
    try:
        while chunk := sock.recv(65536):
            said += chunk
    except BlockingIOError:
        return said, False
    except OSError:  # reset: closed too
        pass
    finally:
        sock.settimeout(GENEROUS)
    return said, True


def exchange(port: int, data: bytes) -> tuple[int, dict]:
    """Send one raw request; its status and JSON body."""
    with connect(port, data) as sock:
        said, _ = read_all(sock, GENEROUS)
    top, _, body = said.partition(b"\r\n\r\n")
    return int(top.split()[1]), json.loads(body)


def good(url: str, dependency: bool = True) -> int:
    """The status of a good request (with the dependency parser's answer checked, where *dependency*)."""
    request = urllib.request.Request(f"{url}/predict", data=b'{"input": "Dogs bark ."}', headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=GENEROUS) as response:
            answer = json.loads(response.read())
            assert not dependency or answer["tokens"] == ["Dogs", "bark", "."], answer
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def one_line_error(body: dict) -> str:
    message = body["error"]
    assert isinstance(message, str) and "\n" not in message and "Traceback" not in message and 'File "' not in message, message
    return message


# ------------------------------------------------------------------ stopping


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_does_not_wait_for_clients_stalled_mid_request(servers, sig):
    # no stall is timed out here, and a request read whole would get an hour: the signal alone must end them
    server = servers(client_timeout=3600.0, graceful_timeout=3600.0, trace_bodies=True)
    mid_body = connect(server.port, head(100) + b'{"in')  # Content-Length 100, 4 bytes sent
    mid_head = connect(server.port, b"POST /predict HTTP/1.1\r\nHost: x\r\n")
    idle = connect(server.port)
    wait_for(lambda: "reading the body of" in server.output(), "the mid-body request's body being read")
    server.process.send_signal(sig)
    try:
        code = server.process.wait(timeout=GENEROUS)
    except subprocess.TimeoutExpired:  # it used to wait for the mid-body client for as long as it stayed
        pytest.fail(f"the server did not stop: {server.output()}")
    log = server.output()
    assert code in (-sig, 128 + sig), log
    said, closed = read_all(mid_body, GENEROUS)
    assert closed and said.startswith(b"HTTP/1.1 503") and b"the server is stopping" in said
    assert read_all(mid_head, GENEROUS)[1] and read_all(idle, GENEROUS)[1]
    assert "Traceback" not in log, log
    for sock in (mid_body, mid_head, idle):
        sock.close()


def test_requests_being_decoded_get_the_graceful_time_and_no_more(servers, tmp_path):
    decoded = tmp_path / "decoded"
    server = servers(graceful_timeout=0.5, decode_until=str(decoded))  # the decode outlasts the graceful time, on any machine
    results = []
    client = threading.Thread(target=lambda: results.append(good(server.url)))
    client.start()
    wait_for(lambda: "decoding" in server.output(), "the request read whole and decoding")
    server.process.send_signal(signal.SIGTERM)
    # the graceful time, then the request is given up, unanswered; the decode under way (it cannot be interrupted) ends after
    wait_for(lambda: "not answered, the server stopped first" in server.output(), "the request given up after the graceful time")
    decoded.touch()
    server.process.wait(timeout=GENEROUS)
    client.join(GENEROUS)
    log = server.output()
    assert results == [503], log
    assert "Traceback" not in log, log


# ------------------------------------------------------------------ stalled, vanishing and too many clients


def test_stalled_clients_get_a_408_and_are_closed(quick):
    opened = time.monotonic()  # before any of them connects: none is closed sooner than the client timeout after this
    slow_head = connect(quick.port, b"POST /predict HTTP/1.1\r\nHost: x\r\n")
    slow_body = connect(quick.port, head(100) + b'{"input": "')
    silent = connect(quick.port)
    kept_alive = connect(quick.port, b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
    first = b""
    while not first.endswith(b"}"):  # the whole first response
        first += kept_alive.recv(65536)
    assert first.startswith(b"HTTP/1.1 200")
    kept_alive.sendall(b"GET /health HTTP/1.1\r\n")  # the next request's head, then a trickle
    trickles = {slow_head: b"X-A: b\r\n", slow_body: b"a", kept_alive: b"X-A: b\r\n"}
    closed, said = {}, {sock: b"" for sock in (slow_head, slow_body, silent, kept_alive)}
    for sock in said:
        sock.setblocking(False)
    while len(closed) < len(said) and time.monotonic() - opened < GENEROUS:
        for sock in said:
            if sock in closed:
                continue
            try:
                chunk = sock.recv(65536)
                said[sock] += chunk
                if not chunk:
                    closed[sock] = time.monotonic() - opened
                    continue
            except BlockingIOError:
                pass
            except OSError:
                closed[sock] = time.monotonic() - opened
                continue
            if sock in trickles:
                try:
                    sock.send(trickles[sock])  # a byte or a header line every 0.2 s: never idle, never done
                except OSError:
                    closed[sock] = time.monotonic() - opened
        time.sleep(0.2)
    assert set(closed) == set(said), f"still open after {GENEROUS:g} s: {[sock.getsockname() for sock in said if sock not in closed]}"
    assert all(seconds >= 0.9 for seconds in closed.values()), closed  # not before the client timeout of 1 s
    assert said[slow_head].startswith(b"HTTP/1.1 408") and b"no whole request head arrived within 1 s" in said[slow_head]
    assert said[slow_body].startswith(b"HTTP/1.1 408") and b"body did not arrive within 1 s (" in said[slow_body]
    assert said[kept_alive].startswith(b"HTTP/1.1 408")
    assert said[silent] == b""  # nothing was asked: closed without a word, as an idle keep-alive connection
    for sock in said:
        sock.close()
    assert good(quick.url) == 200
    assert "Traceback" not in quick.output()


def test_a_client_that_leaves_mid_body_is_one_log_line(quick):
    before = len(quick.output())
    for _ in range(20):
        with connect(quick.port, head(100) + b'{"input"'):  # 8 of 100 bytes, then gone
            time.sleep(0.01)

    def told() -> str | None:
        log = quick.output()[before:]
        return log if log.count("the client left") >= 20 or "Traceback" in log else None

    log = wait_for(told, "a line for each of the 20 clients")
    lines = log.splitlines()
    assert "Traceback" not in log, log  # it used to be two tracebacks per client
    assert len(lines) == 20 and all(re.search(r"the client left, [0-8] of 100 bytes of its body read$", line) for line in lines), log
    assert good(quick.url) == 200


def test_connections_past_the_limit_are_refused_at_once(servers):
    server = servers(client_timeout=3600.0, max_connections=40, refused_linger=3600.0)  # nothing expires here
    socks = [connect(server.port) for _ in range(100)]  # 40 at most are kept
    said, closed = dict.fromkeys(socks, b""), set()

    def refused() -> bool:
        for sock in socks:
            if sock not in closed:
                arrived, gone = so_far(sock)
                said[sock] += arrived
                if gone:
                    closed.add(sock)
        return len(closed) >= 60

    wait_for(refused, "60 of 100 connections refused")
    assert len(closed) == 60 and all(said[sock].startswith(b"HTTP/1.1 503") and b"40 connections open" in said[sock] for sock in closed)
    kept = [sock for sock in socks if sock not in closed]
    assert all(said[sock] == b"" for sock in kept)
    assert good(server.url) == 503  # full
    for sock in [connect(server.port, head(20)) for _ in range(10)]:
        sock.recv(1, socket.MSG_PEEK)  # the 503 has come; then the rest of the request: read and dropped, not reset (a broken pipe)
        sock.sendall(b'{"input": "Dogs"}   ')
        answer, gone = read_all(sock, GENEROUS)
        assert gone and answer.startswith(b"HTTP/1.1 503"), answer
        sock.close()
    for sock in kept:  # a connection that closes makes room
        sock.close()
    wait_for(lambda: good(server.url) == 200, "a request answered once the kept connections closed")
    for sock in closed:
        sock.close()
    assert "Traceback" not in server.output()


def test_stalled_connections_expire_and_make_room(quick):
    socks = [connect(quick.port, b"POST /predict HTTP/1.1\r\n") for _ in range(40)]  # as many as it keeps, stalled mid-head
    for sock in socks:  # each closed at the client timeout (1 s); at once, with a 503, if others still held a place
        assert read_all(sock, GENEROUS)[1]
        sock.close()
    assert good(quick.url) == 200
    assert "Traceback" not in quick.output()


# ------------------------------------------------------------------ bodies that are not what the API reads


def test_a_json_body_nested_1500_deep_is_a_400_in_one_line(quick):
    before = len(quick.output())
    body = b'{"input": ' + b"[" * 1500 + b"]" * 1500 + b"}"
    status, answer = exchange(quick.port, head(len(body)) + body)
    assert status == 400 and one_line_error(answer) == "the body nests arrays and objects more than 32 deep"
    for body, message in [
        (b'{"input": ' + b"9" * 5000 + b"}", "an integer of more than"),
        (b'{"input": "Dogs \\ud800"}', "lone surrogate"),
        (b'{"input": "Dogs \xed\xa0\x80"}', "not UTF-8"),
        (b'{"input": NaN}', "NaN is not a JSON value"),
        (b"null", "must be a JSON object"),
        (b'{"input": {"tokens": ' + b"[" * 40 + b"]" * 40 + b"}}", "more than 32 deep"),  # parsed, and still refused
    ]:
        status, answer = exchange(quick.port, head(len(body)) + body)
        assert status == 400 and message in one_line_error(answer), answer
    draw = b"[" * 1500 + b"]" * 1500
    status, answer = exchange(quick.port, head(len(draw), "/draw") + draw)
    assert status == 400 and "more than 32 deep" in one_line_error(answer)
    assert good(quick.url) == 200
    assert "Traceback" not in quick.output()[before:]


# ------------------------------------------------------------------ in-process


def test_a_client_that_stops_reading_its_response_is_cut_off(caplog):
    """Nothing bounded a response's write: a client that never reads held its connection (and the unsent bytes) for ever."""
    import uvicorn
    from uvicorn.server import ServerState

    from toolkit.serving.guard import protocol_class

    size = 64 << 20  # more than loopback's buffers take
    responding = []

    async def big(scope, receive, send):
        responding.append(scope["path"])
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", str(size).encode())]})
        await send({"type": "http.response.body", "body": b"x" * size})

    async def scenario():
        config = uvicorn.Config(big, http=protocol_class(0.5, 10), lifespan="off", log_level="warning")
        config.load()
        state = ServerState()
        server = await asyncio.get_running_loop().create_server(
            lambda: config.http_protocol_class(config=config, server_state=state, app_state={}), "127.0.0.1", 0
        )
        port = server.sockets[0].getsockname()[1]
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", port))
        began = time.monotonic()  # before the request: the response, and the time the client is given to read it, come after
        sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        while not responding and time.monotonic() - began < GENEROUS:
            await asyncio.sleep(0.01)
        while state.connections and time.monotonic() - began < GENEROUS:
            await asyncio.sleep(0.05)
        took = time.monotonic() - began
        server.close()
        got, _ = read_all(sock, 1)
        sock.close()
        return took, len(got), len(state.connections)

    with caplog.at_level("INFO", logger="toolkit.serving.guard"):
        took, got, left = asyncio.run(scenario())
    assert left == 0 and took >= 0.45, took  # cut off, and not before the client timeout of 0.5 s
    assert got < size
    assert "it read none of its response for 0.5 s" in caplog.text


class Echo:
    """A decoder that answers each input with its length (an empty input is refused, as a predictor would)."""

    def __call__(self, texts):
        return [{"length": len(text)} if text.strip() else {"error": "empty input line", "input": text} for text in texts]


@pytest.fixture(scope="module")
def client():
    pytest.importorskip("httpx2")
    from starlette.testclient import TestClient

    from toolkit.serving.app import create_app
    from toolkit.serving.batcher import Batcher
    from toolkit.serving.guard import Guard

    app = create_app(None, Batcher(Echo()), {}, max_body=1 << 16)
    with TestClient(Guard(app, max_body=1 << 16, client_timeout=5), raise_server_exceptions=False) as client:
        yield client


def bodies(seed: int, count: int):
    """Bodies of every kind a client might send, valid and not: mutations of good ones, nesting, odd numbers and text."""
    rng = random.Random(seed)
    good_bodies = [b'{"input": "Dogs bark"}', b'{"inputs": ["a", {"tokens": ["b", "c"]}]}', '{"input": "caf\u00e9 \U0001f600"}'.encode()]
    pieces = [b"[", b"]", b"{", b"}", b'"', b"\\", b":", b",", b"\\ud800", b"\\udfff", b"\\u0000", b"\x00", b"\xff", b"\xed\xa0\x80", b"\xef\xbb\xbf"]
    pieces += [b"NaN", b"-Infinity", b"1e999", b"9" * 5000, b"-0", b"true", b"null", b'"input"', b'"inputs"', b"\r\n", b"\t"]
    for _ in range(count):
        kind = rng.randrange(5)
        if kind == 0:  # a good body with bytes flipped, cut or inserted
            body = bytearray(rng.choice(good_bodies))
            for _ in range(rng.randint(1, 4)):
                where = rng.randrange(len(body) + 1)
                action = rng.randrange(3)
                if action == 0 and where < len(body):
                    body[where] = rng.randrange(256)
                elif action == 1:
                    del body[where:]
                else:
                    body[where:where] = rng.choice(pieces)
            yield bytes(body)
        elif kind == 1:  # nested to a random depth, as "input" or as the whole body
            depth = rng.choice([1, 2, 31, 32, 33, 200, 999, 1500, 5000])
            opener, closer = rng.choice([(b"[", b"]"), (b'{"a": ', b"}")])
            nested = opener * depth + rng.choice([b"1", b'"x"', b"null"]) + closer * depth
            yield rng.choice([nested, b'{"input": ' + nested + b"}", b'{"inputs": [' + nested + b"]}"])
        elif kind == 2:  # random pieces
            yield b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 30)))
        elif kind == 3:  # a good body in another encoding
            text = rng.choice(good_bodies).decode()
            yield text.encode(rng.choice(["utf-16", "utf-16-le", "utf-32", "latin-1", "cp1252"]), errors="replace")
        else:  # an "input" of a random JSON value
            value = rng.choice([b"1", b"1.5", b"true", b"null", b"[]", b"{}", b'""', b'"  "', b'{"tokens": []}', b"9" * 4301, b'"\\u0000"'])
            yield b'{"input": ' + value + b"}"


def test_no_body_is_a_500_or_a_traceback(client, caplog):
    """Whatever the body, the answer is a 200 or a 4xx whose error is one line: never a 500."""
    statuses = {}
    for body in bodies(seed=7, count=600):
        for path in ("/predict", "/draw"):
            if path == "/draw" and not body.startswith(b'{"input"'):
                continue
            response = client.post(path, content=body, headers={"content-type": "application/json"})
            statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
            assert response.status_code in (200, 400, 413, 422), (body[:200], response.status_code, response.text[:300])
            if response.status_code != 200:
                one_line_error(response.json())
    assert statuses.get(400, 0) > 200 and statuses.get(200, 0) > 10, statuses
    assert "Traceback" not in caplog.text


# ------------------------------------------------------------------ measurements: python -m tests.test_serve_faults ARCHIVE [CASE ...]


def measure_stops(archive) -> None:
    from toolkit.serving.launch import start_server

    for sig in (signal.SIGTERM, signal.SIGINT):
        for name, data in (
            ("mid-body (Content-Length 100, 5 bytes sent)", head(100) + b'{"inp'),
            ("mid-head", b"POST /predict HTTP/1.1\r\nHost: x\r\n"),
            ("idle", b""),
        ):
            server = start_server(archive, "--device", "cpu", threads=1)
            sock = connect(server.port, data)
            time.sleep(0.5)
            began = time.monotonic()
            server.process.send_signal(sig)
            try:
                outcome = f"exit {server.process.wait(20)} after {time.monotonic() - began:.2f} s"
            except subprocess.TimeoutExpired:
                outcome = "still running 20 s later (killed)"
                server.process.kill()
                server.process.wait()
            print(f"{sig.name}, a client {name}: {outcome}; tracebacks in the log: {server.output().count('Traceback')}", flush=True)
            sock.close()


def measure_stalls(archive) -> None:
    from toolkit.serving.launch import start_server

    for count, name, first, trickle in (
        (200, "slowloris heads (a header line every 2 s)", b"POST /predict HTTP/1.1\r\nHost: x\r\n", b"X-A: b\r\n"),
        (100, "slow bodies (Content-Length 100, a byte every 2 s)", head(100) + b'{"input": "', b"a"),
        (100, "silent connections", b"", b""),
    ):
        server = start_server(archive, "--device", "cpu", threads=1)
        socks = [connect(server.port, first) for _ in range(count)]
        for sock in socks:
            sock.setblocking(False)
        began, closed, answer = time.monotonic(), {}, None
        while time.monotonic() - began < 30:
            for sock in socks:
                if sock in closed:
                    continue
                try:
                    if sock.recv(65536) == b"":
                        closed[sock] = time.monotonic() - began
                        continue
                except BlockingIOError:
                    pass
                except OSError:
                    closed[sock] = time.monotonic() - began
                    continue
                if trickle and int(time.monotonic() - began) % 2 == 0:
                    try:
                        sock.send(trickle)
                    except OSError:
                        closed[sock] = time.monotonic() - began
            if answer is None and time.monotonic() - began > 3:
                answer = good(server.url, dependency=False)
            time.sleep(1)
        times = sorted(closed.values())
        span = f" (after {times[0]:.0f}-{times[-1]:.0f} s)" if times else ""
        print(f"{count} clients, {name}, for 30 s: {len(closed)} closed by the server{span}; a good request meanwhile: {answer}", flush=True)
        for sock in socks:
            sock.close()
        server.stop(20)


def measure_departures(archive) -> None:
    from toolkit.serving.launch import start_server

    server = start_server(archive, "--device", "cpu", threads=1)
    before = len(server.output())
    for _ in range(50):
        with connect(server.port, head(100) + b'{"inp'):
            time.sleep(0.02)
    time.sleep(1)
    log = server.output()[before:]
    print(
        f"50 clients leave mid-body: {log.count('Traceback')} tracebacks, {len(log.splitlines())} log lines; a good request after: {good(server.url, dependency=False)}",
        flush=True,
    )
    server.stop(20)


def measure_bodies(archive) -> None:
    from toolkit.serving.launch import start_server

    cases = [
        ("JSON nested 1,500 deep", b'{"input": ' + b"[" * 1500 + b"]" * 1500 + b"}"),
        ("an integer of 5,000 digits", b'{"input": ' + b"9" * 5000 + b"}"),
        ("a lone surrogate \\ud800", b'{"input": "Dogs \\ud800"}'),
        ("NaN", b'{"input": {"tokens": [NaN]}}'),
        ("invalid UTF-8", b'{"input": "caf\xe9"}'),
        ("NUL byte", b'{"input": "a\x00b"}'),
        ("null", b"null"),
        ("a string", b'"Dogs bark"'),
        ("a list", b'["Dogs bark"]'),
        ("form-encoded", b"input=Dogs+bark"),
    ]
    server = start_server(archive, "--device", "cpu", threads=1)
    for name, body in cases:
        before = len(server.output())
        status, answer = exchange(server.port, head(len(body)) + body)
        time.sleep(0.1)
        print(f"{name}: {status} {json.dumps(answer)[:140]} | tracebacks in the log: {server.output()[before:].count('Traceback')}", flush=True)
    print(f"a good request after all that: {good(server.url, dependency=False)}")
    server.stop(20)


def measure_flood(archive) -> None:
    from toolkit.serving.launch import start_server

    server = start_server(archive, "--device", "cpu", threads=1)
    socks = [connect(server.port) for _ in range(2000)]
    time.sleep(0.5)
    shut = sum(read_all(sock, 0.001)[1] for sock in socks)
    print(f"2,000 idle connections: {shut} answered 503 and closed at once; a good request: {good(server.url, dependency=False)}", flush=True)
    for sock in socks:
        sock.close()
    server.stop(20)


if __name__ == "__main__":
    measures = {"stops": measure_stops, "stalls": measure_stalls, "departures": measure_departures, "bodies": measure_bodies, "flood": measure_flood}
    for case in sys.argv[2:] or measures:
        measures[case](sys.argv[1])
