"""The exact Smatch scorer: smatch 1.0.4's triples, an optimal mapping, deterministic."""

import itertools
from pathlib import Path

import pytest

from tests.penman_perturb import perturb
from toolkit.metrics import Metric
from toolkit.metrics.exact_smatch import ExactSmatch, f_score, match_graphs, read_graph, score_pair
from toolkit.metrics.exact_smatch.branch_and_bound import _branch_and_bound
from toolkit.metrics.exact_smatch.local_search import _hill_climb
from toolkit.metrics.exact_smatch.problem import _Problem
from toolkit.metrics.exact_smatch.program import _solve_program

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "amr-little-prince" / "amr-bank-struct-v3.0.txt"


def little_prince(limit: int) -> list[str]:
    if not DATA.exists():
        pytest.skip(f"{DATA} not present")
    graphs = []
    for block in DATA.read_text(encoding="utf-8").split("\n\n"):
        lines = [line.strip() for line in block.splitlines() if line.strip() and not line.startswith("#")]
        if lines:
            graphs.append(" ".join(lines))
        if len(graphs) == limit:
            break
    return graphs


def smatch_counts(test: str, gold: str) -> tuple[int, int, int]:
    smatch = pytest.importorskip("smatch")
    counts = smatch.get_amr_match(" ".join(test.split()), " ".join(gold.split()))
    smatch.match_triple_dict.clear()
    return tuple(counts)


def counts(test: str, gold: str) -> tuple[int, int, int]:
    pair = score_pair(test, gold)
    return pair.matched, pair.test, pair.gold


REENTRANT = "(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b))"
NOT_REENTRANT = "(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 (g2 / girl)))"


def test_reentrancy_hand_computed():
    # test: 3 instances + TOP + ARG0(w,b), ARG1(w,g), ARG0(g,b) = 7; gold: 4 + 1 + 3 = 8.
    # w->w, b->b, g->g matches all but ARG0(g,b): 6 (mapping b to g2 instead loses boy and ARG0(w,b)).
    assert counts(REENTRANT, NOT_REENTRANT) == (6, 7, 8)
    assert score_pair(REENTRANT, NOT_REENTRANT).f1 == pytest.approx(2 * 6 / (7 + 8))
    assert score_pair(REENTRANT, NOT_REENTRANT).mapping == [0, 1, 2]


def test_inverse_role_and_mod_hand_computed():
    # ARG0-of is ARG0 the other way: everything matches but TOP, which sits on b in one, on w in the other.
    assert counts("(b / boy :ARG0-of (w / want-01))", "(w / want-01 :ARG0 (b / boy))") == (3, 4, 4)
    # smatch reads :mod as an inverted :domain
    assert counts("(d / dog :mod (b / big))", "(b / big :domain (d / dog))") == (3, 4, 4)
    # consist-of is one of smatch's exceptions: not inverted
    assert counts("(a / a :consist-of (b / b))", "(b / b :consist (a / a))") == (2, 4, 4)


def test_duplicate_triple_counts_as_smatch_does():
    # 1 instance + TOP + polarity twice = 4 against 3: each (test, gold) copy pair counts, so 4 matches,
    # recall 4/3 and F1 8/7 > 1, exactly smatch's arithmetic.
    test, gold = "(d / dog :polarity - :polarity -)", "(d / dog :polarity -)"
    assert counts(test, gold) == (4, 4, 3)
    assert score_pair(test, gold).f1 == pytest.approx(8 / 7)
    assert counts(test, gold) == smatch_counts(test, gold)


def test_smatch_reader_quirks():
    # an inverted edge to a constant is dropped; a quoted constant keeps its first word, lower-cased
    graph = read_graph('(p / person :quant-of 5 :mod 3 :name (n / name :op1 "New York" :op2 Paris_))')
    assert sorted(graph.attributes) == [(0, "top", "top"), (1, "op1", "new"), (1, "op2", "paris")]
    assert graph.relations == [("name", 0, 1)]
    smatchpp = read_graph('(p / person :quant-of 5 :mod (c / cool) :name (n / name :op1 "New York"))', "smatchpp")
    assert (0, "quant-of", "5") in smatchpp.attributes and (2, "op1", "new york") in smatchpp.attributes
    assert ("mod", 0, 1) in smatchpp.relations


def test_identical_graphs_score_one():
    for graph in [REENTRANT, NOT_REENTRANT, "(d / dog :polarity -)", *little_prince(10)]:
        pair = score_pair(graph, graph)
        assert pair.f1 == pytest.approx(1.0) and pair.matched == pair.test == pair.gold


def test_disjoint_graphs():
    # nothing in common but the TOP triple, which smatch gives every graph: only that one matches
    assert counts("(a / apple :ARG0 (c / cat))", "(b / banana :quant 3)") == (1, 4, 3)
    # an empty or unreadable prediction matches nothing
    for prediction in ["", None, "(a / "]:
        pair = score_pair(prediction, REENTRANT)
        assert (pair.matched, pair.test, pair.gold, pair.f1) == (0, 0, 7, 0.0)


def test_deterministic_over_repeated_runs():
    graphs = little_prince(12)
    pairs = [(graphs[k], graphs[k + 1]) for k in range(11)] + [(perturb(g, seed=k), g) for k, g in enumerate(graphs)]
    first = [(p.matched, p.mapping) for p in (score_pair(t, g) for t, g in pairs)]
    for _ in range(3):
        assert [(p.matched, p.mapping) for p in (score_pair(t, g) for t, g in pairs)] == first
    assert perturb(graphs[3], seed=7) == perturb(graphs[3], seed=7)


