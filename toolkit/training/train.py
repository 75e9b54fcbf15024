"""`toolkit train`: read data, build the vocabulary and model from the config, train, archive, test.

The config's top level:

    dataset_reader         how to read the data files (e.g. {"type": "tsv"})
    validation_dataset_reader  optional: how to read validation, test and prediction inputs when
                           training's reader differs (it augments, e.g. data recombination)
    train_data_path        required: a file, or a list of files read one after another (gold data
                           and a teacher's silver trees, say)
    validation_data_path   optional: enables early stopping and best-checkpoint averaging
    test_data_path         optional: evaluated once after training, into metrics.json
    grammar                the output grammar (default {"type": "sequence"})
    vocabulary             min_count, max_size, namespace_aliases
    model                  the model; receives the vocabulary and the grammar
    metrics                list of metrics for validation and test
    trainer                optimizer, schedule, epochs, device, precision...
    random_seed            seeds Python, NumPy and torch
    cache_directory        optional: cache the indexed training data there (see toolkit.data.cache;
                           $TOOLKIT_CACHE_DIR does the same)
"""

import json
import logging
import os
import shutil
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
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
    write_archive,
)
from toolkit.data.cache import cache_key, cached
from toolkit.data.dataset_readers import DatasetReader
from toolkit.data.example import Example
from toolkit.data.vocabulary import SOURCE, TARGET, Vocabulary
from toolkit.errors import ConfigurationError, ToolkitError
from toolkit.evaluation import evaluate, undecodable
from toolkit.files import DirectoryLock, parse_json, reason, write_atomically, write_failure
from toolkit.from_params import NonNegativeInt, Range, construct
from toolkit.grammars.grammar import Grammar
from toolkit.metrics.metric import check_golds, metrics_from_params
from toolkit.models.model import Model
from toolkit.modules.token_embedders import TokenEmbedder
from toolkit.params import Params, differences, show_differences
from toolkit.plugins import PLUGINS_NAME, write_plugins
from toolkit.registrable import record_built
from toolkit.training.checkpointer import CHECKPOINTS_DIR, Checkpointer
from toolkit.training.curves import CURVES_NAME, TENSORBOARD_DIR
from toolkit.training.distributed import Distributed, close_distributed, init_distributed
from toolkit.training.trainer import Trainer, seed_everything
from toolkit.upgrades import upgrade_config
from toolkit.weights import load_weights

logger = logging.getLogger(__name__)


def build_vocabulary(
    examples: Sequence[Example],
    grammar: Grammar,
    min_count: dict[str, NonNegativeInt] | None = None,
    max_size: dict[str, NonNegativeInt] | None = None,
    namespace_aliases: dict[str, str] | None = None,
) -> Vocabulary:
    """Source tokens go to the ``tokens`` namespace, the grammar's oracle symbols to ``symbols``."""
    counters = {SOURCE: Counter(), TARGET: Counter()}
    for example in examples:
        counters[SOURCE].update(example.tokens)
        counters[TARGET].update(grammar.oracle(example))
    return Vocabulary(counters, min_count=min_count, max_size=max_size, namespace_aliases=namespace_aliases)


def pop_paths(params: Params, key: str) -> list[str]:
    """A required data path, or a non-empty list of them, as a list."""
    value = params.pop(key)
    paths = value if isinstance(value, list) else [value]
    if not paths or not all(isinstance(path, str) for path in paths):
        raise ConfigurationError(f"{params.path(key)}: expected a path or a non-empty list of paths, got {value!r}")
    return paths


def drop_skipped(grammar: Grammar, examples: Sequence[Example], split: str) -> list[Example]:
    """*examples* less those the grammar ``skips()`` (it cannot derive them by choice), with a logged count.

    Validation loses them too: its loss needs the oracle. Test scores are computed on every example.
    """
    kept = [example for example in examples if not grammar.skips(example)]
    if len(kept) < len(examples):
        logger.info("left out %d of %d %s examples that the grammar skips", len(examples) - len(kept), len(examples), split)
    return kept


