r"""The files a user names: input read line by line, output that fails in one line, atomic writes, a lock.

A line is what ends in ``\n`` (or the end of the file), as ``wc -l`` counts: a bare ``\r``, a form
feed or U+2028 inside a line stays inside it, so a predictor writes exactly one record per input
line. Every operating-system error on a named path becomes a :class:`ToolkitError` that names the
path and the reason (``permission denied``), never a traceback.
"""

from __future__ import annotations

import errno
import io
import json
import os
import shutil
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO, Any

from toolkit.errors import DataError, ToolkitError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory locks
    fcntl = None  # type: ignore[assignment]


def reason(error: OSError) -> str:
    """``permission denied``, ``is a directory``...: an OSError's reason in lower case, without the path."""
    return (error.strerror or type(error).__name__).lower()


def parse_json(text: str | bytes) -> Any:
    """``json.loads`` whose every failure is a ``ValueError``: nesting too deep for Python's stack
    (``[[[[...``, 1,500 deep) raised a ``RecursionError`` that escaped the callers' ``except``.
    """
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("JSON nested too deeply to read") from None


# Why a write fails when the file system, not the program, is at fault.
FILE_SYSTEM_ERRORS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EIO, errno.EACCES, errno.EPERM}
FULL = "no space left on the device"


def write_failure(error: BaseException, path: str | os.PathLike) -> str | None:
    """Why writing *path* failed, when the file system is the cause (a full disk, a quota, a read-only
    mount); ``None`` for anything else (a bug keeps its traceback).

    torch and safetensors do not always say: ``torch.save`` on a full disk raises a ``RuntimeError``
    (``enforce fail at inline_container.cc``) without an errno, so a failed write on a file system
    with no free space left is taken for a full disk too.
    """
    cause: BaseException | None = error
    while cause is not None:
        if isinstance(cause, OSError) and cause.errno in FILE_SYSTEM_ERRORS:
            return FULL if cause.errno == errno.ENOSPC else reason(cause)
        if "No space left on device" in str(cause):
            return FULL
        cause = cause.__cause__ or cause.__context__
    if isinstance(error, (OSError, RuntimeError)) or type(error).__name__ == "SafetensorError":
        with suppress(OSError):
            if shutil.disk_usage(Path(path).parent).free < 1 << 16:
                return FULL
    return None


MAX_LINE_CHARS = 1 << 20
"""The longest line read whole; a longer one is kept as its first this-many characters (an :class:`OverlongLine`)."""


class OverlongLine(str):
    """The start of a line too long to read whole; ``length`` is how many characters the whole line had.

    Memory stays bounded on any input, even one without a newline, and the line keeps its place:
    predictors answer it with an error record (see :func:`check_line`) instead of parsing a prefix.
    """

    length: int

    def __new__(cls, start: str, length: int) -> OverlongLine:
        line = super().__new__(cls, start)
        line.length = length
        return line


def check_line(line: str) -> None:
    """Raise a :class:`DataError` for a line that was too long to read whole, or that is not text."""
    if isinstance(line, OverlongLine):
        raise DataError(f"a line of {line.length:,} characters is longer than predict reads ({MAX_LINE_CHARS:,} at most)")
    if why := not_text(line):
        raise DataError(why)


def not_text(line: str) -> str | None:
    """Why *line* cannot be text (a NUL byte: binary data, or UTF-16 read as UTF-8), or ``None``."""
    if "\0" in line:
        return f"a NUL byte at character {line.index(chr(0))} of the line: this is not UTF-8 text (UTF-16 without a byte order mark?)"
    return None


# Byte order marks of the encodings a text editor saves "Unicode" text in, longest first.
FOREIGN_BOMS = {
    b"\xff\xfe\x00\x00": "UTF-32LE",
    b"\x00\x00\xfe\xff": "UTF-32BE",
    b"\xff\xfe": "UTF-16LE",
    b"\xfe\xff": "UTF-16BE",
}


