"""Outside packages that register components: entry points, ``--include-package``, and archives' records.

A plugin is a package whose import registers components (a grammar, an encoder, a reader...).
Installed plugins declare themselves in ``setup.cfg``::

    [options.entry_points]
    toolkit.plugins =
        my_plugin = my_plugin

They are imported lazily: only when a config (or ``toolkit list``) asks for a name that nothing
registered yet, so ``toolkit --help`` and every run on built-in names never pay for them.
``--include-package PKG`` imports a package eagerly, installed or not.

An archive remembers the plugin packages its components come from (``plugins.json``: package,
the distribution that installs it, its version, and where it was installed from: pip's PEP 610
record, or the folder a package on the path was imported from); loading imports them, or says in
one line which one is missing, where it came from and the command that installs it from there
again, instead of failing later on an unregistered name.
"""

from __future__ import annotations

import importlib
import json
import logging
import shlex
import sys
import traceback
from collections.abc import Iterable
from functools import cache
from importlib.metadata import PackageNotFoundError, distribution, entry_points, packages_distributions, version
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from toolkit.errors import ArchiveError, ConfigurationError
from toolkit.files import parse_json, write_atomically

logger = logging.getLogger(__name__)
ENTRY_POINT_GROUP = "toolkit.plugins"
BUILTIN_PACKAGES = ("toolkit", "tree_codecs", "transition_systems", "predictors")
PLUGINS_NAME = "plugins.json"


def import_builtin_components() -> None:
    """Import every toolkit module that registers something, so that names resolve and ``list`` is complete."""
    for module in (
        "toolkit.data.dataset_readers",
        "toolkit.grammars",
        "toolkit.models",
        "toolkit.metrics",
        "toolkit.decoding",
        "toolkit.phrases",
        "toolkit.entities",
        "toolkit.training.trainer",
        "predictors",
        "tree_codecs",
        "transition_systems",
    ):
        importlib.import_module(module)


def import_plugin(package: str) -> bool:
    """Import *package*; ``False`` if it is not installed at all.

    A plugin that is there but fails while importing (a syntax error, an exception, a dependency of
    its own that is missing) is a broken file the user can fix: one line naming the package, the
    error and where it was raised, and the traceback in the log with ``toolkit -v``.
    """
    try:
        importlib.import_module(package)
    except ModuleNotFoundError as error:
        if error.name and (package == error.name or package.startswith(error.name + ".")):
            return False
        raise plugin_failure(package, error) from None
    except Exception as error:  # noqa: BLE001 - whatever a plugin raises, it is the plugin's, not the toolkit's
        raise plugin_failure(package, error) from None
    return True


def plugin_failure(package: str, error: Exception) -> ConfigurationError:
    logger.debug("importing the plugin package %s failed", package, exc_info=error)
    if isinstance(error, SyntaxError) and error.filename:
        where = f"{error.filename}:{error.lineno}"
        message = error.msg
    else:
        frame = traceback.extract_tb(error.__traceback__)[-1]
        where = f"{frame.filename}:{frame.lineno}"
        message = str(error)
    return ConfigurationError(
        f"the plugin package '{package}' failed to import: {type(error).__name__}: {message} (at {where}; toolkit -v shows the traceback)"
    )


def include_package(name: str) -> None:
    if not all(part.isidentifier() for part in name.split(".")):
        raise ConfigurationError(f"--include-package {name!r}: not a package name (dotted Python identifiers, like my_plugin or my_plugin.grammars)")
    if not import_plugin(name):
        raise ConfigurationError(f"--include-package {name}: cannot import it (no module of that name is installed or on PYTHONPATH)")


def import_plugins(include: tuple[str, ...] = ()) -> None:
    """The built-in components and the packages named with ``--include-package`` (entry points wait until needed)."""
    import_builtin_components()
    for name in include:
        include_package(name)


@cache
def load_entry_point_plugins() -> bool:
    """Import every package declaring the ``toolkit.plugins`` entry point, once; whether there was any.

    Called by the registry when a name is not registered, and by ``toolkit list``.
    """
    found = False
    for entry_point in entry_points(group=ENTRY_POINT_GROUP):
        found = True
        try:
            entry_point.load()
        except Exception as error:  # noqa: BLE001 - a broken plugin must not break the toolkit
            logger.warning("plugin %s (entry point %s) could not be loaded: %s", entry_point.value, entry_point.name, error)
    return found


# ------------------------------------------------------------ where a component comes from


def top_package(cls: type) -> str:
    return cls.__module__.partition(".")[0]


@cache
def distribution_of(package: str) -> tuple[str, str] | None:
    """The (distribution, version) that installs top-level *package*, or ``None`` if none does (a path import)."""
    for name in packages_distributions().get(package, ()):
        try:
            return name, version(name)
        except PackageNotFoundError:
            continue
    return None


def origin(cls: type) -> str:
    """``parsing-toolkit 0.1.0``, ``toolkit-example-plugin 0.1.0``, or the bare package name when no distribution installs it."""
    package = top_package(cls)
    distribution = distribution_of(package)
    return f"{distribution[0]} {distribution[1]}" if distribution else package