def prepare_serialization_dir(directory: Path, recover: bool, force: bool) -> tuple[DirectoryLock, "PreviousRun | None"]:
    """Make *directory* ready for this run and lock it against every other run; the lock, held, and
    with ``--force`` the previous run, moved aside until this one has been validated.

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
    try:
        previous = PreviousRun(directory).move_aside() if force and filled else None
    except OSError as error:
        lock.release()
        raise ConfigurationError(f"--force: cannot move the previous run in {directory} aside: {reason(error)}") from None
    return lock, previous


RUN_LOG = "out.log"  # the first file a run writes into its directory
REPLACED_DIR = ".replaced"  # where --force keeps the previous run until the new one is validated

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
    """The run that ``--force`` replaces, kept in ``DIR/.replaced`` until the new run is validated
    (its config, data, vocabulary and model built): a new run that fails before then puts it back,
    so a typo in ``-o`` or a bad data line leaves the directory as it was.
    """

    def __init__(self, directory: Path):
        self.directory, self.aside = directory, directory / REPLACED_DIR

    def move_aside(self) -> "PreviousRun":
        self.aside.mkdir()
        for path in sorted(self.directory.iterdir()):
            if path.name not in (DirectoryLock.NAME, REPLACED_DIR):
                os.replace(path, self.aside / path.name)
        return self

    def restore(self) -> None:
        """Put the previous run back, in place of what the new one wrote."""
        if self.aside.is_dir():
            empty_held_directory(self.directory, keep=(REPLACED_DIR,))
            for path in sorted(self.aside.iterdir()):
                os.replace(path, self.directory / path.name)
            self.aside.rmdir()

    def discard(self) -> None:
        """The new run is validated: the previous one goes."""
        shutil.rmtree(self.aside, ignore_errors=True)


# What a recovered run may change: how long it goes on, and where and how fast it runs. Anything
# else (the model, the data, the optimizer) is what the saved state was made with.
RECOVERABLE_KEYS = (
    "trainer.num_epochs",
    "trainer.max_minutes",
    "trainer.patience",
    "trainer.device",
    "trainer.num_workers",
    "trainer.progress_bar",
    "trainer.decode_max_tokens",
    "trainer.report_mfu",
    "trainer.max_skipped_steps",
    "test_data_path",
    "cache_directory",
)


def check_recovered_config(saved: dict, config: dict, directory: Path) -> None:
    """Refuse a ``--recover`` whose config changes what the saved state was trained with.

    The run goes on with the model, data and optimizer of its checkpoints, so a change to them
    would be recorded in ``config.json`` and the archive without being done. Only the keys of
    :data:`RECOVERABLE_KEYS` may change; they take effect and are recorded.
    """
    changed = [path for path in differences(saved, config) if not path.startswith(RECOVERABLE_KEYS)]
    if changed:
        raise ConfigurationError(
            f"--recover: the config differs from the one the run in {directory} was started with ({show_differences(saved, config, changed)}); a recovered "
            f"run continues that run as it was, so only {', '.join(RECOVERABLE_KEYS)} may change: give the first run's "
            "-o overrides again, or train the changed config into a new directory"
        )


def saved_config(directory: Path) -> dict:
    """The run's own config, keys that have moved since it was written in their new place, as in the config it is recovered with."""
    try:
        config = parse_json((directory / CONFIG_NAME).read_bytes())
        if not isinstance(config, dict):
            raise ValueError(f"not a JSON object but {type(config).__name__}")
        upgrade_config(config)
        return config
    except (OSError, ValueError) as error:
        raise ConfigurationError(f"--recover: {directory / CONFIG_NAME} is damaged ({error}); the run cannot be continued") from None


@contextmanager
def quiet_logging() -> Iterator[None]:
    """Ranks other than 0 under ``torchrun`` log warnings only (rank 0 speaks for the run)."""
    toolkit_logger = logging.getLogger("toolkit")
    previous = toolkit_logger.level
    toolkit_logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        toolkit_logger.setLevel(previous)


