"""The matching objective between two read graphs: what a variable mapping scores, and bounds on it.

Every solver step (:mod:`~toolkit.metrics.exact_smatch.solver`) works on one :class:`_Problem`, so
that the triples are counted once per pair and every step scores a mapping the same way.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

import numpy as np

from toolkit.metrics.exact_smatch.graph import SmatchGraph


class _Problem:
    """The matching objective between a test graph (rows) and a gold graph (columns)."""

    def __init__(self, test: SmatchGraph, gold: SmatchGraph, duplicates: str = "product") -> None:
        # a triple with a copies in the test graph and b in the gold graph matches a * b times in
        # smatch (it pairs every copy with every copy), min(a, b) times in smatchpp
        combine = (lambda a, b: a * b) if duplicates == "product" else min
        self.combine = combine
        n1, n2 = len(test.concepts), len(gold.concepts)
        self.n1, self.n2 = n1, n2
        unary = np.zeros((n1, n2))
        by_concept: dict[str, list[int]] = defaultdict(list)
        for j, concept in enumerate(gold.concepts):
            by_concept[concept].append(j)
        for i, concept in enumerate(test.concepts):
            for j in by_concept.get(concept, ()):
                unary[i, j] += 1
        gold_attributes: dict[tuple[str, str], Counter] = defaultdict(Counter)
        for j, name, value in gold.attributes:
            gold_attributes[name, value][j] += 1
        for (i, name, value), a in Counter(test.attributes).items():
            for j, b in gold_attributes.get((name, value), {}).items():
                unary[i, j] += combine(a, b)
        # relations: self-loops are unary; the rest pair up node pairs
        gold_loops: dict[str, Counter] = defaultdict(Counter)
        gold_edges: dict[str, Counter] = defaultdict(Counter)
        self.gold_edge_counts: Counter = Counter()
        for name, s, t in gold.relations:
            if s == t:
                gold_loops[name][s] += 1
            else:
                gold_edges[name][s, t] += 1
                self.gold_edge_counts[name, s, t] += 1
        self.test_edges: list[tuple[str, int, int, int]] = []  # (name, source, target, copies)
        for (name, s, t), a in Counter(test.relations).items():
            if s == t:
                for j, b in gold_loops.get(name, {}).items():
                    unary[s, j] += combine(a, b)
            else:
                self.test_edges.append((name, s, t, a))
        self.unary = unary
        self._gold_edges, self._pairwise = gold_edges, None
        # per node pair, the relation matches its edges could give at most (per label and direction):
        # pairing far ends' multiplicities sorted, largest first, maximises the sum of products (or minima)
        self.adjacency = self._adjacency()
        a1, a2 = self.adjacency
        depth = min(int((a1 > 0).sum(-1).max(initial=0)), int((a2 > 0).sum(-1).max(initial=0)))
        top1, top2 = (-np.sort(-a, axis=-1)[..., :depth] for a in (a1, a2))  # (nodes, labels, depth), largest first
        pairing = np.multiply if duplicates == "product" else np.minimum
        relation_bound = pairing(top1[:, None], top2[None]).sum((-1, -2))
        self.bound_weights = unary + 0.5 * relation_bound

    @property
    def pairwise(self) -> Counter:
        """Relation matches per pair of node pairs, ``((i, j), (k, l)) -> count``: the program's quadratic
        terms (built only for the LP and the MIP; most pairs never need them).
        """
        if self._pairwise is None:
            self._pairwise = Counter()
            for name, s, t, a in self.test_edges:
                for (gs, gt), b in self._gold_edges.get(name, {}).items():
                    self._pairwise[(s, gs), (t, gt)] += self.combine(a, b)
        return self._pairwise

    def _adjacency(self) -> tuple[np.ndarray, np.ndarray]:
        """The relations of labels both graphs have, as tensors ``(node, label and direction, far node)`` of
        copy counts, test ``(n1, c, n1)`` and gold ``(n2, c, n2)``; self-loops are unary, not here.
        """
        shared = sorted({name for name, *_ in self.gold_edge_counts} & {name for name, *_ in self.test_edges})
        labels = {name: 2 * k for k, name in enumerate(shared)}
        c = max(2 * len(shared), 1)
        a1, a2 = np.zeros((self.n1, c, self.n1)), np.zeros((self.n2, c, self.n2))
        gold_edges = [(name, s, t, b) for (name, s, t), b in self.gold_edge_counts.items()]
        for edges, tensor in ((self.test_edges, a1), (gold_edges, a2)):
            for name, s, t, count in edges:
                if name in labels:
                    tensor[s, labels[name], t] += count  # outgoing
                    tensor[t, labels[name] + 1, s] += count  # incoming
        return a1, a2

    def score(self, mapping: Sequence[int]) -> int:
        """The number of matching triples under *mapping* (test node -> gold node or -1)."""
        total = sum(self.unary[i, j] for i, j in enumerate(mapping) if j >= 0)
        counts, combine = self.gold_edge_counts, self.combine
        for name, s, t, a in self.test_edges:
            ms, mt = mapping[s], mapping[t]
            if ms >= 0 and mt >= 0:
                b = counts.get((name, ms, mt), 0)
                if b:
                    total += combine(a, b)
        return int(total + 0.5)  # a non-negative integer held as a float


def _assignment(weights: np.ndarray) -> tuple[float, list[int]]:
    from scipy.optimize import linear_sum_assignment

    rows, cols = linear_sum_assignment(weights, maximize=True)
    mapping = [-1] * weights.shape[0]
    value = 0.0
    for i, j in zip(rows.tolist(), cols.tolist()):
        if weights[i, j] > 0:
            mapping[i] = j
            value += weights[i, j]
    return value, mapping
