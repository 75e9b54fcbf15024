"""Exact, deterministic Smatch: the optimal variable mapping instead of smatch's hill-climbing.

Triples follow smatch 1.0.4 (``amr.py`` and ``smatch.py``) exactly, so that on every pair the
score here is the optimum of the very objective smatch's hill-climber maximises, hence never lower:

* one ``instance`` triple per variable, plus ``TOP(root, top)`` as an attribute of the root;
* an edge to a variable is a relation triple, an edge to a constant an attribute triple;
* a role ending in ``-of`` (except ``prep-on-behalf-of``, ``prep-out-of``, ``consist-of``) is
  inverted, and ``:mod`` is read as an inverted ``:domain`` (smatchpp does not do the latter);
  an inverted role whose target is a constant (``:mod 1``, ``:quant-of 5``) is dropped, as smatch drops it;
* labels and values are compared lower-cased with trailing ``_`` removed; a quoted constant keeps
  only its first whitespace-separated word (``"New York"`` compares as ``new``), as in smatch's reader;
* duplicate triples are kept, and a pair of equal triples counts once per (test, gold) copy, as in
  smatch (so duplicates can push a pair's count above a graph's triple count, exactly as there).

The mapping is found in three steps, all deterministic:

1. an upper bound: every relation match is split half to each of its two node pairs, and each node
   pair ``(i, j)`` gets its unary matches plus half the most relation matches the edges at ``i``
   and ``j`` could give (per label and direction); a linear assignment on these weights bounds the
   score from above (rounded down, as scores are integers);
2. a start: the mapping of that assignment (a greedy start), improved by iterated linear
   assignment (each pair weighed by the relations it would match where the current mapping puts
   the other nodes); if its score reaches the bound it is optimal and we stop (most pairs of a
   graph and a perturbed copy, and most pairs of unrelated graphs);
3. otherwise a depth-first branch-and-bound over test nodes (at most 200 search nodes, fewer
   for large graphs: 40,000 / (test nodes x gold nodes)), seeded
   with that start, whose bound is the same assignment bound with the fixed nodes' matches counted
   exactly; each search node's assignment also gives a complete mapping, a new incumbent if better;
4. if that search runs out, the best mapping so far is hill-climbed (moves and swaps), and the LP
   relaxation of the program below is solved (optimal when its bound is reached by that mapping or
   by the rounded LP solution, also hill-climbed), and last
5. the mixed-integer program itself, cut off below one more than the best score found (so HiGHS
   proves that nothing is better, or finds the optimum), solved by HiGHS (``scipy.optimize.milp``): binary ``x`` for
   node pairs, continuous ``y`` for pairs of node pairs that match a relation, with aggregated
   linking constraints (for a node pair ``p`` and any one node ``k`` of the other graph, the ``y``
   of ``p`` with nodes ``k`` sum to at most ``x_p``), tighter than one ``y <= x`` per term.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from toolkit.metrics.metric import Metric

SEARCH_BUDGET = 40_000  # node pairs summed over the branch-and-bound's search nodes, per graph pair
INVERSE_EXCEPTIONS = frozenset({"prep-on-behalf-of", "prep-out-of", "consist-of"})


def _normalize(item: str) -> str:
    return item.lower().rstrip("_")


def _constant(value: str) -> str:
    """A constant as smatch's reader leaves it, normalised as smatch compares it."""
    if value.startswith('"') and value.endswith('"') and len(value) >= 2:
        words = (value[1:-1].replace('"', "") + "_").split()
        value = words[0] if words else "_"
    return _normalize(value)


@dataclass
class SmatchGraph:
    """A graph's triples as smatch reads them, with variables numbered ``0..n-1`` (0 is the top)."""

    concepts: list[str]  # per variable
    attributes: list[tuple[int, str, str]]  # (variable, name, value), TOP included
    relations: list[tuple[str, int, int]]  # (name, source, target)

    @property
    def num_triples(self) -> int:
        return len(self.concepts) + len(self.attributes) + len(self.relations)


EMPTY_GRAPH = SmatchGraph([], [], [])


