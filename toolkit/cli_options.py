"""What the `toolkit` commands share: their common options, and how they read a config, load
archives and choose a search. Kept apart from :mod:`toolkit.cli`, which holds the commands themselves.
"""

import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

import click

from toolkit.errors import ConfigurationError

include_option = click.option("--include-package", "include", multiple=True, metavar="PACKAGE", help="Import PACKAGE to register its components (repeatable).")


def checked_device(context: click.Context, parameter: click.Parameter, name: str) -> str:
    """*name* once it names a device this machine has (``--device cuda`` without a GPU is one line, naming the option)."""
    from toolkit.device import resolve_device

    resolve_device(name, "--device")
    return name


device_option = click.option("--device", default="auto", show_default=True, callback=checked_device, help="cpu, cuda, cuda:N or auto.")
ensemble_option = click.option(
    "--ensemble",
    "ensemble",
    multiple=True,
    type=click.Path(),
    metavar="ARCHIVE",
    help="Decode with this archive too (a path, URL or installed model; same grammar and data), averaging the models' predictions; repeatable.",
)
beam_option = click.option(
    "--beam-size",
    type=click.IntRange(min=1),
    default=None,
    help="Beam search with this beam; an archive's beam keeps its other settings and checks (default: the model's search).",
)
quantize_option = click.option(
    "--quantize",
    type=click.Choice(["int8"]),
    default=None,
    help="Quantize the models' Linear layers to int8 for the CPU (dynamic quantization; outputs can change slightly).",
)
guided_option = click.option(
    "--execution-guided",
    is_flag=True,
    help="Take each input's best beam hypothesis whose form runs and answers something (the executor of the archive's denotation_accuracy metric).",
)


class ByteSize(click.ParamType):
    """A number of bytes, plain or with a binary unit: ``65536``, ``512K``, ``64M``, ``1G``; at least 1 and at most
    :attr:`MOST` (``inf``, ``nan``, ``1e400`` or ``1e308G`` are no sizes: they overflowed into a traceback).
    """

    name = "size"
    UNITS: ClassVar[dict[str, int]] = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40, "P": 1 << 50}
    MOST = 1 << 60  # an exbibyte: more than any file holds, so "never cut" needs nothing larger

    def convert(self, value, param, context):
        if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= self.MOST:
            return value
        text = str(value).strip().upper().removesuffix("IB").removesuffix("B")
        number, unit = (text[:-1], text[-1]) if text[-1:] in self.UNITS and text[-1:] else (text, "")
        try:
            size = float(number) * self.UNITS[unit]
        except (ValueError, KeyError):
            size = math.nan
        if math.isnan(size) or size < 1:
            self.fail(f"{value!r} is not a size in bytes (e.g. 65536, 512K, 64M, 1G)", param, context)
        if size > self.MOST:  # inf too
            self.fail(f"{value!r} is more bytes than any file holds: at most 1024P", param, context)
        return int(size)


