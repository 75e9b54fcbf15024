"""Covington's non-projective transition system (Covington, 2001; as a transition system, Nivre, 2008).

Every word is compared with every word to its left, nearest first, so any tree can be built,
crossing arcs included, in at most n(n + 1)/2 + n actions. A configuration holds two lists left
of the buffer: ``stack`` (λ1, the words still to be compared with the buffer front ``j``, nearest
last) and ``passed`` (λ2, those compared already, in sentence order). With ``i`` the last of λ1:

- ``LEFT-ARC:r``: ``j`` governs ``i``, which moves to λ2 (``i`` is a word without a head, and not
  an ancestor of ``j``: no cycle);
- ``RIGHT-ARC:r``: ``i`` governs ``j`` (``j`` without a head, not an ancestor of ``i``); ``i`` moves
  to λ2. With ``i`` the root, this is the root arc;
- ``NO-ARC``: ``i`` moves to λ2 without an arc (a new kind of action: the toolkit's action kinds
  are open, see :mod:`transition_systems.actions`);
- ``SHIFT``: λ1, λ2 and ``j`` become the new λ1 (``λ1.λ2|j``) and λ2 empties.

A parse ends when the buffer is empty. Decoding runs under the grammar's constraints, so ``valid``
admits only actions after which a tree can still be finished (:func:`completable`): every word
gets exactly one head, with a single root, without cycles.

The static oracle (Nivre, 2008): LEFT-ARC or RIGHT-ARC for a gold arc between ``i`` and ``j``;
NO-ARC while a word deeper in λ1 has a gold arc with ``j``; else SHIFT.

For the Stack-Transformer, the ``stack`` head attends to λ1 (nearest first) and the ``buffer``
head to the buffer, as for the shipped systems.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from toolkit.grammars.grammar import Grammar
from transition_systems import LEFT, RIGHT, SHIFT, Configuration, GoldTree, TransitionSystem, ValidActions, arc
from transition_systems.configuration import NO_HEAD

NO_ARC = "NO-ARC"


@dataclass(frozen=True)
class CovingtonConfiguration(Configuration):
    """A :class:`Configuration` with Covington's second list, λ2 (``passed``, in sentence order)."""

    passed: tuple[int, ...] = ()

    def is_final(self) -> bool:
        return not self.buffer

    def features(self) -> Mapping[str, Any]:
        """λ1 nearest first (the root left out) for the stack head, the buffer for the buffer head; 0-based positions."""
        return {"stack": tuple([node - 1 for node in reversed(self.stack) if node]), "buffer": tuple([node - 1 for node in self.buffer])}


@Grammar.register("covington")
class Covington(TransitionSystem):
    """Covington's non-projective transitions (see the module docstring). Registered as ``"covington"``."""

    configuration_class = CovingtonConfiguration

    def max_actions(self, words: int) -> int:
        """Each word is compared once with each word to its left (and the root), then shifted."""
        return words * (words + 1) // 2 + words

    def valid(self, config: Configuration) -> ValidActions:
        if not config.buffer:
            return ValidActions.of(root_label=self.root_label)
        heads, j = config.heads, config.buffer[0]
        moves, arcs, root_arcs = [SHIFT], [], []
        if config.stack:
            i = config.stack[-1]
            moves.append(NO_ARC)
            if i and heads[i] == NO_HEAD and not is_ancestor(config, i, j):
                arcs.append(LEFT)
            if heads[j] == NO_HEAD and not is_ancestor(config, j, i):
                if not i:
                    if not (self.single_root and root_taken(config)):
                        root_arcs.append(RIGHT)
                else:
                    arcs.append(RIGHT)
        label = self.root_label or "dep"  # completability does not depend on the relation

        def finishable(kind: str) -> bool:
            return completable(self.transition(config, kind, label), self.single_root)

        return ValidActions.of(
            moves=tuple(filter(finishable, moves)),
            arcs=tuple(filter(finishable, arcs)),
            root_arcs=tuple(filter(finishable, root_arcs)),
            root_label=self.root_label,
        )

    def transition(self, config: Configuration, kind: str, label: str | None) -> Configuration:
        stack, buffer, passed = config.stack, config.buffer, config.passed
        if kind == SHIFT:
            return config.move(stack + passed + buffer[:1], buffer[1:], passed=())
        i, j = stack[-1], buffer[0]
        if kind == NO_ARC:
            return config.move(stack[:-1], buffer, passed=(i, *passed))
        head, dependent = (j, i) if kind == LEFT else (i, j)
        return config.attach(head, dependent, label, stack[:-1], buffer, passed=(i, *passed))

    def gold_action(self, config: Configuration, gold: GoldTree) -> str | None:
        if not config.buffer:
            return None
        j = config.buffer[0]
        if config.stack:
            i = config.stack[-1]
            if i and gold.heads[i] == j:
                return arc(LEFT, gold.labels[i])
            if gold.heads[j] == i:
                return arc(RIGHT, gold.labels[j])
            if any(gold.heads[k] == j or gold.heads[j] == k for k in config.stack[:-1]):
                return NO_ARC
        return SHIFT


def root_taken(config: Configuration) -> bool:
    """Whether some word already hangs from the root."""
    return 0 in config.heads[1:]


def is_ancestor(config: Configuration, ancestor: int, node: int) -> bool:
    """Whether following heads up from *node* meets *ancestor* (an arc *node* -> *ancestor* would close a cycle).

    At most as many steps as there are nodes, so that even a (forbidden) cycle cannot hang a parse.
    """
    for _ in config.heads:
        if node <= 0:
            return False
        node = config.heads[node]
        if node == ancestor:
            return True
    return False


def reaches_root(config: Configuration, word: int) -> bool:
    """Whether following heads from *word* ends at the root (rather than at a word without a head, or in a cycle)."""
    for _ in config.heads:
        if word <= 0:
            break
        word = config.heads[word]
    return word == 0


def completable(config: Configuration, single_root: bool) -> bool:
    """Whether Covington's transitions can still finish *config* as a tree.

    Only the last word's pass can strand a word: before it, a SHIFT brings every word back into λ1,
    and the last word ``n``, still without a head, can govern every word without one and hang from
    the root (or, when the single root is taken, from the root's dependent, which is in λ1). During
    ``n``'s pass, ``n`` is the only head left to give: every word without a head must still be in
    λ1, and ``n`` must reach the root through its head, or still be able to get a head in λ1 that
    does (the root itself, if free). Heads that reach the root are never below a word without one,
    so no arc this leaves to make closes a cycle.
    """
    buffer, heads = config.buffer, config.heads
    if not buffer:
        return NO_HEAD not in heads[1:]
    if len(buffer) > 1:
        return True
    n, left = buffer[0], set(config.stack)
    if any(heads[word] == NO_HEAD and word not in left for word in range(1, n)):
        return False
    if heads[n] != NO_HEAD:
        return reaches_root(config, n)
    root_free = not (single_root and root_taken(config))
    return any(reaches_root(config, word) if word else root_free for word in config.stack)
