"""Model archives: ``model.tar.gz`` with ``config.json``, ``vocabulary/``, ``weights.safetensors``, ``metrics.json``,
``plugins.json`` and ``version.json``; with pretrained token embedders, ``pretrained.json`` and ``pretrained/``.

Nothing in an archive is ever unpickled: the config and vocabulary are text, the weights are
safetensors. A damaged archive is never used. ``manifest.json``, its first member, holds the SHA-256
and size of every other member. Members are unpacked one at a time, and each one the manifest does not
list, or lists at another size, or that points outside the archive, is refused before its bytes are
written; every member's checksum is checked after it, and the gzip stream is read to its end (so
its CRC is checked too). An archive without a manifest is refused: every archive has held one since
2026-11-23, so a missing one means a member was taken out.
``version.json`` records the toolkit version that wrote the archive; an archive from a newer major
version is refused in one line (archives without it predate it and load as before).
Loading imports the plugin packages the config names (:mod:`toolkit.plugins`) and rebuilds the
model from the config exactly as training did.

``pretrained.json`` records what each pretrained token embedder read (a hub name, or a directory
and its weights' SHA-256; a spaCy pipeline and its vectors' hash). An embedder that keeps a copy
in ``pretrained/`` (a transformer's config and tokenizer; its weights are in the model's) is
rebuilt from it; any other is rebuilt from its source, and the archive is refused in one line if
that source is missing or differs from the one recorded.
"""

import json
import logging
import shutil
import tarfile
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file

from toolkit.archive_members import (
    MANIFEST_NAME,
    VOCABULARY_DIR,
    extract_archive,
    json_member,
    member_files,
    members_named,
    verify_manifest,
)
from toolkit.data.dataset_readers import DatasetReader
from toolkit.data.language import Language
from toolkit.data.vocabulary import Vocabulary
from toolkit.errors import ArchiveError, ToolkitError
from toolkit.files import atomic_write, write_atomically
from toolkit.grammars.grammar import Grammar
from toolkit.metrics.metric import Metric, metrics_from_params
from toolkit.models.model import Model
from toolkit.modules.token_embedders import TokenEmbedder
from toolkit.modules.token_embedders.pretrained_transformer import archived_copies
from toolkit.params import Params
from toolkit.plugins import PLUGINS_NAME, require_plugins
from toolkit.training.checkpointer import CHECKPOINTS_DIR
from toolkit.upgrades import upgrade_config, upgrade_weights
from toolkit.weights import load_weights, save_weights, sha256

CONFIG_NAME = "config.json"
WEIGHTS_NAME = "weights.safetensors"
METRICS_NAME = "metrics.json"
ARCHIVE_NAME = "model.tar.gz"
VERSION_NAME = "version.json"
PRETRAINED_NAME = "pretrained.json"
PRETRAINED_DIR = "pretrained"
DISTRIBUTION = "parsing-toolkit"

logger = logging.getLogger(__name__)


@dataclass
class Archive:
    """A loaded archive: the model (in eval mode) and what was built around it."""

    model: Model
    config: dict[str, Any]
    dataset_reader: DatasetReader
    metrics: list[Metric]
    training_metrics: dict[str, Any]
    plugins: list[str] = field(default_factory=list)  # the plugin packages it needed, imported when it loaded


