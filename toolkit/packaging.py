"""``toolkit package``: a model archive as a wheel, so that ``pip install`` makes the model loadable by name.

As ``spacy package`` does for pipelines: the wheel holds one importable package, NAME, whose data is
the archive (``NAME/model.tar.gz``), and declares it in the ``parsing_toolkit.models`` entry point
group, where :func:`toolkit.archive_sources.resolve_archive` looks names up. The wheel is written
directly, laid out as the wheel format specifies (PEP 427): no build backend, no network, and the
same bytes for the same archive, name and version.
"""

import base64
import hashlib
import io
import json
import re
import tarfile
import zipfile
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from toolkit.archive import ARCHIVE_NAME, DISTRIBUTION, VERSION_NAME, Archive, load_archive, toolkit_version
from toolkit.archive_sources import MODEL_NAME, MODELS_GROUP, installed_models, resolve_archive
from toolkit.errors import ToolkitError
from toolkit.files import atomic_write, check_not_read
from toolkit.plugins import PLUGINS_NAME

# PEP 440's canonical public versions (its appendix B): the form pip keeps unchanged in file names and listings
CANONICAL_VERSION = re.compile(r"([1-9][0-9]*!)?(0|[1-9][0-9]*)(\.(0|[1-9][0-9]*))*((a|b|rc)(0|[1-9][0-9]*))?(\.post(0|[1-9][0-9]*))?(\.dev(0|[1-9][0-9]*))?")
DATE = (1980, 1, 1, 0, 0, 0)  # the earliest a zip can hold, for every member: the same inputs give the same wheel


def package_archive(archive: str | Path, output_dir: str | Path, name: str, version: str) -> Path:
    """Write ``NAME-VERSION-py3-none-any.whl`` of *archive* (a path, URL or installed model) into *output_dir*; its path.

    The archive is loaded first, as a user's load will check it, so that a damaged archive, or one
    that no longer builds here, is refused now rather than shipped.
    """
    from toolkit.cli_options import archive_parts

    check_name(name)
    check_version(version)
    path = resolve_archive(archive)
    output = Path(output_dir)
    wheel = output / f"{name}-{version}-py3-none-any.whl"
    check_not_read(wheel, parts=archive_parts(str(archive)))
    if path.is_dir():  # a training run: the archive it wrote
        path = path / ARCHIVE_NAME
    loaded = load_archive(path, "cpu")
    members = {
        f"{name}/__init__.py": f'"""The parsing-toolkit model {name} {version}: toolkit.load_predictor("{name}"), or `toolkit predict {name} INPUT`."""\n',
        f"{name}/{ARCHIVE_NAME}": path,
        **dist_info(name, version, metadata(name, version, path, loaded)),
    }
    output.mkdir(parents=True, exist_ok=True)
    atomic_write(wheel, lambda temporary: write_wheel(temporary, members), shared_folder=True)  # two builds at once leave one whole wheel
    return wheel


def check_name(name: str) -> None:
    """Refuse a name that cannot be a Python package's, or that one already importable here has."""
    if not MODEL_NAME.fullmatch(name):
        fixed = name.lower().replace("-", "_")
        example = fixed if MODEL_NAME.fullmatch(fixed) else "ewt_parser"
        raise ToolkitError(
            f"--name {name!r}: a model's name is lowercase letters, digits and underscores, beginning with a letter (e.g. {example}), "
            "since it is also the name of the Python package that holds it"
        )
    try:
        spec = find_spec(name)
    except (ImportError, ValueError):
        spec = None
    if spec is not None and name not in installed_models():
        where = spec.origin or "a namespace package"
        raise ToolkitError(
            f"--name {name}: a Python module of that name is already importable here ({where}), and the model's package would clash with it: choose another name"
        )


def check_version(version: str) -> None:
    """Refuse a version pip would rewrite (``1.0.0-final``) or not take at all, so the wheel's file name is the version given."""
    if not CANONICAL_VERSION.fullmatch(version):
        raise ToolkitError(f"--version {version!r}: not a version in PEP 440's canonical form, such as 1.0.0, 2.1rc1 or 1.0.post1")