# ------------------------------------------------------------ archives' records


def installed_from(name: str) -> dict[str, Any] | None:
    """PEP 610's ``direct_url.json`` of distribution *name*: the URL pip installed it from when that was
    not a package index (a local folder, editable or not; a wheel or sdist file; a VCS URL), else ``None``.
    """
    try:
        text = distribution(name).read_text("direct_url.json")
        record = json.loads(text) if text else None
    except (PackageNotFoundError, ValueError):
        return None
    return record if isinstance(record, dict) and isinstance(record.get("url"), str) else None


def imported_from(package: str) -> str | None:
    """The folder on ``sys.path`` that top-level *package* was imported from (for a package no distribution installs)."""
    spec = getattr(sys.modules.get(package), "__spec__", None)
    if spec is None:
        return None
    if spec.submodule_search_locations:  # a package (also a namespace package): its folder's parent
        return str(Path(next(iter(spec.submodule_search_locations))).parent)
    return str(Path(spec.origin).parent) if spec.origin else None


def plugin_records(classes: Iterable[type]) -> list[dict[str, Any]]:
    """The plugin packages (not the toolkit's own) that *classes* come from: distribution, version and where each came from."""
    records = []
    for package in sorted({top_package(cls) for cls in classes} - set(BUILTIN_PACKAGES)):
        found = distribution_of(package)
        records.append(
            {
                "package": package,
                "distribution": found and found[0],
                "version": found and found[1],
                "direct_url": installed_from(found[0]) if found else None,
                "path": None if found else imported_from(package),
            }
        )
    return records


def write_plugins(directory: Path, classes: Iterable[type]) -> None:
    """``plugins.json``: what :func:`require_plugins` imports before an archive of these components loads."""
    write_atomically(directory / PLUGINS_NAME, json.dumps(plugin_records(classes), indent=2) + "\n")


def reinstall_hint(record: dict[str, Any]) -> tuple[str, str]:
    """(where the package came from, the command that installs it from there again), from its record.

    ``pip install NAME==V`` only for a distribution from a package index (no PEP 610 record);
    ``pip install -e PATH`` for an editable install, ``pip install PATH`` or the URL for the rest.
    """
    package, name, wanted, direct, path = (record.get(key) for key in ("package", "distribution", "version", "direct_url", "path"))
    if not name:
        if path:
            return f"imported from {path} when the archive was written", f"put {shlex.quote(path)} on PYTHONPATH or pip install it"
        return "", f"put {package} on PYTHONPATH or pip install it"
    installed = f"{name} {wanted}" if wanted else name
    if not direct:
        return f"{installed} from a package index", f"pip install {name}=={wanted}" if wanted else f"pip install {name}"
    url = direct["url"]
    where = unquote(urlparse(url).path) if url.startswith("file:") else url
    vcs = direct.get("vcs_info")
    if isinstance(vcs, dict) and vcs.get("vcs"):
        where = f"{vcs['vcs']}+{url}" + (f"@{vcs['commit_id']}" if vcs.get("commit_id") else "")
        return f"{installed} from {where}", f"pip install {shlex.quote(where)}"
    if isinstance(direct.get("dir_info"), dict):
        if direct["dir_info"].get("editable"):
            return f"{installed}, an editable install of {where}", f"pip install -e {shlex.quote(where)}"
        return f"{installed} from the local folder {where}", f"pip install {shlex.quote(where)}"
    return f"{installed} from {where}", f"pip install {shlex.quote(where)}"


def require_plugins(directory: Path, archive: Path) -> list[str]:
    """Import the plugin packages an archive recorded, and name them; one line naming the package, where it came from and how to install it if one is missing."""
    path = directory / PLUGINS_NAME
    if not path.exists():
        return []
    try:
        records = parse_json(path.read_bytes())
        if not isinstance(records, list) or not all(isinstance(record, dict) for record in records):
            raise TypeError("it must be a list of records")
        for record in records:
            if not isinstance(record["package"], str) or not all(isinstance(record.get(key), (str, type(None))) for key in ("distribution", "version", "path")):
                raise TypeError("a record's package, distribution, version and path must be strings")
            direct = record.get("direct_url")
            if direct is not None and not (isinstance(direct, dict) and isinstance(direct.get("url"), str)):
                raise TypeError("a record's direct_url must be PEP 610's record, with a url")
    except (ValueError, TypeError, KeyError) as error:
        raise ArchiveError(f"{archive}: corrupt {PLUGINS_NAME}: {error}") from None
    for record in records:
        package, distribution_name, wanted = record["package"], record.get("distribution"), record.get("version")
        if not import_plugin(package):
            where, install = reinstall_hint(record)
            raise ArchiveError(f"{archive} needs the plugin package '{package}'{f' ({where})' if where else ''}, which is not installed: {install}")
        installed = distribution_of(package)
        if distribution_name and installed and installed[1] != wanted:
            logger.warning("%s was trained with %s %s; %s is installed", archive, distribution_name, wanted, " ".join(installed))
    return [record["package"] for record in records]