def write_archive(serialization_dir: str | Path, model: Model) -> Path:
    """Save *model*'s weights next to the config and vocabulary, and pack them into ``model.tar.gz``."""
    directory = Path(serialization_dir)
    pretrained = _write_pretrained(directory, model)
    atomic_write(directory / WEIGHTS_NAME, lambda temporary: save_weights(model, temporary, leave_out=_unarchived_state(model)))
    if not (directory / METRICS_NAME).exists():
        write_atomically(directory / METRICS_NAME, "{}")
    if written := toolkit_version():
        write_atomically(directory / VERSION_NAME, json.dumps({"toolkit_version": written}) + "\n")
    names = [
        name
        for name in (CONFIG_NAME, VOCABULARY_DIR, WEIGHTS_NAME, METRICS_NAME, PLUGINS_NAME, VERSION_NAME)
        if name not in (PLUGINS_NAME, VERSION_NAME) or (directory / name).exists()
    ]  # older runs have neither
    names += pretrained
    members = sorted(member_files(directory, names))
    manifest = {
        "sha256": {member: sha256(directory / member) for member in members},
        "size": {member: (directory / member).stat().st_size for member in members},
    }
    write_atomically(directory / MANIFEST_NAME, json.dumps(manifest, indent=1) + "\n")
    archive = directory / ARCHIVE_NAME
    atomic_write(archive, lambda temporary: _pack(temporary, directory, [MANIFEST_NAME, *names]))
    return archive


def _pretrained_embedders(model: Model) -> Iterator[tuple[str, TokenEmbedder]]:
    """The model's token embedders that read pretrained weights, with their module names."""
    for name, module in model.named_modules():
        if isinstance(module, TokenEmbedder) and module.pretrained_source() is not None:
            yield name, module


def _unarchived_state(model: Model) -> list[str]:
    return [f"{name}.{prefix}" for name, module in _pretrained_embedders(model) for prefix in module.unarchived_state()]


def _write_pretrained(directory: Path, model: Model) -> list[str]:
    """Write ``pretrained.json`` and the embedders' copies; the names to pack (none for a model without pretrained parts)."""
    shutil.rmtree(directory / PRETRAINED_DIR, ignore_errors=True)
    records = []
    for name, module in _pretrained_embedders(model):
        record: dict[str, Any] = {"module": name, "source": module.pretrained_source()}
        copy = directory / PRETRAINED_DIR / str(len(records))
        copy.mkdir(parents=True)
        if module.archive_copy(copy):
            record["copy"] = copy.relative_to(directory).as_posix()
        else:
            copy.rmdir()
        records.append(record)
    copies = any("copy" in record for record in records)
    if not copies:
        shutil.rmtree(directory / PRETRAINED_DIR, ignore_errors=True)
    if not records:
        (directory / PRETRAINED_NAME).unlink(missing_ok=True)
        return []
    write_atomically(directory / PRETRAINED_NAME, json.dumps(records, indent=1) + "\n")
    return [PRETRAINED_NAME] + ([PRETRAINED_DIR] if copies else [])


def _read_pretrained(directory: Path, path: Path) -> list[dict[str, Any]]:
    """The records of ``pretrained.json``, each source that is a missing directory refused in one line."""
    file = directory / PRETRAINED_NAME
    if not file.exists():
        return []
    records = json_member(file, path, list)
    try:
        sources = [(record["module"], record["source"], record.get("copy")) for record in records]
        if not all(isinstance(module, str) and isinstance(source, dict) and isinstance(copy, (str, type(None))) for module, source, copy in sources):
            raise TypeError("a record is not a module name, a source object and a copy folder")
    except (KeyError, TypeError) as error:
        raise ArchiveError(f"{path}: corrupt {PRETRAINED_NAME}: {error!r}") from None
    for module, source, copy in sources:
        name = source.get("model_name")
        if copy is None and "sha256" in source and not Path(str(name)).expanduser().is_dir():
            raise ArchiveError(
                f"{path} reads the weights of its {module} from the directory {name}, which is missing: "
                "put the model there (the archive records its SHA-256), or retrain with archive: 'copy'"
            )
    return records


def _check_pretrained(model: Model, records: list[dict[str, Any]], path: Path) -> None:
    """Refuse a model whose pretrained sources (the ones the archive keeps no copy of) differ from those it was trained on."""
    modules = dict(model.named_modules())
    for record in records:
        module = modules.get(record["module"])
        if not isinstance(module, TokenEmbedder):
            raise ArchiveError(f"{path}: {PRETRAINED_NAME} names {record['module']}, which its model does not have")
        if "copy" not in record and (found := module.pretrained_source()) != record["source"]:
            raise ArchiveError(
                f"{path} was trained with different pretrained weights for its {record['module']}: recorded {_short(record['source'])}, found {_short(found)}"
            )


