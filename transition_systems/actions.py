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

Before the kinds were open (2026-11-23), :meth:`ValidActions.of` and :meth:`ValidActions.but` took
one flag per kind (``shift, left, right, root, swap, root_label, shift_symbol, reduce``); systems
written then still work, with a :class:`~toolkit.upgrades.ToolkitDeprecationWarning` once per
call site (see CHANGELOG.md).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any

from toolkit.upgrades import warn_deprecated

SHIFT = "SHIFT"
SWAP = "SWAP"
REDUCE = "REDUCE"  # pop a word that already has its head (arc-eager)
LEFT = "LEFT-ARC"
RIGHT = "RIGHT-ARC"
KINDS = (SHIFT, LEFT, RIGHT, SWAP, REDUCE)  # the kinds the shipped systems use; plugins add their own
# The old flags of ValidActions.of and .but: flag -> (the field that now holds its kind, the kind). "root" was a RIGHT-ARC to the root.
FLAGS = {
    "shift": ("moves", SHIFT),
    "left": ("arcs", LEFT),
    "right": ("arcs", RIGHT),
    "root": ("root_arcs", RIGHT),
    "swap": ("moves", SWAP),
    "reduce": ("moves", REDUCE),
}
OLD_PARAMETERS = ("shift", "left", "right", "root", "swap", "root_label", "shift_symbol", "reduce")  # the old of()'s, in order
FLAGS_DEPRECATED = "ValidActions.{}'s flags are deprecated since parsing-toolkit 0.2 and may go in 0.3: {}; see CHANGELOG.md"
OF_KINDS = (
    "of(shift, left, right, root, swap, root_label, shift_symbol=SHIFT, reduce=False), by position or keyword, is now "
    "ValidActions.of(moves={SHIFT, SWAP, REDUCE}, arcs={LEFT, RIGHT}, root_arcs={RIGHT}, root_label=..., shift_symbol=...) with each kind "
    "whose flag was true (root=True is root_arcs={RIGHT}); root_label= and shift_symbol= keep their meaning, and a system need not pass "
    "shift_symbol= (Configuration.allowed() puts in the labeled SHIFT)"
)
BUT_KINDS = (
    "but(shift=, left=, right=, root=, swap=, reduce=) is now valid.but(moves=valid.moves | {SWAP}) for swap=True "
    "(root=True is root_arcs=valid.root_arcs | {RIGHT}, the others' kinds are in moves and arcs, False removes the kind); "
    "but(root_label=..., shift_symbol=...) is unchanged"
)


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
        moves: Iterable[str] = (),
        arcs: Iterable[str] = (),
        root_arcs: Iterable[str] = (),
        root_label: str | None = None,
        shift_symbol: str = SHIFT,
        *old_positional: Any,
        **old_flags: Any,
    ) -> ValidActions:
        """The shared instance for these kinds: there are only a few, and configurations ask for one at every step.

        The old flags (``of(shift, left, right, root, swap, root_label, shift_symbol=SHIFT, reduce=False)``,
        by position or keyword) are read as the kinds they stand for, with a deprecation warning.
        """
        if old_positional or old_flags:
            valid = _of_flags((moves, arcs, root_arcs, root_label, shift_symbol, *old_positional), old_flags)
            warn_deprecated(FLAGS_DEPRECATED.format("of", OF_KINDS))
            return valid
        return _shared(tuple(moves), tuple(arcs), tuple(root_arcs), root_label, shift_symbol)

    def but(self, **changes: Any) -> ValidActions:
        """The shared instance with some fields changed (``valid.but(moves=valid.moves | {SWAP})``); an old flag
        (``but(swap=True)``) adds or removes its kind, with a deprecation warning.
        """
        if flags := [name for name in changes if name in FLAGS]:
            warn_deprecated(FLAGS_DEPRECATED.format("but", BUT_KINDS))
            for name in flags:
                where, kind = FLAGS[name]
                kinds = changes.get(where, getattr(self, where))
                changes[where] = kinds | {kind} if changes.pop(name) else kinds - {kind}
        changed = replace(self, **changes)
        return _shared(tuple(changed.moves), tuple(changed.arcs), tuple(changed.root_arcs), changed.root_label, changed.shift_symbol)

    def expand(self, labels: Iterable[str]) -> list[str]:
        """Every allowed symbol whose relation is among *labels* (for tests and enumerating searches)."""
        labels = list(labels)
        moves = [self.shift_symbol] + sorted(self.moves - {SHIFT})
        arcs = [arc(kind, label) for label in labels for kind in sorted(self.arcs | self.root_arcs)]
        return [symbol for symbol in moves + arcs if symbol in self]


def _of_flags(given: tuple[Any, ...], keywords: dict[str, Any]) -> ValidActions:
    """``of`` called the old way: *given* its positional slots (the leading bools of the first five were flags,
    all of them when there were more than five), *keywords* the old names it was given.
    """
    if unknown := [name for name in keywords if name not in OLD_PARAMETERS]:
        raise TypeError(f"ValidActions.of() got an unexpected keyword argument {unknown[0]!r}")
    count = len(given) if len(given) > 5 else next((i for i, value in enumerate(given) if not isinstance(value, bool)), 5)
    named = {**dict(zip(OLD_PARAMETERS, given[:count])), **keywords}
    kinds = {name: set(value) for name, value in list(zip(("moves", "arcs", "root_arcs"), given))[count:]}  # slots given as kinds
    for flag, (where, kind) in FLAGS.items():
        if named.get(flag):
            kinds.setdefault(where, set()).add(kind)
    root_label = named.get("root_label") if count > 3 else given[3]
    shift_symbol = named.get("shift_symbol", SHIFT) if count > 4 else given[4]
    return _shared(*(tuple(sorted(kinds.get(name, ()))) for name in ("moves", "arcs", "root_arcs")), root_label, shift_symbol)


@cache
def _shared(moves: tuple[str, ...], arcs: tuple[str, ...], root_arcs: tuple[str, ...], root_label: str | None, shift_symbol: str) -> ValidActions:
    return ValidActions(frozenset(moves), frozenset(arcs), frozenset(root_arcs), root_label, shift_symbol)
