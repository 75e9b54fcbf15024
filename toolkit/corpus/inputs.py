"""The files a corpus's inputs name: files as they are, folders for their corpus files, and globs.

Each file is found once, however many names reach it: a glob's ``**`` follows links into folders
(as ``glob.glob`` does) but enters each real folder once, so a link back up (``sub/up -> ..``) or
two paths to one folder neither repeat a file nor recurse without end; a file reached by two names
(a link, a hard link, a pattern and a folder) is parsed once, under its first name. The output
folder is never an input: a glob or folder that reaches it (``'corpus/**' -o corpus/parsed``)
leaves out what the run wrote there.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable, Iterator
from fnmatch import fnmatchcase
from pathlib import Path

from toolkit.errors import ToolkitError

INPUT_SUFFIXES = (".jsonl", ".json", ".txt", ".text", ".conllu", ".conll")  # what a folder's files are read for


def input_files(patterns: Iterable[str], output: str | os.PathLike | None = None) -> list[Path]:
    """The files *patterns* name, in order, each once: files as they are, folders for their corpus files
    (``.jsonl``, ``.txt``, ``.conllu``, ..., gzipped or not; hidden ones left out), and globs (``**`` too),
    leaving out what lies in the *output* folder.
    """
    inside_output = within(output)
    found: dict[tuple[int, int], Path] = {}
    for pattern in patterns:
        path = Path(pattern)
        if path.is_dir():
            files = sorted(file for file in path.rglob("*") if file.is_file() and is_corpus_file(file, path) and not inside_output(file))
            if not files:
                raise ToolkitError(f"the input folder {pattern} holds no corpus files (names ending in {', '.join(INPUT_SUFFIXES)}, or those and .gz)")
        elif path.is_file():
            if inside_output(path):
                raise ToolkitError(f"the input {pattern} lies in the output folder {output}, which the run writes: move it out, or name another folder")
            files = [path]
        elif glob.has_magic(pattern):
            files = sorted(file for file in matching_files(pattern) if not inside_output(file))
            if not files:
                raise ToolkitError(f"no input file matches {pattern}")
        elif path.exists():
            raise ToolkitError(f"the input {pattern} is neither a file nor a folder")
        else:
            raise ToolkitError(f"input file not found: {pattern}")
        for file in files:
            found.setdefault(identity(file), file.absolute())
    return list(found.values())


def within(folder: str | os.PathLike | None):
    """A test of whether a path lies in *folder* (through any link); never, for no folder or one not made yet."""
    if folder is None or not Path(folder).is_dir():
        return lambda path: False
    real = Path(os.path.realpath(folder))
    return lambda path: Path(os.path.realpath(path)).is_relative_to(real)


def identity(path: Path) -> tuple[int, int]:
    """What tells one file from another whatever its name: its device and inode."""
    status = path.stat()
    return status.st_dev, status.st_ino


def is_corpus_file(file: Path, folder: Path) -> bool:
    hidden = any(part.startswith(".") for part in file.relative_to(folder).parts)
    return not hidden and strip_suffixes(file.name) != file.name


def strip_suffixes(name: str) -> str:
    """*name* without ``.gz`` and then one corpus suffix (``a.jsonl.gz`` → ``a``); unchanged if it has none."""
    base = name.removesuffix(".gz")
    return next((base.removesuffix(suffix) for suffix in INPUT_SUFFIXES if base.endswith(suffix) and base != suffix), name)


def matching_files(pattern: str) -> Iterator[Path]:
    """The files ``glob.glob(pattern, recursive=True)`` matches (hidden names only where the pattern spells
    the dot), each real folder entered once by a ``**``.
    """
    parts = Path(pattern).parts
    first = next(index for index, part in enumerate(parts) if glob.has_magic(part))
    yield from expand(Path(*parts[:first]) if first else Path(), parts[first:])


def expand(folder: Path, parts: tuple[str, ...]) -> Iterator[Path]:
    head, rest = parts[0], parts[1:]
    if head == "**":
        for below in folders_below(folder):
            yield from (entries(below, "*", folders=False) if not rest else expand(below, rest))
        return
    for path in entries(folder, head, folders=bool(rest)) if glob.has_magic(head) else [folder / head]:
        if rest:
            yield from expand(path, rest) if path.is_dir() else ()
        elif path.is_file():
            yield path


def entries(folder: Path, pattern: str, folders: bool) -> list[Path]:
    """The folders (*folders*) or files of *folder* whose names match *pattern*, in name order."""
    try:
        with os.scandir(folder) as listing:
            names = [entry.name for entry in listing if (entry.is_dir() if folders else entry.is_file()) and matches(entry.name, pattern)]
    except OSError:  # unreadable, or gone meanwhile: glob skips it too
        return []
    return [folder / name for name in sorted(names)]


def matches(name: str, pattern: str) -> bool:
    return fnmatchcase(name, pattern) and (not name.startswith(".") or pattern.startswith("."))


def folders_below(folder: Path) -> Iterator[Path]:
    """*folder* and every folder below it, hidden ones left out, through links, each real folder once."""
    seen: set[tuple[int, int]] = set()
    waiting = [folder]
    while waiting:
        current = waiting.pop()
        try:
            key = identity(current)
        except OSError:
            continue
        if key in seen:
            continue
        seen.add(key)
        yield current
        waiting.extend(reversed(entries(current, "*", folders=True)))
