"""Projectivity of dependency trees: the test, the projective order, and lifting.

Trees are head lists over words 1..n (``heads[i - 1]`` governs word ``i``; 0 is the root), as in
:class:`toolkit.data.dataset_readers.conllu.DependencyTree`. A tree is projective when every
subtree covers a contiguous span of words, i.e. no arcs cross once the root is placed before the
first word. Projective systems (arc-standard, arc-hybrid) can only build such trees; arc-swap
builds any tree by reordering words into the *projective order*, in which the tree is projective.
"""

from collections.abc import Sequence


def children_of(heads: Sequence[int]) -> list[list[int]]:
    """``children[h]``: the dependents of node *h* (0 is the root), in sentence order."""
    children: list[list[int]] = [[] for _ in range(len(heads) + 1)]
    for dependent, head in enumerate(heads, start=1):
        children[head].append(dependent)
    return children


def projective_order(heads: Sequence[int]) -> list[int]:
    """The nodes 0..n in in-order traversal: each head between its left and its right dependents.

    The tree is projective exactly when this is ``[0, 1, ..., n]``; the position of a word in it
    is the order arc-swap's oracle sorts words into (Nivre, 2009).
    """
    children = children_of(heads)
    order: list[int] = []
    todo: list[tuple[int, bool]] = [(0, False)]
    while todo:
        node, expanded = todo.pop()
        if expanded:
            order.append(node)
            continue
        left = [child for child in children[node] if child < node]
        right = [child for child in children[node] if child > node]
        todo.extend((child, False) for child in reversed(right))
        todo.append((node, True))
        todo.extend((child, False) for child in reversed(left))
    return order


def is_projective(heads: Sequence[int]) -> bool:
    """Whether every subtree of the tree *heads* spans contiguous words: no two arcs cross, the root before word 1.

    Arcs sorted by left end (longer first) must nest: each either closes before the innermost open
    arc's right end or starts at or after it; sharing an end is not crossing. O(n log n), the sort
    in C: every training tree passes here once per epoch of indexing. (For a tree, as readers
    guarantee; ``projective_order(heads) == [0, ..., n]`` says the same and also rejects cycles.)
    """
    arcs = sorted((min(head, dependent), -max(head, dependent)) for dependent, head in enumerate(heads, start=1))
    ends: list[int] = []  # right ends of the open arcs, innermost last
    for left, negated_right in arcs:
        while ends and ends[-1] <= left:
            ends.pop()
        if ends and -negated_right > ends[-1]:
            return False
        ends.append(-negated_right)
    return True


def non_projective_arcs(heads: Sequence[int]) -> list[tuple[int, int]]:
    """The arcs ``(head, dependent)`` that some word between their ends is not dominated by."""
    parent = (-1, *heads)

    def dominated(word: int, head: int) -> bool:
        while word > 0:
            word = parent[word]
            if word == head:
                return True
        return head == 0

    arcs = []
    for dependent, head in enumerate(heads, start=1):
        low, high = min(head, dependent), max(head, dependent)
        if any(not dominated(word, head) for word in range(low + 1, high)):
            arcs.append((head, dependent))
    return arcs


def projectivize(heads: Sequence[int]) -> tuple[tuple[int, ...], int]:
    """A projective tree close to *heads*, and the number of lifts it took.

    Lifting (Nivre & Nilsson, 2005, without their label encoding): while some arc is
    non-projective, the shortest one (leftmost on ties) is moved up one level, its dependent
    attached to its head's head. Relations are kept, so only the moved words' heads become wrong.
    An arc from the root is never non-projective, so this ends within the tree's depth per word.
    """
    current = list(heads)
    lifts = 0
    while arcs := non_projective_arcs(current):
        head, dependent = min(arcs, key=lambda a: (abs(a[0] - a[1]), min(a)))
        current[dependent - 1] = current[head - 1]
        lifts += 1
    return tuple(current), lifts