def metadata(name: str, version: str, path: Path, loaded: Archive) -> str:
    """The wheel's ``METADATA``: it requires the toolkit from the version that wrote the archive on, and the plugin distributions the archive records."""
    written = archived_json(path, VERSION_NAME, {}).get("toolkit_version")
    requires = [f"{DISTRIBUTION}>={written}" if written else DISTRIBUTION]
    for record in archived_json(path, PLUGINS_NAME, []):
        if record.get("distribution"):
            requires.append(f"{record['distribution']}>={record['version']}" if record.get("version") else record["distribution"])
    grammar = loaded.config.get("grammar", {}).get("type", "sequence")
    model = loaded.config.get("model", {}).get("type", "default")
    head = [
        "Metadata-Version: 2.1",
        f"Name: {name}",
        f"Version: {version}",
        f"Summary: A parsing-toolkit model: {model} model, {grammar} grammar",
        "Requires-Python: >=3.10",
        *(f"Requires-Dist: {requirement}" for requirement in requires),
        "Description-Content-Type: text/markdown",
    ]
    body = (
        f"# {name}\n\nA model for {DISTRIBUTION}, packaged from {path.name} by `toolkit package`. Once installed:\n\n"
        f"    toolkit predict {name} INPUT\n    toolkit serve {name}\n    python -c 'from toolkit import load_predictor; load_predictor(\"{name}\")'\n\n"
        f"Its metrics when it was trained:\n\n    {json.dumps(loaded.training_metrics, sort_keys=True)}\n"
    )
    return "\n".join(head) + "\n\n" + body


def archived_json(path: Path, member: str, default: Any) -> Any:
    """The JSON member *member* of the archive *path* (loaded, so intact), or *default* where it has none."""
    with tarfile.open(path) as tar:
        try:
            file = tar.extractfile(member)
        except KeyError:
            return default
        return json.load(file) if file else default


def dist_info(name: str, version: str, metadata_text: str) -> dict[str, str]:
    """The ``.dist-info`` members but ``RECORD``: what pip reads to install the package and register its entry point."""
    info = f"{name}-{version}.dist-info"
    return {
        f"{info}/METADATA": metadata_text,
        f"{info}/WHEEL": f"Wheel-Version: 1.0\nGenerator: {DISTRIBUTION} {toolkit_version() or 'dev'}\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        f"{info}/entry_points.txt": f"[{MODELS_GROUP}]\n{name} = {name}\n",
        f"{info}/top_level.txt": f"{name}\n",
    }


def write_wheel(target: Path, members: dict[str, str | Path]) -> None:
    """Zip *members* (text, or a file to copy) into *target*, with the ``RECORD`` of their hashes and sizes last."""
    info_dir = next(name for name in members if name.endswith("/WHEEL")).rsplit("/", 1)[0]
    record = []
    with zipfile.ZipFile(target, "w") as wheel:
        for name, content in members.items():
            digest = hashlib.sha256()
            stored = isinstance(content, Path)  # the archive, gzipped already
            with (
                wheel.open(_entry(name, zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED), "w") as sink,
                open(content, "rb") if stored else io.BytesIO(content.encode("utf-8")) as source,
            ):
                while block := source.read(1 << 20):
                    digest.update(block)
                    sink.write(block)
            record.append(f"{name},sha256={base64.urlsafe_b64encode(digest.digest()).rstrip(b'=').decode()},{wheel.getinfo(name).file_size}")
        record.append(f"{info_dir}/RECORD,,")
        wheel.writestr(_entry(f"{info_dir}/RECORD", zipfile.ZIP_DEFLATED), "\n".join(record) + "\n")


def _entry(name: str, compression: int) -> zipfile.ZipInfo:
    """A member dated :data:`DATE`, readable by all, as pip installs it."""
    info = zipfile.ZipInfo(name, DATE)
    info.external_attr = 0o644 << 16
    info.compress_type = compression
    return info
