"""Archives written before a config key or a weight name moved keep loading, without retraining.

An archive (and a serialization directory) keeps the config and weights it was trained with. When a
component's keys move, :func:`upgrade_config` rewrites the old config before it is built; when a
parameter is renamed, :func:`upgrade_weights` renames it in the loaded weights. The moves so far:

- the Transformer encoders and decoders took six layer settings and a position-table switch as
  flat keys (``num_layers``, ``num_heads``, ``ff_dim``, ``dropout``, ``attention_dropout``,
  ``norm_first``; ``max_length``, ``positional_encoding: "tree"``, ``tree_degree``,
  ``tree_max_depth``, ``tree_parameterized``); they now sit in ``layers`` and in a registered
  ``positional_encoding`` (``{"type": "sinusoidal", "max_length": ...}`` or
  ``{"type": "tree", "degree": ...}``);
- the ``tagger``'s word embedding table was ``embedding``; like the ``encoder_decoder``'s, it is
  now ``source_embedding`` (both read words through :class:`~toolkit.models.word_model.WordModel`).
"""

from collections.abc import Collection
from typing import Any

TRANSFORMERS = frozenset({"transformer", "phrase_transformer", "hypernode_transformer", "stack_transformer"})
LAYER_KEYS = ("num_layers", "num_heads", "ff_dim", "dropout", "attention_dropout", "norm_first")
TREE_KEYS = {"tree_degree": "degree", "tree_max_depth": "max_depth", "tree_parameterized": "parameterized"}
WEIGHT_NAMES = {"embedding.weight": "source_embedding.weight"}  # old name -> new name


def upgrade_config(config: dict[str, Any]) -> list[str]:
    """Rewrite *config* in place to the current keys; returns the key paths it moved (empty: none)."""
    model = config.get("model")
    if not isinstance(model, dict):
        return []
    moved: list[str] = []
    for part in ("encoder", "decoder"):
        block = model.get(part)
        if isinstance(block, dict) and block.get("type", "transformer") in TRANSFORMERS:
            moved += _flat_transformer(block, f"model.{part}")
    return moved


def _flat_transformer(block: dict[str, Any], path: str) -> list[str]:
    """Move one Transformer's flat layer and position keys into ``layers`` and ``positional_encoding``."""
    moved = [f"{path}.{key}" for key in (*LAYER_KEYS, "max_length", *TREE_KEYS) if key in block]
    if isinstance(block.get("positional_encoding"), str):
        moved.append(f"{path}.positional_encoding")
    if not moved:
        return []
    if layers := {key: block.pop(key) for key in LAYER_KEYS if key in block}:
        block["layers"] = {**layers, **block.get("layers", {})}
    kind = block.pop("positional_encoding", "sinusoidal")
    encoding = kind if isinstance(kind, dict) else {"type": kind}
    max_length, tree = block.pop("max_length", None), {new: block.pop(old) for old, new in TREE_KEYS.items() if old in block}
    if encoding.get("type", "sinusoidal") == "tree":
        encoding.update(tree)  # a tree has no length limit: the old max_length was unused
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
