"""`toolkit train`: read data, build the vocabulary and model from the config, train, archive, test.

The config's top level:

    dataset_reader         how to read the data files (e.g. {"type": "tsv"})
    validation_dataset_reader  optional: how to read validation, test and prediction inputs when
                           training's reader differs (it augments, e.g. data recombination)
    train_data_path        required: a file, or a list of files read one after another (gold data
                           and a teacher's silver trees, say); a file's examples picked by id
                           ({path, ids}); or an object of named domains (see toolkit.training.data_sources)
    validation_data_path   optional: enables early stopping and best-checkpoint averaging; scores
                           per domain too where it names several
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
from pathlib import Path

from toolkit.archive import ARCHIVE_NAME, CONFIG_NAME, VOCABULARY_DIR, write_archive
from toolkit.data.cache import cache_key, cached
from toolkit.data.dataset_readers import DatasetReader
from toolkit.data.example import Example
from toolkit.data.language import Language
from toolkit.data.vocabulary import SOURCE, TARGET, Vocabulary
from toolkit.errors import ConfigurationError
from toolkit.evaluation import evaluate, undecodable
from toolkit.files import parse_json, reason, write_atomically
from toolkit.from_params import NonNegativeInt, Range, construct
from toolkit.grammars.grammar import Grammar
from toolkit.interrupts import termination_interrupts
from toolkit.metrics.metric import check_golds, metrics_from_params
from toolkit.models.model import Model
from toolkit.modules.token_embedders import TokenEmbedder
from toolkit.params import Params, differences, show_differences
from toolkit.plugins import write_plugins
from toolkit.registrable import record_built
from toolkit.training.checkpointer import CHECKPOINTS_DIR, Checkpointer
from toolkit.training.data_sources import DataSource, data_sources, read_sources
from toolkit.training.distributed import Distributed, close_distributed, init_distributed
from toolkit.training.run_directory import RUN_LOG, discard_unfinished_start, prepare_serialization_dir, writing_into
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
    """Source tokens go to the ``tokens`` namespace, the grammar's oracle symbols to ``symbols``, and
    after them the grammar's :meth:`~toolkit.grammars.grammar.Grammar.extra_symbols`, whatever their count.
    """
    counters = {SOURCE: Counter(), TARGET: Counter()}
    for example in examples:
        counters[SOURCE].update(example.tokens)
        counters[TARGET].update(grammar.oracle(example))
    vocabulary = Vocabulary(counters, min_count=min_count, max_size=max_size, namespace_aliases=namespace_aliases)
    for symbol in grammar.extra_symbols():
        vocabulary.add_token(symbol, TARGET)
    return vocabulary


def fitted_summary(key: str, value) -> str:
    """``widest = 3``, ``labels (37)``: a fitted grammar setting for the log, a number as it is, a collection by its size."""
    return f"{key} ({len(value)})" if isinstance(value, (list, dict)) else f"{key} = {value}"


def pop_sources(params: Params, key: str, required: bool = False) -> list[DataSource] | None:
    """The data sources at *key* (see :mod:`toolkit.training.data_sources`); ``None`` where an optional one is not given."""
    value = params.pop(key) if required else params.pop(key, None)
    value = value.as_dict() if isinstance(value, Params) else value
    return None if value is None and not required else data_sources(value, params.path(key))


def drop_skipped(grammar: Grammar, examples: Sequence[Example], split: str) -> list[Example]:
    """*examples* less those the grammar ``skips()`` (it cannot derive them by choice), with a logged count.

    Validation loses them too: its loss needs the oracle. Test scores are computed on every example.
    """
    kept = [example for example in examples if not grammar.skips(example)]
    if len(kept) < len(examples):
        logger.info("left out %d of %d %s examples that the grammar skips", len(examples) - len(kept), len(examples), split)
    return kept


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
    Interrupted (Ctrl-C, SIGTERM), the interrupt is raised again saying what is left in the
    directory: a run that replaced another with ``--force`` and saved no epoch yet has put the
    other back as it was.
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
            with logs, record_built() as components, writing_into(directory), termination_interrupts():
                return _train(params, config, directory, recover, components, distributed, checkpointed=previous.discard if previous else None)
        except BaseException as error:
            saved = (directory / CHECKPOINTS_DIR / Checkpointer.STATE).exists()  # before the cleanup, which may put a replaced run back
            if lock is not None and not recover:
                with suppress(OSError):  # the run's own error is the one to report
                    discard_unfinished_start(directory)
                    if previous is not None:
                        previous.restore()
            if lock is not None and isinstance(error, KeyboardInterrupt):
                raise type(error)(where_an_interrupted_run_is(directory, saved, restored=previous is not None)) from error
            raise
        finally:
            if lock is not None:
                lock.release()
            if not existed and directory.is_dir() and not any(directory.iterdir()):
                directory.rmdir()
    finally:
        close_distributed()


def where_an_interrupted_run_is(directory: Path, saved: bool, restored: bool) -> str:
    """What an interrupted run leaves in *directory* (it had *saved* a checkpoint; it *restored* the run it replaced), for the last line the user reads."""
    if saved:
        return f"{directory} keeps the epochs saved so far; go on with the same command and --recover"
    if restored:
        return f"no epoch was saved yet, so the run that --force replaces is back in {directory}, as it was"
    return "no epoch was saved yet; nothing of the run is kept"


def _train(
    params: Params,
    config: dict,
    directory: Path,
    recover: bool,
    components: set[type],
    distributed: Distributed,
    checkpointed: Callable[[], None] | None = None,
) -> Path:
    """Build the run from *params* and train it; *checkpointed* is called once its first checkpoint is
    on disk (``--force`` then deletes the run it replaces).
    """
    start = time.perf_counter()  # the time budget counts reading and indexing the data too
    seed = params.pop_int("random_seed", None)
    seed = 13 if seed is None else seed
    Range(0, 2**32 - 1).check(seed, params.path("random_seed"))  # NumPy's bounds
    seed_everything(seed)
    reader = DatasetReader.from_params(params.pop_object("dataset_reader"))
    validation_params = params.pop_object("validation_dataset_reader", None)
    validation_reader = DatasetReader.from_params(validation_params) if validation_params is not None else reader
    train_sources = pop_sources(params, "train_data_path", required=True)
    validation_sources = pop_sources(params, "validation_data_path")
    test_sources = pop_sources(params, "test_data_path")
    cache_directory = params.pop_str("cache_directory", None) or os.environ.get("TOOLKIT_CACHE_DIR") or None
    grammar = Grammar.from_params(params.pop_object("grammar", {}))

    train_examples = read_sources(reader, train_sources)
    validation_examples = read_sources(validation_reader, validation_sources) if validation_sources else None
    test_examples = read_sources(validation_reader, test_sources) if test_sources else None  # read now: a bad file must not wait for the end of training
    logger.info("read %d training and %d validation examples", len(train_examples), len(validation_examples or []))
    if fitted := reader.fit(train_examples):
        for key in ("dataset_reader", "validation_dataset_reader"):  # the archive reads new inputs with the latter, if there is one
            if isinstance(config.get(key), dict) and config[key].get("type") == config["dataset_reader"].get("type"):
                config[key] = {**config[key], **fitted}
        logger.info("reader fitted on the training data: %s", ", ".join(fitted_summary(key, value) for key, value in fitted.items()))
    if fitted := grammar.fit(train_examples):
        config["grammar"] = {**config.get("grammar", {}), **fitted}  # the archive rebuilds the fitted grammar
        logger.info("grammar fitted on the training data: %s", ", ".join(fitted_summary(key, value) for key, value in fitted.items()))
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
    model = Model.from_params(params.pop_object("model"), vocab=vocab, grammar=grammar, language=Language.of(reader))
    metrics = metrics_from_params(params)
    check_golds(metrics, validation_examples or train_examples)  # before any epoch
    trainer = Trainer.from_params(params.pop_object("trainer", {}))
    params.assert_empty("the config")
    if distributed.is_main:
        write_atomically(directory / CONFIG_NAME, json.dumps(config, indent=2))
        write_plugins(directory, components)  # the plugin packages an archive must import to rebuild the model
    trained = sum(p.numel() for p in model.parameters() if p.requires_grad)
    frozen = sum(p.numel() for p in model.parameters() if not p.requires_grad)
    logger.info("model: %d trained parameters%s", trained, f" (and {frozen} frozen)" if frozen else "")

    inputs = [module.inputs_source() for module in model.modules() if isinstance(module, TokenEmbedder)]
    picked = [source.ids for source in train_sources if source.ids is not None]  # the paths' contents are hashed, not the ids picked from them
    key = cache_key(config, *(source.path for source in train_sources), inputs=[*inputs, *picked]) if cache_directory else ""
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
        checkpointed=checkpointed,
    )
    load_weights(model, weights)
    if not distributed.is_main:
        return directory / ARCHIVE_NAME  # rank 0 tests and writes the archive

    final = {"training_epochs": len(history), **(history[-1] if history else {})}
    if test_examples is not None:
        undecodable(model, test_examples)
        test_metrics = evaluate(model, test_examples, metrics, trainer.decode_max_tokens, progress=trainer.progress_bar)
        final.update({f"test_{name}": value for name, value in test_metrics.items()})
        logger.info("test: %s", json.dumps(test_metrics))
    write_atomically(directory / "metrics.json", json.dumps(final, indent=2))
    return write_archive(directory, model)
