"""Depth-first branch-and-bound over test nodes: proves optimality where the root bound cannot.

At a search node some test nodes are fixed (to a gold node or to none). The bound is the exact
score among fixed nodes plus an assignment over the free ones, whose weights hold the unary
matches, the relation matches with fixed nodes (exact) and half the relation matches with free
nodes could give (per label and direction, counting only free far ends). Each search node's
assignment also completes the mapping, a new incumbent when it scores better.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from toolkit.metrics.exact_smatch.problem import _assignment, _Problem


def _branch_and_bound(problem: _Problem, mapping: list[int], score: int, node_limit: int) -> tuple[list[int], int, bool]:
    """Search from the incumbent *mapping* (scoring *score*) with at most *node_limit* search nodes.

    Returns the best mapping, its score and whether the search finished within *node_limit* nodes
    (then it is optimal).
    """
    search = _Search(problem, mapping, score, node_limit)
    finished = search.visit({}, np.ones(problem.n1), np.ones(problem.n2), 0.0, problem.unary)
    return search.best, search.best_score, finished


class _Relaxation(NamedTuple):
    """A search node's bound and the assignment over its free nodes that gave it.

    *rows* / *cols* are the free test / gold nodes; *weights* (``None`` when either side has no free
    node: a leaf) their assignment weights, *gained* the exact part of them (unary matches and
    relation matches with fixed nodes), *assigned* the assignment (row -> column index or -1).
    """

    upper: float
    rows: list[int]
    cols: list[int]
    weights: np.ndarray | None
    gained: np.ndarray | None
    assigned: list[int] | None


class _Search:
    """One search: the incumbent, the count of search nodes, and the tensors every bound reuses."""

    def __init__(self, problem: _Problem, mapping: list[int], score: int, node_limit: int) -> None:
        self.problem, self.node_limit = problem, node_limit
        self.product = problem.combine is not min
        self.a1, self.a2 = problem.adjacency
        self.n1, self.n2, self.c = problem.n1, problem.n2, self.a1.shape[1]
        self.flat1, self.flat2 = self.a1.reshape(self.n1 * self.c, self.n1), self.a2.reshape(self.n2 * self.c, self.n2)
        # branch first on the test nodes with the most to gain, so good incumbents come early
        self.order = np.argsort(-problem.bound_weights.max(axis=1), kind="stable").tolist()
        self.best, self.best_score = list(mapping), score
        self.nodes = 0

    def link(self, k: int, g: int) -> np.ndarray:
        """What fixing test node k to gold node g adds to every other pair: the relations between them and (k, g)."""
        t_fix, g_fix = self.a1[:, :, k], self.a2[:, :, g]  # (n1, c), (n2, c)
        return t_fix @ g_fix.T if self.product else np.minimum(t_fix[:, None], g_fix[None]).sum(-1)

    def bound(self, free_rows: np.ndarray, free_cols: np.ndarray, exact: float, gained_all: np.ndarray) -> _Relaxation:
        """The upper bound with the nodes outside *free_rows* / *free_cols* fixed (their own score is
        *exact*; *gained_all* holds each pair's unary matches plus its relation matches with the fixed
        nodes), and the weights of the free nodes.
        """
        rows, cols = free_rows.nonzero()[0], free_cols.nonzero()[0]
        if not len(rows) or not len(cols):
            return _Relaxation(exact, rows.tolist(), cols.tolist(), None, None, None)
        a1, a2, c = self.a1, self.a2, self.c
        # relation matches with free far ends, per label and direction, bounded from the counts
        t_sum, g_sum = (self.flat1 @ free_rows).reshape(self.n1, c)[rows], (self.flat2 @ free_cols).reshape(self.n2, c)[cols]
        if self.product:
            t_max = (a1[rows] * free_rows).max(-1)
            g_max = (a2[cols] * free_cols).max(-1)
            relation = np.minimum(t_sum[:, None, :] * g_max[None], g_sum[None] * t_max[:, None, :]).sum(-1)
        else:
            relation = np.minimum(t_sum[:, None, :], g_sum[None]).sum(-1)
        gained = gained_all[rows][:, cols]  # unary matches and relation matches with fixed nodes, exactly
        weights = gained + 0.5 * relation
        value, assigned = _assignment(weights)
        return _Relaxation(exact + value, rows.tolist(), cols.tolist(), weights, gained, assigned)

    def offer(self, mapping: list[int], score: int) -> None:
        """Keep *mapping* as the incumbent if it scores better."""
        if score > self.best_score:
            self.best, self.best_score = mapping, score

    def complete(self, fixed: dict[int, int], relaxation: _Relaxation) -> list[int]:
        """The fixed nodes plus the free ones where the relaxation's assignment puts them: a feasible mapping."""
        completed = [fixed.get(i, -1) for i in range(self.n1)]
        for r, k in enumerate(relaxation.assigned):
            if k >= 0:
                completed[relaxation.rows[r]] = relaxation.cols[k]
        return completed

    def visit(self, fixed: dict[int, int], free_rows: np.ndarray, free_cols: np.ndarray, exact: float, gained_all: np.ndarray) -> bool:
        """Search below one node (*fixed* test node -> gold node or -1); false once the node budget is spent."""
        self.nodes += 1
        if self.nodes > self.node_limit:
            return False
        relaxation = self.bound(free_rows, free_cols, exact, gained_all)
        ceiling = int(np.floor(relaxation.upper + 1e-9))
        if ceiling <= self.best_score:
            return True
        if relaxation.weights is None:  # every node fixed (or no gold node left): a leaf
            if exact > self.best_score:
                self.best, self.best_score = [fixed.get(i, -1) for i in range(self.n1)], int(exact + 0.5)
            return True
        completed = self.complete(fixed, relaxation)
        self.offer(completed, self.problem.score(completed))
        if ceiling <= self.best_score:
            return True
        return self.branch(fixed, free_rows, free_cols, exact, gained_all, relaxation)

    def branch(
        self, fixed: dict[int, int], free_rows: np.ndarray, free_cols: np.ndarray, exact: float, gained_all: np.ndarray, relaxation: _Relaxation
    ) -> bool:
        """Fix the next free test node to each gold node that could gain, best first, then to none."""
        i = next(k for k in self.order if k not in fixed)
        r = relaxation.rows.index(i)
        row = relaxation.weights[r]
        child_rows = free_rows.copy()
        child_rows[i] = 0
        for k in np.argsort(-row, kind="stable").tolist():
            if row[k] <= 0:
                break
            j = relaxation.cols[k]
            child_cols = free_cols.copy()
            child_cols[j] = 0
            if not self.visit({**fixed, i: j}, child_rows, child_cols, exact + relaxation.gained[r, k], gained_all + self.link(i, j)):
                return False
        return self.visit({**fixed, i: -1}, child_rows, free_cols, exact, gained_all)
