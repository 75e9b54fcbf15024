"""The ``tags`` grammar: one tag per token, for taggers (UPOS on UD, say).

Its oracle is the sentence's tags, so the trainer builds the ``symbols`` vocabulary from them
without a tagging-specific path through training, archives or ``toolkit oracle``.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from toolkit.data.example import Example
from toolkit.errors import DataError
from toolkit.grammars.grammar import Grammar, State


def gold_tags(value: Any, field: str = "upos") -> Sequence[str] | None:
    """The tags in *value*: its *field* (an attribute or a key, e.g. a ``DependencyTree``'s ``upos``),
    or *value* itself when it is a space-separated string or a list of tags; ``None`` if it has none.
    """
    if isinstance(value, str):
        return value.split()
    if isinstance(value, Mapping):
        return value.get(field)
    if isinstance(value, (list, tuple)):
        return value
    return getattr(value, field, None)


@dataclass(frozen=True)
class TagState(State):
    """The tags so far; final once there is one per token."""

    tags: tuple[str, ...]
    length: int

    def allowed(self) -> tuple[str, ...] | None:
        return () if self.is_final() else None

    def apply(self, symbol: str) -> "TagState":
        return TagState(self.tags + (symbol,), self.length)

    def is_final(self) -> bool:
        return len(self.tags) >= self.length

    def result(self) -> tuple[str, ...]:
        return self.tags


@Grammar.register("tags")
class TagGrammar(Grammar):
    """One tag per token: the oracle is the target's tags, the result the tuple of them.

    # Parameters
    field : where a structured target keeps its tags, e.g. ``"upos"`` of the ``conllu`` reader's
        ``DependencyTree``. A target that is a string (space-separated tags) or a list is used as is.

    Registered as ``"tags"``.
    """

    default_predictor = "tagger"
    state_features = frozenset()
    result_kind = "tags"

    def __init__(self, field: str = "upos"):
        self.field = field

    def oracle(self, example: Example) -> list[str]:
        tags = gold_tags(example.target, self.field)
        if tags is None or len(tags) != len(example.tokens):
            found = "no tags" if tags is None else f"{len(tags)} tags"
            raise DataError(
                f"grammar 'tags' needs one {self.field!r} tag per token: {len(example.tokens)} tokens, {found}",
                example.meta.get("path"),
                example.meta.get("line"),
            )
        return list(tags)

    def initial_state(self, example: Example) -> TagState:
        return TagState((), len(example.tokens))

    def gold(self, example: Example) -> tuple[str, ...]:
        return tuple(self.oracle(example))

    def oracle_metrics(self) -> list[dict[str, Any]]:
        return [{"type": "tag_accuracy", "field": self.field}]
