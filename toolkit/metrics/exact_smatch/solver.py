"""The optimal variable mapping of a pair, instead of smatch's hill-climbing, found deterministically.

The mapping is found in steps, each tried only when the ones before cannot prove optimality:

1. an upper bound: every relation match is split half to each of its two node pairs, and each node
   pair ``(i, j)`` gets its unary matches plus half the most relation matches the edges at ``i``
   and ``j`` could give (per label and direction); a linear assignment on these weights bounds the
   score from above (rounded down, as scores are integers) (:mod:`.problem`);
2. a start: the mapping of that assignment (a greedy start), improved by iterated linear
   assignment (each pair weighed by the relations it would match where the current mapping puts
   the other nodes); if its score reaches the bound it is optimal and we stop (most pairs of a
   graph and a perturbed copy, and most pairs of unrelated graphs) (:mod:`.local_search`);
3. otherwise a depth-first branch-and-bound over test nodes (at most 200 search nodes, fewer
   for large graphs: 40,000 / (test nodes x gold nodes)), seeded
   with that start, whose bound is the same assignment bound with the fixed nodes' matches counted
   exactly; each search node's assignment also gives a complete mapping, a new incumbent if better
   (:mod:`.branch_and_bound`);
4. if that search runs out, the best mapping so far is hill-climbed (moves and swaps), and the LP
   relaxation of the program below is solved (optimal when its bound is reached by that mapping or
   by the rounded LP solution, also hill-climbed), and last
5. the mixed-integer program itself, cut off below one more than the best score found (so HiGHS
   proves that nothing is better, or finds the optimum), solved by HiGHS (``scipy.optimize.milp``): binary ``x`` for
   node pairs, continuous ``y`` for pairs of node pairs that match a relation, with aggregated
   linking constraints (for a node pair ``p`` and any one node ``k`` of the other graph, the ``y``
   of ``p`` with nodes ``k`` sum to at most ``x_p``), tighter than one ``y <= x`` per term (:mod:`.program`).

The problem is NP-hard, so steps 4 and 5 share a time limit per pair (:data:`TIME_LIMIT`; 200-variable
graphs that have little in common took 50 s without it). A pair that runs out of it keeps the best
mapping found, whose count is a lower bound as smatch's own is, and says so: ``proof="unproven"``.
The bounds' tensors take memory in proportion to test nodes x gold nodes x relation labels, so the
metric scores only graphs of at most :data:`MAX_NODES` variables (:mod:`.metric`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from toolkit.metrics.exact_smatch.branch_and_bound import _branch_and_bound
from toolkit.metrics.exact_smatch.graph import EMPTY_GRAPH, SmatchGraph, read_graph
from toolkit.metrics.exact_smatch.local_search import _hill_climb, _relink
from toolkit.metrics.exact_smatch.problem import _assignment, _Problem
from toolkit.metrics.exact_smatch.program import OutOfTime, _solve_program

SEARCH_BUDGET = 40_000  # node pairs summed over the branch-and-bound's search nodes, per graph pair
TIME_LIMIT = 10.0  # seconds of linear and mixed-integer programming per graph pair
MAX_NODES = 200  # variables per graph the metric scores (the worst measured: 0.6 GB and 4 s at 200, 1.7 GB at 300)


@dataclass
class PairScore:
    """One pair's counts (as smatch sums them) and the optimal mapping (test node -> gold node, -1 for none)."""

    matched: int
    test: int
    gold: int
    mapping: list[int]
    proof: str = "assignment"  # what proved optimality: assignment, branch_and_bound, lp, mip, empty; or "unproven" (out of time)

    @property
    def precision(self) -> float:
        return self.matched / self.test if self.test else 0.0

    @property
    def recall(self) -> float:
        return self.matched / self.gold if self.gold else 0.0

    @property
    def f1(self) -> float:
        return f_score(self.matched, self.test, self.gold)


