"""Depth-first and breadth-first traversals with branch paths, and rebuilding a tree from one.

A traversal lists every node once as (label, arity, path); the labels and arities alone are a
codec's gold symbols, and the paths are what the positional encoding sees at each step. The
walks here read the finished tree directly, independently of :class:`Frontier`, which predicts
the same paths incrementally while decoding; :func:`rebuild` inverts a traversal through it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import NamedTuple

from tree_codecs.arity import symbol
from tree_codecs.frontier import Frontier, Order
from tree_codecs.lcrs import BinaryTree, to_lcrs
from tree_codecs.paths import Layout, Path
from tree_codecs.tree import Tree


class Visit(NamedTuple):
    """One node as a traversal meets it."""

    label: str
    arity: int
    path: Path

    @property
    def symbol(self) -> str:
        """The arity-annotated symbol (``and/3``)."""
        return symbol(self.label, self.arity)


def traverse(tree: Tree, layout: Layout, order: Order) -> list[Visit]:
    """Every node of *tree* in *order*, with paths in *layout* (BFS runs over that layout's tree)."""
    if order is Order.DEPTH_FIRST:
        return depth_first(tree, layout)
    return breadth_first(tree, layout)


def depth_first(tree: Tree, layout: Layout) -> list[Visit]:
    """Pre-order: a node, then its children's subtrees left to right (the same for both layouts)."""
    visits, stack = [], [(tree, ())]
    while stack:
        node, path = stack.pop()
        visits.append(Visit(node.label, node.arity, path))
        stack.extend((child, layout.child(path, index)) for index, child in reversed(list(enumerate(node.children))))
    return visits


def breadth_first(tree: Tree, layout: Layout) -> list[Visit]:
    """Level by level over the n-ary tree, or over the LCRS binary tree for ``Layout.LCRS``."""
    if layout is Layout.LCRS:
        return _binary_breadth_first(to_lcrs(tree))
    visits, queue = [], deque([(tree, ())])
    while queue:
        node, path = queue.popleft()
        visits.append(Visit(node.label, node.arity, path))
        queue.extend((child, path + (index,)) for index, child in enumerate(node.children))
    return visits


def _binary_breadth_first(root: BinaryTree) -> list[Visit]:
    """BFS of a binary tree, branch 0 (first child) before branch 1 (next sibling)."""
    visits, queue = [], deque([(root, ())])
    while queue:
        node, path = queue.popleft()
        visits.append(Visit(node.label, _run_length(node.first), path))
        queue.extend((branch, path + (side,)) for side, branch in enumerate((node.first, node.next)) if branch is not None)
    return visits


def _run_length(first: BinaryTree | None) -> int:
    """The number of siblings in the run starting at *first*: the parent's arity."""
    count = 0
    while first is not None:
        count, first = count + 1, first.next
    return count


def rebuild(nodes: Iterable[tuple[str, int]], layout: Layout, order: Order) -> Tree:
    """The tree whose traversal in (*layout*, *order*) yields these (label, arity) pairs."""
    frontier, placed = Frontier(layout, order), {}
    for step, (label, arity) in enumerate(nodes):
        if frontier.complete:
            raise ValueError(f"node {step} ({label!r}) comes after the tree is already complete")
        placed[frontier.next_path] = (label, arity)
        frontier = frontier.fill(arity)
    if not frontier.complete:
        raise ValueError(f"the nodes end with {frontier.open} child slots still unfilled")
    return _assemble(placed, layout, ())


def _assemble(placed: dict[Path, tuple[str, int]], layout: Layout, path: Path) -> Tree:
    label, arity = placed[path]
    return Tree(label, tuple(_assemble(placed, layout, layout.child(path, index)) for index in range(arity)))
