"""Downloads that end: an overall deadline, a size cap, and no partial file left behind.

A URL's body is read into a ``.part`` file beside where it will be kept (see
:mod:`toolkit.archive_sources`), and whatever the server does, the download ends in one line:

- by ``DOWNLOAD_SECONDS`` overall (:mod:`toolkit.limits`; an hour unless raised), and as soon as
  less than ``STALL_BYTES`` arrive in ``STALL_SECONDS`` (a server that stops, or sends a byte every
  2 s). The deadline is checked as bytes arrive; in the main thread an alarm also stops a server
  that trickles its headers;
- at its size: the Content-Length the server gives, checked against the free space first; what
  the first bytes show (an archive's manifest lists its members' sizes); else ``DOWNLOAD_MAX_MB``;
- with its ``.part`` file removed however it ends: an error, Ctrl-C, SIGTERM (raised as Ctrl-C
  here, :mod:`toolkit.interrupts`). A process killed outright (SIGKILL) cannot clean up: its
  ``.part`` is never used (only a download that passed its checks is renamed into place), and the
  next download in that folder removes it once no process holds its lock.
"""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO

from toolkit.errors import ArchiveError
from toolkit.interrupts import in_main_thread, termination_interrupts
from toolkit.limits import DOWNLOAD_MAX_MB, DOWNLOAD_SECONDS, MB

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no locks, so stale .part files stay
    fcntl = None  # type: ignore[assignment]

STALL_SECONDS = 30.0  # also the socket timeout: a read that waits this long gives up
STALL_BYTES = 64 * 1024  # the least that must arrive in STALL_SECONDS
HEAD = 64 * 1024  # how much of the start is shown to the caller's size bound (an archive's manifest)
PART_SUFFIX = ".part"
STALE_SECONDS = 60.0  # a .part file untouched this long, and unlocked, was left by a killed process


class PartialFile:
    """A new ``.part`` file in *folder* (those that killed processes left there removed first), open
    for writing and locked while this process writes it. As a context manager, it gives its path and
    file, and is removed on leaving, whatever the way out (Ctrl-C and SIGTERM included), unless
    renamed first. Creating it raises ``OSError`` where *folder* cannot be written.
    """

    def __init__(self, folder: Path):
        remove_stale_parts(folder)
        handle, name = tempfile.mkstemp(dir=folder, prefix=".", suffix=PART_SUFFIX)  # its own name: two processes may fetch one URL
        self.path, self.file = Path(name), os.fdopen(handle, "wb")
        if fcntl is not None:
            fcntl.flock(self.file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        self.terminations = termination_interrupts()

    def __enter__(self) -> tuple[Path, IO[bytes]]:
        self.terminations.__enter__()
        return self.path, self.file

    def __exit__(self, *exception) -> None:
        try:
            self.file.close()
            self.path.unlink(missing_ok=True)
        finally:
            self.terminations.__exit__(*exception)


def remove_stale_parts(folder: Path) -> None:
    """Remove the ``.part`` files in *folder* that no process is writing (their writer was killed)."""
    if fcntl is None:
        return
    for path in folder.glob(f".*{PART_SUFFIX}"):
        with suppress(OSError):
            if time.time() - path.stat().st_mtime < STALE_SECONDS:  # it may be so new that its writer has not locked it yet
                continue
            with open(path, "rb") as file:
                try:
                    fcntl.flock(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue  # a live download
                path.unlink()


def check_room(url: str, length: int, folder: Path, variable: str) -> None:
    """Refuse at once a download of *length* bytes that *folder*'s file system has no room for."""
    free = shutil.disk_usage(folder).free
    if length > free:
        raise ArchiveError(
            f"cannot download {url}: it is {length / MB:,.1f} MB, and the cache {folder} has {free / MB:,.1f} MB free (make room, or set {variable} to another folder)"
        )


class Deadline(Exception):
    """The alarm of :func:`deadline` rang."""


@contextmanager
def deadline(url: str) -> Iterator[float]:
    """The monotonic time by which the download of *url* must end; in the main thread an alarm raises
    at that time too, wherever the download waits (connecting, a server trickling its headers).
    An alarm set before is put back, with what was left of its time.
    """
    seconds = DOWNLOAD_SECONDS.value()
    started = time.monotonic()
    if not in_main_thread() or not hasattr(signal, "setitimer"):
        yield started + seconds
        return
    armed = [True]

    def ring(signum, frame) -> None:
        if armed[0]:  # not once the download is over, on its way out
            raise Deadline

    previous = signal.signal(signal.SIGALRM, ring)
    left, interval = signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield started + seconds
    except Deadline:
        raise ArchiveError(took_too_long(url)) from None
    finally:
        armed[0] = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if left or interval:
            signal.setitimer(signal.ITIMER_REAL, max(left - (time.monotonic() - started), 1e-6), interval)


def took_too_long(url: str) -> str:
    return f"cannot download {url}: it took longer than {DOWNLOAD_SECONDS.describe()}; nothing was kept"


def copy_body(response, file: IO[bytes], url: str, ends: float, length: int | None, bound: Callable[[bytes], int | None] | None = None) -> int:
    """Copy the body of *response* (an ``http.client.HTTPResponse``) into *file* by the monotonic time
    *ends*, at most *length* bytes where the server said (``http.client`` reads no further), else
    ``DOWNLOAD_MAX_MB``, and at most what *bound* makes of the first ``HEAD`` bytes; the bytes copied.
    """
    most, why = DOWNLOAD_MAX_MB.as_bytes(), f"{DOWNLOAD_MAX_MB.describe()}, the most a body of no stated size may be"
    if length is not None:
        most, why = length, "its Content-Length"
    head = bytearray()
    received = window = 0
    window_start = time.monotonic()
    while chunk := response.read1(1 << 20):  # read1: what one read of the socket gives, so that a trickle is seen as one
        received += len(chunk)
        if len(head) < HEAD:
            head += chunk[: HEAD - len(head)]
            if len(head) == HEAD and bound is not None and (found := bound(bytes(head))) is not None and found < most:
                most, why = found, "what the archive's manifest accounts for"
        if received > most:
            raise ArchiveError(f"cannot download {url}: it goes on past {most:,} bytes, {why}; nothing was kept")
        file.write(chunk)
        now, window = time.monotonic(), window + len(chunk)
        if now > ends:
            raise ArchiveError(took_too_long(url))
        if now - window_start >= STALL_SECONDS:
            if window < STALL_BYTES:
                raise ArchiveError(
                    f"cannot download {url}: less than {STALL_BYTES // 1024} KB arrived in {STALL_SECONDS:g} s (the server stalls or trickles); nothing was kept"
                )
            window_start, window = now, 0
    return received
