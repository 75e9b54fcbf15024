"""Dynamic oracles: which actions lose nothing from *any* configuration, not only the gold path's.

A static oracle knows one action sequence per tree, so a parser trained on it never sees a
configuration reached by a mistake, and at test time one mistake leads to more (Goldberg & Nivre,
2012). A dynamic oracle answers for every reachable configuration: the *cost* of an action is how
many more words must end with a wrong head or relation, at best, after it than before it. Training
with exploration (:mod:`toolkit.decoding.exploration`) follows the parser's own predictions and
teaches, at each step, the best action that costs nothing.

For an *arc-decomposable* system (arc-hybrid, arc-eager) the cost is a count: a gold arc is
reachable from a configuration if it is reachable on its own, so an action's cost is the gold arcs
it makes unreachable (Goldberg & Nivre, 2013). Arc-standard is not arc-decomposable: its exact
dynamic oracle needs a dynamic program over the stack (Goldberg, Sartorio & Satta, 2014), which
this toolkit does not ship; it and arc-swap train on their static oracles.

A system gives its dynamic oracle by overriding :meth:`TransitionSystem.action_costs`; labels are
handled here, the same way for every system: an arc that gives a word its gold head costs one more
with any relation but the gold one, and an arc that gives it another head costs what it costs
whatever the relation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from transition_systems.actions import ValidActions, arc
from transition_systems.configuration import NO_HEAD, Configuration

if TYPE_CHECKING:
    from transition_systems.transition_system import GoldTree, TransitionSystem


class ActionCost(NamedTuple):
    """An action kind's cost in one configuration, and for an arc the arc it would make."""

    kind: str
    cost: int
    head: int = NO_HEAD
    dependent: int = NO_HEAD


@dataclass(frozen=True)
class OptimalActions:
    """The least-cost actions of a configuration, as a vocabulary mask reads them (``symbol in optimal``).

    *any_relation*: the allowed kinds whose every relation is optimal (moves, and arcs that give a
    word a head other than its gold one); *symbols*: arcs optimal with one relation only, the gold one.
    """

    any_relation: ValidActions
    symbols: frozenset[str]

    def __contains__(self, symbol: object) -> bool:
        return symbol in self.symbols or symbol in self.any_relation


@dataclass(frozen=True)
class DynamicOracle:
    """One sentence's dynamic oracle: its system, its gold tree, and the configuration parsing starts from."""

    system: TransitionSystem
    gold: GoldTree
    start: Configuration

    def optimal(self, config: Configuration) -> OptimalActions:
        """The actions of least cost in *config* (zero where the gold tree is still reachable as it stands)."""
        valid = config.allowed()
        costs = self.system.action_costs(config, self.gold)
        best = min(cost.cost for cost in costs)
        pinned, free = [], set()
        for kind, cost, head, dependent in costs:
            if cost != best:
                continue
            if dependent != NO_HEAD and self.gold.heads[dependent] == head:
                pinned.append(arc(kind, self.gold.labels[dependent]))
            else:
                free.add(kind)
        any_relation = valid.but(moves=valid.moves & free, arcs=valid.arcs & free, root_arcs=valid.root_arcs & free)
        return OptimalActions(any_relation, frozenset(symbol for symbol in pinned if symbol in valid))

    def loss(self, config: Configuration) -> int:
        """Words whose head or relation is already wrong in *config* (for tests and reports)."""
        heads, labels = self.gold.heads, self.gold.labels
        return sum(head != NO_HEAD and (head != heads[word] or config.labels[word] != labels[word]) for word, head in enumerate(config.heads) if word)
