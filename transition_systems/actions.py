"""Parser actions as vocabulary symbols, and the set of actions a configuration allows.

An action is a string of one of two shapes:

- a *move*, whose symbol is its kind alone: ``SHIFT``, ``SWAP``, ``REDUCE``, or a plugin's own
  (Covington's ``NO-ARC``);
- an *arc*, whose symbol is its kind and a relation: ``LEFT-ARC:nsubj``, ``RIGHT-ARC:nmod:poss``
  (the relation is everything after the first colon), or a plugin's own kind (Attardi's
  ``LEFT-2:obj``).

The kinds are open: a system introduces one by allowing it in the :class:`ValidActions` its
``valid`` returns and giving it an effect in its ``transition``; nothing else needs to know it.
Relations are not listed anywhere in the grammar: the model's symbol vocabulary, built from the
oracle's actions on the training data, is the label set. :class:`ValidActions` therefore admits an
arc with *any* relation when its kind is allowed, so the answer depends only on a few small sets;
it is hashable and repeats constantly, which is what the model's memoised vocabulary mask wants.

With the labeled-SHIFT option a shift of a frequent word names the word, ``SHIFT:the``
(:func:`labeled_shift`): the decoder then also learns to predict the next word, and a
configuration allows exactly the one SHIFT symbol that fits its buffer front.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any

SHIFT = "SHIFT"
SWAP = "SWAP"
REDUCE = "REDUCE"  # pop a word that already has its head (arc-eager)
LEFT = "LEFT-ARC"
RIGHT = "RIGHT-ARC"
KINDS = (SHIFT, LEFT, RIGHT, SWAP, REDUCE)  # the kinds the shipped systems use; plugins add their own


def arc(kind: str, label: str) -> str:
    """The symbol of an arc action: ``arc("LEFT-ARC", "nsubj") == "LEFT-ARC:nsubj"``."""
    return f"{kind}:{label}"


def labeled_shift(word: str) -> str:
    """The SHIFT symbol that names the shifted word: ``labeled_shift("the") == "SHIFT:the"``."""
    return f"{SHIFT}:{word}"


def split_action(symbol: str) -> tuple[str, str | None]:
    """``(kind, relation)``, the relation ``None`` for a move. ``ValueError`` if *symbol* has neither shape."""
    kind, colon, label = symbol.partition(":")
    if kind and (label or not colon):
        return kind, label or None
    raise ValueError(f"{symbol!r} is not a parser action (a kind such as SHIFT, or an arc such as LEFT-ARC:<relation>)")


@dataclass(frozen=True)
class ValidActions:
    """The actions a configuration allows, as sets of kinds; ``symbol in valid`` checks a symbol.

    *moves* are the move kinds allowed (``SHIFT``, ``SWAP``, ...), *arcs* the arc kinds allowed
    between two words, and *root_arcs* the arc kinds allowed that attach a word to the artificial
    root. When *root_label* is set, an arc to the root must carry it and no other arc may (UD's
    ``root``), so every output names its root the way the treebank does. *shift_symbol* is the one
    symbol that shifts: plain ``SHIFT``, or with labeled SHIFT the buffer front's ``SHIFT:<word>``.
    Build one with :meth:`of`, which shares equal answers.
    """

    moves: frozenset[str] = frozenset()
    arcs: frozenset[str] = frozenset()
    root_arcs: frozenset[str] = frozenset()
    root_label: str | None = None
    shift_symbol: str = SHIFT
    _parsed: dict[str, tuple[str, str | None] | None] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __contains__(self, symbol: object) -> bool:
        return self.parse(symbol) is not None

    def parse(self, symbol: object) -> tuple[str, str | None] | None:
        """``(kind, relation)`` of *symbol* if it is allowed (the relation ``None`` for a move, and for any SHIFT), else ``None``.

        Remembered per symbol: an instance is shared by every configuration that allows the same
        kinds, and the symbols come from a vocabulary, so the oracle and the search ask the same few
        questions at every step.
        """
        try:
            return self._parsed[symbol]  # type: ignore[index]
        except KeyError:
            self._parsed[symbol] = answer = self._parse(symbol)  # type: ignore[index]
            return answer
        except TypeError:  # unhashable: not a symbol
            return None

    def _parse(self, symbol: object) -> tuple[str, str | None] | None:
        if symbol == self.shift_symbol:
            return (SHIFT, None) if SHIFT in self.moves else None
        if not isinstance(symbol, str) or symbol == SHIFT:  # a decorated shift is due: plain SHIFT is no alternative
            return None
        kind, colon, label = symbol.partition(":")
        if not colon:
            return (kind, None) if kind in self.moves else None
        if not label:
            return None
        if kind in self.root_arcs:
            allowed = self.root_label is None or label == self.root_label
        else:
            allowed = kind in self.arcs and label != self.root_label
        return (kind, label) if allowed else None

    @staticmethod
    def of(
        moves: Iterable[str] = (), arcs: Iterable[str] = (), root_arcs: Iterable[str] = (), root_label: str | None = None, shift_symbol: str = SHIFT
    ) -> ValidActions:
        """The shared instance for these kinds: there are only a few, and configurations ask for one at every step."""
        return _shared(tuple(moves), tuple(arcs), tuple(root_arcs), root_label, shift_symbol)

    def but(self, **changes: Any) -> ValidActions:
        """The shared instance with some fields changed (``valid.but(moves=valid.moves | {SWAP})``)."""
        changed = replace(self, **changes)
        return _shared(tuple(changed.moves), tuple(changed.arcs), tuple(changed.root_arcs), changed.root_label, changed.shift_symbol)

    def expand(self, labels: Iterable[str]) -> list[str]:
        """Every allowed symbol whose relation is among *labels* (for tests and enumerating searches)."""
        labels = list(labels)
        moves = [self.shift_symbol] + sorted(self.moves - {SHIFT})
        arcs = [arc(kind, label) for label in labels for kind in sorted(self.arcs | self.root_arcs)]
        return [symbol for symbol in moves + arcs if symbol in self]


@cache
def _shared(moves: tuple[str, ...], arcs: tuple[str, ...], root_arcs: tuple[str, ...], root_label: str | None, shift_symbol: str) -> ValidActions:
    return ValidActions(frozenset(moves), frozenset(arcs), frozenset(root_arcs), root_label, shift_symbol)
