"""The unfilled child slots of a partial tree, in the order a traversal fills them.

Decoding a tree one arity-annotated node at a time needs, at every step, the branch path of the
node about to be emitted (for the positional encoding) and the number of slots still open (to
keep the tree completable). A frontier answers both in O(1) and is a value, so a beam can share
it. A slot stands for a run of siblings: the next unfilled child and the ``siblings`` after it.
That is exactly an LCRS branch (first child, then next siblings), and serves n-ary trees too.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import NamedTuple

from tree_codecs.paths import Layout, Path


class Order(Enum):
    """Which slot is filled next: depth-first pre-order, or breadth-first over the layout's tree."""

    DEPTH_FIRST = "dfs"
    BREADTH_FIRST = "bfs"


class Slot(NamedTuple):
    """The next unfilled child at *path*, followed by *siblings* more unfilled siblings."""

    path: Path
    siblings: int


@dataclass(frozen=True)
class Frontier:
    """Open slots, next first; a fresh frontier has one slot: the root."""

    layout: Layout
    order: Order
    slots: tuple[Slot, ...] = (Slot((), 0),)
    open: int = 1  # unfilled nodes: the slots with all their siblings

    @property
    def complete(self) -> bool:
        """Whether every node of the tree is filled in."""
        return not self.slots

    @property
    def next_path(self) -> Path:
        """The branch path of the node filled next."""
        if not self.slots:
            raise ValueError("the tree is complete: there is no next node")
        return self.slots[0].path

    def fill(self, arity: int) -> Frontier:
        """The frontier after filling the next slot with a node of *arity* children."""
        if not self.slots:
            raise ValueError("the tree is complete: no node can be added")
        if arity < 0:
            raise ValueError(f"arity must not be negative, got {arity}")
        (path, siblings), rest = self.slots[0], self.slots[1:]
        children = (Slot(self.layout.child(path, 0), arity - 1),) if arity else ()
        sibling = (Slot(self.layout.next_sibling(path), siblings - 1),) if siblings else ()
        if self.order is Order.DEPTH_FIRST:
            slots = children + sibling + rest  # pre-order: descendants before later siblings
        elif self.layout is Layout.LCRS:
            slots = rest + children + sibling  # binary BFS: first-child branch, then sibling branch
        else:
            slots = sibling + rest + children  # n-ary BFS: siblings share this level
        return Frontier(self.layout, self.order, slots, self.open - 1 + arity)
