"""The mixed-integer program of a pair and its LP relaxation, solved by HiGHS (``scipy.optimize.milp``).

The last resort of :func:`~toolkit.metrics.exact_smatch.solver.match_graphs`: exact on every pair,
but far slower than the assignment bound and the search, so it runs only when they cannot prove
optimality, and within a time limit: a program that runs out of it raises :class:`OutOfTime`.
"""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np

from toolkit.metrics.exact_smatch.problem import _Problem


class OutOfTime(Exception):
    """HiGHS stopped at its time limit before it proved anything; *mapping* is its best point's (``x > 0.5``), if it had one."""

    def __init__(self, mapping: list[int] | None) -> None:
        super().__init__("the Smatch program ran out of its time limit")
        self.mapping = mapping


def _solve_program(problem: _Problem, integer: bool, at_least: int | None = None, time_limit: float | None = None) -> tuple[float, list[int]] | None:
    """The optimum of the program (``integer``) or of its LP relaxation, and the mapping of its ``x > 0.5``;
    with *at_least*, of the program restricted to scores of at least that much, ``None`` if it has none.
    With *time_limit* (seconds), HiGHS stops there: :class:`OutOfTime`.
    """
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import coo_matrix

    pairs = sorted({p for key in problem.pairwise for p in key} | set(zip(*np.nonzero(problem.unary))))
    pairs = [(int(i), int(j)) for i, j in pairs]
    index = {p: n for n, p in enumerate(pairs)}
    num_x = len(pairs)
    objective = [float(problem.unary[i, j]) for i, j in pairs]
    pair_terms: Counter = Counter()
    for (p, q), count in problem.pairwise.items():
        key = (p, q) if p < q else (q, p)
        pair_terms[key] += count
    ys = sorted(pair_terms)
    objective += [float(pair_terms[key]) for key in ys]
    rows, cols, vals, upper = [], [], [], []
    row = 0
    by_test, by_gold = defaultdict(list), defaultdict(list)
    for n, (i, j) in enumerate(pairs):
        by_test[i].append(n)
        by_gold[j].append(n)
    for group in list(by_test.values()) + list(by_gold.values()):
        for n in group:
            rows.append(row), cols.append(n), vals.append(1.0)
        upper.append(1.0)
        row += 1
    # aggregated linking: for node pair p and a node k of either graph, sum of y(p, q) with q at k <= x_p
    links: dict[tuple, list[int]] = defaultdict(list)
    for m, (p, q) in enumerate(ys):
        y = num_x + m
        links[p, 0, q[0]].append(y)
        links[p, 1, q[1]].append(y)
        links[q, 0, p[0]].append(y)
        links[q, 1, p[1]].append(y)
    for (p, _side, _node), members in links.items():
        for y in members:
            rows.append(row), cols.append(y), vals.append(1.0)
        rows.append(row), cols.append(index[p]), vals.append(-1.0)
        upper.append(0.0)
        row += 1
    size = num_x + len(ys)
    matrix = coo_matrix((vals, (rows, cols)), shape=(row, size)).tocsr()
    integrality = np.zeros(size)
    integrality[:num_x] = 1 if integer else 0
    constraints = [LinearConstraint(matrix, -np.inf, np.asarray(upper))]
    if at_least is not None:  # a cut-off: HiGHS proves there is nothing better, or finds it
        constraints.append(LinearConstraint(np.asarray(objective)[None], at_least - 1e-6, np.inf))
    options = {"mip_rel_gap": 0.0, "presolve": True}
    if time_limit is not None:
        options["time_limit"] = max(float(time_limit), 0.0)
    result = milp(-np.asarray(objective), constraints=constraints, integrality=integrality, bounds=Bounds(0, 1), options=options)

    def mapping_of(x: np.ndarray) -> list[int]:
        mapping = [-1] * problem.n1
        for n, (i, j) in enumerate(pairs):
            if x[n] > 0.5:  # at most one per row and column, as each sums to at most 1
                mapping[i] = j
        return mapping

    if result.status == 1:  # the time (or iteration) limit: no proof, perhaps a feasible point
        raise OutOfTime(mapping_of(result.x) if result.x is not None else None)
    if result.x is None and at_least is not None and result.status == 2:  # infeasible: nothing scores at_least
        return None
    if result.x is None:  # pragma: no cover - HiGHS always solves this bounded, feasible program
        raise RuntimeError(f"HiGHS failed on a Smatch program: {result.message}")
    return -float(result.fun), mapping_of(result.x)
