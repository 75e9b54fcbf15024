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

import gzip
import io
import json
import logging
import os
import shutil
import tarfile
import tempfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path, PurePosixPath
from typing import IO, Any

import torch
from safetensors.torch import load_file

from toolkit.data.dataset_readers import DatasetReader
from toolkit.data.vocabulary import Vocabulary
from toolkit.errors import ArchiveError, ToolkitError
from toolkit.files import atomic_write, parse_json, write_atomically, write_failure
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
VOCABULARY_DIR = "vocabulary"
WEIGHTS_NAME = "weights.safetensors"
METRICS_NAME = "metrics.json"
ARCHIVE_NAME = "model.tar.gz"
VERSION_NAME = "version.json"
MANIFEST_NAME = "manifest.json"
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
    members = sorted(_files(directory, names))
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


def _files(directory: Path, names: list[str]) -> Iterator[str]:
    """The files among *names* (folders walked), as archive member names."""
    for name in names:
        path = directory / name
        if path.is_dir():
            yield from (file.relative_to(directory).as_posix() for file in sorted(path.rglob("*")) if file.is_file())
        else:
            yield name


def read_manifest(file: Path, path: Path) -> dict[str, dict[str, Any]]:
    """The ``sha256`` (and, since 2026-11-26, ``size``) tables of the manifest *file* of the archive *path*."""
    manifest = json_member(file, path, dict, damaged=True)
    digests, sizes = manifest.get("sha256"), manifest.get("size", {})
    if not isinstance(digests, dict) or not isinstance(sizes, dict) or not all(isinstance(size, int) for size in sizes.values()):
        raise ArchiveError(f"{path} is damaged: its {MANIFEST_NAME} cannot be read (not a table of checksums and sizes)")
    for member in sorted(digests):
        if _outside(member):
            raise ArchiveError(f"{path} is damaged: its {MANIFEST_NAME} names {member!r}, outside the archive")
    return {"sha256": digests, "size": sizes}


def verify_manifest(directory: Path, path: Path) -> None:
    """Check every member against ``manifest.json``: none missing, none changed, none added.

    A serialization directory (*path* a folder) is the user's own, and holds other files: it is
    checked where it has a manifest. An archive without one is refused.
    """
    file = directory / MANIFEST_NAME
    if not file.exists():
        if path.is_dir():
            return
        raise ArchiveError(
            f"{path} is damaged: it has no {MANIFEST_NAME}, so nothing shows that its members are the ones written (every archive has held one "
            "since 2026-11-23); if it is an older archive you trust, unpack it (tar xzf) and load its folder instead"
        )
    expected = read_manifest(file, path)["sha256"]
    for member, digest in sorted(expected.items()):
        if not (directory / member).is_file():
            raise ArchiveError(f"{path} is damaged: {member} is missing")
        if sha256(directory / member) != digest:
            raise ArchiveError(f"{path} is damaged: {member} differs from the checksum recorded when the archive was written")
    if path.is_file():  # a serialization directory holds other files; an archive holds nothing else
        names = {MANIFEST_NAME, *expected}
        if extra := sorted(member for member in _files(directory, [p.name for p in directory.iterdir()]) if member not in names):
            raise ArchiveError(f"{path} is damaged: it holds {extra[0]}, which its {MANIFEST_NAME} does not list")


JSON_KINDS = {dict: "an object", list: "a list", str: "a string", int: "a number", float: "a number", bool: "true or false", type(None): "null"}


def json_member(file: Path, path: Path, kind: type = dict, damaged: bool = False) -> Any:
    """The JSON value of the member *file* of the archive *path*, which must be a *kind* (an object or a
    list); anything else (not JSON, nested too deeply, a list where an object belongs) is one
    :class:`ArchiveError` naming the archive and the member.
    """
    try:
        value = parse_json(file.read_bytes())
    except (OSError, ValueError) as error:
        why = f"not JSON ({error})"
    else:
        if isinstance(value, kind):
            return value
        why = f"{JSON_KINDS.get(type(value), type(value).__name__)} where {JSON_KINDS[kind]} belongs"
    name = file.name if file.parent.name != VOCABULARY_DIR else f"{VOCABULARY_DIR}/{file.name}"
    raise ArchiveError(f"{path} is damaged: its {name} cannot be read: {why}" if damaged else f"{path}: corrupt {name}: {why}")


@contextmanager
def members_named(directory: Path, path: Path) -> Iterator[None]:
    """Name a member that fails to load by the archive and its name (``model.tar.gz, member
    vocabulary/tokens.txt``), not by the temporary folder it was unpacked into, gone by the time the
    message is read.
    """
    try:
        yield
    except ToolkitError as error:
        message = str(error)
        if str(directory) not in message:
            raise
        raise ArchiveError(message.replace(f"{directory}{os.sep}", f"{path}, member ")) from None


