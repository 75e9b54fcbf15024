"""An archive's members, read safely: the manifest, each member checked as it is unpacked, JSON members.

What a damaged archive may hold is refused before its bytes are written (see :mod:`toolkit.archive`).
"""

import gzip
import io
import os
import shutil
import tarfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import IO, Any

from toolkit.errors import ArchiveError, ToolkitError
from toolkit.files import parse_json, write_failure
from toolkit.weights import sha256

MANIFEST_NAME = "manifest.json"
VOCABULARY_DIR = "vocabulary"


def member_files(directory: Path, names: list[str]) -> Iterator[str]:
    """The files among *names* (folders walked), as archive member names."""
    for name in names:
        path = directory / name
        if path.is_dir():
            yield from (file.relative_to(directory).as_posix() for file in sorted(path.rglob("*")) if file.is_file())
        else:
            yield name


def read_manifest(file: Path, path: Path) -> dict[str, dict[str, Any]]:
    """The ``sha256`` (and, since 2026-11-26, ``size``) tables of the manifest *file* of the archive *path*."""
    manifest = json_member(file, path, dict, damaged=True)
    digests, sizes = manifest.get("sha256"), manifest.get("size", {})
    if not isinstance(digests, dict) or not isinstance(sizes, dict) or not all(isinstance(size, int) for size in sizes.values()):
        raise ArchiveError(f"{path} is damaged: its {MANIFEST_NAME} cannot be read (not a table of checksums and sizes)")
    for member in sorted(digests):
        if _outside(member):
            raise ArchiveError(f"{path} is damaged: its {MANIFEST_NAME} names {member!r}, outside the archive")
    return {"sha256": digests, "size": sizes}


def verify_manifest(directory: Path, path: Path) -> None:
    """Check every member against ``manifest.json``: none missing, none changed, none added.

    A serialization directory (*path* a folder) is the user's own, and holds other files: it is
    checked where it has a manifest. An archive without one is refused.
    """
    file = directory / MANIFEST_NAME
    if not file.exists():
        if path.is_dir():
            return
        raise ArchiveError(
            f"{path} is damaged: it has no {MANIFEST_NAME}, so nothing shows that its members are the ones written (every archive has held one "
            "since 2026-11-23); if it is an older archive you trust, unpack it (tar xzf) and load its folder instead"
        )
    expected = read_manifest(file, path)["sha256"]
    for member, digest in sorted(expected.items()):
        if not (directory / member).is_file():
            raise ArchiveError(f"{path} is damaged: {member} is missing")
        if sha256(directory / member) != digest:
            raise ArchiveError(f"{path} is damaged: {member} differs from the checksum recorded when the archive was written")
    if path.is_file():  # a serialization directory holds other files; an archive holds nothing else
        names = {MANIFEST_NAME, *expected}
        if extra := sorted(member for member in member_files(directory, [p.name for p in directory.iterdir()]) if member not in names):
            raise ArchiveError(f"{path} is damaged: it holds {extra[0]}, which its {MANIFEST_NAME} does not list")


JSON_KINDS = {dict: "an object", list: "a list", str: "a string", int: "a number", float: "a number", bool: "true or false", type(None): "null"}


def json_member(file: Path, path: Path, kind: type = dict, damaged: bool = False) -> Any:
    """The JSON value of the member *file* of the archive *path*, which must be a *kind* (an object or a
    list); anything else (not JSON, nested too deeply, a list where an object belongs) is one
    :class:`ArchiveError` naming the archive and the member.
    """
    try:
        value = parse_json(file.read_bytes())
    except (OSError, ValueError) as error:
        why = f"not JSON ({error})"
    else:
        if isinstance(value, kind):
            return value
        why = f"{JSON_KINDS.get(type(value), type(value).__name__)} where {JSON_KINDS[kind]} belongs"
    name = file.name if file.parent.name != VOCABULARY_DIR else f"{VOCABULARY_DIR}/{file.name}"
    raise ArchiveError(f"{path} is damaged: its {name} cannot be read: {why}" if damaged else f"{path}: corrupt {name}: {why}")


