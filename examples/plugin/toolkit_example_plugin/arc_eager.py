"""Arc-eager (Nivre, 2003): arcs between the stack top and the buffer front, made as early as possible.

- ``SHIFT``: move the buffer's front ``b0`` onto the stack.
- ``LEFT-ARC:r``: ``b0`` governs the stack top ``s0`` (a word without a head), which is popped.
- ``RIGHT-ARC:r``: ``s0`` governs ``b0``, which is pushed. With ``s0`` the root, this is the root arc.
- ``REDUCE``: pop ``s0``, which already has its head.

Projective trees only. The toolkit decodes every grammar under its constraints, so ``valid``
admits only actions after which the tree can still be finished: a word left without a head when
the buffer runs out could never get one, and with a single root every later word must be able to
hang from the root's one dependent. :func:`completable` is that test, derived in its docstring.

The static oracle: LEFT-ARC or RIGHT-ARC for a gold arc between ``s0`` and ``b0``, REDUCE once
``s0`` has its head and all its dependents, else SHIFT.
"""

from toolkit.grammars.grammar import Grammar
from transition_systems import (
    LEFT,
    REDUCE,
    RIGHT,
    SHIFT,
    Configuration,
    GoldTree,
    ProjectiveTransitionSystem,
    ValidActions,
    arc,
)
from transition_systems.configuration import NO_HEAD


@Grammar.register("arc_eager")
class ArcEager(ProjectiveTransitionSystem):
    """Arc-eager transitions (see the module docstring). Registered as ``"arc_eager"``."""

    def valid(self, config: Configuration) -> ValidActions:
        stack, buffer, heads = config.stack, config.buffer, config.heads
        s0 = stack[-1]
        flags = {
            SHIFT: bool(buffer),
            LEFT: bool(buffer) and s0 != 0 and heads[s0] == NO_HEAD,
            RIGHT: bool(buffer) and s0 != 0,
            "root": bool(buffer) and s0 == 0 and not (self.single_root and root_taken(config)),
            REDUCE: s0 != 0 and heads[s0] != NO_HEAD,
        }
        for kind in (SHIFT, LEFT, RIGHT, "root", REDUCE):  # keep only the moves that leave a finishable tree
            if flags[kind]:
                flags[kind] = completable(self.transition(config, RIGHT if kind == "root" else kind, self.root_label), self.single_root)
        return ValidActions.of(
            moves=[kind for kind in (SHIFT, REDUCE) if flags[kind]],
            arcs=[kind for kind in (LEFT, RIGHT) if flags[kind]],
            root_arcs=[RIGHT] if flags["root"] else [],
            root_label=self.root_label,
        )

    def transition(self, config: Configuration, kind: str, label: str | None) -> Configuration:
        stack, buffer = config.stack, config.buffer
        if kind == SHIFT:
            return config.move(stack + buffer[:1], buffer[1:])
        if kind == REDUCE:
            return config.move(stack[:-1], buffer)
        if kind == LEFT:
            return config.attach(buffer[0], stack[-1], label, stack[:-1], buffer)
        return config.attach(stack[-1], buffer[0], label, stack + buffer[:1], buffer[1:])

    def gold_action(self, config: Configuration, gold: GoldTree) -> str | None:
        stack, buffer = config.stack, config.buffer
        s0 = stack[-1]
        if buffer and s0 and config.heads[s0] == NO_HEAD and gold.heads[s0] == buffer[0]:
            return arc(LEFT, gold.labels[s0])
        if buffer and gold.heads[buffer[0]] == s0:
            return arc(RIGHT, gold.labels[buffer[0]])
        if s0 and config.heads[s0] != NO_HEAD and gold.complete(s0, config):
            return REDUCE
        return SHIFT if buffer else None


def root_taken(config: Configuration) -> bool:
    """Whether some word already hangs from the root."""
    return 0 in config.heads[1:]


def completable(config: Configuration, single_root: bool) -> bool:
    """Whether arc-eager can still finish *config* as a tree.

    With the buffer empty, every word on the stack must have its head (nothing could give it one).
    Otherwise a finish exists unless a single root is already taken and no stack word hangs from
    it: words that hang from the root's dependent reach the stack only by a RIGHT-ARC from a stack
    word that already does, so once the last of them is popped, the last buffer word can never be
    attached. (When one is on the stack, pop what lies above it with LEFT-ARC and REDUCE and chain
    the buffer onto it with RIGHT-ARCs.)
    """
    if not config.buffer:
        return all(config.heads[word] != NO_HEAD for word in config.stack[1:])
    return not (single_root and root_taken(config)) or any(reaches_root(config, word) for word in config.stack[1:])


def reaches_root(config: Configuration, word: int) -> bool:
    """Whether following heads from *word* ends at the root (rather than at a word without a head)."""
    while word > 0:
        word = config.heads[word]
    return word == 0
