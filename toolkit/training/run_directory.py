"""A run's serialization directory: locked, never emptied of files a run did not write, and the run ``--force`` replaces kept until the new one has saved an epoch."""

import logging
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from fnmatch import fnmatchcase
from pathlib import Path

from toolkit.archive import (
    ARCHIVE_NAME,
    CONFIG_NAME,
    MANIFEST_NAME,
    METRICS_NAME,
    PRETRAINED_DIR,
    PRETRAINED_NAME,
    VERSION_NAME,
    VOCABULARY_DIR,
    WEIGHTS_NAME,
)
from toolkit.errors import ConfigurationError, ToolkitError
from toolkit.files import DirectoryLock, reason, write_failure
from toolkit.interrupts import shielded
from toolkit.plugins import PLUGINS_NAME
from toolkit.training.checkpointer import CHECKPOINTS_DIR, Checkpointer
from toolkit.training.curves import CURVES_NAME, TENSORBOARD_DIR

logger = logging.getLogger(__name__)


def prepare_serialization_dir(directory: Path, recover: bool, force: bool) -> tuple[DirectoryLock, "PreviousRun | None"]:
    """Make *directory* ready for this run and lock it against every other run; the lock, held, and
    with ``--force`` the previous run, moved aside until this one has saved its first checkpoint.

    Nothing is deleted here. ``--force`` moves the files of the run it replaces into
    ``DIR/.replaced``, once the lock is taken, so that it never pulls the files out from under a
    run that is still going; ``--recover`` likewise never joins a running one.
    """
    if recover and force:
        raise ConfigurationError("use either --recover or --force, not both")
    if directory.exists() and not directory.is_dir():
        raise ConfigurationError(f"the serialization directory {directory} is a file")
    if (directory / REPLACED_DIR).is_dir():
        restore_interrupted_force(directory)
    filled = directory.is_dir() and any(path.name != DirectoryLock.NAME for path in directory.iterdir())
    if filled and not (recover or force):
        raise ConfigurationError(f"serialization directory {directory} is not empty; use --recover to continue its training or --force to overwrite it")
    if recover and not filled:
        raise ConfigurationError(f"--recover: serialization directory {directory} holds no earlier run")
    if force and filled:
        if not holds_a_run(directory):  # `-s . --force` would have emptied the working directory
            raise ConfigurationError(
                f"--force: {directory} holds files but no training run (no {RUN_LOG} or {CHECKPOINTS_DIR}/), so it is not emptied; "
                "name a new directory, or one an earlier run wrote"
            )
        if foreign := foreign_files(directory):
            raise ConfigurationError(
                f"--force: {directory} holds files that no training run writes ({', '.join(foreign[:5])}{', …' if len(foreign) > 5 else ''}), "
                "and --force deletes only what a run wrote: move them out, or train into another directory"
            )
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ConfigurationError(f"cannot make the serialization directory {directory}: {reason(error)}") from None
    lock = DirectoryLock(directory)
    lock.acquire("recover the run in it" if recover else "train into it" if not force else "overwrite it (--force)")
    shutil.rmtree(directory / DISCARDED_DIR, ignore_errors=True)  # a replaced run whose deletion was cut short
    try:
        previous = PreviousRun(directory).move_aside() if force and filled else None
    except OSError as error:
        lock.release()
        raise ConfigurationError(f"--force: cannot move the previous run in {directory} aside: {reason(error)}") from None
    return lock, previous


RUN_LOG = "out.log"  # the first file a run writes into its directory
REPLACED_DIR = ".replaced"  # where --force keeps the previous run until the new one has saved its first checkpoint
DISCARDED_DIR = ".replaced.tmp"  # the previous run on its way out: renamed in one step, so a half-deleted run is never put back

# Every name a run writes at the top of its directory (and FILE.tmp for each, while it writes FILE).
RUN_FILES = (
    RUN_LOG,
    CHECKPOINTS_DIR,
    VOCABULARY_DIR,
    CONFIG_NAME,
    PLUGINS_NAME,
    METRICS_NAME,
    "metrics_epoch_*.json",
    CURVES_NAME,
    TENSORBOARD_DIR,
    ARCHIVE_NAME,
    WEIGHTS_NAME,
    MANIFEST_NAME,
    VERSION_NAME,
    PRETRAINED_NAME,
    PRETRAINED_DIR,
    DirectoryLock.NAME,
    REPLACED_DIR,
)


def holds_a_run(directory: Path) -> bool:
    """Whether an earlier run wrote into *directory* (``--force`` empties nothing else)."""
    return (directory / RUN_LOG).exists() or (directory / CHECKPOINTS_DIR).is_dir()


