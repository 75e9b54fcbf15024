"""Arc-standard (Nivre, 2004): arcs between the two topmost stack nodes; projective trees only.

- ``SHIFT``: move the buffer's front onto the stack.
- ``LEFT-ARC:r``: the top ``s0`` governs the node below it, ``s1`` (never the root), which is popped.
- ``RIGHT-ARC:r``: ``s1`` governs ``s0``, which is popped. With ``s1`` the root, this is the
  root arc: with a single root it is valid only once the buffer is empty, as the last action.

The static oracle prefers LEFT-ARC, then RIGHT-ARC once ``s0`` has all its dependents, else SHIFT.
"""

from functools import cache

from toolkit.data.example import Example
from toolkit.grammars.grammar import Derivation, Grammar
from transition_systems.actions import LEFT, RIGHT, SHIFT, ValidActions, arc
from transition_systems.configuration import NO_HEAD, Configuration
from transition_systems.transition_system import GoldTree, ProjectiveTransitionSystem


def stack_arc_valid(system, config: Configuration) -> ValidActions:
    """SHIFT and the two stack arcs: shared by arc-standard and arc-swap."""
    depth, buffer = len(config.stack), bool(config.buffer)
    to_root = depth == 2 and system.root_attachment(not buffer)  # s1 is the root
    return _stack_arc_answer(buffer, depth >= 3, to_root, system.root_label)


@cache
def _stack_arc_answer(shift: bool, deep: bool, to_root: bool, root_label: str | None) -> ValidActions:
    """One of the few answers :func:`stack_arc_valid` gives, made once (the oracle and the search ask at every step)."""
    return ValidActions.of(moves=(SHIFT,) if shift else (), arcs=(LEFT, RIGHT) if deep else (), root_arcs=(RIGHT,) if to_root else (), root_label=root_label)


def stack_arc_transition(config: Configuration, kind: str, label: str | None) -> Configuration:
    """SHIFT, LEFT-ARC or RIGHT-ARC on the two topmost stack nodes."""
    stack, buffer = config.stack, config.buffer
    if kind == SHIFT:
        return config.move(stack + buffer[:1], buffer[1:])
    s1, s0 = stack[-2], stack[-1]
    if kind == LEFT:
        return config.attach(s0, s1, label, stack[:-2] + (s0,), buffer)
    return config.attach(s1, s0, label, stack[:-1], buffer)


def stack_arc_gold_action(config: Configuration, gold: GoldTree) -> str | None:
    """LEFT-ARC or RIGHT-ARC when the gold tree has that arc and the dependent is complete; else ``None``."""
    stack = config.stack
    if len(stack) < 2:
        return None
    s1, s0 = stack[-2], stack[-1]
    if s1 and gold.heads[s1] == s0 and gold.complete(s1, config):
        return arc(LEFT, gold.labels[s1])
    if gold.heads[s0] == s1 and gold.complete(s0, config):
        return arc(RIGHT, gold.labels[s0])
    return None


@Grammar.register("arc_standard")
class ArcStandard(ProjectiveTransitionSystem):
    """Arc-standard transitions (see the module docstring). Registered as ``"arc_standard"``."""

    valid = stack_arc_valid  # the shared rules themselves, not wrappers: one call less at every step
    tensor_rules = "stack_arcs"
    transition = staticmethod(stack_arc_transition)

    def gold_action(self, config: Configuration, gold: GoldTree) -> str | None:
        return stack_arc_gold_action(config, gold) or (SHIFT if config.buffer else None)

    def derive(self, example: Example) -> Derivation:
        """The walk's actions and features, from a list-based run of the same oracle (about 4× faster).

        Indexing a treebank derives every tree, and a configuration per step is most of that cost.
        :func:`arc_standard_derivation` runs the oracle on a mutable stack instead; tests hold it to
        the walk's output on an EWT slice and on random trees and forests. Whatever it cannot derive
        (and any subclass, whose rules may differ) goes through the walk, which names the problem.
        """
        heads, labels = self.oracle_tree(example)
        shifts = self.shift_symbols(example.tokens)
        derivation = type(self) is ArcStandard and arc_standard_derivation(heads, labels, shifts, self.single_root, self.root_label)
        return derivation or super().derive(example)


def arc_standard_derivation(
    heads: tuple[int, ...], labels: tuple[str, ...], shift_symbols: tuple[str, ...], single_root: bool, root_label: str | None
) -> Derivation | None:
    """:class:`ArcStandard`'s oracle run on lists: its actions and each step's features.

    *heads* and *labels* are per word (word *i* at index *i - 1*); *shift_symbols* as
    :meth:`TransitionSystem.shift_symbols` gives them. The oracle's preferences are
    :func:`stack_arc_gold_action`'s: LEFT-ARC, then RIGHT-ARC once ``s0`` is complete, else SHIFT.
    ``None`` wherever the walk would fail: stuck (a non-projective tree), or a gold arc the
    system forbids (the root arc before the buffer is empty, a relation in the wrong place).
    """
    n = len(heads)
    head_of, label_of = (NO_HEAD, *heads), ("", *labels)
    pending = [0] * (n + 1)  # gold dependents not yet attached, per node
    for head in heads:
        pending[head] += 1
    positions = tuple(range(n))  # the buffer's features are its slices
    stack, stack_positions = [0], []  # nodes bottom first; their positions without the root
    front = 1  # the buffer is front..n: arc-standard only ever shifts its front
    actions: list[str] = []
    features: list[dict[str, tuple[int, ...]]] = []
    while front <= n or len(stack) > 1:
        features.append({"stack": tuple(reversed(stack_positions)), "buffer": positions[front - 1 :]})
        s0 = stack[-1]
        s1 = stack[-2] if len(stack) > 1 else NO_HEAD
        if s1 > 0 and head_of[s1] == s0 and not pending[s1]:
            if label_of[s1] == root_label:
                return None
            actions.append(arc(LEFT, label_of[s1]))
            del stack[-2], stack_positions[-2]
            pending[s0] -= 1
        elif s1 >= 0 and head_of[s0] == s1 and not pending[s0]:
            if (not s1 and front <= n and single_root) or (root_label is not None and (label_of[s0] == root_label) != (not s1)):
                return None
            actions.append(arc(RIGHT, label_of[s0]))
            stack.pop(), stack_positions.pop()
            pending[s1] -= 1
        elif front <= n:
            actions.append(shift_symbols[front] if shift_symbols else SHIFT)
            stack.append(front), stack_positions.append(front - 1)
            front += 1
        else:
            return None
    return Derivation(actions, features)