@contextmanager
def members_named(directory: Path, path: Path) -> Iterator[None]:
    """Name a member that fails to load by the archive and its name (``model.tar.gz, member
    vocabulary/tokens.txt``), not by the temporary folder it was unpacked into, gone by the time the
    message is read.
    """
    try:
        yield
    except ToolkitError as error:
        message = str(error)
        if str(directory) not in message:
            raise
        raise ArchiveError(message.replace(f"{directory}{os.sep}", f"{path}, member ")) from None


def extract_archive(path: Path, into: Path) -> Path:
    """Unpack the archive *path* into *into*, a member at a time, refusing what a well-formed archive never
    holds before its bytes are written: a first member that is not the manifest, a member it does not
    list or lists at another size, a link, a path outside the archive. The gzip stream is then read to
    its end, which checks its CRC (tarfile stops at the last member).
    """
    try:
        with _stream(path) as stream, tarfile.open(fileobj=stream, mode="r|") as tar:
            manifest = None
            for member in tar:
                if _outside(member.name):
                    raise ArchiveError(f"{path}: refusing the member {member.name!r}, which points outside the archive")
                if manifest is None:
                    if member.name != MANIFEST_NAME or not member.isfile() or member.size > 1 << 24:
                        raise ArchiveError(
                            f"{path} is damaged: its first member is {member.name}, not its {MANIFEST_NAME}, which every archive has begun with since "
                            "2026-11-23 (so a member was taken out, or the archive repacked); if it is an older archive you trust, unpack it "
                            "(tar xzf) and load its folder instead"
                        )
                    tar.extract(member, into, filter="data")
                    manifest = read_manifest(into / MANIFEST_NAME, path)
                    _check_room(path, into, sum(manifest["size"].values()))
                    continue
                _check_member(member, manifest, path)
                tar.extract(member, into, filter="data")
            if manifest is None:
                raise ArchiveError(f"{path} is damaged: it holds no member at all")
            while stream.read(1 << 20):
                pass
    except ArchiveError:
        raise
    except (tarfile.TarError, EOFError, OSError, zlib.error, io.UnsupportedOperation) as error:
        if isinstance(error, OSError) and (why := write_failure(error, into / "member")):
            raise ArchiveError(
                f"cannot unpack {path} into the temporary folder {into.parent}: {why}; make room there, or set TMPDIR to a folder with room"
            ) from None
        raise ArchiveError(f"{path} is damaged: {error}" if _gzipped(path) else f"{path} is not a readable model archive ({error})") from None
    return into


def _check_member(member: tarfile.TarInfo, manifest: dict[str, dict[str, Any]], path: Path) -> None:
    """Refuse a member (before its bytes are written) that a well-formed archive with this manifest never holds."""
    if member.isdir():
        return
    if not member.isfile():
        raise ArchiveError(f"{path} is damaged: it holds {member.name}, which is not a file or a folder (a link or a device)")
    if member.name not in manifest["sha256"]:
        raise ArchiveError(f"{path} is damaged: it holds {member.name}, which its {MANIFEST_NAME} does not list")
    size = manifest["size"].get(member.name)
    if size is not None and member.size != size:
        raise ArchiveError(f"{path} is damaged: {member.name} holds {member.size:,} bytes, and its {MANIFEST_NAME} says {size:,}")


def _check_room(path: Path, into: Path, needed: int) -> None:
    """Refuse to unpack *needed* bytes into a folder with less room than that (``$TMPDIR`` full)."""
    free = shutil.disk_usage(into).free
    if needed > free:
        raise ArchiveError(
            f"cannot unpack {path} into the temporary folder {into.parent}: it needs {needed / 1e6:,.1f} MB, and {free / 1e6:,.1f} MB are free; "
            "make room there, or set TMPDIR to a folder with room"
        )


def _gzipped(path: Path) -> bool:
    with open(path, "rb") as file:
        return file.read(2) == b"\x1f\x8b"


@contextmanager
def _stream(path: Path) -> Iterator[IO[bytes]]:
    """The archive's tar stream: decompressed as it is read (``.tar.gz``), or the file (an uncompressed tar)."""
    with gzip.open(path, "rb") if _gzipped(path) else open(path, "rb") as stream:
        yield stream


def _outside(name: str) -> bool:
    """Whether a member name points outside the folder it is extracted into (absolute, or through ``..``)."""
    return name.startswith(("/", "\\")) or ".." in PurePosixPath(name.replace("\\", "/")).parts
