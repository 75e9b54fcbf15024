"""Model archives: ``model.tar.gz`` with ``config.json``, ``vocabulary/``, ``weights.safetensors``, ``metrics.json``,
``plugins.json`` and ``version.json``.

Nothing in an archive is ever unpickled: the config and vocabulary are text, the weights are
safetensors. A member with an absolute path or a ``..`` component is refused before anything is
extracted. ``version.json`` records the toolkit version that wrote the archive; an archive from a
newer major version is refused in one line (archives without it predate it and load as before).
Loading imports the plugin packages the config names (:mod:`toolkit.plugins`) and rebuilds the
model from the config exactly as training did.
"""

import io
import json
import tarfile
import tempfile
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path, PurePosixPath
from typing import Any

import torch
from safetensors.torch import load_file

from toolkit.data.dataset_readers import DatasetReader
from toolkit.data.vocabulary import Vocabulary
from toolkit.errors import ArchiveError, ToolkitError
from toolkit.grammars.grammar import Grammar
from toolkit.metrics.metric import Metric
from toolkit.models.model import Model
from toolkit.params import Params
from toolkit.plugins import PLUGINS_NAME, require_plugins
from toolkit.training.checkpointer import load_weights, save_weights

CONFIG_NAME = "config.json"
VOCABULARY_DIR = "vocabulary"
WEIGHTS_NAME = "weights.safetensors"
METRICS_NAME = "metrics.json"
ARCHIVE_NAME = "model.tar.gz"
VERSION_NAME = "version.json"
DISTRIBUTION = "parsing-toolkit"


@dataclass
class Archive:
    """A loaded archive: the model (in eval mode) and what was built around it."""

    model: Model
    config: dict[str, Any]
    dataset_reader: DatasetReader
    metrics: list[Metric]
    training_metrics: dict[str, Any]


def write_archive(serialization_dir: str | Path, model: Model) -> Path:
    """Save *model*'s weights next to the config and vocabulary, and pack them into ``model.tar.gz``."""
    directory = Path(serialization_dir)
    save_weights(model, directory / WEIGHTS_NAME)
    if not (directory / METRICS_NAME).exists():
        (directory / METRICS_NAME).write_text("{}")
    if written := toolkit_version():
        (directory / VERSION_NAME).write_text(json.dumps({"toolkit_version": written}) + "\n")
    archive = directory / ARCHIVE_NAME
    with tarfile.open(archive, "w:gz") as tar:
        for name in (CONFIG_NAME, VOCABULARY_DIR, WEIGHTS_NAME, METRICS_NAME, PLUGINS_NAME, VERSION_NAME):
            if name not in (PLUGINS_NAME, VERSION_NAME) or (directory / name).exists():  # older runs have neither
                tar.add(directory / name, arcname=name)
    return archive


def load_archive(path: str | Path, device: str | torch.device = "cpu") -> Archive:
    """Rebuild the model of a ``model.tar.gz`` (or of a serialization directory) on *device*."""
    path = Path(path)
    if not path.exists():
        raise ArchiveError(f"archive not found: {path}")
    with tempfile.TemporaryDirectory() as temporary:
        directory = path if path.is_dir() else _extract(path, Path(temporary))
        for name in (CONFIG_NAME, VOCABULARY_DIR, WEIGHTS_NAME):
            if not (directory / name).exists():
                raise ArchiveError(f"{path} is not a model archive: it has no {name}")
        try:
            config = json.loads((directory / CONFIG_NAME).read_text())
            training_metrics = json.loads((directory / METRICS_NAME).read_text()) if (directory / METRICS_NAME).exists() else {}
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise ArchiveError(f"{path}: corrupt {CONFIG_NAME} or {METRICS_NAME}: {error}") from None
        _check_version(directory, path)
        require_plugins(directory, path)
        params = Params(config)
        vocab = Vocabulary.load(directory / VOCABULARY_DIR)
        try:
            grammar = Grammar.from_params(params.pop("grammar", {}))
            model = Model.from_params(params.pop("model"), vocab=vocab, grammar=grammar)
            # the reader for unseen data: training's may augment (e.g. data recombination)
            reader = DatasetReader.from_params(params.pop("validation_dataset_reader", None) or params.pop("dataset_reader"))
            metrics = [Metric.from_params(p) for p in params.pop("metrics", [])]
        except ToolkitError as error:
            raise ArchiveError(f"{path}: its config no longer builds: {error}") from None
        try:
            load_weights(model, load_file(str(directory / WEIGHTS_NAME), device="cpu"))
        except Exception as error:  # safetensors raises several types for torn or mismatched files
            raise ArchiveError(f"{path}: cannot load {WEIGHTS_NAME}: {error}") from None
    model.to(device).eval()
    return Archive(model, config, reader, metrics, training_metrics)


def toolkit_version() -> str | None:
    """The installed toolkit's version (``0.1.0``), or ``None`` when it runs uninstalled from a checkout."""
    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        return None


def _major(text: str) -> int:
    return int(text.split(".")[0])


def _check_version(directory: Path, path: Path) -> None:
    """Refuse an archive written by a newer major version of the toolkit than the installed one."""
    file = directory / VERSION_NAME
    if not file.exists():
        return  # written before version.json existed
    try:
        written = json.loads(file.read_text())["toolkit_version"]
        major = _major(written)
    except (json.JSONDecodeError, UnicodeDecodeError, TypeError, KeyError, ValueError, AttributeError) as error:
        raise ArchiveError(f"{path}: corrupt {VERSION_NAME}: {error!r}") from None
    installed = toolkit_version()
    if installed is not None and major > _major(installed):
        raise ArchiveError(
            f"{path} was written by {DISTRIBUTION} {written}, newer than the installed {installed}: upgrade to {major}.x to load it"
        )


def _extract(path: Path, into: Path) -> Path:
    try:
        with tarfile.open(path, "r:*") as tar:
            for member in tar.getmembers():
                if member.name.startswith(("/", "\\")) or ".." in PurePosixPath(member.name.replace("\\", "/")).parts:
                    raise ArchiveError(f"{path}: refusing the member {member.name!r}, which points outside the archive")
            tar.extractall(into, filter="data")
    except (tarfile.TarError, EOFError, OSError, io.UnsupportedOperation) as error:
        raise ArchiveError(f"{path} is not a readable model archive ({error})") from None
    return into
