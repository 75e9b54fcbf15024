r"""The files a user names: input read line by line; output written whole (renamed into place), never over
what is read, and failing in one line; atomic writes; a lock.

A line is what ends in ``\n`` (or the end of the file), as ``wc -l`` counts: a bare ``\r``, a form
feed or U+2028 inside a line stays inside it, so a predictor writes exactly one record per input
line. The one exception is a file whose lines all end in ``\r`` alone (classic Mac OS; see
:func:`line_end`), which holds no ``\n`` at all: its lines end in ``\r``. Every operating-system
error on a named path becomes a :class:`ToolkitError` that names the path and the reason
(``permission denied``), never a traceback.
"""

from __future__ import annotations

import errno
import io
import json
import os
import re
import secrets
import shutil
import stat
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path
from typing import IO, Any

from toolkit.errors import DataError, ToolkitError
from toolkit.interrupts import termination_interrupts

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


def check_line(line: str, bounded: bool = True) -> None:
    """Raise a :class:`DataError` for a line too long to read whole, or that is not text.

    A line read from a file is cut at :data:`MAX_LINE_CHARS` (an :class:`OverlongLine`); with
    *bounded*, a plain str longer than that (a text given to ``predict`` from Python) is too long as
    well. A data file's reader passes ``bounded=False``: its lines have no limit. Every tokenizer
    reads what passes: spaCy's up to :data:`MAX_LINE_CHARS` too (``spacy_blank``), where its own
    limit was 1,000,000 (error E088).
    """
    length = line.length if isinstance(line, OverlongLine) else len(line) if bounded else 0
    if length > MAX_LINE_CHARS:
        raise DataError(f"a line of {length:,} characters is longer than predict reads ({MAX_LINE_CHARS:,} at most)")
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


HEAD = 1 << 16  # the first bytes of an input, where its encoding and line ends are told
LONE_CR = re.compile(rb"\r[^\n]")


def line_end(head: bytes) -> str:
    r"""What ends the lines of a file whose first bytes are *head*: ``"\r"`` where they hold a carriage
    return followed by something other than ``\n``, and no ``\n`` (a classic Mac OS file), else ``"\n"``.

    Read as ``\n``-ended, such a file is one line, and a CoNLL-U file in it became raw text. A CR at
    the very end of *head* decides nothing (its ``\n`` may come next); a ``\n`` anywhere in it means
    a bare CR is a character of its line, as everywhere else.
    """
    return "\r" if b"\n" not in head and LONE_CR.search(head) else "\n"


def binary_lines(file: IO[bytes], block: int = 1 << 20) -> Iterator[bytes]:
    r"""The lines of the binary *file* with their endings, split as :func:`line_end` of its first bytes says."""
    peek = getattr(file, "peek", None)
    if peek is None or line_end(peek(HEAD)[:HEAD]) == "\n":
        yield from file
        return
    pieces: list[bytes] = []  # of the line the blocks read so far end in
    while data := file.read(block):
        *ended, tail = data.split(b"\r")
        for line in ended:
            yield b"".join([*pieces, line, b"\r"])
            pieces = []
        pieces.append(tail)
    if rest := b"".join(pieces):
        yield rest


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
        head = buffer.peek(HEAD)[:HEAD] if hasattr(buffer, "peek") else b""
        check_encoding(head, "<stdin>")
        stream = io.TextIOWrapper(buffer, encoding="utf-8-sig", errors="replace", newline=line_end(head))
        try:
            yield InputLines(stream, "<stdin>")
        finally:
            stream.detach()  # leave sys.stdin open
        return
    try:
        binary = open(path, "rb")  # noqa: SIM115 - closed below, errors first
        head = binary.peek(HEAD)[:HEAD] if hasattr(binary, "peek") else b""
    except FileNotFoundError:
        raise ToolkitError(f"input file not found: {path}") from None
    except OSError as error:
        raise ToolkitError(f"cannot read the input file {path}: {reason(error)}") from None
    with io.TextIOWrapper(binary, encoding="utf-8-sig", errors="replace", newline=line_end(head)) as stream:
        check_encoding(head, path)
        yield InputLines(stream, str(path))


def open_output(path: str | os.PathLike) -> IO[str]:
    """*path* opened for writing UTF-8 text, or one clear error (a missing folder, no permission, a directory)."""
    try:
        return open(path, "w", encoding="utf-8")
    except OSError as error:
        raise ToolkitError(f"cannot write the output file {path}: {reason(error)}") from None