SEMANTICS = ("smatch", "smatchpp")


def read_graph(text: str, semantics: str = "smatch") -> SmatchGraph:
    """Parse one PENMAN string (comments allowed) into smatch's triples.

    ``semantics="smatchpp"`` reads the triples as smatchpp's generic standardizer does instead,
    to compare with it (and :func:`match_graphs` then counts a duplicated triple min(a, b) times,
    not a * b): every ``-of`` role is inverted (``consist-of`` too, an even number of
    ``-of`` cancels out), ``:mod`` stays ``:mod``, an inverted edge to a constant is kept (as an
    attribute named ``role-of``), and a quoted constant is kept whole (lower-cased, no quotes).
    """
    import penman

    if semantics not in SEMANTICS:
        raise ValueError(f"semantics must be one of {', '.join(SEMANTICS)}, got {semantics!r}")
    smatchpp = semantics == "smatchpp"
    tree = penman.parse(text)
    variables: dict[str, int] = {}
    concepts: list[str] = []
    edges: list[tuple[int, str, object]] = []

    def walk(node) -> int:
        var, branches = node
        index = variables.setdefault(var, len(variables))
        if index == len(concepts):
            concepts.append("")
        for role, target in branches:
            if role == "/":
                concept = str(target).replace('"', "")
                concepts[index] = concept.lower() if smatchpp else _normalize(concept)
            elif isinstance(target, tuple):
                edges.append((index, role.lstrip(":"), walk(target)))
            else:
                edges.append((index, role.lstrip(":"), target))
        return index

    walk(tree.node)
    attributes: list[tuple[int, str, str]] = []
    relations: list[tuple[str, int, int]] = []
    for source, role, target in edges:
        if smatchpp:
            role = role.lower()
            inversions = 0
            while role.endswith("-of"):
                role, inversions = role[:-3], inversions + 1
            inverted = inversions % 2 == 1
        else:
            inverted = (role.endswith("-of") and role not in INVERSE_EXCEPTIONS) or role == "mod"
            role = "domain" if role == "mod" else _normalize(role[:-3] if inverted else role)
        if isinstance(target, str):
            if target in variables:
                target = variables[target]
            elif smatchpp:
                attributes.append((source, role + "-of" if inverted else role, target.replace('"', "").lower()))
                continue
            elif inverted:
                continue  # smatch drops an inverted edge to a constant
            else:
                attributes.append((source, role, _constant(target)))
                continue
        relations.append((role, target, source) if inverted else (role, source, target))
    if concepts:
        attributes.append((0, "top", "top"))
    return SmatchGraph(concepts, attributes, relations)


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