def check_encoding(head: bytes, name: str | os.PathLike) -> None:
    """Refuse a file whose first bytes (*head*) are a UTF-16 or UTF-32 byte order mark: read as UTF-8,
    every other byte is a NUL and the line breaks fall in the wrong places (2 lines read as 3).
    """
    for mark, encoding in FOREIGN_BOMS.items():
        if head.startswith(mark):
            convert = f"iconv -f {encoding[:6]} -t UTF-8"
            example = f"{convert} {name} > {Path(name).stem}.utf8{Path(name).suffix}" if name != "<stdin>" else f"... | {convert} | toolkit ..."
            raise DataError(
                f"the file is {encoding} text (its byte order mark says so), and this toolkit reads UTF-8: convert it first, e.g. {example}", path=str(name)
            )


class InputLines:
    r"""The lines of a text stream without their endings (``\n`` or ``\r\n``); ``name`` says where they come from.

    Lines are read one at a time, and none whole past ``MAX_LINE_CHARS``, so reading a file of any
    size holds one line in memory.
    """

    def __init__(self, stream: IO[str], name: str):
        self.stream, self.name = stream, name

    def __iter__(self) -> Iterator[str]:
        most, read = MAX_LINE_CHARS, self.stream.readline
        while start := read(most + 2):  # room for a line of the most characters and its "\r\n"
            piece, tail, length = start, start[-2:], len(start)
            while len(piece) == most + 2 and not piece.endswith("\n"):  # cut short: read on to its end
                piece = read(most + 2)
                tail, length = (tail + piece)[-2:], length + len(piece)
            length -= len(tail) - len(tail.removesuffix("\n").removesuffix("\r"))
            yield start.removesuffix("\n").removesuffix("\r") if length <= most else OverlongLine(start[:most], length)


@contextmanager
def input_lines(path: str | os.PathLike) -> Iterator[InputLines]:
    """The lines of *path* (``-``: standard input), a leading BOM dropped, invalid UTF-8 as U+FFFD.

    Bad bytes are replaced rather than refused so that one damaged line cannot stop a stream; the
    line is still read at its place.
    """
    if str(path) == "-":
        buffer = getattr(sys.stdin, "buffer", None)
        if buffer is None:  # already text (a test's StringIO): it splits on "\n" alone
            yield InputLines(sys.stdin, "<stdin>")
            return
        if hasattr(buffer, "peek"):
            check_encoding(buffer.peek(4)[:4], "<stdin>")
        stream = io.TextIOWrapper(buffer, encoding="utf-8-sig", errors="replace", newline="\n")
        try:
            yield InputLines(stream, "<stdin>")
        finally:
            stream.detach()  # leave sys.stdin open
        return
    try:
        stream = open(path, encoding="utf-8-sig", errors="replace", newline="\n")  # noqa: SIM115 - closed below, errors first
        head = stream.buffer.peek(4)[:4] if hasattr(stream.buffer, "peek") else b""
    except FileNotFoundError:
        raise ToolkitError(f"input file not found: {path}") from None
    except OSError as error:
        raise ToolkitError(f"cannot read the input file {path}: {reason(error)}") from None
    with stream:
        check_encoding(head, path)
        yield InputLines(stream, str(path))


def open_output(path: str | os.PathLike) -> IO[str]:
    """*path* opened for writing UTF-8 text, or one clear error (a missing folder, no permission, a directory)."""
    try:
        return open(path, "w", encoding="utf-8")
    except OSError as error:
        raise ToolkitError(f"cannot write the output file {path}: {reason(error)}") from None


