"""Local improvement of a mapping: cheap steps that often reach the bound, so no search is needed."""

from __future__ import annotations

import time

import numpy as np

from toolkit.metrics.exact_smatch.problem import _assignment, _Problem


def _relink(problem: _Problem, mapping: list[int], score: int, rounds: int = 3) -> tuple[list[int], int]:
    """Iterated linear assignment: weigh each node pair by its unary matches plus the relation matches it
    would make with the other nodes where *mapping* puts them, assign again, and keep the result while the
    score rises. A few matrix products and assignments: a much better start than the bound's own mapping
    on unrelated graphs, so that more pairs reach the root bound with no search.
    """
    a1, a2 = problem.adjacency
    n1, c = a1.shape[:2]
    flat1 = a1.reshape(n1, -1)
    for _ in range(rounds):
        mapped = [k for k, image_k in enumerate(mapping) if image_k >= 0]
        image = np.zeros((problem.n2, c, n1))  # image[j, :, k]: gold j's edges to where test k is mapped
        image[:, :, mapped] = a2[:, :, [mapping[k] for k in mapped]]
        _, candidate = _assignment(problem.unary + flat1 @ image.reshape(problem.n2, -1).T)
        candidate_score = problem.score(candidate)
        if candidate_score <= score:
            break
        mapping, score = candidate, candidate_score
    return mapping, score


def _hill_climb(problem: _Problem, mapping: list[int], score: int, deadline: float | None = None) -> tuple[list[int], int]:
    """Best-first moves of one test node to another gold node (a swap when that one is taken), until none gains
    or the *deadline* (``time.monotonic()``) has passed.

    A move's gain is computed from the moved nodes' own matches only (their unary matches and the
    relations at them), so one step costs the sum of degrees, not a full rescoring.
    """
    n1 = problem.n1
    unary, counts, combine = problem.unary, problem.gold_edge_counts, problem.combine
    edges_at: list[list[tuple[str, int, int, int]]] = [[] for _ in range(n1)]
    for edge in problem.test_edges:
        edges_at[edge[1]].append(edge)
        if edge[2] != edge[1]:
            edges_at[edge[2]].append(edge)
    candidates = [np.flatnonzero(problem.bound_weights[i] > 0).tolist() for i in range(n1)]

    def local(m: list[int], nodes: tuple[int, ...]) -> float:
        total = sum(unary[k, m[k]] for k in nodes if m[k] >= 0)
        seen = set()
        for k in nodes:
            for edge in edges_at[k]:
                if edge in seen:
                    continue
                seen.add(edge)
                name, s, t, a = edge
                ms, mt = m[s], m[t]
                if ms >= 0 and mt >= 0:
                    b = counts.get((name, ms, mt), 0)
                    if b:
                        total += combine(a, b)
        return total

    while deadline is None or time.monotonic() < deadline:
        best_gain, best = 0.5, None  # gains are integers: only a gain of at least 1 counts
        used = {j: i for i, j in enumerate(mapping) if j >= 0}
        for i in range(n1):
            if deadline is not None and time.monotonic() >= deadline:
                break
            for j in candidates[i]:
                if j == mapping[i]:
                    continue
                other = used.get(j)
                nodes = (i,) if other is None else (i, other)
                trial = list(mapping)
                trial[i] = j
                if other is not None:
                    trial[other] = mapping[i]
                gain = local(trial, nodes) - local(mapping, nodes)
                if gain > best_gain:
                    best_gain, best = gain, trial
        if best is None:
            return mapping, score
        mapping, score = best, score + int(best_gain + 0.5)
    return mapping, score
