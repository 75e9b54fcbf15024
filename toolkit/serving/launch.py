"""Start ``toolkit serve`` as a child process on a free loopback port, and wait until it answers.

For scripts, benchmarks and tests that drive a real server process. The server's output goes to a
temporary file, not a pipe, so a server that logs a lot never blocks on a pipe nobody reads.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import IO


@dataclass
class ServerProcess:
    """A running ``toolkit serve``: the process, its port and base URL, and its output so far."""

    process: subprocess.Popen
    port: int
    log: IO[str]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def output(self) -> str:
        """Everything the server wrote to stdout and stderr so far."""
        self.log.seek(0)
        return self.log.read()

    def stop(self, timeout: float = 60.0) -> int:
        """SIGTERM (requests read whole are answered, within the server's graceful time), then SIGKILL after *timeout* seconds; the exit code."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                return self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
        return self.process.wait()


def free_port() -> int:
    """A loopback port no one listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def answering_ctrl_c() -> None:
    """In a child about to start: Ctrl-C (SIGINT) stops it as it would in a foreground shell. A process a
    shell starts in the background ignores SIGINT, and its children inherit that (Python keeps an
    ignored SIGINT ignored), so a server started from a background job would not answer it.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start_server(archive: str | Path, *options: str, threads: int | None = None, timeout: float = 120.0) -> ServerProcess:
    """``toolkit serve ARCHIVE --port P OPTIONS`` on a free port, returned once ``/health`` answers.

    *threads* sets the server's torch threads (``OMP_NUM_THREADS``). ``RuntimeError`` with the
    server's output if it exits first, ``TimeoutError`` (the server killed) if it is not up in *timeout* seconds.
    """
    port = free_port()
    command = [sys.executable, "-m", "toolkit", "serve", str(archive), "--port", str(port), *options]
    return start_command(command, port, threads=threads, timeout=timeout)


def start_command(command: list[str], port: int, threads: int | None = None, timeout: float = 120.0) -> ServerProcess:
    """*command*, a server that listens on loopback *port*, returned once ``/health`` answers (as :func:`start_server`)."""
    env = dict(os.environ)
    if threads is not None:
        env.update(OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
    log = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115 - it lives as long as the server
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, text=True, env=env, preexec_fn=answering_ctrl_c)
    server = ServerProcess(process, port, log)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"the server exited with code {server.process.returncode}: {server.output()}")
        try:
            urllib.request.urlopen(f"{server.url}/health", timeout=1)
            return server
        except OSError:
            time.sleep(0.2)
    server.process.kill()
    raise TimeoutError(f"the server did not answer in {timeout:.0f} s: {server.output()}")