def written_by_a_run(name: str) -> bool:
    """Whether a run writes a file or folder of this *name* at the top of its directory."""
    return any(fnmatchcase(name.removesuffix(".tmp"), pattern) for pattern in RUN_FILES)


def foreign_files(directory: Path) -> list[str]:
    """The entries of *directory* that no run writes (the training data, a user's notes), folders with a ``/``."""
    return sorted(path.name + "/" * path.is_dir() for path in directory.iterdir() if not written_by_a_run(path.name))


def empty_held_directory(directory: Path, keep: tuple[str, ...] = ()) -> None:
    """Remove what a run wrote in *directory*, but the lock this run holds on it and the names in *keep*."""
    for path in directory.iterdir():
        if path.name not in (DirectoryLock.NAME, *keep) and written_by_a_run(path.name):
            shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()


def restore_interrupted_force(directory: Path) -> None:
    """A ``--force`` start killed before its validation ended left the previous run aside: put it back,
    under the lock, before anything else looks at the directory.
    """
    lock = DirectoryLock(directory)
    lock.acquire("put back the run that an interrupted --force start moved aside")
    try:
        logger.warning("%s: putting back the run that an interrupted --force start had moved to %s", directory, REPLACED_DIR)
        PreviousRun(directory).restore()
    finally:
        lock.release()


class PreviousRun:
    """The run that ``--force`` replaces, kept in ``DIR/.replaced`` until the new run has saved its
    first checkpoint: a new run that fails or is interrupted before then (a typo in ``-o``, a bad
    data line, Ctrl-C in its first epoch) puts it back byte for byte, so the directory always holds
    one run that can be used or recovered.
    """

    MOVING = ".moving"  # in .replaced while the previous run moves in: what is still outside is the previous run's too
    RESTORING = ".restoring"  # in .replaced while it moves back: the new run's files are already gone

    def __init__(self, directory: Path):
        self.directory, self.aside = directory, directory / REPLACED_DIR

    def move_aside(self) -> "PreviousRun":
        with shielded():
            self.aside.mkdir()
            (self.aside / self.MOVING).touch()
            for path in sorted(self.directory.iterdir()):
                if path.name not in (DirectoryLock.NAME, REPLACED_DIR):
                    os.replace(path, self.aside / path.name)
            (self.aside / self.MOVING).unlink()
        return self

    def restore(self) -> None:
        """Put the previous run back, in place of what the new one wrote.

        Markers make it safe to cut short at any point (a second Ctrl-C, a kill): the next start
        finishes it, and never takes a file of the previous run for one of the new run's.
        """
        if not self.aside.is_dir():
            return
        with shielded():
            markers = (self.aside / self.MOVING, self.aside / self.RESTORING)
            if not any(marker.exists() for marker in markers):
                empty_held_directory(self.directory, keep=(REPLACED_DIR,))  # the new run's files
            markers[1].touch()
            markers[0].unlink(missing_ok=True)
            for path in sorted(self.aside.iterdir()):
                if path not in markers:
                    os.replace(path, self.directory / path.name)
            markers[1].unlink()
            self.aside.rmdir()

    def discard(self) -> None:
        """The new run has saved an epoch: the previous one goes. It is renamed first, in one step, so
        that a process killed while deleting it leaves nothing the next start would put back.
        """
        if self.aside.is_dir():
            discarded = self.directory / DISCARDED_DIR
            shutil.rmtree(discarded, ignore_errors=True)
            with shielded():
                os.replace(self.aside, discarded)
            shutil.rmtree(discarded, ignore_errors=True)


def discard_unfinished_start(directory: Path) -> None:
    """Empty *directory* of a run that failed before its first epoch was saved, so that the corrected
    command can be typed again as it was; a run with a saved epoch is kept for ``--recover``.
    """
    if (directory / CHECKPOINTS_DIR / Checkpointer.STATE).exists():
        return
    empty_held_directory(directory, keep=(REPLACED_DIR,))
    if not (directory / REPLACED_DIR).exists():
        (directory / DirectoryLock.NAME).unlink(missing_ok=True)  # still held: released right after


@contextmanager
def writing_into(directory: Path) -> Iterator[None]:
    """A write into *directory* that the file system refuses (a full disk) is one error naming it."""
    try:
        yield
    except OSError as error:
        if why := write_failure(error, directory / RUN_LOG):
            raise ToolkitError(f"cannot write in the serialization directory {directory}: {why}") from None
        raise