@contextmanager
def writing_into(directory: Path) -> Iterator[None]:
    """A write into *directory* that the file system refuses (a full disk) is one error naming it."""
    try:
        yield
    except OSError as error:
        if why := write_failure(error, directory / RUN_LOG):
            raise ToolkitError(f"cannot write in the serialization directory {directory}: {why}") from None
        raise


class RunLog(logging.FileHandler):
    """``out.log``, which a full disk stops with one warning on the console, not a traceback per message."""

    def handleError(self, record: logging.LogRecord) -> None:
        self.close()
        logging.getLogger().removeHandler(self)
        logger.warning("%s can no longer be written (%s): the run's log goes on on the console only", self.baseFilename, sys.exc_info()[1])


@contextmanager
def file_logging(directory: Path) -> Iterator[None]:
    """Write the toolkit's INFO messages to ``out.log`` for the run, whatever the console's level."""
    try:
        handler = RunLog(directory / RUN_LOG)
    except OSError as error:
        raise ConfigurationError(f"cannot write {directory / RUN_LOG}: {reason(error)}") from None
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    toolkit_logger, root = logging.getLogger("toolkit"), logging.getLogger()
    previous = toolkit_logger.level
    if toolkit_logger.getEffectiveLevel() > logging.INFO:
        toolkit_logger.setLevel(logging.INFO)  # setLevel, not .level =: it clears the loggers' caches
    root.addHandler(handler)
    try:
        yield
    finally:
        root.removeHandler(handler)
        handler.close()
        toolkit_logger.setLevel(previous)


def train_model(params: Params, serialization_dir: str | Path, recover: bool = False, force: bool = False) -> Path:
    """Train the model that *params* describes; return the path of the written ``model.tar.gz``.

    Under ``torchrun`` every process runs this; only rank 0 touches the serialization directory.
    """
    directory = Path(serialization_dir)
    existed = directory.exists()
    config = params.as_dict()
    trainer = config.get("trainer")  # read early for the process group; _train checks it
    distributed = init_distributed(str(trainer.get("device", "auto") if isinstance(trainer, dict) else "auto"))
    try:
        lock, previous = prepare_serialization_dir(directory, recover, force) if distributed.is_main else (None, None)
        try:
            distributed.barrier()
            logs = file_logging(directory) if distributed.is_main else quiet_logging()
            with logs, record_built() as components, writing_into(directory):
                return _train(params, config, directory, recover, components, distributed, validated=previous.discard if previous else None)
        except BaseException:
            if lock is not None and not recover:
                with suppress(OSError):  # the run's own error is the one to report
                    discard_unfinished_start(directory)
                    if previous is not None:
                        previous.restore()
            raise
        finally:
            if lock is not None:
                lock.release()
            if not existed and directory.is_dir() and not any(directory.iterdir()):
                directory.rmdir()
    finally:
        close_distributed()


def discard_unfinished_start(directory: Path) -> None:
    """Empty *directory* of a run that failed before its first epoch was saved, so that the corrected
    command can be typed again as it was; a run with a saved epoch is kept for ``--recover``.
    """
    if (directory / CHECKPOINTS_DIR / Checkpointer.STATE).exists():
        return
    empty_held_directory(directory, keep=(REPLACED_DIR,))
    if not (directory / REPLACED_DIR).exists():
        (directory / DirectoryLock.NAME).unlink(missing_ok=True)  # still held: released right after


