"""Pseudo-projective parsing (Nivre & Nilsson, 2005): non-projective trees through a projective parser.

**Lifting** (:func:`lift`), before training: while some arc is non-projective, the shortest one
(leftmost on ties) is lifted, its dependent attached to its head's head, as
:func:`~transition_systems.projectivity.projectivize` does. A lifted word's relation then records the
relation of its original head, ``dep^head`` (the paper's *Head* scheme), and the parser learns these
relations like any other.

**Lowering** (:func:`lower`), after decoding: each word whose relation is ``dep^head`` goes back to
the first node whose relation is ``head``, searching breadth-first, left to right, below the word's
head and outside its own subtree; it gets ``dep`` back. Words are lowered one at a time, the
shallowest first (then the leftmost), so a word's head is in place before the word moves.

The Head scheme alone is ambiguous where several nodes below the head carry the relation ``head``,
and the paper accepts the loss. Here lifting runs the lowering search itself and, where the
original head is not the first candidate, writes its rank, ``dep^head#2``. Every tree lifting can
encode then lowers to itself exactly (``tests/test_pseudo_projective.py`` checks every EWT training
tree); lowering a predicted tree never fails, it takes the last candidate when there are fewer than
the rank says, and leaves a word where it is when there is none.
"""

from __future__ import annotations

from collections.abc import Sequence

from transition_systems.projectivity import children_of, is_projective, non_projective_arcs

LIFTED, RANK = "^", "#"


def lift(heads: Sequence[int], labels: Sequence[str]) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """The projective tree and the encoded relations for the tree *heads*/*labels* (see the module doc).

    Raises ``ValueError`` for a relation that already contains ``^`` or ``#``, and for the rare tree
    whose lowering could not find a lifted word's head again (then the caller projectivizes plainly).
    """
    if bad := next((label for label in labels if LIFTED in label or RANK in label), None):
        raise ValueError(f"relation {bad!r} contains {LIFTED!r} or {RANK!r}, which pseudo-projective encoding uses")
    if is_projective(heads):
        return tuple(heads), tuple(labels)
    original = list(heads)
    current = list(heads)
    lifted: set[int] = set()
    while arcs := non_projective_arcs(current):
        head, dependent = min(arcs, key=lambda arc: (abs(arc[0] - arc[1]), min(arc)))
        current[dependent - 1] = current[head - 1]
        lifted.add(dependent)
    encoded = list(labels)
    for word in lifted:
        encoded[word - 1] = f"{labels[word - 1]}{LIFTED}{labels[original[word - 1] - 1]}"
    # Run the lowering on the lifted tree, writing each word's rank among its candidates as it goes.
    lowering = list(current)
    pending = set(lifted)
    while pending:
        word = _next_to_lower(lowering, pending)
        candidates = _candidates(lowering, encoded, word, _head_relation(encoded[word - 1]))
        if original[word - 1] not in candidates:
            raise ValueError(f"word {word}'s head cannot be found again below its lifted head")
        rank = candidates.index(original[word - 1]) + 1
        if rank > 1:
            encoded[word - 1] += f"{RANK}{rank}"
        lowering[word - 1] = original[word - 1]
        pending.remove(word)
    return tuple(current), tuple(encoded)


def lower(heads: Sequence[int], labels: Sequence[str]) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """The tree that *heads*/*labels* (a parse with encoded relations) stands for: every ``dep^head`` lowered."""
    pending = {word for word, label in enumerate(labels, start=1) if LIFTED in label}
    if not pending:
        return tuple(heads), tuple(labels)
    current, relations = list(heads), list(labels)
    while pending:
        word = _next_to_lower(current, pending)
        dependent, head_relation, rank = _decode(relations[word - 1])
        candidates = _candidates(current, relations, word, head_relation)
        if candidates:
            current[word - 1] = candidates[min(rank, len(candidates)) - 1]
        relations[word - 1] = dependent
        pending.remove(word)
    return tuple(current), tuple(relations)


def _decode(label: str) -> tuple[str, str, int]:
    """``dep^head#rank`` -> ``(dep, head, rank)``; the rank is 1 when not written."""
    dependent, _, head = label.partition(LIFTED)
    head, _, rank = head.partition(RANK)
    return dependent, head, int(rank) if rank.isdigit() and int(rank) > 0 else 1


def _head_relation(label: str) -> str:
    return _decode(label)[1]


def _base(label: str) -> str:
    """A relation without its encoding: what a node is to its own head."""
    return label.partition(LIFTED)[0]


def _next_to_lower(heads: Sequence[int], pending: set[int]) -> int:
    """The shallowest pending word in the tree *heads*, the leftmost on ties."""

    def depth(word: int) -> int:
        steps = 0
        while word > 0 and steps <= len(heads):  # a partial parse may leave words at head 0
            word, steps = heads[word - 1], steps + 1
        return steps

    return min(pending, key=lambda word: (depth(word), word))


def _candidates(heads: Sequence[int], labels: Sequence[str], word: int, relation: str) -> list[int]:
    """Nodes below *word*'s head and outside *word*'s subtree whose relation is *relation*, breadth first, left to right."""
    children = children_of(heads)
    found, queue = [], [child for child in children[heads[word - 1]] if child != word]
    for node in queue:  # the queue grows as it is read: breadth-first
        if _base(labels[node - 1]) == relation:
            found.append(node)
        queue.extend(child for child in children[node] if child != word)
    return found
