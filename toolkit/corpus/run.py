"""``toolkit predict ARCHIVE 'corpus/*.jsonl' -o out/ --engine dask``: a corpus parsed shard by shard into a folder.

The driver plans the shards, skips those the manifest shows finished, hands the rest to the
engine, and appends each finished shard's entry to the manifest as it arrives. A shard's output
appears whole or not at all, so however a run ends (a killed worker, SIGTERM, a full disk),
rerunning the same command parses exactly the shards that are missing.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from pathlib import Path
from typing import Any

from toolkit.corpus.engines import Engine
from toolkit.corpus.inputs import input_files
from toolkit.corpus.manifest import MANIFEST_NAME, SUMMARY_NAME, Manifest
from toolkit.corpus.shards import Shard, plan_shards, stamp_of
from toolkit.corpus.worker import PredictionSettings
from toolkit.errors import ToolkitError
from toolkit.files import DirectoryLock, remove_dead_temporaries, write_atomically

logger = logging.getLogger(__name__)

DEFAULT_SHARD_SIZE = 64 << 20  # bytes: ~10^6 EWT-sized sentences, minutes of work for one worker


def predict_corpus(settings: PredictionSettings, inputs: list[str], folder: str | Path, engine: Engine, shard_size: int = DEFAULT_SHARD_SIZE) -> dict[str, Any]:
    """Parse every shard of *inputs* not yet in *folder*'s manifest; the run's summary, or a
    :class:`ToolkitError` naming the shards that failed (the rest are kept).
    """
    folder = Path(folder)
    files = input_files(inputs, output=folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ToolkitError(f"cannot make the output folder {folder}: {error.strerror}") from None
    check_ours(folder)
    lock = DirectoryLock(folder, "another corpus prediction")
    lock.acquire(f"predict into {folder}")
    try:
        (folder / MANIFEST_NAME).touch()  # from now on the folder is a corpus run's, whatever stops it
        with engine:
            engine.start(settings)
            model = engine.describe()
            shards = plan_shards(files, shard_size, model["output_suffix"])
            if clash := next((shard for shard in shards if shard.output in (MANIFEST_NAME, SUMMARY_NAME)), None):
                raise ToolkitError(f"the input {clash.path} would be written to {clash.output}, the run's own record: rename it")
            manifest = Manifest(folder)
            remove_outputs(folder, manifest.replan(shards))
            (folder / SUMMARY_NAME).unlink(missing_ok=True)  # it describes a run that ended; this one writes its own
            remove_dead_temporaries(folder / shard.output for shard in shards)  # of a killed run's workers
            return run_shards(engine, shards, folder, model, settings, manifest)
    except KeyboardInterrupt as interrupt:
        if str(interrupt):
            raise
        raise type(interrupt)("stopped before parsing began; rerun the same command to start again") from None
    finally:
        lock.release()


def check_ours(folder: Path) -> None:
    """Refuse to write into a folder that holds files but no manifest: it is not a corpus run's, and its files could be overwritten."""
    if (folder / MANIFEST_NAME).exists():
        return
    if other := next((path for path in folder.rglob("*") if path.is_file() and path.name != DirectoryLock.NAME), None):
        raise ToolkitError(
            f"the output folder {folder} holds files ({other.relative_to(folder)}) and no {MANIFEST_NAME}, so no corpus run wrote it: name a new or empty folder"
        )


def run_shards(engine: Engine, shards: list[Shard], folder: Path, model: dict[str, Any], settings: PredictionSettings, manifest: Manifest) -> dict[str, Any]:
    recorded = settings.output_settings(model["predictor"])
    todo = [shard for shard in shards if not manifest.finished(shard, model["archive_sha256"], recorded)]
    logger.info(
        "%d shards (%s), %d finished earlier, %d to parse%s",
        len(shards),
        size_text(sum(shard.size for shard in shards)),
        len(shards) - len(todo),
        len(todo),
        f"; the engine's dashboard: {engine.dashboard_link}" if engine.dashboard_link else "",
    )
    progress = Progress(len(todo), sum(shard.size for shard in todo))
    failures: list[tuple[Shard, str]] = []
    manifest.intend(todo)
    try:
        for shard, result in engine.parse(todo, str(folder), model["archive_sha256"]):
            if "failed" in result:
                failures.append((shard, result["failed"]))
                logger.error("%s: %s", shard.describe(), result["failed"])
            else:
                manifest.add(result)
            progress.update(shard, result)
    except KeyboardInterrupt as interrupt:
        done = len(shards) - len(todo) + progress.shards - len(failures)
        raise type(interrupt)(f"{done} of {len(shards)} shards are written and recorded in {manifest.path}; rerun the same command to parse the rest") from None
    finally:
        progress.close()
    summary = summarize(shards, manifest, model, progress, failures)
    write_atomically(folder / SUMMARY_NAME, json.dumps(summary, indent=1) + "\n")
    if failures:
        shard, why = failures[0]
        raise ToolkitError(
            f"{len(failures)} of {len(shards)} shards failed (the first: {shard.describe()}: {why}); the others are written: "
            f"rerun the command to parse the failed ones"
        )
    if changed := changed_inputs(shards):
        raise ToolkitError(
            f"{changed[0]} changed while the corpus was parsed ({len(changed)} input(s) in all): rerun the command to parse them as they are now"
        )
    return summary