def _train(
    params: Params, config: dict, directory: Path, recover: bool, components: set[type], distributed: Distributed, validated: Callable[[], None] | None = None
) -> Path:
    """Build the run from *params*, then (*validated*: the run is sound, ``--force`` may delete the run it replaces) train it."""
    seed = params.pop_int("random_seed", None)
    seed = 13 if seed is None else seed
    Range(0, 2**32 - 1).check(seed, params.path("random_seed"))  # NumPy's bounds
    seed_everything(seed)
    reader = DatasetReader.from_params(params.pop_object("dataset_reader"))
    validation_params = params.pop_object("validation_dataset_reader", None)
    validation_reader = DatasetReader.from_params(validation_params) if validation_params is not None else reader
    train_paths = pop_paths(params, "train_data_path")
    validation_path = params.pop_str("validation_data_path", None)
    test_path = params.pop_str("test_data_path", None)
    cache_directory = params.pop_str("cache_directory", None) or os.environ.get("TOOLKIT_CACHE_DIR") or None
    grammar = Grammar.from_params(params.pop_object("grammar", {}))

    train_examples = [example for path in train_paths for example in reader.read(path)]
    validation_examples = validation_reader.read(validation_path) if validation_path else None
    test_examples = validation_reader.read(test_path) if test_path else None  # read now: a bad file must not wait for the end of training
    logger.info("read %d training and %d validation examples", len(train_examples), len(validation_examples or []))
    if fitted := grammar.fit(train_examples):
        config["grammar"] = {**config.get("grammar", {}), **fitted}  # the archive rebuilds the fitted grammar
        logger.info(
            "grammar fitted on the training data: %s", ", ".join(f"{key} ({len(value)})" if isinstance(value, list) else key for key, value in fitted.items())
        )
    if recover and (directory / CONFIG_NAME).exists():
        check_recovered_config(saved_config(directory), config, directory)
    if report := grammar.data_report(train_examples):
        logger.info("grammar on the training data: %s", json.dumps(report))
    train_examples = drop_skipped(grammar, train_examples, "training")
    if validation_examples is not None:
        validation_examples = drop_skipped(grammar, validation_examples, "validation")

    vocabulary_params = params.pop_object("vocabulary", {})
    vocab_dir = directory / VOCABULARY_DIR
    if recover and vocab_dir.exists():
        vocab = Vocabulary.load(vocab_dir)
    else:  # every rank builds the same vocabulary from the same data
        vocab = construct(build_vocabulary, vocabulary_params, examples=train_examples, grammar=grammar)
        if distributed.is_main:
            staging = directory / (VOCABULARY_DIR + ".tmp")
            shutil.rmtree(staging, ignore_errors=True)
            vocab.save(staging)
            os.replace(staging, vocab_dir)  # whole or absent: --recover reads it back
    model = Model.from_params(params.pop_object("model"), vocab=vocab, grammar=grammar)
    metrics = metrics_from_params(params)
    check_golds(metrics, validation_examples or train_examples)  # before any epoch
    trainer = Trainer.from_params(params.pop_object("trainer", {}))
    params.assert_empty("the config")
    if distributed.is_main:
        write_atomically(directory / CONFIG_NAME, json.dumps(config, indent=2))
        write_plugins(directory, components)  # the plugin packages an archive must import to rebuild the model
    if validated is not None:
        validated()
    trained = sum(p.numel() for p in model.parameters() if p.requires_grad)
    frozen = sum(p.numel() for p in model.parameters() if not p.requires_grad)
    logger.info("model: %d trained parameters%s", trained, f" (and {frozen} frozen)" if frozen else "")

    start = time.perf_counter()
    inputs = [module.inputs_source() for module in model.modules() if isinstance(module, TokenEmbedder)]
    key = cache_key(config, *train_paths, inputs=inputs) if cache_directory else ""
    train_data = cached(cache_directory, key, lambda: [model.index(example) for example in train_examples], write=distributed.is_main)
    weights, history = trainer.train(
        model,
        train_data,
        validation_examples,
        metrics,
        directory,
        seed=seed,
        recover=recover,
        distributed=distributed,
        preprocessing_seconds=time.perf_counter() - start,
    )
    load_weights(model, weights)
    if not distributed.is_main:
        return directory / ARCHIVE_NAME  # rank 0 tests and writes the archive

    final = {"training_epochs": len(history), **(history[-1] if history else {})}
    if test_examples is not None:
        undecodable(model, test_examples)
        test_metrics = evaluate(model, test_examples, metrics, trainer.decode_max_tokens)
        final.update({f"test_{name}": value for name, value in test_metrics.items()})
        logger.info("test: %s", json.dumps(test_metrics))
    write_atomically(directory / "metrics.json", json.dumps(final, indent=2))
    return write_archive(directory, model)