def _hill_climb(problem: _Problem, mapping: list[int], score: int) -> tuple[list[int], int]:
    """Best-first moves of one test node to another gold node (a swap when that one is taken), until none gains.

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

    while True:
        best_gain, best = 0.5, None  # gains are integers: only a gain of at least 1 counts
        used = {j: i for i, j in enumerate(mapping) if j >= 0}
        for i in range(n1):
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


def _branch_and_bound(problem: _Problem, mapping: list[int], score: int, node_limit: int) -> tuple[list[int], int, bool]:
    """Depth-first search over test nodes, bounded like the root but with fixed nodes counted exactly.

    At a search node some test nodes are fixed (to a gold node or to none). The bound is the exact
    score among fixed nodes plus an assignment over the free ones, whose weights hold the unary
    matches, the relation matches with fixed nodes (exact) and half the relation matches with free
    nodes could give (per label and direction, counting only free far ends). Returns the best
    mapping, its score and whether the search finished within *node_limit* nodes (then it is optimal).
    """
    product = problem.combine is not min
    a1, a2 = problem.adjacency
    n1, n2, c = problem.n1, problem.n2, a1.shape[1]
    order = np.argsort(-problem.bound_weights.max(axis=1), kind="stable").tolist()
    best = [list(mapping), score]
    nodes = 0

    flat1, flat2 = a1.reshape(n1 * c, n1), a2.reshape(n2 * c, n2)

    def link(k: int, g: int) -> np.ndarray:
        """What fixing test node k to gold node g adds to every other pair: the relations between them and (k, g)."""
        t_fix, g_fix = a1[:, :, k], a2[:, :, g]  # (n1, c), (n2, c)
        return t_fix @ g_fix.T if product else np.minimum(t_fix[:, None], g_fix[None]).sum(-1)

    def bound(free_rows: np.ndarray, free_cols: np.ndarray, exact: float, gained_all: np.ndarray):
        """The upper bound with the nodes outside *free_rows* / *free_cols* fixed (their own score is
        *exact*; *gained_all* holds each pair's unary matches plus its relation matches with the fixed
        nodes), and the weights of the free nodes.
        """
        rows, cols = free_rows.nonzero()[0], free_cols.nonzero()[0]
        if not len(rows) or not len(cols):
            return exact, rows, cols, None, None, None
        # relation matches with free far ends, per label and direction, bounded from the counts
        t_sum, g_sum = (flat1 @ free_rows).reshape(n1, c)[rows], (flat2 @ free_cols).reshape(n2, c)[cols]
        if product:
            t_max = (a1[rows] * free_rows).max(-1)
            g_max = (a2[cols] * free_cols).max(-1)
            relation = np.minimum(t_sum[:, None, :] * g_max[None], g_sum[None] * t_max[:, None, :]).sum(-1)
        else:
            relation = np.minimum(t_sum[:, None, :], g_sum[None]).sum(-1)
        gained = gained_all[rows][:, cols]  # unary matches and relation matches with fixed nodes, exactly
        weights = gained + 0.5 * relation
        value, sub = _assignment(weights)
        return exact + value, rows.tolist(), cols.tolist(), weights, gained, sub

    def search(fixed: dict[int, int], free_rows: np.ndarray, free_cols: np.ndarray, exact: float, gained_all: np.ndarray) -> bool:
        nonlocal nodes
        nodes += 1
        if nodes > node_limit:
            return False
        upper, rows, cols, weights, gained, sub = bound(free_rows, free_cols, exact, gained_all)
        if int(np.floor(upper + 1e-9)) <= best[1]:
            return True
        if weights is None:  # every node fixed (or no gold node left): a leaf
            if exact > best[1]:
                best[0], best[1] = [fixed.get(i, -1) for i in range(n1)], int(exact + 0.5)
            return True
        completed = [fixed.get(i, -1) for i in range(n1)]
        for r, k in enumerate(sub):
            if k >= 0:
                completed[rows[r]] = cols[k]
        feasible = problem.score(completed)
        if feasible > best[1]:
            best[0], best[1] = completed, feasible
            if int(np.floor(upper + 1e-9)) <= feasible:
                return True
        i = next(k for k in order if k not in fixed)
        r = rows.index(i)
        row = weights[r]
        child_rows = free_rows.copy()
        child_rows[i] = 0
        for k in np.argsort(-row, kind="stable").tolist():
            if row[k] <= 0:
                break
            j = cols[k]
            child_cols = free_cols.copy()
            child_cols[j] = 0
            if not search({**fixed, i: j}, child_rows, child_cols, exact + gained[r, k], gained_all + link(i, j)):
                return False
        return search({**fixed, i: -1}, child_rows, free_cols, exact, gained_all)

    finished = search({}, np.ones(n1), np.ones(n2), 0.0, problem.unary)
    return best[0], best[1], finished


def _solve_program(problem: _Problem, integer: bool, at_least: int | None = None) -> tuple[float, list[int]] | None:
    """The optimum of the program (``integer``) or of its LP relaxation, and the mapping of its ``x > 0.5``;
    with *at_least*, of the program restricted to scores of at least that much, ``None`` if it has none.
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
    result = milp(
        -np.asarray(objective),
        constraints=constraints,
        integrality=integrality,
        bounds=Bounds(0, 1),
        options={"mip_rel_gap": 0.0, "presolve": True},
    )
    if result.x is None and at_least is not None and result.status == 2:  # infeasible: nothing scores at_least
        return None
    if result.x is None:  # pragma: no cover - HiGHS always solves this bounded, feasible program
        raise RuntimeError(f"HiGHS failed on a Smatch program: {result.message}")
    mapping = [-1] * problem.n1
    for n, (i, j) in enumerate(pairs):
        if result.x[n] > 0.5:  # at most one per row and column, as each sums to at most 1
            mapping[i] = j
    return -float(result.fun), mapping


