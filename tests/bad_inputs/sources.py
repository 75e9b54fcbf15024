"""Where configs and models come from: jsonnet that never ends or reads a device, downloads that stall or never end."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable
from contextlib import suppress

from tests.bad_inputs.machinery import SEQ2SEQ, Case, Env
from tests.misbehaving_server import Behaviour, endless, headers, misbehaving_server, slow_headers, trickle, whole
from toolkit import downloads

# ------------------------------------------------------------------ configs (item 6)


def config_error(config: str, **bounds: str) -> Callable[[Env], str]:
    """A check: `toolkit train` on tiny_seq2seq.jsonnet with *config* added to its model (``FIFO`` standing for
    a named pipe's path), the TOOLKIT_CONFIG_* *bounds* set.
    """

    def check(env: Env) -> str:
        env.seq2seq_env()
        for name, value in bounds.items():
            env.monkeypatch.setenv(f"TOOLKIT_CONFIG_{name.upper()}", value)
        fifo = env.tmp / "fifo.libsonnet"
        os.mkfifo(fifo)
        release = threading.Timer(120, _release, [fifo])  # an evaluation that waits for a writer fails the case instead of hanging it
        release.start()
        try:
            path = env.write({"config.jsonnet": f"(import '{SEQ2SEQ}') + {{\n  model+: {config.replace('FIFO', str(fifo))},\n}}\n"})
            return env.cli_error("train", path, "-s", env.tmp / "run")
        finally:
            release.cancel()

    return check


def _release(fifo) -> None:
    """Open *fifo* for writing and close it: a reader blocked on it reads the end of the file."""
    with suppress(OSError):  # ENXIO: nobody reads it, as it should be
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


def override_error(snippet: str, **bounds: str) -> Callable[[Env], str]:
    def check(env: Env) -> str:
        env.seq2seq_env()
        for name, value in bounds.items():
            env.monkeypatch.setenv(f"TOOLKIT_CONFIG_{name.upper()}", value)
        return env.cli_error("train", SEQ2SEQ, "-s", env.tmp / "run", "-o", snippet)

    return check


CONFIG_CASES = [
    Case(
        "config-importstr-dev-zero",
        "a config with `importstr '/dev/zero'` (jsonnet read until it aborted the process: `FATAL ERROR`, SIGABRT, no `error:` line)",
        "`toolkit train`",
        'error: cannot evaluate config.jsonnet: RUNTIME ERROR: couldn\'t open import "/dev/zero": /dev/zero is a character device, not a regular file '
        "(config.jsonnet:2:…)",
        config_error("{ vocabulary: importstr '/dev/zero' }"),
    ),
    Case(
        "config-array-bomb",
        "a jsonnet array bomb (`std.makeArray(1e9, function(i) i)`: SIGABRT as above)",
        "`toolkit train` (`TOOLKIT_CONFIG_MEMORY_MB=300`)",
        "error: cannot evaluate config.jsonnet: it needs more memory than 300 MB (TOOLKIT_CONFIG_MEMORY_MB), the bound on evaluating a config",
        config_error("{ sizes: std.makeArray(1e9, function(i) i) }", memory_mb="300"),
    ),
    Case(
        "config-huge-string",
        "a huge string (`std.repeat('x', 1e10)`: SIGABRT as above)",
        "`toolkit train` (`TOOLKIT_CONFIG_MEMORY_MB=300`)",
        "error: cannot evaluate config.jsonnet: it needs more memory than 300 MB (TOOLKIT_CONFIG_MEMORY_MB), the bound on evaluating a config",
        config_error("{ name: std.repeat('x', 1e10) }", memory_mb="300"),
    ),
    Case(
        "config-import-fifo",
        "a config that imports a named pipe (jsonnet waited for a writer for ever)",
        "`toolkit train`",
        'error: cannot evaluate config.jsonnet: RUNTIME ERROR: couldn\'t open import "…fifo.libsonnet": …fifo.libsonnet is a pipe (FIFO), not a regular file '
        "(config.jsonnet:2:…)",
        config_error("import 'FIFO'"),
    ),
    Case(
        "override-endless",
        "an `-o` snippet that never ends (`local loop(n) = … loop(n - 1) tailstrict; loop(1e15)`: ran for ever)",
        "`toolkit train` (`TOOLKIT_CONFIG_SECONDS=1`)",
        "error: -o '…': cannot evaluate <snippet>: it ran for longer than 1 s (TOOLKIT_CONFIG_SECONDS), the bound on evaluating a config",
        override_error("local loop(n) = if n == 0 then {} else loop(n - 1) tailstrict; loop(1e15)", seconds="1"),
    ),
]

# ------------------------------------------------------------------ model URLs (item 7)


def downloading(behaviour: Callable[[Env], Behaviour], **bounds: str) -> Callable[[Env], str]:
    """A check: `toolkit predict URL` where the server at URL does what *behaviour* makes; the
    TOOLKIT_DOWNLOAD_* *bounds* set. One `error:` line, and the cache holds nothing after it.
    """

    def check(env: Env) -> str:
        cache = env.tmp / "cache"
        env.monkeypatch.setenv("TOOLKIT_ARCHIVE_CACHE", str(cache))
        for name, value in bounds.items():
            env.monkeypatch.setenv(f"TOOLKIT_DOWNLOAD_{name.upper()}", value)
        questions = env.write({"questions.txt": "where is c0\n"})
        with misbehaving_server() as server:
            message = env.cli_error("predict", server.serve("/model.tar.gz", behaviour(env)), questions)
        assert not cache.exists() or list(cache.iterdir()) == [], "nothing is left behind"
        return message

    return check


def trickle_with_a_short_stall_window(env: Env) -> Behaviour:
    env.monkeypatch.setattr(downloads, "STALL_SECONDS", 0.3)
    return trickle(b"x" * 100_000, every=0.02)


def terminated_mid_download(env: Env) -> None:
    """SIGTERM sent to this process once 1,000 bytes of the archive have come: status 143, `interrupted`, no .part left."""
    cache = env.tmp / "cache"
    env.monkeypatch.setenv("TOOLKIT_ARCHIVE_CACHE", str(cache))
    archive = env.archive().read_bytes()
    questions = env.write({"questions.txt": "where is c0\n"})

    def then_terminate(out, stop: threading.Event) -> None:
        out.write(headers(len(archive)) + archive[:1000])
        out.flush()
        assert [path.suffix for path in cache.iterdir()] == [".part"]
        os.kill(os.getpid(), signal.SIGTERM)
        stop.wait(30)  # the rest never comes

    with misbehaving_server() as server:
        code, _, err = env.cli("predict", server.serve("/model.tar.gz", then_terminate), questions)
    assert code == 143 and err.strip().splitlines()[-1] == "interrupted" and "Traceback" not in err, (code, err)
    assert list(cache.iterdir()) == []


def stale_part_removed(env: Env) -> None:
    """A .part no process holds (what SIGKILL leaves) is removed by the next download; one a live download holds stays."""
    cache = env.tmp / "cache"
    cache.mkdir()
    env.monkeypatch.setenv("TOOLKIT_ARCHIVE_CACHE", str(cache))
    archive = env.archive().read_bytes()
    old = time.time() - 2 * downloads.STALE_SECONDS
    for name in (".killed.part", ".live.part"):
        (cache / name).write_bytes(archive[:1000])
        os.utime(cache / name, (old, old))
    with open(cache / ".live.part", "rb") as live, misbehaving_server() as server:
        downloads.fcntl.flock(live.fileno(), downloads.fcntl.LOCK_EX)
        code, out, err = env.cli("predict", server.serve("/model.tar.gz", whole(archive)), env.write({"questions.txt": "where is c0\n"}))
    assert code == 0 and out, err
    assert sorted(path.name for path in cache.iterdir() if path.suffix == ".part") == [".live.part"]


def endless_after_the_archive(env: Env) -> Behaviour:
    return endless(start=env.archive().read_bytes())


URL = "error: cannot download http://127.0.0.1:…/model.tar.gz"

DOWNLOAD_CASES = [
    Case(
        "download-trickle",
        "a model URL whose server sends a byte every 2 s (it was still downloading after 60 s); here every 0.02 s, with a 0.3 s stall window",
        "`toolkit predict URL`",
        f"{URL}: less than 64 KB arrived in 0.3 s (the server stalls or trickles); nothing was kept",
        downloading(trickle_with_a_short_stall_window),
    ),
    Case(
        "download-endless",
        "a model URL whose body never ends, with no Content-Length (it filled the cache's file system)",
        "`toolkit predict URL` (`TOOLKIT_DOWNLOAD_MAX_MB=1`)",
        f"{URL}: it goes on past 1,000,000 bytes, 1 MB (TOOLKIT_DOWNLOAD_MAX_MB), the most a body of no stated size may be; nothing was kept",
        downloading(lambda env: endless(), max_mb="1"),
    ),
    Case(
        "download-terminated",
        "SIGTERM during a download (it left its `.part` file)",
        "`toolkit predict URL`",
        "status 143, `interrupted`, and nothing left in the cache",
        terminated_mid_download,
        message=False,
    ),
    Case(
        "download-past-its-manifest",
        "a real archive whose body goes on with zeros, with no Content-Length",
        "`toolkit predict URL`",
        f"{URL}: it goes on past …,… bytes, what the archive's manifest accounts for; nothing was kept",
        downloading(endless_after_the_archive),
    ),
    Case(
        "download-endless-headers",
        "a server that trickles a header that never ends (a byte every 0.02 s)",
        "`toolkit predict URL` (`TOOLKIT_DOWNLOAD_SECONDS=0.5`)",
        f"{URL}: it took longer than 0.5 s (TOOLKIT_DOWNLOAD_SECONDS); nothing was kept",
        downloading(lambda env: slow_headers(every=0.02), seconds="0.5"),
    ),
    Case(
        "download-too-big",
        "a Content-Length of 10¹⁸ bytes",
        "`toolkit predict URL`",
        f"{URL}: it is 1,000,000,000,000.0 MB, and the cache … has … MB free (make room, or set TOOLKIT_ARCHIVE_CACHE to another folder)",
        downloading(lambda env: whole(b"x" * 1000, claimed=10**18)),
    ),
    Case(
        "download-stale-part",
        "a `.part` file that a killed download (SIGKILL) left in the cache",
        "`toolkit predict URL`",
        "the next download removes it and succeeds; a `.part` that a live download holds stays",
        stale_part_removed,
        message=False,
    ),
]

CASES: list[Case] = [*CONFIG_CASES, *DOWNLOAD_CASES]
