"""Arc-standard (Nivre, 2004): arcs between the two topmost stack nodes; projective trees only.

- ``SHIFT``: move the buffer's front onto the stack.
- ``LEFT-ARC:r``: the top ``s0`` governs the node below it, ``s1`` (never the root), which is popped.
- ``RIGHT-ARC:r``: ``s1`` governs ``s0``, which is popped. With ``s1`` the root, this is the
  root arc: with a single root it is valid only once the buffer is empty, as the last action.

The static oracle prefers LEFT-ARC, then RIGHT-ARC once ``s0`` has all its dependents, else SHIFT.
"""

from functools import cache

from toolkit.grammars.grammar import Grammar
from transition_systems.actions import LEFT, RIGHT, SHIFT, ValidActions, arc
from transition_systems.configuration import Configuration
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
    transition = staticmethod(stack_arc_transition)

    def gold_action(self, config: Configuration, gold: GoldTree) -> str | None:
        return stack_arc_gold_action(config, gold) or (SHIFT if config.buffer else None)