@dataclass
class PairScore:
    """One pair's counts (as smatch sums them) and the optimal mapping (test node -> gold node, -1 for none)."""

    matched: int
    test: int
    gold: int
    mapping: list[int]
    proof: str = "assignment"  # what proved optimality: assignment, branch_and_bound, lp, mip (or empty)

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


def match_graphs(test: SmatchGraph, gold: SmatchGraph, semantics: str = "smatch", node_limit: int = 200) -> PairScore:
    """The optimal smatch count between two read graphs (``semantics`` decides how duplicate triples count).

    Tries, in order, until the best mapping found reaches a proven bound: the root assignment bound,
    a branch-and-bound search of at most *node_limit* nodes (fewer for large graphs), the LP
    relaxation, the MIP. :attr:`PairScore.proof` says which step proved optimality.
    """
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
    mapping, score = _hill_climb(problem, mapping, score)
    # the LP relaxation: a tighter bound, and often an integral optimum
    lp_value, lp_mapping = _solve_program(problem, integer=False)
    bound = min(bound, int(np.floor(lp_value + 1e-6)))
    lp_score = problem.score(lp_mapping)
    if lp_score > score:
        mapping, score = _hill_climb(problem, lp_mapping, lp_score)
    if score >= bound:
        return PairScore(score, test.num_triples, gold.num_triples, mapping, "lp")
    # the MIP, cut off below a better score than ours: either it proves there is none or it finds the optimum
    better = _solve_program(problem, integer=True, at_least=score + 1)
    if better is not None:
        mapping, score = better[1], problem.score(better[1])
    return PairScore(score, test.num_triples, gold.num_triples, mapping, "mip")


def score_pair(test: object, gold: object, semantics: str = "smatch") -> PairScore:
    """The optimal smatch count between a test (predicted) and a gold graph: PENMAN strings or
    ``penman.Graph`` objects (what the ``penman`` reader gives as targets).

    An empty or unreadable prediction is an empty graph: nothing matched, every gold triple missed.
    """
    import penman

    test, gold = (penman.encode(graph) if isinstance(graph, penman.Graph) else graph for graph in (test, gold))
    gold_graph = read_graph(gold, semantics)
    try:
        test_graph = read_graph(test, semantics) if test and test.strip() else EMPTY_GRAPH
    except Exception:  # noqa: BLE001 - any unreadable prediction scores as empty
        test_graph = EMPTY_GRAPH
    return match_graphs(test_graph, gold_graph, semantics)


def bootstrap_interval(pairs: Sequence[tuple[float, float, float]], samples: int = 1000, confidence: float = 0.95, seed: int = 0) -> tuple[float, float]:
    """A percentile bootstrap interval of corpus F1, resampling pairs with a seeded generator."""
    if not pairs:
        return 0.0, 0.0
    counts = np.asarray(pairs, dtype=float)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(counts), size=(samples, len(counts)))
    sums = counts[draws].sum(axis=1)
    scores = np.array([f_score(m, t, g) for m, t, g in sums])
    alpha = (1 - confidence) / 2
    return float(np.quantile(scores, alpha)), float(np.quantile(scores, 1 - alpha))