def corpus_options(command):
    """The options of ``toolkit predict --engine``: where and how a corpus is parsed into a folder."""
    from toolkit.corpus.run import DEFAULT_SHARD_SIZE

    options = [
        click.option(
            "--engine",
            default=None,
            help="Parse INPUT (files, folders, globs) shard by shard into the folder -o, resumably: 'dask' on a local or remote "
            "Dask cluster (the scale extra), 'local' in this process; see `toolkit list Engine`.",
        ),
        click.option(
            "--workers", type=click.IntRange(1, 4096), default=None, help="--engine dask: the local cluster's workers [default: one per core, or per GPU]."
        ),
        click.option(
            "--address",
            default=None,
            help="--engine dask: the scheduler of a running cluster (tcp://host:8786) [default: DASK_SCHEDULER_ADDRESS, else a local cluster].",
        ),
        click.option(
            "--shard-size",
            type=ByteSize(),
            default=DEFAULT_SHARD_SIZE,
            show_default="64M",
            help="Files larger than this are parsed in ranges of about this size.",
        ),
        click.option(
            "--retries", type=click.IntRange(0, 100), default=2, show_default=True, help="--engine dask: times a shard is run again after an exception."
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


class FiniteRange(click.FloatRange):
    """A ``FloatRange`` that also refuses ``nan``, which every comparison lets through (``--client-timeout nan``)."""

    def convert(self, value, param, context):
        number = super().convert(value, param, context)
        if number != number:
            self.fail(f"{value!r} is not a number", param, context)
        return number


def within_open_files(context: click.Context, parameter: click.Parameter, connections: int) -> int:
    """*connections* once this process may open that many sockets besides its own files (``ulimit -n``):
    past that limit ``accept`` fails (``EMFILE``), so a connection cannot even be answered a 503.
    """
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows
        return connections
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft != resource.RLIM_INFINITY and connections > soft - OWN_FILES:
        raise click.BadParameter(
            f"{connections} connections need more files open than this process may have ({soft}, ulimit -n): at most {max(soft - OWN_FILES, 1)}, or raise ulimit -n",
            context,
            parameter,
        )
    return connections


OWN_FILES = 64  # what a server holds open besides its connections: the model, its logs, the event loop's own


def check_output(output: str, inputs: Sequence[str], archives: Sequence[str]) -> None:
    """Refuse, before any work, an *output* that could not be written or would land on what is read: one of
    the *inputs*, or a file of one of the *archives* (see :func:`archive_parts`).
    """
    from toolkit.files import check_writable

    check_writable(output, inputs, [part for archive in archives for part in archive_parts(archive)])


def archive_parts(source: str) -> list[tuple[Path, str]]:
    """The files loading the archive *source* reads, each with what it is a part of: the archive file, and,
    for a run's folder (or the run an archive file lies in), each file or folder a run writes there.

    A new file beside them (``RUN/predictions.jsonl``) is no part of the archive.
    """
    from toolkit.archive_sources import archive_path
    from toolkit.training.run_directory import holds_a_run, written_by_a_run

    path = archive_path(source)
    run = path if path.is_dir() else path.parent if holds_a_run(path.parent) else None
    parts = [] if path.is_dir() else [(path, f"the archive {source}")]
    if run is not None:
        whole = f"part of the archive {source}" if run == path else f"part of the run of the archive {source}"
        parts += [(run / name, whole) for name in sorted(os.listdir(run)) if written_by_a_run(name)]
    return parts


def import_packages(include: tuple[str, ...]) -> None:
    from toolkit.plugins import import_plugins

    import_plugins(include)


def config_params(config: str, overrides: tuple[str, ...]):
    """The config with every ``-o`` merged in order (later ones win; a changed ``type`` replaces its object).

    An empty ``-o`` (``-o "$EXTRA"`` with nothing in ``EXTRA``) overrides nothing, as in ``Params.from_file``.
    """
    from toolkit.params import Params, evaluate_jsonnet, merge, unflatten
    from toolkit.registrable import keys_taken

    combined: dict = {}
    for override in filter(str.strip, overrides):
        try:
            combined = merge(combined, unflatten(evaluate_jsonnet(override)), keys_taken)
        except ConfigurationError as error:
            shown = override if len(override) <= 60 or not override.lstrip().startswith(("{", "[")) else override[:57] + "..."  # a snippet, not a path
            raise ConfigurationError(f"-o {shown!r}: {error}") from None
    return Params.from_file(config, combined, keys_of=keys_taken)


def search_for(archive, beam_size: int | None, execution_guided: bool = False):
    """The search of ``--beam-size`` and ``--execution-guided`` over *archive*'s model (``None``: the model's own, as it is).

    A size keeps all else the archive's search has, its checks included (:func:`~toolkit.decoding.beam.search_with_beam`).
    """
    from toolkit.decoding import search_with_beam

    search = search_with_beam(getattr(archive.model, "search", None), beam_size)
    return guided(search, archive) if execution_guided else search


def guided(search, archive):
    """*search* (or the model's own, a beam) guided by the executor of *archive*'s execution metric.

    *search* is the model's own or one :func:`~toolkit.decoding.beam.search_with_beam` resized, so guidance
    chooses with the archive's checks; a greedy archive needs ``--beam-size K`` for a beam to choose from.
    """
    from predictors.semantic_parser import archive_executor
    from toolkit.decoding import BeamSearch

    executor = archive_executor(archive)
    if executor is None:
        raise ConfigurationError("--execution-guided needs an executor, and this archive has none (it has no denotation_accuracy metric)")
    search = search or archive.model.search
    if not isinstance(search, BeamSearch):
        raise ConfigurationError(f"--execution-guided chooses among a beam's hypotheses, and the model's search is {type(search).__name__}: give --beam-size K")
    return search.guided_by(executor)


def load_archives(archive: str, device: str, ensemble: tuple[str, ...] = (), quantize: str | None = None):
    """The archive (a path, URL or installed model's name), decoding with the *ensemble* ones beside it."""
    from toolkit.archive_sources import resolve_archive
    from toolkit.device import resolve_device
    from toolkit.models.ensemble import load_ensemble

    return load_ensemble([resolve_archive(source) for source in (archive, *ensemble)], resolve_device(device, "--device"), quantize)
