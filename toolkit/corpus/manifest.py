"""The output folder's manifest: one JSON line per finished shard, appended as each one ends.

An entry records what was read (the input's bytes and their SHA-256), what was written (the
output's name and SHA-256), the counts of input lines, records and error records, and the archive
and settings that wrote it. A rerun skips a shard only where all of these still hold, so that a
changed input, a damaged output or another model means parsing it again, never a stale result.
Appending one line at a time keeps a killed run's manifest readable: a torn last line is left out.

Before a shard is handed to a worker, the output it will write is recorded too (``{"writing":
NAME}``), so that every file a run may have written is named here, even one whose run was killed
before its entry. A run that plans other outputs (another ``--shard-size``, inputs gone, shorter
or cut otherwise) removes those the manifest names and the plan does not (:meth:`Manifest.replan`),
so the folder only ever holds outputs of the inputs as they are now.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

from toolkit.corpus.shards import Shard, range_sha256
from toolkit.errors import ToolkitError
from toolkit.files import reason, write_atomically, write_failure
from toolkit.weights import sha256

MANIFEST_NAME = "manifest.jsonl"
SUMMARY_NAME = "summary.json"

logger = logging.getLogger(__name__)


class Manifest:
    """The entries of ``FOLDER/manifest.jsonl``, the last one of each shard winning."""

    def __init__(self, folder: Path):
        self.folder, self.path = folder, folder / MANIFEST_NAME
        self.entries: dict[tuple[str, int, int], dict[str, Any]] = {}
        self.named: set[str] = set()  # every output a line names: the files runs in this folder may have written
        self.lines = 0
        if self.path.exists():
            self.read()

    def read(self) -> None:
        torn = 0
        with open(self.path, encoding="utf-8", errors="replace") as lines:
            for line in lines:
                self.lines += 1
                try:
                    entry = json.loads(line)
                    if "writing" in entry:
                        self.named.add(str(entry["writing"]))
                        continue
                    self.entries[(entry["input"], entry["start"], entry["end"])] = entry
                    self.named.add(str(entry["output"]))
                except (ValueError, KeyError, TypeError, AttributeError):
                    torn += 1
        if torn:
            logger.warning("%s: %d unreadable lines left out (a run killed while writing one); their shards are parsed again", self.path, torn)

    def replan(self, shards: list[Shard]) -> list[str]:
        """Keep the entries of *shards* alone (the manifest rewritten whole), and give the outputs that lines
        named and the plan does not: those of another plan, for the caller to remove.
        """
        planned = {shard.key: shard.output for shard in shards}
        kept = {key: entry for key, entry in self.entries.items() if planned.get(key) == entry.get("output")}
        stale = sorted(self.named - set(planned.values()))
        if len(kept) != self.lines:  # something to drop: stale entries, intents, torn or repeated lines
            text = "".join(json.dumps(entry, ensure_ascii=False) + "\n" for entry in kept.values())
            try:
                write_atomically(self.path, text)
            except OSError as error:
                raise ToolkitError(f"cannot write {self.path}: {write_failure(error, self.path) or reason(error)}") from None
            self.lines = len(kept)
        self.entries, self.named = kept, {entry["output"] for entry in kept.values()}
        return stale

    def intend(self, shards: list[Shard]) -> None:
        """Record the outputs *shards* will write, before any of them is written (see the module docstring)."""
        self.append("".join(json.dumps({"writing": shard.output}, ensure_ascii=False) + "\n" for shard in shards))
        self.named.update(shard.output for shard in shards)

    def finished(self, shard: Shard, archive_sha256: str, settings: dict[str, Any]) -> bool:
        """Whether *shard* was parsed by this archive with these *settings*, from the bytes it holds now,
        into the output that is there now.
        """
        entry = self.entries.get(shard.key)
        if entry is None or entry.get("archive_sha256") != archive_sha256 or entry.get("settings") != settings:
            return False
        output = self.folder / entry.get("output", "")
        if entry.get("output") != shard.output or not output.is_file() or sha256(output) != entry.get("output_sha256"):
            return False
        return range_sha256(shard) == entry.get("input_sha256")

    def add(self, entry: dict[str, Any]) -> None:
        """Append *entry* as one line, on disk before this returns."""
        self.append(json.dumps(entry, ensure_ascii=False) + "\n")
        self.entries[(entry["input"], entry["start"], entry["end"])] = entry

    def append(self, text: str) -> None:
        if not text:
            return
        try:
            with open(self.path, "a", encoding="utf-8") as file:
                file.write(text)
                file.flush()
                os.fsync(file.fileno())
        except OSError as error:
            raise ToolkitError(f"cannot write {self.path}: {write_failure(error, self.path) or reason(error)}; rerun the command to go on") from None
        self.lines += text.count("\n")
