"""Left-child right-sibling binarization: any ordered tree as a binary tree, losslessly.

Shiv & Quirk's positional encodings describe a node by its branch path from the root, which
needs a bounded branching factor; the LCRS form gives every node at most two branches (its
first child and its next sibling) whatever the arity of the original tree.
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_codecs.tree import Tree


@dataclass(frozen=True)
class BinaryTree:
    """A binary node: *first* is its first child, *next* its next sibling in the n-ary tree."""

    label: str
    first: BinaryTree | None = None
    next: BinaryTree | None = None


def to_lcrs(tree: Tree) -> BinaryTree:
    """The LCRS binary tree of *tree*; its root has no next sibling."""
    return _chain((tree,))  # type: ignore[return-value]  # one tree: never None


def _chain(siblings: tuple[Tree, ...]) -> BinaryTree | None:
    """The binary form of a run of siblings: the first, with the rest as its next-sibling chain."""
    following: BinaryTree | None = None
    for tree in reversed(siblings):
        following = BinaryTree(tree.label, _chain(tree.children), following)
    return following


def from_lcrs(binary: BinaryTree) -> Tree:
    """The n-ary tree *binary* encodes; a root with a next sibling encodes no single tree."""
    if binary.next is not None:
        raise ValueError(f"the LCRS root {binary.label!r} has a next sibling: that is a forest, not a tree")
    return _unchain(binary)[0]


def _unchain(binary: BinaryTree | None) -> tuple[Tree, ...]:
    """The run of siblings that starts at *binary*."""
    siblings = []
    while binary is not None:
        siblings.append(Tree(binary.label, _unchain(binary.first)))
        binary = binary.next
    return tuple(siblings)
