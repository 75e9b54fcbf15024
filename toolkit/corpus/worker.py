"""Parsing one shard where an engine runs it: the predictor loaded once per process, the output
written whole (or not at all) and described for the manifest.

Everything here is a plain function of picklable arguments, so that any engine can ship it to a
worker: Dask's processes, an in-process loop, or a plugin's.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import socket
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolkit.corpus.shards import Shard, shard_lines
from toolkit.errors import ToolkitError
from toolkit.files import atomic_write


@dataclass(frozen=True)
class PredictionSettings:
    """What ``toolkit predict`` was asked for: the same predictor is built from these on every worker."""

    archive: str
    predictor: str | None = None
    beam_size: int | None = None
    execution_guided: bool = False
    ensemble: tuple[str, ...] = ()
    quantize: str | None = None
    device: str = "auto"
    batch_size: int = 64
    include: tuple[str, ...] = ()

    def load(self, device: str | None = None) -> Any:
        """The predictor these settings describe, on *device* (default: theirs), execution guidance included:
        the archive's search at *beam_size*, its checks kept (``load_predictor``).
        """
        from toolkit import load_predictor
        from toolkit.cli_options import guided

        predictor = load_predictor(
            self.archive,
            self.predictor,
            device=device or self.device,
            beam_size=self.beam_size,
            include_package=self.include,
            ensemble=self.ensemble,
            quantize=self.quantize,
        )
        if self.execution_guided:
            predictor.search = guided(predictor.search, predictor.archive)
        return predictor

    def output_settings(self, predictor_name: str) -> dict[str, Any]:
        """The settings that change what is written (not the device, nor how lines are batched), recorded with each shard."""
        return {"predictor": predictor_name, "beam_size": self.beam_size, "execution_guided": self.execution_guided, "quantize": self.quantize}


@dataclass
class LoadedPredictor:
    predictor: Any
    name: str  # its registered name
    archive_sha256: str  # of the archive and the ensemble's, together
    lock: threading.Lock = field(default_factory=threading.Lock)  # one shard at a time: a predictor is not thread-safe


_loaded: dict[tuple, LoadedPredictor] = {}
_loading = threading.Lock()


def loaded_predictor(settings: PredictionSettings, device: str | None = None, threads: int | None = None) -> LoadedPredictor:
    """The predictor *settings* describe, loaded on the first call in this process and kept (one at a time).

    *device* and *threads* (torch's, for this process) are the worker's own where the engine decides
    them. An archive replaced at its path since (a long-lived worker, a retrained model) is loaded again.
    """
    key = (settings, device or settings.device, threads, archive_stamps(settings))
    with _loading:
        if key not in _loaded:
            _loaded.clear()  # a new job in a long-lived worker: free the last one's model first
            _loaded[key] = load(settings, device or settings.device, threads)
        return _loaded[key]


def load(settings: PredictionSettings, device: str, threads: int | None) -> LoadedPredictor:
    import torch

    if threads:
        torch.set_num_threads(threads)
    keep_freed_memory()
    predictor = settings.load(device)
    return LoadedPredictor(predictor, settings.predictor or predictor.model.grammar.default_predictor, archive_sha256(archive_files(settings)))


def keep_freed_memory() -> None:
    """Undo Dask's ``MALLOC_TRIM_THRESHOLD_=65536``, which its nanny gives every worker process.

    With it, glibc hands memory back to the system after almost every free and maps each large
    tensor afresh, and decoding ran 1.4x slower (4.3 s against 3.1 s for 1,500 EWT sentences, one
    thread). Set thresholds that keep freed memory for reuse instead: blocks up to 32 MiB come from
    the heap, and up to 256 MiB of it stays mapped.
    """
    if "MALLOC_TRIM_THRESHOLD_" not in os.environ or not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:  # not glibc (musl): the variable meant nothing
        return
    libc.mallopt(M_MMAP_THRESHOLD, 32 << 20)
    libc.mallopt(M_TRIM_THRESHOLD, 256 << 20)


M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc's malloc.h


def archive_files(settings: PredictionSettings) -> list[Path]:
    """The file that identifies each archive *settings* reads: the archive file, or a training folder's
    member manifest (the checksums of what it holds).
    """
    from toolkit.archive_members import MANIFEST_NAME
    from toolkit.archive_sources import resolve_archive

    paths = [resolve_archive(source) for source in (settings.archive, *settings.ensemble)]
    return [path / MANIFEST_NAME if path.is_dir() else path for path in paths]


def archive_stamps(settings: PredictionSettings) -> tuple[tuple[str, int, int], ...]:
    """The path, size and modification time of each archive file: what tells an archive replaced at its path."""
    stamps = []
    for path in archive_files(settings):
        status = path.stat() if path.exists() else None  # missing: loading it says so
        stamps.append((str(path), status.st_size if status else -1, status.st_mtime_ns if status else -1))
    return tuple(stamps)


def archive_sha256(paths: list[Path]) -> str:
    """One SHA-256 for the archive files *paths*; an ensemble's, of its members' in order."""
    from toolkit.weights import sha256

    digests = [sha256(path) for path in paths]
    return digests[0] if len(digests) == 1 else hashlib.sha256(" ".join(digests).encode()).hexdigest()


def describe(settings: PredictionSettings, device: str | None = None, threads: int | None = None) -> dict[str, Any]:
    """What the driver plans with, from the predictor as a worker loads it (so that a bad archive fails before any shard)."""
    loaded = loaded_predictor(settings, device, threads)
    return {"predictor": loaded.name, "output_suffix": loaded.predictor.output_suffix, "archive_sha256": loaded.archive_sha256}


def parse_shard(
    settings: PredictionSettings, shard: Shard, folder: str, archive_sha256: str, device: str | None = None, threads: int | None = None
) -> dict[str, Any]:
    """Parse *shard* into its output file under *folder*, written atomically, and give its manifest entry.

    Input lines the predictor cannot read are error records at their place, so the output has as
    many records as the shard has inputs. An input or model error that no retry could mend (a
    damaged gzip file, an archive that does not load, or is not the one planned with:
    *archive_sha256*) is a :class:`ToolkitError`, which the engines report for the shard without
    retrying; anything else may be retried.
    """
    began = time.perf_counter()
    loaded = loaded_predictor(settings, device, threads)
    if loaded.archive_sha256 != archive_sha256:
        raise ToolkitError(
            f"the worker on {socket.gethostname()} reads another archive at {settings.archive} than the one planned with "
            f"(SHA-256 {loaded.archive_sha256[:12]}, not {archive_sha256[:12]}): every worker must see the same file"
        )
    predictor = loaded.predictor
    counts = {"lines": 0, "records": 0, "errors": 0}
    output_digest = hashlib.sha256()
    input_sha256 = ""

    def lines_counted(lines):
        for line in lines:
            counts["lines"] += 1
            yield line

    def write(temporary: Path) -> None:
        nonlocal input_sha256
        with shard_lines(shard) as (lines, raw), open(temporary, "w", encoding="utf-8") as out:
            for record in predictor.predict_lines(Named(lines_counted(lines), lines.name), settings.batch_size, first_line=shard.first_line):
                text = record + "\n"
                out.write(text)
                output_digest.update(text.encode("utf-8"))
                counts["records"] += 1
                counts["errors"] += predictor.is_error(record)
            input_sha256 = raw.drain()

    target = Path(folder) / shard.output
    target.parent.mkdir(parents=True, exist_ok=True)
    with loaded.lock:
        atomic_write(target, write, shared_folder=True)
    return {
        "input": shard.path,
        "start": shard.start,
        "end": shard.end,
        "first_line": shard.first_line,
        "input_sha256": input_sha256,
        "output": shard.output,
        "output_sha256": output_digest.hexdigest(),
        **counts,
        "archive_sha256": loaded.archive_sha256,
        "settings": settings.output_settings(loaded.name),
        "seconds": round(time.perf_counter() - began, 3),
        "host": socket.gethostname(),
    }


class Named:
    """An iterable of lines with the ``name`` the predictors put in their messages (``corpus/a.txt:120482: ...``)."""

    def __init__(self, lines, name: str):
        self.lines, self.name = lines, name

    def __iter__(self):
        return iter(self.lines)
