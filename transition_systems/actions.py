"""Parser actions as vocabulary symbols, and the set of actions a configuration allows.

An action is a string: ``SHIFT``, ``SWAP``, ``REDUCE``, or an arc with its relation, ``LEFT-ARC:nsubj`` /
``RIGHT-ARC:nmod:poss`` (the relation is everything after the first colon). Relations are not
listed anywhere in the grammar: the model's symbol vocabulary, built from the oracle's actions on
the training data, is the label set. :class:`ValidActions` therefore admits an arc with *any*
relation when its kind is valid, so the answer depends only on a handful of flags; it is hashable
and repeats constantly, which is what the model's memoised vocabulary mask wants.

With the labeled-SHIFT option a shift of a frequent word names the word, ``SHIFT:the``
(:func:`labeled_shift`): the decoder then also learns to predict the next word, and a
configuration allows exactly the one SHIFT symbol that fits its buffer front.
"""

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from functools import cache
from typing import Any

SHIFT = "SHIFT"
SWAP = "SWAP"
REDUCE = "REDUCE"  # pop a word that already has its head (arc-eager; no shipped system uses it)
LEFT = "LEFT-ARC"
RIGHT = "RIGHT-ARC"
KINDS = (SHIFT, LEFT, RIGHT, SWAP, REDUCE)
UNLABELED = (SHIFT, SWAP, REDUCE)


def arc(kind: str, label: str) -> str:
    """The symbol of an arc action: ``arc("LEFT-ARC", "nsubj") == "LEFT-ARC:nsubj"``."""
    return f"{kind}:{label}"


def labeled_shift(word: str) -> str:
    """The SHIFT symbol that names the shifted word: ``labeled_shift("the") == "SHIFT:the"``."""
    return f"{SHIFT}:{word}"


def split_action(symbol: str) -> tuple[str, str | None]:
    """``(kind, relation)``; the relation is ``None`` for SHIFT, SWAP and REDUCE. ``ValueError`` if not an action."""
    kind, colon, label = symbol.partition(":")
    if kind in (LEFT, RIGHT) and label:
        return kind, label
    if kind in UNLABELED and not colon:
        return kind, None
    raise ValueError(f"{symbol!r} is not a parser action (SHIFT, SWAP, REDUCE, LEFT-ARC:<relation>, RIGHT-ARC:<relation>)")


@dataclass(frozen=True)
class ValidActions:
    """The actions a configuration allows, as flags per kind; ``symbol in valid`` checks a symbol.

    *right* is a right arc to a word, *root* a right arc to the artificial root. When *root_label*
    is set, an arc to the root must carry it and no other arc may (UD's ``root``), so every output
    names its root the way the treebank does. *shift_symbol* is the one symbol that shifts: plain
    ``SHIFT``, or with labeled SHIFT the buffer front's ``SHIFT:<word>`` when the word is decorated.
    """

    shift: bool = False
    left: bool = False
    right: bool = False
    root: bool = False
    swap: bool = False
    root_label: str | None = None
    shift_symbol: str = SHIFT
    reduce: bool = False

    def __contains__(self, symbol: object) -> bool:
        if symbol == self.shift_symbol:
            return self.shift
        if symbol == SHIFT:  # a decorated shift is due: plain SHIFT is not an alternative
            return False
        if symbol == SWAP:
            return self.swap
        if symbol == REDUCE:
            return self.reduce
        if not isinstance(symbol, str):
            return False
        kind, _, label = symbol.partition(":")
        if not label:
            return False
        if kind == LEFT:
            return self.left and label != self.root_label
        if kind == RIGHT:
            if self.root:
                return self.root_label is None or label == self.root_label
            return self.right and label != self.root_label
        return False

    @staticmethod
    @cache
    def of(
        shift: bool, left: bool, right: bool, root: bool, swap: bool, root_label: str | None, shift_symbol: str = SHIFT, reduce: bool = False
    ) -> "ValidActions":
        """The shared instance for these flags: there are only a few, and configurations ask for one at every step."""
        return ValidActions(shift, left, right, root, swap, root_label, shift_symbol, reduce)

    def but(self, **changes: Any) -> "ValidActions":
        """The shared instance with some flags changed (``valid.but(swap=True)``)."""
        return ValidActions.of(**{**asdict(self), **changes})

    def expand(self, labels: Iterable[str]) -> list[str]:
        """Every allowed symbol whose relation is among *labels* (for tests and enumerating searches)."""
        candidates = [self.shift_symbol, SWAP, REDUCE] + [arc(kind, label) for label in labels for kind in (LEFT, RIGHT)]
        return [symbol for symbol in candidates if symbol in self]
