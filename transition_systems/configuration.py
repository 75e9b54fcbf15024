"""A parser configuration: the decoding state every transition system shares.

A configuration is a value (a frozen dataclass of tuples): applying an action returns a new one,
so a beam search keeps and shares configurations freely and can hash them. Nodes are numbered as
in CoNLL-U: 0 is the artificial root, words are 1..n; the root starts at the bottom of the stack.
Which actions are valid and what they do is the system's business (:class:`TransitionSystem`);
the configuration only holds the data and exposes it through the :class:`State` interface.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from toolkit.data.dependency_tree import DependencyTree
from toolkit.grammars.grammar import State
from transition_systems.actions import SHIFT, ValidActions

if TYPE_CHECKING:
    from transition_systems.transition_system import TransitionSystem

NO_HEAD = -1
NO_LABEL = "_"  # a word's relation in the result when decoding stopped before attaching it


@dataclass(frozen=True)
class Configuration(State):
    """Stack (bottom first, the root at the bottom), buffer (front first) and the arcs built so far.

    ``heads[i]`` / ``labels[i]`` are node *i*'s head and relation (index 0, the root, unused);
    ``NO_HEAD`` marks a word not yet attached. *shift_symbols* is empty without labeled SHIFT;
    with it, ``shift_symbols[i]`` is the symbol that shifts node *i* (``SHIFT:the`` or ``SHIFT``),
    one tuple shared by every configuration of the sentence.
    """

    system: TransitionSystem
    stack: tuple[int, ...]
    buffer: tuple[int, ...]
    heads: tuple[int, ...]
    labels: tuple[str, ...]
    shift_symbols: tuple[str, ...] = field(default=(), repr=False)

    @classmethod
    def start(cls, system: TransitionSystem, length: int, shift_symbols: tuple[str, ...] = ()) -> Configuration:
        """The initial configuration of a sentence of *length* words: only the root on the stack."""
        return cls(system, (0,), tuple(range(1, length + 1)), (NO_HEAD,) * (length + 1), (NO_LABEL,) * (length + 1), shift_symbols)

    def allowed(self) -> ValidActions:
        """The system's ``valid`` answer; with labeled SHIFT, its SHIFT is the buffer front's ``SHIFT:<word>``."""
        valid = self.system.valid(self)
        if self.shift_symbols and SHIFT in valid.moves and (symbol := self.shift_symbols[self.buffer[0]]) != SHIFT:
            return valid.but(shift_symbol=symbol)
        return valid

    def features(self) -> Mapping[str, Any]:
        """Source token positions (0-based, the root left out) nearest first: stack top first, buffer front first.

        A Stack-Transformer decoder masks one attention head to ``stack`` and one to ``buffer``.
        """
        return {"stack": tuple([node - 1 for node in reversed(self.stack) if node]), "buffer": tuple([node - 1 for node in self.buffer])}

    def apply(self, symbol: str) -> Configuration:
        """The configuration after *symbol*; ``ValueError`` if it is not an action allowed here."""
        action = self.allowed().parse(symbol)
        if action is None:
            raise ValueError(f"{symbol!r} is not allowed by {type(self.system).__name__} with stack {self.stack} and buffer {self.buffer[:5]}")
        return self.system.transition(self, *action)

    def is_final(self) -> bool:
        """Final once the buffer is empty and only the root is left on the stack: every word has been
        pushed and popped (arc-eager ends with REDUCEs). A system that ends otherwise (Covington, with
        a second list) overrides this in its ``configuration_class``. A final configuration allows nothing.
        """
        return not self.buffer and len(self.stack) == 1

    def result(self) -> DependencyTree:
        """The tree built so far, as the system reads it (:meth:`TransitionSystem.decoded`); a word never
        attached (decoding cut short) gets head 0 and relation ``_``.
        """
        return self.system.decoded(DependencyTree(tuple(max(head, 0) for head in self.heads[1:]), self.labels[1:]))

    # ------------------------------------------------------------ used by the systems' transitions

    def attach(self, head: int, dependent: int, label: str, stack: tuple[int, ...], buffer: tuple[int, ...], **more: Any) -> Configuration:
        """A copy with the arc ``head -> dependent`` added, the given stack and buffer, and *more* fields changed."""
        heads = self.heads[:dependent] + (head,) + self.heads[dependent + 1 :]
        labels = self.labels[:dependent] + (label,) + self.labels[dependent + 1 :]
        copy = object.__new__(type(self))  # evolve's body, inlined: half the steps of every walk attach
        copy.__dict__.update(self.__dict__, stack=stack, buffer=buffer, heads=heads, labels=labels, **more)
        return copy

    def move(self, stack: tuple[int, ...], buffer: tuple[int, ...], **more: Any) -> Configuration:
        """A copy with the given stack and buffer, the same arcs, and *more* fields changed."""
        copy = object.__new__(type(self))  # evolve's body, inlined: the other half move
        copy.__dict__.update(self.__dict__, stack=stack, buffer=buffer, **more)
        return copy

    def evolve(self, **changes: Any) -> Configuration:
        """A copy with *changes* to its fields. A subclass's own fields come along, so a system can keep
        more than a stack and a buffer (Covington's second list, in the example plugin) by subclassing.
        """
        copy = object.__new__(type(self))
        copy.__dict__.update(self.__dict__, **changes)
        return copy
