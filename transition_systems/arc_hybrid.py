"""Arc-hybrid (Kuhlmann, Gómez-Rodríguez & Satta, 2011): left arcs to the buffer, right arcs on the stack.

- ``SHIFT``: move the buffer's front onto the stack.
- ``LEFT-ARC:r``: the buffer's front ``b0`` governs the stack top ``s0`` (never the root), which is popped.
- ``RIGHT-ARC:r``: ``s1`` governs ``s0``, which is popped; with ``s1`` the root this is the root
  arc, valid with a single root only once the buffer is empty.

Projective trees only. The static oracle (Goldberg & Nivre, 2013): LEFT-ARC when ``b0`` is
``s0``'s gold head, RIGHT-ARC when ``s1`` is and ``s0`` has all its dependents, else SHIFT.

The system is arc-decomposable, so its dynamic oracle counts arcs (Goldberg & Nivre, 2013; see
:mod:`transition_systems.dynamic_oracle`). Every word on the stack or in the buffer is still
unattached, and a word on the stack can only get its head from ``s1`` (when it is ``s0``) or from
the buffer's front, so an action costs the gold arcs it cuts off:

- ``LEFT-ARC``: ``s0``'s gold dependents in the buffer, and its gold head if that is ``s1`` or a
  buffer word other than ``b0``;
- ``RIGHT-ARC``: ``s0``'s gold dependents in the buffer, and its gold head if that is in the buffer;
- ``SHIFT``: ``b0``'s gold dependents on the stack, and its gold head if that is on the stack
  below ``s0``.
"""

from toolkit.grammars.grammar import Grammar
from transition_systems.actions import LEFT, RIGHT, SHIFT, ValidActions, arc
from transition_systems.configuration import Configuration
from transition_systems.dynamic_oracle import ActionCost
from transition_systems.transition_system import GoldTree, ProjectiveTransitionSystem


@Grammar.register("arc_hybrid")
class ArcHybrid(ProjectiveTransitionSystem):
    """Arc-hybrid transitions (see the module docstring). Registered as ``"arc_hybrid"``."""

    tensor_rules = "arc_hybrid"

    def valid(self, config: Configuration) -> ValidActions:
        stack, buffer = config.stack, config.buffer
        arcs = ((LEFT,) if buffer and len(stack) >= 2 else ()) + ((RIGHT,) if len(stack) >= 3 else ())
        return ValidActions.of(
            moves=(SHIFT,) if buffer else (),
            arcs=arcs,
            root_arcs=(RIGHT,) if len(stack) == 2 and self.root_attachment(not buffer) else (),
            root_label=self.root_label,
        )

    def transition(self, config: Configuration, kind: str, label: str | None) -> Configuration:
        stack, buffer = config.stack, config.buffer
        if kind == SHIFT:
            return config.move(stack + buffer[:1], buffer[1:])
        if kind == LEFT:
            return config.attach(buffer[0], stack[-1], label, stack[:-1], buffer)
        return config.attach(stack[-2], stack[-1], label, stack[:-1], buffer)

    def gold_action(self, config: Configuration, gold: GoldTree) -> str | None:
        stack, buffer = config.stack, config.buffer
        s0 = stack[-1]
        if buffer and s0 and gold.heads[s0] == buffer[0] and gold.complete(s0, config):
            return arc(LEFT, gold.labels[s0])
        if len(stack) >= 2 and gold.heads[s0] == stack[-2] and gold.complete(s0, config):
            return arc(RIGHT, gold.labels[s0])
        return SHIFT if buffer else None

    def action_costs(self, config: Configuration, gold: GoldTree) -> list[ActionCost]:
        """Each valid kind's cost (see the module docstring): arcs counted on sets, linear in the sentence."""
        stack, buffer, heads, valid = config.stack, config.buffer, gold.heads, self.valid(config)
        costs = []
        if buffer and SHIFT in valid.moves:
            b0, below = buffer[0], set(stack[:-1])
            costs.append(ActionCost(SHIFT, sum(heads[node] == b0 for node in stack) + (heads[b0] in below)))
        if len(stack) >= 2:
            s0, s1, waiting = stack[-1], stack[-2], set(buffer)
            orphans = sum(node in waiting for node in gold.children[s0])
            if LEFT in valid.arcs:
                costs.append(ActionCost(LEFT, orphans + (heads[s0] == s1 or (heads[s0] in waiting and heads[s0] != buffer[0])), buffer[0], s0))
            if RIGHT in valid.arcs or RIGHT in valid.root_arcs:
                costs.append(ActionCost(RIGHT, orphans + (heads[s0] in waiting), s1, s0))
        return costs