@contextmanager
def writing_output(path: str | os.PathLike | None) -> Iterator[IO[str]]:
    """The output file *path* (``None``: standard output) open for text, whose failure to write (a full
    disk) is one :class:`ToolkitError`; the file then holds the output of the first inputs only.
    """
    stream = open_output(path) if path is not None else sys.stdout
    try:
        try:
            yield stream
            stream.flush()
        finally:
            if path is not None:
                stream.close()
    except OSError as error:
        if isinstance(error, BrokenPipeError) or not (why := write_failure(error, path or ".")):
            raise
        where = f"the output file {path}" if path is not None else "the output"
        raise ToolkitError(f"cannot write {where}: {why}; what was written holds the first inputs only") from None


def check_writable(path: str | os.PathLike, inputs: Sequence[str | os.PathLike] = ()) -> None:
    """Fail now, before a long computation, if *path* could not be written later, or is one of the *inputs*.

    Writing the output over an input (the same path, or a link to it) would empty it before it is read.
    """
    path = Path(path)
    for source in inputs:
        if str(source) != "-" and path.exists() and Path(source).exists() and path.samefile(source):
            raise ToolkitError(f"the output file {path} is the input {source}: writing it would destroy the input; name another file")
    if path.is_dir():
        raise ToolkitError(f"cannot write the output file {path}: it is a directory")
    folder = path.parent
    if not folder.is_dir():
        why = f"{folder} is not a folder" if folder.exists() else f"the folder {folder} does not exist"
        raise ToolkitError(f"cannot write the output file {path}: {why}")
    if not os.access(path if path.exists() else folder, os.W_OK):
        raise ToolkitError(f"cannot write the output file {path}: permission denied")


def atomic_write(path: Path, write: Callable[[Path], object]) -> None:
    """Call ``write(temporary_path)`` then rename over *path*, so a crash never leaves a torn file.

    A write that fails (a full disk) removes its temporary file and leaves *path* as it was; when
    the file system is the cause, the error is one :class:`ToolkitError` that names *path*.
    """
    temporary = path.with_name(path.name + ".tmp")
    try:
        write(temporary)
        with open(temporary, "rb") as handle:
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException as error:
        with suppress(OSError):
            temporary.unlink()
        if isinstance(error, Exception) and not isinstance(error, ToolkitError) and (why := write_failure(error, path)):
            raise ToolkitError(f"cannot write {path}: {why}{' (the earlier one is unchanged)' if path.exists() else ''}") from None
        raise


def write_atomically(path: Path, text: str) -> None:
    """Write *text* (UTF-8) to *path* through :func:`atomic_write`: a killed run leaves the old file or the new one."""
    atomic_write(Path(path), lambda temporary: temporary.write_text(text, encoding="utf-8"))


class DirectoryLock:
    """An exclusive, advisory lock on a directory (``flock`` on ``DIR/.lock``), held while a run writes there.

    The operating system drops it when the process ends, however it ends, so a crashed run never
    leaves a stale lock. The file holds the owner's process id, for the message another process gets.
    """

    NAME = ".lock"

    def __init__(self, directory: str | os.PathLike):
        self.path = Path(directory) / self.NAME
        self.handle: IO[str] | None = None

    def acquire(self, doing: str) -> None:
        """Take the lock, or raise naming the process that holds it; *doing* says what was refused."""
        try:
            self.handle = open(self.path, "a+", encoding="utf-8")  # noqa: SIM115 - held until release()
        except OSError as error:
            raise ToolkitError(f"cannot {doing}: cannot write in {self.path.parent}: {reason(error)}") from None
        if fcntl is None:
            return
        try:
            fcntl.flock(self.handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self.handle.seek(0)
            owner = self.handle.read().strip() or "another process"
            self.handle.close()
            self.handle = None
            raise ToolkitError(f"cannot {doing}: {self.path.parent} is in use by a training run (process {owner}); wait for it to end or stop it") from None
        self.handle.seek(0)
        self.handle.truncate()
        self.handle.write(f"{os.getpid()}\n")
        self.handle.flush()

    def release(self) -> None:
        if self.handle is not None:
            self.handle.close()  # closing drops the flock
            self.handle = None