@Metric.register("exact_smatch")
class ExactSmatch(Metric):
    """``{"smatch_precision", "smatch_recall", "smatch_f1"}`` with the optimal mapping per pair.

    Predictions and golds are PENMAN strings. Counts are micro-averaged over the corpus as smatch
    does (sums of matched, test and gold triples). The scores of each pair since the last reset
    are in :attr:`pair_scores`. With ``bootstrap_samples > 0``, ``smatch_f1_ci_low`` and
    ``smatch_f1_ci_high`` give a percentile bootstrap interval over pairs (seeded, so repeatable);
    it needs the pairs, so it covers the pairs seen by this process only. ``semantics="smatchpp"``
    reads triples as smatchpp's generic standardizer does (see :func:`read_graph`).

    Registered as ``"exact_smatch"``.
    """

    count_names = ("matched", "test", "gold")

    def __init__(self, bootstrap_samples: int = 0, confidence: float = 0.95, seed: int = 0, semantics: str = "smatch") -> None:
        from toolkit.errors import ConfigurationError

        if semantics not in SEMANTICS:
            raise ConfigurationError(f"exact_smatch.semantics must be one of {', '.join(SEMANTICS)}, got {semantics!r}")
        if not 0 < confidence < 1:
            raise ConfigurationError(f"exact_smatch.confidence must be between 0 and 1, got {confidence}")
        self.bootstrap_samples, self.confidence, self.seed = bootstrap_samples, confidence, seed
        self.semantics = semantics
        self.pair_scores: list[PairScore] = []
        super().__init__()

    def reset(self) -> None:
        super().reset()
        self.pair_scores = []

    def __call__(self, predictions: Sequence, golds: Sequence) -> None:
        self._check_lengths(predictions, golds)
        for prediction, gold in zip(predictions, golds):
            pair = score_pair(prediction, gold, self.semantics)
            self.pair_scores.append(pair)
            self._counts["matched"] += pair.matched
            self._counts["test"] += pair.test
            self._counts["gold"] += pair.gold

    def get_metric(self, reset: bool = False) -> dict[str, float]:
        matched, test, gold = (self._counts[name] for name in self.count_names)
        values = {
            "smatch_precision": matched / test if test else 0.0,
            "smatch_recall": matched / gold if gold else 0.0,
            "smatch_f1": f_score(matched, test, gold),
        }
        if self.bootstrap_samples > 0:
            low, high = bootstrap_interval([(p.matched, p.test, p.gold) for p in self.pair_scores], self.bootstrap_samples, self.confidence, self.seed)
            values["smatch_f1_ci_low"], values["smatch_f1_ci_high"] = low, high
        if reset:
            self.reset()
        return values


def perturb(text: str, seed: int, rate: float = 0.15) -> str:
    """A seeded perturbation of a PENMAN graph: relabel concepts and roles, change constants, drop and rewire edges.

    About ``rate`` of the triples are touched (at least one); the result stays one connected graph
    with the same top. After 20 draws that all disconnect the graph, the graph comes back unchanged.
    """
    import penman
    from penman.exceptions import LayoutError

    graph = penman.decode(text)
    rng = random.Random(seed)
    variables = sorted(graph.variables())
    for _attempt in range(20):
        triples = list(graph.triples)
        changed = []
        for source, role, target in triples:
            if rng.random() >= rate:
                changed.append((source, role, target))
                continue
            action = rng.random()
            if role == ":instance":
                changed.append((source, role, target + "-x" if action < 0.5 else rng.choice(["thing", "person", "be-01"])))
            elif target in graph.variables():
                if action < 0.3:
                    changed.append((source, rng.choice([":ARG0", ":ARG1", ":mod", ":op1", ":domain"]), target))
                elif action < 0.6:
                    changed.append((source, role, rng.choice(variables)))
                elif action < 0.8:
                    continue  # drop the edge (a retry follows if that disconnects the graph)
                else:
                    changed.append((source, role, target))
                    changed.append((rng.choice(variables), role, target))
            else:
                if action < 0.4:
                    continue  # drop the attribute
                changed.append((source, role, '"' + str(target).strip('"') + 'x"' if action < 0.7 else target))
                if action >= 0.7:
                    changed.append((rng.choice(variables), rng.choice([":polarity", ":quant"]), "-"))
        if changed == triples:
            continue  # nothing drawn: draw again, so that every pair differs
        try:
            return penman.encode(penman.Graph(changed, top=graph.top))
        except (LayoutError, ValueError, KeyError):
            continue
    return text
