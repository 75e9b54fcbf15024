"""The unit of data every reader yields and every grammar consumes."""

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Example:
    """One input sentence and, for training data, its gold structure.

    *tokens* are the source tokens the encoder reads. *target* is the gold output in whatever form
    the grammar understands: a logical-form string for a sequence or tree grammar, head and label
    lists for a dependency grammar, a graph for AMR. It is ``None`` for unlabelled input.
    *meta* carries provenance (``path``, ``line``) so errors and predictions can point back to it.
    *token_paths* is set only for tree inputs (the ``tree_pairs`` reader): each token's branch path
    from the root, for an encoder with tree positional encodings.
    """

    tokens: list[str]
    target: Any = None
    meta: dict[str, Any] = field(default_factory=dict)
    token_paths: list[tuple[int, ...]] | None = None