def f_score(matched: float, test: float, gold: float) -> float:
    """Smatch's ``compute_f``: 0 when either side is empty."""
    if test == 0 or gold == 0:
        return 0.0
    precision, recall = matched / test, matched / gold
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def match_graphs(test: SmatchGraph, gold: SmatchGraph, semantics: str = "smatch", node_limit: int = 200, time_limit: float | None = TIME_LIMIT) -> PairScore:
    """The optimal smatch count between two read graphs (``semantics`` decides how duplicate triples count).

    Tries, in order, until the best mapping found reaches a proven bound: the root assignment bound,
    a branch-and-bound search of at most *node_limit* nodes (fewer for large graphs), the LP
    relaxation, the MIP. :attr:`PairScore.proof` says which step proved optimality. The pair's
    *time_limit* (seconds from the start; ``None``: none) stops the hill climbing and the programs,
    and then the proof is ``"unproven"``: the count is the best mapping found, a lower bound.
    """
    deadline = None if time_limit is None else time.monotonic() + time_limit
    if not test.concepts or not gold.concepts:
        return PairScore(0, test.num_triples, gold.num_triples, [-1] * len(test.concepts), "empty")
    problem = _Problem(test, gold, "min" if semantics == "smatchpp" else "product")
    bound_value, mapping = _assignment(problem.bound_weights)
    bound = int(np.floor(bound_value + 1e-9))
    score = problem.score(mapping)
    if score < bound:
        mapping, score = _relink(problem, mapping, score)
    if score >= bound:
        return PairScore(score, test.num_triples, gold.num_triples, mapping, "assignment")
    # a search node costs about n1 * n2: large pairs get fewer nodes, and go to the LP sooner
    node_limit = min(node_limit, SEARCH_BUDGET // (problem.n1 * problem.n2))
    if node_limit > 0:
        mapping, score, finished = _branch_and_bound(problem, mapping, score, node_limit)
        if finished:
            return PairScore(score, test.num_triples, gold.num_triples, mapping, "branch_and_bound")
    mapping, score = _hill_climb(problem, mapping, score, deadline)

    def left() -> float | None:
        return None if deadline is None else max(deadline - time.monotonic(), 0.0)

    def unproven(stop: OutOfTime) -> PairScore:
        best, best_score = mapping, score
        if stop.mapping is not None and (found := problem.score(stop.mapping)) > best_score:
            best, best_score = stop.mapping, found
        return PairScore(best_score, test.num_triples, gold.num_triples, best, "unproven")

    if left() == 0.0:
        return unproven(OutOfTime(None))

    # the LP relaxation: a tighter bound, and often an integral optimum
    try:
        lp_value, lp_mapping = _solve_program(problem, integer=False, time_limit=left())
    except OutOfTime as stop:
        return unproven(stop)
    bound = min(bound, int(np.floor(lp_value + 1e-6)))
    lp_score = problem.score(lp_mapping)
    if lp_score > score:
        mapping, score = _hill_climb(problem, lp_mapping, lp_score, deadline)
    if score >= bound:
        return PairScore(score, test.num_triples, gold.num_triples, mapping, "lp")
    # the MIP, cut off below a better score than ours: either it proves there is none or it finds the optimum
    try:
        better = _solve_program(problem, integer=True, at_least=score + 1, time_limit=left())
    except OutOfTime as stop:
        return unproven(stop)
    if better is not None:
        mapping, score = better[1], problem.score(better[1])
    return PairScore(score, test.num_triples, gold.num_triples, mapping, "mip")


def score_pair(test: object, gold: object, semantics: str = "smatch", time_limit: float | None = TIME_LIMIT) -> PairScore:
    """The optimal smatch count between a test (predicted) and a gold graph: PENMAN strings or
    ``penman.Graph`` objects (what the ``penman`` reader gives as targets).

    An empty prediction, or one that is not PENMAN, is an empty graph: nothing matched, every gold
    triple missed. Any other failure (a ``MemoryError``, a graph nested too deep for penman) propagates.
    """
    import penman

    test, gold = (penman.encode(graph) if isinstance(graph, penman.Graph) else graph for graph in (test, gold))
    gold_graph = read_graph(gold, semantics)
    try:
        test_graph = read_graph(test, semantics) if test and test.strip() else EMPTY_GRAPH
    except penman.exceptions.PenmanError:  # an unreadable prediction scores as empty
        test_graph = EMPTY_GRAPH
    return match_graphs(test_graph, gold_graph, semantics, time_limit=time_limit)
