"""A corpus cut into shards, the unit that corpus prediction schedules, writes and resumes.

A shard is one input file, or a byte range of a large uncompressed one. Ranges are cut at line
ends (after a blank line in CoNLL-U, so that no sentence is split); each cut reads the bytes of one
line or sentence, never the file. A gzip file is one shard, since it cannot be entered midway.
The number of a range's first line is counted once, streaming, so that outputs name the lines of
the file (``# sent_id = 120482``) as a one-process run would.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import re
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from toolkit.corpus.inputs import strip_suffixes
from toolkit.errors import DataError, ToolkitError
from toolkit.files import HEAD, InputLines, check_encoding, line_end, reason

GZIP_MAGIC = b"\x1f\x8b"
CONLLU_ROW = re.compile(rb"\d+(-\d+|\.\d+)?\t")  # a word, multiword or empty-node row: the format sentences are cut by
HEAD_BYTES = 1 << 16  # how far into a file its format is looked for
BLOCK = 1 << 20  # bytes read at a time


@dataclass(frozen=True)
class Shard:
    """Lines ``start`` to ``end`` (bytes) of the input ``path``, written to ``output`` (relative to the output folder)."""

    path: str
    start: int
    end: int
    first_line: int  # the number, in the file, of the shard's first line
    output: str
    compressed: bool = False
    whole: bool = True  # the file's only shard
    stamp: tuple[int, int] = (-1, -1)  # the file's size and modification time (ns) when it was cut: what tells it changed since

    @property
    def size(self) -> int:
        return self.end - self.start

    @property
    def key(self) -> tuple[str, int, int]:
        """What a manifest entry is matched on: the same bytes of the same file."""
        return (self.path, self.start, self.end)

    def describe(self) -> str:
        return self.path if self.whole else f"{self.path} (bytes {self.start:,}-{self.end:,}, from line {self.first_line:,})"


def plan_shards(files: list[Path], shard_size: int, output_suffix: str) -> list[Shard]:
    """The shards of *files*: each file whole, or cut into ranges of about *shard_size* bytes.

    Output names keep the inputs' folders below their common one, with the predictor's suffix
    (``news/2024/a.txt`` → ``2024/a.conllu``; ranges ``2024/a-00003.conllu``). Two inputs that would
    write one output are refused.
    """
    root = Path(os.path.commonpath([file.parent for file in files])) if files else Path()
    shards: list[Shard] = []
    writers: dict[str, Path] = {}
    for file in files:
        base = str(file.parent.relative_to(root) / strip_suffixes(file.name))
        stamp = stamp_of(file)
        compressed = is_gzip(file)
        ranges = [(0, file.stat().st_size, 1)] if compressed else cuts(file, shard_size)
        for index, (start, end, first_line) in enumerate(ranges):
            output = f"{base}-{index:05d}{output_suffix}" if len(ranges) > 1 else f"{base}{output_suffix}"
            if output in writers:
                raise ToolkitError(f"the inputs {writers[output]} and {file} would both be written to {output}: rename one, or predict them apart")
            writers[output] = file
            shards.append(Shard(str(file), start, end, first_line, output, compressed, len(ranges) == 1, stamp))
    return shards


def stamp_of(file: str | Path) -> tuple[int, int]:
    """The size and modification time (ns) of *file*: what changes when anyone writes it."""
    try:
        status = os.stat(file)
    except OSError as error:
        raise ToolkitError(f"cannot read the input file {file}: {reason(error)}") from None
    return status.st_size, status.st_mtime_ns


def check_unchanged(shard: Shard, stamp: tuple[int, int]) -> None:
    """Refuse to record *shard* from a file whose *stamp* is not the one it was cut by: its ranges no longer fall
    on its lines, so what was read may be half a line, or lines that another shard reads too.
    """
    if stamp != shard.stamp:
        raise ToolkitError(
            f"{shard.path} changed while the corpus was parsed ({shard.stamp[0]:,} bytes when it was cut into shards, {stamp[0]:,} now): "
            f"nothing of {shard.describe()} was written; rerun the command to parse it as it is now"
        )


def is_gzip(file: Path) -> bool:
    try:
        with open(file, "rb") as handle:
            return handle.read(2) == GZIP_MAGIC
    except OSError as error:
        raise ToolkitError(f"cannot read the input file {file}: {reason(error)}") from None


def cuts(file: Path, shard_size: int) -> list[tuple[int, int, int]]:
    """``(start, end, first line)`` of each range of the uncompressed *file*: the whole file unless it is larger than *shard_size*."""
    size = file.stat().st_size
    if size <= shard_size:
        return [(0, size, 1)]
    with open(file, "rb") as handle:
        head = handle.read(HEAD_BYTES)
        if line_end(head) == "\r":  # lines end in a bare CR (classic Mac OS): no \n to cut at
            return [(0, size, 1)]
        sentences = is_conllu(head)
        starts = sorted({0, *(next_record(handle, position, sentences) for position in range(shard_size, size, shard_size))} - {size})
        ends = [*starts[1:], size]
        return list(zip(starts, ends, line_numbers(handle, starts)))


def is_conllu(head: bytes) -> bool:
    """Whether the first line of *head* that is neither blank nor a comment is a CoNLL-U row."""
    for line in head.splitlines():
        if line.strip() and not line.startswith(b"#"):
            return bool(CONLLU_ROW.match(line.lstrip(b"\xef\xbb\xbf")))
    return False


def next_record(handle: IO[bytes], position: int, sentences: bool) -> int:
    """The first byte at or after *position* that starts a line (with *sentences*: a line of text after a blank one), or the end."""
    handle.seek(position - 1)
    if handle.read(1) != b"\n":
        skip_line(handle)
    after_blank = False
    while sentences:
        start = handle.tell()
        line = handle.readline(BLOCK)
        if not line:
            break
        blank = not line.strip()
        if not line.endswith(b"\n"):  # longer than a block: read on to its end
            blank = not skip_line(handle) and blank
        if after_blank and not blank:
            return start
        after_blank = after_blank or blank
    return handle.tell()


def skip_line(handle: IO[bytes]) -> bool:
    """Read on past the next line end, and say whether anything but spaces came before it."""
    text = False
    while block := handle.readline(BLOCK):
        text = text or bool(block.strip())
        if block.endswith(b"\n"):
            break
    return text


def line_numbers(handle: IO[bytes], starts: list[int]) -> list[int]:
    """The line number at each of the (sorted) byte offsets *starts*, counting line ends in one streaming pass."""
    numbers, counted, position = [], 0, 0
    handle.seek(0)
    for start in starts:
        while position < start:
            block = handle.read(min(BLOCK, start - position))
            counted += block.count(b"\n")
            position += len(block)
        numbers.append(counted + 1)
    return numbers


class HashingReader(io.RawIOBase):
    """The bytes ``start`` to ``end`` of a file, hashed (SHA-256) as they are read."""

    def __init__(self, handle: IO[bytes], start: int, end: int):
        handle.seek(start)
        self.handle, self.left, self.digest = handle, end - start, hashlib.sha256()

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        size = min(len(buffer), self.left)
        data = self.handle.read(size) if size else b""
        if size and not data:
            raise ToolkitError(f"{self.handle.name} ends {self.left:,} bytes before the range it was cut into: it was cut short since")
        buffer[: len(data)] = data
        self.left -= len(data)
        self.digest.update(data)
        return len(data)

    def drain(self) -> str:
        """Read what is left unread (the bytes a predictor stopped before), and give the hash of the whole range."""
        while self.left and self.readinto(bytearray(min(BLOCK, self.left))):
            pass
        return self.digest.hexdigest()


@contextmanager
def shard_lines(shard: Shard) -> Iterator[tuple[InputLines, HashingReader]]:
    """The lines of *shard* (as ``toolkit predict`` reads a file: invalid UTF-8 as U+FFFD, a BOM dropped)
    and the reader whose ``drain()`` gives the SHA-256 of its bytes (of the compressed file, for gzip).
    """
    try:
        handle = open(shard.path, "rb")  # noqa: SIM115 - closed below
    except OSError as error:
        raise ToolkitError(f"cannot read the input file {shard.path}: {reason(error)}") from None
    with handle:
        check_unchanged(shard, stamp_of(shard.path))
        raw = HashingReader(handle, shard.start, shard.end)
        binary: IO[bytes] = io.BufferedReader(raw, BLOCK)
        if shard.compressed:
            binary = gzip.GzipFile(fileobj=binary, mode="rb")
        head = peek(binary) if shard.start == 0 else b""
        check_encoding(head, shard.path)
        ending = line_end(head) if shard.whole else "\n"  # a file of CR-ended lines is never cut
        text = io.TextIOWrapper(binary, encoding="utf-8-sig" if shard.start == 0 else "utf-8", errors="replace", newline=ending)
        try:
            yield InputLines(text, shard.path), raw
        except (OSError, EOFError, zlib.error) as error:
            if shard.compressed and isinstance(error, (gzip.BadGzipFile, EOFError, zlib.error)):
                raise DataError(f"the gzip file is damaged ({error or 'it ends early'}): nothing of it was written", path=shard.path) from None
            raise
        finally:
            text.detach()
        check_unchanged(shard, stamp_of(shard.path))  # written meanwhile: what was read is not what is there


def peek(binary: IO[bytes]) -> bytes:
    """The first bytes of *binary* (up to :data:`~toolkit.files.HEAD`), left to be read again."""
    try:
        return binary.peek(HEAD)[:HEAD]  # type: ignore[attr-defined]
    except (OSError, EOFError, zlib.error) as error:
        raise DataError(f"the gzip file is damaged ({error or 'it ends early'})", path=getattr(binary, "name", None)) from None


def range_sha256(shard: Shard) -> str:
    """The SHA-256 of the bytes *shard* reads, as :func:`shard_lines` reports it."""
    with open(shard.path, "rb") as handle:
        return HashingReader(handle, shard.start, shard.end).drain()
