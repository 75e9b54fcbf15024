"""Editing trees as values: locate subtrees by path, replace them, and diff two trees.

Trees are immutable, so every edit returns a new tree that shares the untouched subtrees. Paths
are n-ary branch paths (:class:`tree_codecs.paths.Path`, ``Layout.NARY``): child *i* of the node
at *p* is at ``p + (i,)``. Data augmentation (recombination) builds new logical forms from these.
"""

from __future__ import annotations

from collections.abc import Iterator

from tree_codecs.paths import Path
from tree_codecs.tree import Tree


def leaf_labels(tree: Tree) -> set[str]:
    """The labels of the leaves: in a logical form, the constants and variables it mentions (never a head)."""
    return {node.label for node, _ in tree.walk() if not node.children}


def subtree_paths(tree: Tree, path: Path = ()) -> Iterator[tuple[Path, Tree]]:
    """Every subtree with its path, in pre-order, so a subtree that occurs twice is seen at both places."""
    yield path, tree
    for index, child in enumerate(tree.children):
        yield from subtree_paths(child, path + (index,))


def replace_at(tree: Tree, path: Path, new: Tree) -> Tree:
    """*tree* with the subtree at *path* replaced by *new*."""
    if not path:
        return new
    head, *rest = path
    children = list(tree.children)
    children[head] = replace_at(children[head], tuple(rest), new)
    return Tree(tree.label, tuple(children))


def replace_leaves(tree: Tree, old: str, new: str) -> Tree:
    """*tree* with every leaf labelled *old* relabelled *new* (heads are left alone, as they name relations)."""
    if not tree.children:
        return Tree(new) if tree.label == old else tree
    return Tree(tree.label, tuple(replace_leaves(child, old, new) for child in tree.children))


def difference(a: Tree, b: Tree) -> tuple[Path, Tree, Tree] | None:
    """The smallest subtree position holding every difference of *a* and *b*, and both subtrees there.

    ``None`` when the trees are equal; the path is ``()`` when they differ at the root or in more
    than one child of a common node.
    """
    if a == b:
        return None
    path: Path = ()
    while a.label == b.label and a.arity == b.arity:
        differing = [index for index, (x, y) in enumerate(zip(a.children, b.children)) if x != y]
        if len(differing) != 1:
            break
        path += (differing[0],)
        a, b = a.children[differing[0]], b.children[differing[0]]
    return path, a, b