def load_archive(path: str | Path, device: str | torch.device = "cpu") -> Archive:
    """Rebuild the model of a ``model.tar.gz`` (or of a serialization directory) on *device*."""
    path = Path(path)
    if not path.exists():
        raise ArchiveError(f"archive not found: {path}")
    with tempfile.TemporaryDirectory() as temporary, members_named(Path(temporary), path):
        directory = path if path.is_dir() else _extract(path, Path(temporary))
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
            with archived_copies(copies):
                model = Model.from_params(params.pop_object("model"), vocab=vocab, grammar=grammar)
            reader = DatasetReader.of_unseen_data(params)
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


def _extract(path: Path, into: Path) -> Path:
    """Unpack the archive *path* into *into*, a member at a time, refusing what a well-formed archive never
    holds before its bytes are written: a first member that is not the manifest, a member it does not
    list or lists at another size, a link, a path outside the archive. The gzip stream is then read to
    its end, which checks its CRC (tarfile stops at the last member).
    """
    try:
        with _stream(path) as stream, tarfile.open(fileobj=stream, mode="r|") as tar:
            manifest = None
            for member in tar:
                if _outside(member.name):
                    raise ArchiveError(f"{path}: refusing the member {member.name!r}, which points outside the archive")
                if manifest is None:
                    if member.name != MANIFEST_NAME or not member.isfile() or member.size > 1 << 24:
                        raise ArchiveError(
                            f"{path} is damaged: its first member is {member.name}, not its {MANIFEST_NAME}, which every archive has begun with since "
                            "2026-11-23 (so a member was taken out, or the archive repacked); if it is an older archive you trust, unpack it "
                            "(tar xzf) and load its folder instead"
                        )
                    tar.extract(member, into, filter="data")
                    manifest = read_manifest(into / MANIFEST_NAME, path)
                    _check_room(path, into, sum(manifest["size"].values()))
                    continue
                _check_member(member, manifest, path)
                tar.extract(member, into, filter="data")
            if manifest is None:
                raise ArchiveError(f"{path} is damaged: it holds no member at all")
            while stream.read(1 << 20):
                pass
    except ArchiveError:
        raise
    except (tarfile.TarError, EOFError, OSError, zlib.error, io.UnsupportedOperation) as error:
        if isinstance(error, OSError) and (why := write_failure(error, into / "member")):
            raise ArchiveError(
                f"cannot unpack {path} into the temporary folder {into.parent}: {why}; make room there, or set TMPDIR to a folder with room"
            ) from None
        raise ArchiveError(f"{path} is damaged: {error}" if _gzipped(path) else f"{path} is not a readable model archive ({error})") from None
    return into


def _check_member(member: tarfile.TarInfo, manifest: dict[str, dict[str, Any]], path: Path) -> None:
    """Refuse a member (before its bytes are written) that a well-formed archive with this manifest never holds."""
    if member.isdir():
        return
    if not member.isfile():
        raise ArchiveError(f"{path} is damaged: it holds {member.name}, which is not a file or a folder (a link or a device)")
    if member.name not in manifest["sha256"]:
        raise ArchiveError(f"{path} is damaged: it holds {member.name}, which its {MANIFEST_NAME} does not list")
    size = manifest["size"].get(member.name)
    if size is not None and member.size != size:
        raise ArchiveError(f"{path} is damaged: {member.name} holds {member.size:,} bytes, and its {MANIFEST_NAME} says {size:,}")


def _check_room(path: Path, into: Path, needed: int) -> None:
    """Refuse to unpack *needed* bytes into a folder with less room than that (``$TMPDIR`` full)."""
    free = shutil.disk_usage(into).free
    if needed > free:
        raise ArchiveError(
            f"cannot unpack {path} into the temporary folder {into.parent}: it needs {needed / 1e6:,.1f} MB, and {free / 1e6:,.1f} MB are free; "
            "make room there, or set TMPDIR to a folder with room"
        )


def _gzipped(path: Path) -> bool:
    with open(path, "rb") as file:
        return file.read(2) == b"\x1f\x8b"


@contextmanager
def _stream(path: Path) -> Iterator[IO[bytes]]:
    """The archive's tar stream: decompressed as it is read (``.tar.gz``), or the file (an uncompressed tar)."""
    with gzip.open(path, "rb") if _gzipped(path) else open(path, "rb") as stream:
        yield stream


def _outside(name: str) -> bool:
    """Whether a member name points outside the folder it is extracted into (absolute, or through ``..``)."""
    return name.startswith(("/", "\\")) or ".." in PurePosixPath(name.replace("\\", "/")).parts