def brute_force(test: str, gold: str) -> int:
    problem = _Problem(read_graph(test), read_graph(gold))
    best = 0
    targets = list(range(problem.n2)) + [-1] * problem.n1
    for mapping in set(itertools.permutations(targets, problem.n1)):
        best = max(best, problem.score(mapping))
    return best


def test_optimal_against_brute_force_on_small_pairs():
    graphs = [g for g in little_prince(200) if len(read_graph(g).concepts) <= 5][:12]
    for k, graph in enumerate(graphs):
        for test, gold in [(perturb(graph, seed=k, rate=0.4), graph), (graph, graphs[(k + 1) % len(graphs)])]:
            if len(read_graph(gold).concepts) <= 5:
                best = brute_force(test, gold)
                assert score_pair(test, gold).matched == best
                # the programs alone, whatever the bounds would have proved
                problem = _Problem(read_graph(test), read_graph(gold))
                mapping, score, finished = _branch_and_bound(problem, [-1] * problem.n1, 0, 10**6)
                assert finished and score == best == problem.score(mapping)
                for integer in (True, False):
                    value, mapping = _solve_program(problem, integer)
                    assert value >= best - 1e-6
                    if integer:
                        assert problem.score(mapping) == best and value == pytest.approx(best)


def test_agrees_with_smatch_on_easy_pairs():
    for test, gold in [(REENTRANT, NOT_REENTRANT), ("(b / boy :ARG0-of (w / want-01))", "(w / want-01 :ARG0 (b / boy))")]:
        assert counts(test, gold) == smatch_counts(test, gold)
    for graph in little_prince(8):
        assert counts(graph, graph) == smatch_counts(graph, graph)


def test_every_proof_route_agrees():
    graphs = little_prince(30)
    for k in range(20):
        test, gold = read_graph(graphs[k]), read_graph(graphs[k + 1])
        scores = {match_graphs(test, gold, node_limit=limit).matched for limit in (0, 5, 200)}
        assert len(scores) == 1


def test_never_below_smatch_on_real_pairs():
    graphs = little_prince(25)
    pairs = [(perturb(g, seed=k), g) for k, g in enumerate(graphs)] + [(graphs[k], graphs[k + 1]) for k in range(10)]
    for test, gold in pairs:
        matched, test_total, gold_total = smatch_counts(test, gold)
        pair = score_pair(test, gold)
        assert (pair.test, pair.gold) == (test_total, gold_total)  # the same triples as smatch
        assert pair.matched >= matched


def test_metric_interface():
    metric = Metric.by_name("exact_smatch")(bootstrap_samples=200, seed=1)
    assert isinstance(metric, ExactSmatch)
    metric([REENTRANT, "(d / dog :mod (b / big))"], [NOT_REENTRANT, "(b / big :domain (d / dog))"])
    assert metric.state() == {"matched": 9.0, "test": 11.0, "gold": 12.0, "greedy": 0.0, "unproven": 0.0}
    values = metric.get_metric()
    assert values["smatch_f1"] == pytest.approx(f_score(9, 11, 12))
    assert values["smatch_precision"] == pytest.approx(9 / 11) and values["smatch_recall"] == pytest.approx(9 / 12)
    assert values["smatch_f1_ci_low"] <= values["smatch_f1"] <= values["smatch_f1_ci_high"]
    assert metric.get_metric(reset=True) == values  # seeded bootstrap: the same interval again
    assert [p.f1 for p in metric.pair_scores] == [] and metric.state() == {"matched": 0.0, "test": 0.0, "gold": 0.0, "greedy": 0.0, "unproven": 0.0}
    with pytest.raises(ValueError):
        metric([REENTRANT], [])


def test_hill_climb_gains_are_exact():
    graphs = little_prince(12)
    for k in range(10):
        problem = _Problem(read_graph(graphs[k]), read_graph(perturb(graphs[k + 1], seed=k)))
        start = [-1] * problem.n1
        mapping, score = _hill_climb(problem, start, 0)
        assert score == problem.score(mapping) and len({j for j in mapping if j >= 0}) == sum(j >= 0 for j in mapping)


def test_the_cut_off_program_finds_the_optimum_or_proves_there_is_nothing_better():
    graphs = little_prince(12)
    for k in range(10):
        test, gold = read_graph(graphs[k]), read_graph(graphs[k + 1])
        optimum = match_graphs(test, gold).matched
        problem = _Problem(test, gold)
        assert _solve_program(problem, integer=True, at_least=optimum + 1) is None
        _, mapping = _solve_program(problem, integer=True, at_least=optimum)
        assert problem.score(mapping) == optimum


def test_graph_objects_score_like_their_strings():
    """`toolkit evaluate --metric exact_smatch` on an AMR archive: the penman reader's targets are Graphs."""
    import penman

    scores = []
    for convert in (str, penman.decode):
        metric = Metric.by_name("exact_smatch")()
        metric([convert(REENTRANT)], [convert(NOT_REENTRANT)])
        scores.append(metric.get_metric())
    assert scores[0] == scores[1] and 0 < scores[0]["smatch_f1"] < 1
