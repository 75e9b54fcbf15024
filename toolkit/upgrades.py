"""Old forms keep working: configs, archives and plugin code written before a key or a call changed.

An archive (and a serialization directory) keeps the config and weights it was trained with, and a
user's config or a plugin may be older than the toolkit. When a component's keys move,
:func:`upgrade_config` rewrites the old config before it is built (wherever a config is read:
:meth:`toolkit.params.Params.from_file` for ``toolkit train`` and ``toolkit oracle``, archives when
they load); when a parameter is renamed, :func:`upgrade_weights` renames it in the loaded weights.
The moves so far:

- the Transformer encoders and decoders took six layer settings and a position-table switch as
  flat keys (``num_layers``, ``num_heads``, ``ff_dim``, ``dropout``, ``attention_dropout``,
  ``norm_first``; ``max_length``, ``positional_encoding: "tree"``, ``tree_degree``,
  ``tree_max_depth``, ``tree_parameterized``); they now sit in ``layers`` and in a registered
  ``positional_encoding`` (``{"type": "sinusoidal", "max_length": ...}`` or
  ``{"type": "tree", "degree": ...}``);
- the ``tagger``'s word embedding table was ``embedding``; like the ``encoder_decoder``'s, it is
  now ``source_embedding`` (both read words through :class:`~toolkit.models.word_model.WordModel`).

A changed call of the public API (docs/plugin_api.md) accepts its old form for at least one minor
version, warning with :class:`ToolkitDeprecationWarning`; CHANGELOG.md lists both.
"""

import logging
import sys
import warnings
from collections.abc import Collection
from typing import Any

logger = logging.getLogger(__name__)
TRANSFORMERS = frozenset({"transformer", "phrase_transformer", "hypernode_transformer", "stack_transformer"})
LAYER_KEYS = ("num_layers", "num_heads", "ff_dim", "dropout", "attention_dropout", "norm_first")
TREE_KEYS = {"tree_degree": "degree", "tree_max_depth": "max_depth", "tree_parameterized": "parameterized"}
WEIGHT_NAMES = {"embedding.weight": "source_embedding.weight"}  # old name -> new name


class ToolkitDeprecationWarning(DeprecationWarning):
    """An old form of the public API, still accepted. Its own class so that ``toolkit`` can show it
    (Python hides a DeprecationWarning raised outside ``__main__``) without showing other packages' ones.
    """


_WARNED_SITES: set[tuple[str, int]] = set()  # (file, line) of every old call already warned about in this process


def warn_deprecated(message: str, stacklevel: int = 2) -> None:
    """Warn with :class:`ToolkitDeprecationWarning` once per call site per process (*stacklevel* as for ``warnings.warn``).

    Python's own once-per-location record is wiped whenever any code changes the warning filters
    (importing torch does, and so does every ``warnings.catch_warnings``), and pytest shows every
    DeprecationWarning each time: an old call in a parser's inner loop warned again after each
    reset, and once per call under pytest (103,896 warnings in one plugin's test run). The sites
    are remembered here instead. A site whose warning was raised as an error (``-W error``) is not
    remembered, so it raises again.
    """
    caller = sys._getframe(stacklevel)
    site = (caller.f_code.co_filename, caller.f_lineno)
    if site not in _WARNED_SITES:
        warnings.warn(message, ToolkitDeprecationWarning, stacklevel=stacklevel + 1)
        _WARNED_SITES.add(site)


def upgrade_config(config: dict[str, Any], source: str | None = None) -> list[str]:
    """Rewrite *config* in place to the current keys; returns the key paths it moved (empty: none).

    With *source* (a user's config file, or its overrides), each move is logged as a warning naming
    where the key went, so that the user updates the config.
    """
    model = config.get("model")
    if not isinstance(model, dict):
        return []
    moved: dict[str, str | None] = {}
    for part in ("encoder", "decoder"):
        block = model.get(part)
        if isinstance(block, dict) and block.get("type", "transformer") in TRANSFORMERS:
            moved.update(_flat_transformer(block, f"model.{part}"))
    for old, new in moved.items() if source else ():
        if new is None:
            logger.warning("%s: %s was unused by its positional encoding and is dropped; remove it from the config", source, old)
        else:
            logger.warning("%s: %s -> %s (the key has moved; read as the new one, but update the config)", source, old, new)
    return list(moved)


def _flat_transformer(block: dict[str, Any], path: str) -> dict[str, str | None]:
    """Move one Transformer's flat layer and position keys into ``layers`` and ``positional_encoding``;
    returns where each went (old path -> new path, ``None``: dropped, as the encoding has no use for it).
    """
    kind = block.get("positional_encoding", "sinusoidal")
    encoding = kind if isinstance(kind, dict) else {"type": kind}
    tree = encoding.get("type", "sinusoidal") == "tree"
    where = {key: f"layers.{key}" for key in LAYER_KEYS} | {"max_length": None if tree else "positional_encoding.max_length"}
    where |= {old: f"positional_encoding.{new}" if tree else None for old, new in TREE_KEYS.items()}
    moved = {f"{path}.{key}": new and f"{path}.{new}" for key, new in where.items() if key in block}
    if isinstance(block.get("positional_encoding"), str):
        moved[f"{path}.positional_encoding"] = f"{path}.positional_encoding.type"
    if not moved:
        return {}
    if layers := {key: block.pop(key) for key in LAYER_KEYS if key in block}:
        block["layers"] = {**block.get("layers", {}), **layers}  # both only when an override gave the flat key: it wins
    block.pop("positional_encoding", None)
    max_length, shape = block.pop("max_length", None), {new: block.pop(old) for old, new in TREE_KEYS.items() if old in block}
    if tree:
        encoding.update(shape)  # a tree has no length limit: the old max_length was unused
    elif max_length is not None:
        encoding["max_length"] = max_length
    block["positional_encoding"] = encoding
    return moved


def upgrade_weights(weights: dict[str, Any], expected: Collection[str]) -> list[str]:
    """Rename, in place, the old names in *weights* that the model now *expected* under a new one; returns the old names."""
    renamed = [old for old, new in WEIGHT_NAMES.items() if old in weights and old not in expected and new in expected and new not in weights]
    for old in renamed:
        weights[WEIGHT_NAMES[old]] = weights.pop(old)
    return renamed