def written_in_place(path: str | os.PathLike) -> bool:
    """Whether the output *path* is written as it streams rather than renamed into place: a device
    (``/dev/null``, ``/dev/full``), a pipe, or a descriptor (``/dev/stdout``, ``/proc/self/fd/1``),
    which no file can replace.
    """
    if str(Path(path).absolute()).startswith(("/dev/", "/proc/")):
        return True
    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:  # not there yet (or unreadable: opening it says why)
        return False


@contextmanager
def temporary_beside(path: Path) -> Iterator[Path]:
    """A new empty file in *path*'s folder, hidden and named after it, that no other writer shares.

    It is made as ``open(path, "w")`` would make *path* (the umask applies), and takes the mode of
    the file it will replace, so renaming it into place changes no permission. It is held (``flock``)
    until the context ends, and takes its ``.tmp`` name only once held, so that
    :func:`remove_dead_temporaries` tells a writer that died, killed before it could remove its
    file, from one still writing. The caller renames or removes it before the context ends.
    """
    while True:
        token = secrets.token_hex(4)
        making = path.with_name(f".{path.name}.{token}.new")
        try:
            held = os.open(making, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
        break
    try:
        if fcntl is not None:
            fcntl.flock(held, fcntl.LOCK_EX)
        temporary = path.with_name(f".{path.name}.{token}.tmp")
        os.rename(making, temporary)
    except BaseException:
        os.close(held)
        with suppress(OSError):
            making.unlink()
        raise
    try:
        with suppress(OSError):
            os.chmod(temporary, stat.S_IMODE(os.stat(path).st_mode))
        yield temporary
    finally:
        os.close(held)  # the lock goes with it


def remove_dead_temporaries(paths: Iterable[Path]) -> None:
    """Remove the temporary files (:func:`temporary_beside`) that writers of *paths* died before removing:
    those nobody holds. A live writer's file is held, and left alone; without ``flock`` (Windows) none is removed.
    """
    if fcntl is None:
        return
    names: dict[Path, set[str]] = {}
    for path in paths:
        names.setdefault(path.parent, set()).add(path.name)
    for folder, written in names.items():
        try:
            with os.scandir(folder) as listing:
                found = [entry.path for entry in listing if (match := TEMPORARY.fullmatch(entry.name)) and match[1] in written]
        except OSError:  # no folder yet: nothing was written there
            continue
        for temporary in found:
            remove_unless_held(temporary)


TEMPORARY = re.compile(r"\.(.+)\.[0-9a-f]{8}\.tmp")


def remove_unless_held(path: str) -> None:
    try:
        descriptor = os.open(path, os.O_RDONLY)
    except OSError:  # gone meanwhile (renamed into place by its writer), or not ours to read
        return
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with suppress(OSError):
            os.unlink(path)
    except OSError:  # held: its writer is alive
        pass
    finally:
        os.close(descriptor)


@contextmanager
def writing_output(path: str | os.PathLike | None) -> Iterator[IO[str]]:
    """The output file *path* (``None``: standard output) open for text, whose failure to write (a full
    disk) is one :class:`ToolkitError`.

    A file is written whole or not at all: the text goes to a temporary file beside it, renamed over
    *path* (through a link, onto the file it names) once all of it is written. A reader sees the
    earlier file until then, two commands writing one file at once leave one's whole output, and an
    error, Ctrl-C or SIGTERM leaves the earlier file as it was. Standard output, devices and pipes stream.
    """
    if path is None or written_in_place(path):
        with _reporting_write_failures(path, "what was written holds the first inputs only"):
            stream = open_output(path) if path is not None else sys.stdout
            try:
                yield stream
                stream.flush()
            finally:
                if path is not None:
                    stream.close()
        return
    target = Path(os.path.realpath(path))
    existed = target.exists()
    with (
        termination_interrupts(),
        _reporting_write_failures(path, f"nothing was written{' (the earlier file is unchanged)' if existed else ''}"),
        ExitStack() as held,
    ):
        remove_dead_temporaries([target])
        try:
            temporary = held.enter_context(temporary_beside(target))
        except OSError as error:
            raise ToolkitError(
                f"cannot write the output file {path}: {reason(error)} (in {target.parent}, where it is written before it is renamed into place)"
            ) from None
        try:
            with open(temporary, "w", encoding="utf-8") as stream:
                yield stream
                stream.flush()
                os.fsync(stream.fileno())
            os.replace(temporary, target)
        finally:
            with suppress(OSError):
                temporary.unlink()


@contextmanager
def _reporting_write_failures(path: str | os.PathLike | None, outcome: str) -> Iterator[None]:
    """A write that the file system failed (a full disk) as one :class:`ToolkitError` naming the output and the *outcome*."""
    try:
        yield
    except OSError as error:
        if isinstance(error, BrokenPipeError) or not (why := write_failure(error, path or ".")):
            raise
        where = f"the output file {path}" if path is not None else "the output"
        raise ToolkitError(f"cannot write {where}: {why}; {outcome}") from None


def lands_on(output: str | os.PathLike, read: str | os.PathLike) -> bool:
    """Whether writing *output* would change *read*: the same file (through any link), or a path in the folder *read*."""
    output, read = Path(output), Path(read)
    if output.resolve() == read.resolve():
        return True
    if output.exists() and read.exists() and output.samefile(read):  # a hard link
        return True
    return read.is_dir() and output.resolve().is_relative_to(read.resolve())


def check_not_read(path: str | os.PathLike, inputs: Sequence[str | os.PathLike] = (), parts: Sequence[tuple[Path, str]] = (), kind: str = "file") -> None:
    """Refuse the output *path* (a file, or a folder written into) where writing it would land on what is read:
    one of the *inputs*, or one of the *parts* of an archive, each given with what it is a part of.
    """
    for source in inputs:
        if str(source) != "-" and lands_on(path, source):
            raise ToolkitError(f"the output {kind} {path} is the input {source}: writing it would destroy the input; name another {kind}")
    for part, whole in parts:
        if lands_on(path, part):
            raise ToolkitError(f"the output {kind} {path} is {whole}: writing it would destroy the archive; name another {kind}")


def check_writable(path: str | os.PathLike, inputs: Sequence[str | os.PathLike] = (), parts: Sequence[tuple[Path, str]] = ()) -> None:
    """Fail now, before a long computation, if the output file *path* could not be written later, or
    would land on what is read (:func:`check_not_read`): on an input, or a link to it, it would destroy it.
    """
    path = Path(path)
    check_not_read(path, inputs, parts)
    if path.is_dir():
        raise ToolkitError(f"cannot write the output file {path}: it is a directory")
    folder = Path(os.path.realpath(path)).parent
    if not folder.is_dir():
        folder = path.parent
        why = f"{folder} is not a folder" if folder.exists() else f"the folder {folder} does not exist"
        raise ToolkitError(f"cannot write the output file {path}: {why}")
    if path.exists() and not os.access(path, os.W_OK):
        raise ToolkitError(f"cannot write the output file {path}: permission denied")
    if not written_in_place(path) and not os.access(folder, os.W_OK):
        raise ToolkitError(f"cannot write the output file {path}: permission denied in {folder}, where it is written before it is renamed into place")


def atomic_write(path: Path, write: Callable[[Path], object], shared_folder: bool = False) -> None:
    """Call ``write(temporary_path)`` then rename over *path*, so a crash never leaves a torn file.

    The temporary file is ``PATH.tmp`` where one writer holds the folder (a run, under its lock);
    with *shared_folder* it has a name of its own, so that two writers of *path* never share one,
    and what writers of *path* that died left is removed first (:func:`remove_dead_temporaries`).
    A write that fails (a full disk) removes its temporary file and leaves *path* as it was; when
    the file system is the cause, the error is one :class:`ToolkitError` that names *path*.
    """
    temporary = None
    if shared_folder:
        remove_dead_temporaries([path])
    try:
        with ExitStack() as held:
            temporary = held.enter_context(temporary_beside(path)) if shared_folder else path.with_name(path.name + ".tmp")
            write(temporary)
            with open(temporary, "rb") as handle:
                os.fsync(handle.fileno())
            os.replace(temporary, path)
    except BaseException as error:
        with suppress(OSError):
            if temporary is not None:
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

    def __init__(self, directory: str | os.PathLike, holder: str = "a training run"):
        self.path = Path(directory) / self.NAME
        self.holder = holder  # who holds such a lock, for the message another process gets
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
            raise ToolkitError(f"cannot {doing}: {self.path.parent} is in use by {self.holder} (process {owner}); wait for it to end or stop it") from None
        self.handle.seek(0)
        self.handle.truncate()
        self.handle.write(f"{os.getpid()}\n")
        self.handle.flush()

    def release(self) -> None:
        if self.handle is not None:
            self.handle.close()  # closing drops the flock
            self.handle = None