def _short(source: dict[str, Any] | None) -> str:
    return json.dumps(source, sort_keys=True)[:200]


def _pack(target: Path, directory: Path, names: list[str]) -> None:
    with tarfile.open(target, "w:gz") as tar:
        for name in names:
            tar.add(directory / name, arcname=name)


def load_archive(path: str | Path, device: str | torch.device = "cpu") -> Archive:
    """Rebuild the model of a ``model.tar.gz`` (or of a serialization directory) on *device*."""
    path = Path(path)
    if not path.exists():
        raise ArchiveError(f"archive not found: {path}")
    with tempfile.TemporaryDirectory() as temporary, members_named(Path(temporary), path):
        directory = path if path.is_dir() else extract_archive(path, Path(temporary))
        verify_manifest(directory, path)
        for name in (CONFIG_NAME, VOCABULARY_DIR, WEIGHTS_NAME):
            if not (directory / name).exists():
                if path.is_dir() and (directory / CHECKPOINTS_DIR).is_dir():
                    raise ArchiveError(
                        f"{path} is a training run that has not finished: it has no {name} yet "
                        f"(wait for it, or finish a stopped run with toolkit train CONFIG -s {path} --recover)"
                    )
                raise ArchiveError(f"{path} is not a model archive: it has no {name}")
        config = json_member(directory / CONFIG_NAME, path)
        training_metrics = json_member(directory / METRICS_NAME, path) if (directory / METRICS_NAME).exists() else {}
        _check_version(directory, path)
        plugins = require_plugins(directory, path)
        if moved := upgrade_config(config):
            logger.info("%s: its config uses keys that have moved; read with the current ones (%s)", path, ", ".join(moved))
        params = Params(config)
        vocab = Vocabulary.load(directory / VOCABULARY_DIR)
        pretrained = _read_pretrained(directory, path)
        copies = {record["source"].get("model_name"): directory / record["copy"] for record in pretrained if "copy" in record}
        try:
            grammar = Grammar.from_params(params.pop_object("grammar", {}))
            model_params = params.pop_object("model")
            reader = DatasetReader.of_unseen_data(params)  # first: it records the language the model reads
            with archived_copies(copies):
                model = Model.from_params(model_params, vocab=vocab, grammar=grammar, language=Language.of(reader))
            metrics = metrics_from_params(params)
        except ToolkitError as error:
            raise ArchiveError(f"{path}: its config no longer builds: {error}") from None
        _check_pretrained(model, pretrained, path)
        try:
            weights = load_file(str(directory / WEIGHTS_NAME), device="cpu")
            if renamed := upgrade_weights(weights, model.state_dict().keys()):
                logger.info("%s: weights renamed since it was written, read under their current names: %s", path, ", ".join(renamed))
            load_weights(model, weights, left_out=_unarchived_state(model))
        except Exception as error:  # noqa: BLE001 - safetensors raises several types for torn or mismatched files
            raise ArchiveError(f"{path}: cannot load {WEIGHTS_NAME}: {error}") from None
    model.to(device).eval()
    return Archive(model, config, reader, metrics, training_metrics, plugins)


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
        written = json_member(file, path)["toolkit_version"]
        major = _major(written)
    except (TypeError, KeyError, ValueError, AttributeError) as error:
        raise ArchiveError(f"{path}: corrupt {VERSION_NAME}: {error!r}") from None
    installed = toolkit_version()
    if installed is not None and major > _major(installed):
        raise ArchiveError(f"{path} was written by {DISTRIBUTION} {written}, newer than the installed {installed}: upgrade to {major}.x to load it")