def changed_inputs(shards: list[Shard]) -> list[str]:
    """The inputs of *shards* written (or removed) since they were cut: shards skipped as finished no longer match them."""
    changed = []
    for path, stamp in {shard.path: shard.stamp for shard in shards}.items():
        try:
            now = stamp_of(path)
        except ToolkitError:
            now = None
        if now != stamp:
            changed.append(path)
    return changed


def remove_outputs(folder: Path, names: list[str]) -> None:
    """Remove the outputs *names* (relative to *folder*) of an earlier plan, and the folders they leave empty."""
    root = folder.resolve()
    removed = 0
    for name in names:
        path = folder / name
        if not path.resolve().is_relative_to(root) or path.name in (MANIFEST_NAME, SUMMARY_NAME, DirectoryLock.NAME):
            continue  # a hand-edited manifest names something that is not an output
        remove_dead_temporaries([path])
        if path.is_file() or path.is_symlink():
            path.unlink()
            removed += 1
        for parent in path.parents:
            if parent.resolve() == root or not parent.is_dir() or any(parent.iterdir()):
                break
            parent.rmdir()
    if removed:
        logger.info("removed %d outputs of an earlier run that this one does not plan (another --shard-size, or inputs gone or changed)", removed)


def summarize(shards: list[Shard], manifest: Manifest, model: dict[str, Any], progress: Progress, failures: list) -> dict[str, Any]:
    failed = {shard.key for shard, _ in failures}  # an older entry of a shard that failed now counts no more
    entries = [manifest.entries[shard.key] for shard in shards if shard.key in manifest.entries and shard.key not in failed]
    return {
        "shards": len(shards),
        "finished": len(shards) - len(failures),
        "failed": len(failures),
        "lines": sum(entry["lines"] for entry in entries),
        "records": sum(entry["records"] for entry in entries),
        "errors": sum(entry["errors"] for entry in entries),
        "archive_sha256": model["archive_sha256"],
        "predictor": model["predictor"],
        "parsed_now": progress.shards,
        "seconds": round(progress.elapsed(), 2),
        "records_per_second": round(progress.rate(), 1),
    }


class Progress:
    """Shards done, records/s and the time left (from the bytes still to parse): a bar on a terminal, else a log line every 30 s."""

    INTERVAL = 30.0

    def __init__(self, total: int, total_bytes: int):
        self.total, self.total_bytes = total, total_bytes
        self.shards = self.records = self.bytes = 0
        self.began = self.logged = time.monotonic()
        self.bar = None
        if sys.stderr.isatty() and total:
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit="shard", dynamic_ncols=True)

    def elapsed(self) -> float:
        return time.monotonic() - self.began

    def rate(self) -> float:
        return self.records / max(self.elapsed(), 1e-9)

    def update(self, shard: Shard, result: dict[str, Any]) -> None:
        self.shards += 1
        self.bytes += shard.size
        self.records += result.get("records", 0)
        left = self.elapsed() * (self.total_bytes - self.bytes) / max(self.bytes, 1)
        status = f"{self.records:,} records, {self.rate():,.0f} records/s, {duration_text(left)} left"
        if self.bar is not None:
            self.bar.set_postfix_str(status, refresh=False)
            self.bar.update()
        elif time.monotonic() - self.logged >= self.INTERVAL or self.shards == self.total:
            self.logged = time.monotonic()
            logger.info("%d/%d shards: %s", self.shards, self.total, status)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def size_text(size: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:,.0f} {unit}" if unit == "B" else f"{size:,.1f} {unit}"
        size /= 1024
    raise AssertionError


def duration_text(seconds: float) -> str:
    minutes, seconds = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{seconds:02d}s"
