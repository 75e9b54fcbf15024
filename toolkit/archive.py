"""Model archives: ``model.tar.gz`` with ``config.json``, ``vocabulary/``, ``weights.safetensors``, ``metrics.json``
and ``plugins.json``.

Nothing in an archive is ever unpickled: the config and vocabulary are text, the weights are
safetensors. Loading imports the plugin packages the config names (:mod:`toolkit.plugins`) and
rebuilds the model from the config exactly as training did.
"""

import io
import json
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path
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
    archive = directory / ARCHIVE_NAME
    with tarfile.open(archive, "w:gz") as tar:
        for name in (CONFIG_NAME, VOCABULARY_DIR, WEIGHTS_NAME, METRICS_NAME, PLUGINS_NAME):
            if name != PLUGINS_NAME or (directory / name).exists():  # older runs have no plugins.json
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
        require_plugins(directory, path)
        params = Params(config)
        vocab = Vocabulary.load(directory / VOCABULARY_DIR)
        try:
            grammar = Grammar.from_params(params.pop("grammar", {}))
            model = Model.from_params(params.pop("model"), vocab=vocab, grammar=grammar)
            reader = DatasetReader.from_params(params.pop("dataset_reader"))
            metrics = [Metric.from_params(p) for p in params.pop("metrics", [])]
        except ToolkitError as error:
            raise ArchiveError(f"{path}: its config no longer builds: {error}") from None
        try:
            load_weights(model, load_file(str(directory / WEIGHTS_NAME), device="cpu"))
        except Exception as error:  # safetensors raises several types for torn or mismatched files
            raise ArchiveError(f"{path}: cannot load {WEIGHTS_NAME}: {error}") from None
    model.to(device).eval()
    return Archive(model, config, reader, metrics, training_metrics)


def _extract(path: Path, into: Path) -> Path:
    try:
        with tarfile.open(path, "r:*") as tar:
            tar.extractall(into, filter="data")
    except (tarfile.TarError, EOFError, OSError, io.UnsupportedOperation) as error:
        raise ArchiveError(f"{path} is not a readable model archive ({error})") from None
    return into
