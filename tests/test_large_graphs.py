"""Large and deep AMR graphs: every AMR algorithm runs in bounded time and memory, or refuses in one line.

The cases of the issue (each failed before): a graph of 1,000 variables overflowed Python's stack in
``same_graph``; the aligner took minutes on 5,000 nodes and the oracle 52 s; a derivation of a
5,000-node graph held gigabytes of buffer tuples; Smatch's hill climbing took 20 s and 1.4 GB at 130
variables, was killed at 16 GB at 220, and a ``MemoryError`` inside it was caught and scored 1.0.
The graphs are generated: a multi-sentence document of clauses (re-entrancies, names, negations,
quantities) with a sentence that spells it, or a chain thousands deep.
"""

import logging
import random
import time
import tracemalloc

import penman
import pytest
import smatch as smatch_package
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.data.example import Example
from toolkit.metrics import ExactSmatch, Smatch
from toolkit.metrics import smatch as smatch_module
from toolkit.metrics.exact_smatch import read_graph, score_pair
from toolkit.metrics.exact_smatch.problem import _Problem
from toolkit.metrics.smatch import graph_size, smatch_counts
from transition_systems.amr import AmrTransitionSystem, GoldGraph, align
from transition_systems.amr.isomorphism import same_graph
from transition_systems.amr.penman_text import _format, _layout_depth_first, read_penman, write_penman
from transition_systems.amr.system import GoldAmr

VERBS = "see want go give say think make take know find tell ask love live draw look come leave".split()
NOUNS = "boy girl star planet flower sheep king box rose fox desert pilot drawing hat snake elephant volcano baobab lamp water night sun".split()
ADJECTIVES = "big small little red beautiful old young serious sad important".split()
PLACES = (("city", "Paris"), ("country", "France"), ("city", "London"), ("person", "Antoine"))
ROLES = "ARG0 ARG1 ARG2 mod time location manner purpose poss".split()


def document(nodes: int, seed: int = 0) -> tuple[penman.Graph, list[str]]:
    """A ``multi-sentence`` of clauses of about 15 nodes (concepts, names, ``:polarity -``, ``:quant``, re-entrancies),
    *nodes* nodes in all (variables and constants), and a sentence that spells it, one token per node and some more.
    """
    rng = random.Random(seed)
    triples = [("v0", ":instance", "multi-sentence")]
    tokens: list[str] = []
    count, clause, sentences = 1, [], 0

    def new(concept: str, word: str | None) -> str:
        nonlocal count
        var = f"v{len(triples)}"
        triples.append((var, ":instance", concept))
        count += 1
        if word:
            tokens.append(word)
        return var

    while count < nodes:
        if not clause or len(clause) >= 15:
            sentences += 1
            verb = rng.choice(VERBS)
            head = new(f"{verb}-01", verb)
            triples.append(("v0", f":snt{sentences}", head))
            tokens.append(".")
            clause = [head]
            continue
        source, kind = rng.choice(clause[-4:]), rng.random()
        if kind < 0.05 and count + 3 <= nodes:
            entity_type, name = rng.choice(PLACES)
            entity, name_node = new(entity_type, None), new("name", None)
            triples += [(source, f":{rng.choice(ROLES)}", entity), (entity, ":name", name_node), (name_node, ":op1", f'"{name}"')]
            tokens.append(name)
            count += 1
            clause.append(entity)
        elif kind < 0.08 and (source, ":polarity", "-") not in triples:
            triples.append((source, ":polarity", "-"))
            tokens.append("not")
            count += 1
        elif kind < 0.10:
            value = str(rng.randint(2, 99))
            triples.append((source, ":quant", value))
            tokens.append(value)
            count += 1
        elif kind < 0.13 and len(clause) > 3:  # a re-entrancy
            target = rng.choice(clause[:-1])
            if target != source and (source, ":ARG1", target) not in triples:
                triples.append((source, ":ARG1", target))
        else:
            pick = rng.random()
            word = rng.choice(VERBS if pick < 0.3 else NOUNS if pick < 0.8 else ADJECTIVES)
            var = new(f"{word}-01" if pick < 0.3 else word, word)
            triples.append((source, f":{rng.choice(ROLES)}", var))
            clause.append(var)
    return penman.Graph(triples, top="v0"), tokens


def chain(depth: int, concept: str = "boy") -> tuple[penman.Graph, list[str]]:
    """A graph *depth* nodes deep (each the ``:ARG1`` of the one before), too deep for penman to read or write."""
    triples = [(f"v{i}", ":instance", concept) for i in range(depth)] + [(f"v{i}", ":ARG1", f"v{i + 1}") for i in range(depth - 1)]
    return penman.Graph(triples, top="v0"), [concept] * depth


def example(graph: penman.Graph, tokens: list[str]) -> Example:
    return Example(tokens, graph, {"lemmas": tuple(tokens), "path": "large.txt", "line": 3})


def renamed(graph: penman.Graph) -> penman.Graph:
    """The same graph with other variable names and its triples in reverse order."""
    names = {var: f"x{i}" for i, var in enumerate(sorted(graph.variables(), reverse=True))}
    triples = [(names[s], r, names.get(t, t) if r != ":instance" else t) for s, r, t in reversed(graph.triples)]
    return penman.Graph(triples, top=names[graph.top])


def timed(seconds: float):  # type: ignore[no-untyped-def]
    """Assert the block runs within *seconds* (generous: the fixed code takes a tenth of it, the broken minutes)."""

    class Timer:
        def __enter__(self):  # type: ignore[no-untyped-def]
            self.start = time.perf_counter()

        def __exit__(self, *exc):  # type: ignore[no-untyped-def]
            elapsed = time.perf_counter() - self.start
            assert exc[0] is not None or elapsed < seconds, f"took {elapsed:.1f} s, more than {seconds} s"

    return Timer()


# ------------------------------------------------------------ graph equality and PENMAN text, without recursion


@pytest.mark.parametrize("size", [1000, 5000])
def test_same_graph_on_large_documents_and_deep_chains(size):
    for graph, _ in (document(size), chain(size)):
        with timed(10):
            assert same_graph(graph, renamed(graph))
        changed = penman.Graph([(s, r, "girl" if (s, r) == ("v1", ":instance") else t) for s, r, t in graph.triples], top=graph.top)
        assert not same_graph(graph, changed)


def test_write_and_read_penman_without_recursion():
    graph, _ = chain(5000)
    with timed(10):
        text = write_penman(graph.triples, graph.top)
        back = read_penman(text)
    assert text.count("(") == 5000 and back.top == "v0" and sorted(back.triples) == sorted(graph.triples)
    assert GoldAmr(graph) == text and GoldAmr(graph).text == text
    # the edges listed from the bottom of the chain up: penman's layout goes round all the triples for each node
    upwards = [triple for triple in graph.triples if triple[1] == ":instance"] + [triple for triple in reversed(graph.triples) if triple[1] != ":instance"]
    with timed(5):
        assert sorted(read_penman(write_penman(upwards, "v0")).triples) == sorted(graph.triples)


CONCEPTS = ["a", "b", "want-01", "x", "-", "v1"]  # "v1" and "-": a concept or value that is also a variable's name
WRITE_ROLES = [":ARG0", ":ARG1", ":ARG0-of", ":mod", ":op1", ":consist-of", ":domain"]


@settings(max_examples=300, deadline=None)
@given(data=st.data(), size=st.integers(1, 6))
def test_write_penman_is_penman_encode_and_read_penman_is_penman_decode(data, size):
    """Exactly penman's text (layout included) for any graph it can lay out, and its error for any it cannot."""
    variables = [f"v{i}" for i in range(size)]
    triples = [(var, ":instance", data.draw(st.sampled_from(CONCEPTS))) for var in variables]
    triples += data.draw(
        st.lists(st.tuples(st.sampled_from(variables), st.sampled_from(WRITE_ROLES), st.sampled_from(variables + ['"s"', "-", "5"])), max_size=8)
    )
    triples = data.draw(st.permutations(triples))
    top = data.draw(st.sampled_from(variables))
    try:
        expected = penman.encode(penman.Graph(triples, top=top), indent=None)
    except penman.exceptions.LayoutError:
        with pytest.raises(penman.exceptions.LayoutError):
            write_penman(triples, top)
        return
    assert write_penman(triples, top) == expected
    decoded = penman.decode(expected)
    assert read_penman(expected).triples == decoded.triples and read_penman(expected).top == decoded.top


@settings(max_examples=200, deadline=None)
@given(data=st.data(), size=st.integers(1, 6))
def test_the_depth_first_layout_writes_the_same_graph(data, size):
    """What write_penman falls back to when penman's layout would take too long: the same triples, read back."""
    variables = [f"v{i}" for i in range(size)]
    triples = [(var, ":instance", data.draw(st.sampled_from(CONCEPTS))) for var in variables]
    triples += data.draw(
        st.lists(st.tuples(st.sampled_from(variables), st.sampled_from(WRITE_ROLES), st.sampled_from(variables + ['"s"', "-", "5"])), max_size=8)
    )
    triples = data.draw(st.permutations(triples))
    top = data.draw(st.sampled_from(variables))
    try:
        expected = penman.decode(penman.encode(penman.Graph(triples, top=top), indent=None))
    except penman.exceptions.LayoutError:
        with pytest.raises(penman.exceptions.LayoutError):
            _layout_depth_first(triples, top)
        return
    written = read_penman(_format(_layout_depth_first(triples, top)))
    assert sorted(written.triples) == sorted(expected.triples) and written.top == expected.top


# ------------------------------------------------------------ the aligner and the oracle


@pytest.mark.parametrize("size", [1000, 5000])
def test_the_aligner_on_long_sentences(size):
    graph, tokens = document(size)
    with timed(10):
        alignment = align(GoldGraph.of(graph), tokens, tokens)
    assert len(alignment.tokens) + len(alignment.dependents) == size and alignment.rule_aligned > 0.9 * size


def test_the_aligner_on_one_word_repeated():
    """5,000 nodes of one concept and 5,000 tokens of its word: every node matches every token, ties broken by
    which tokens are free and nearest. Scoring every pair took 9 s for 3,000 (a star), 25 s for 5,000.
    """
    star = penman.Graph([(f"v{i}", ":instance", "boy") for i in range(5000)] + [("v0", ":ARG1", f"v{i}") for i in range(1, 5000)], top="v0")
    for graph in (penman.decode(penman.encode(star)), chain(5000)[0]):
        with timed(5):
            alignment = align(GoldGraph.of(graph), ["boy"] * 5000, ["boy"] * 5000)
        assert sorted(alignment.tokens.values()) == list(range(5000))


@pytest.mark.parametrize("size", [1000, 5000])
def test_the_oracle_rebuilds_large_graphs(size):
    """5,000 nodes: the oracle took 52 s, and a derivation (a stack and buffer per step) was killed at 4 GB."""
    graph, tokens = document(size)
    ex = example(graph, tokens)
    system = AmrTransitionSystem(max_nodes=10_000, max_actions_per_token=20)
    with timed(40):
        if size <= 1000:
            system.fit([ex])  # raises the caps to this graph, as for training data (and `toolkit oracle`)
        actions, status = system.run_oracle(ex)
        derivation = system.derive(ex)
        state = system.initial_state(ex)
        for action in actions:
            state = state.apply(action)
        assert status == "exact" and state.result() == system.gold(ex)
    assert derivation.symbols == actions and isinstance(derivation.features[0]["buffer"], range)


def test_the_oracle_on_a_chain_thousands_deep():
    graph, tokens = chain(3000)
    ex = example(graph, tokens)
    system = AmrTransitionSystem(max_nodes=10_000)
    with timed(30):
        actions, status = system.run_oracle(ex)
        state = system.initial_state(ex)
        for action in actions:
            state = state.apply(action)
        assert status == "exact" and state.result() == system.gold(ex)


def test_a_graph_over_the_node_limit_falls_back_at_once_in_one_line(caplog):
    graph, tokens = document(5000)
    ex = example(graph, tokens)
    system = AmrTransitionSystem()  # max_nodes 200, not fitted
    with caplog.at_level(logging.WARNING, logger="transition_systems.amr.system"), timed(5):
        assert system.run_oracle(ex) == (system.fallback(system.initial_state(ex)), "fallback")
        system.derive(ex)  # asked again (training, `toolkit oracle`): no second line
        assert system.data_report([ex])["oracle_fallback"] == 1
    assert [record.getMessage() for record in caplog.records] == [
        "large.txt:3: the graph has 5000 nodes, more than grammar.max_nodes = 200; the oracle falls back to a one-node graph"
    ]


# ------------------------------------------------------------ Smatch


WANT_BOY = "(w / want-01 :ARG0 (b / boy))"


@pytest.mark.parametrize(
    "test, gold, counts, exact",
    [
        ("(w / want-01 :ARG0 (g / girl))", WANT_BOY, (3, 4, 4), (3, 4, 4)),  # all but the boy/girl instance
        ("(b / boy :ARG0-of (w / want-01))", WANT_BOY, (3, 4, 4), (3, 4, 4)),  # TOP sits on the other node
        ("(d / dog :mod (b / big))", "(b / big :domain (d / dog))", (3, 4, 4), (3, 4, 4)),  # :mod is an inverted :domain
        ("(a / apple :ARG0 (c / cat))", "(b / banana :quant 3)", (1, 4, 3), (1, 4, 3)),  # only TOP
        # an unreadable prediction: smatch scores the placeholder (a / amr-empty), whose TOP matches; exact Smatch an empty graph
        ("(not a graph", WANT_BOY, (1, 2, 4), (0, 0, 4)),
    ],
)
def test_hand_checked_smatch_counts_are_unchanged(test, gold, counts, exact):
    assert smatch_counts(test, gold) == counts
    pair = score_pair(test, gold)
    assert (pair.matched, pair.test, pair.gold) == exact


def test_smatch_keeps_no_memo_of_mappings():
    """The package's memo held every mapping tried: 36 MB at the peak for this pair of 53-variable graphs (0.3 MB now)."""
    graph, _ = document(60)
    tracemalloc.start()
    try:
        smatch_counts(penman.encode(graph), graph)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 10e6 and not smatch_package.match_triple_dict


def test_smatch_scores_graphs_over_its_limit_by_a_greedy_lower_bound_and_says_so(caplog):
    big, _ = document(400)
    small = "(w / want-01 :ARG0 (b / boy))"
    metric = Smatch()
    assert graph_size(big) > metric.max_nodes == 100
    with caplog.at_level(logging.WARNING, logger="toolkit.metrics.smatch"), timed(5):
        metric([small, big, penman.encode(big)], [small, big, big])
    values = metric.get_metric()
    assert values["smatch_greedy"] == 2 and values["smatch"] == 1.0  # identical graphs: the greedy mapping finds every triple
    shuffled = Smatch()
    shuffled([penman.encode(renamed(big))], [big])  # other names, triples in reverse order: a lower bound, close to 1
    assert 0.95 < shuffled.get_metric()["smatch"] <= 1.0
    assert [record.getMessage() for record in caplog.records][:1] == [
        "smatch: 2 of 3 graph pairs have a graph of more than smatch.max_nodes = 100 variables (the first: pair 2, with 363); "
        "hill climbing grows with the fourth power of a graph's size, so they are scored by one greedy mapping, a lower bound, and reported as smatch_greedy"
    ]
    garbage = Smatch()  # a parser that writes a huge graph is not excused from the score: its triples count
    garbage([penman.encode(big)], [small])
    scores = garbage.get_metric()
    assert scores["smatch_greedy"] == 1 and scores["smatch_precision"] < 0.01 and scores["smatch"] < 0.02
    assert garbage.state()["predicted"] > 700 and garbage.state()["gold"] == 4
    assert Smatch(max_nodes=500).max_nodes == 500


@settings(max_examples=15, deadline=None)
@given(st.integers(min_value=0, max_value=10_000), st.integers(min_value=20, max_value=45))
def test_the_greedy_mapping_never_scores_more_than_hill_climbing(seed, nodes):
    """Any one mapping matches at most what the best does; hill climbing finds at least the identity's share here."""
    gold, _ = document(nodes, seed)
    rng = random.Random(seed)
    triples = [triple for triple in renamed(gold).triples if triple[1] == ":instance" or rng.random() < 0.8]
    predicted = penman.Graph(triples)
    greedy = smatch_module.greedy_counts(predicted, gold)
    climbed = smatch_counts(predicted, gold)
    assert greedy[1:] == climbed[1:]  # the same triples counted on both sides
    assert greedy[0] <= climbed[0]


def test_a_memory_error_inside_smatch_is_an_error_not_a_score(monkeypatch):
    """Memory ran out on a large pair; an ``except Exception`` caught it, read both graphs again (memory ran out
    again), made each the one-node placeholder, and the pair of placeholders scored 1.0.
    """
    graph = "(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b))"
    read = smatch_module.smatch_amr.AMR.parse_AMR_line

    def short_of_memory(text):  # type: ignore[no-untyped-def]
        if len(text) > len(smatch_module.PLACEHOLDER):
            raise MemoryError
        return read(text)

    def out_of_memory(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise MemoryError

    for target, name, fail in (
        (smatch_module.smatch_amr.AMR, "parse_AMR_line", short_of_memory),
        (smatch_package, "get_best_match", out_of_memory),
        (smatch_module.penman, "encode", out_of_memory),
    ):
        with monkeypatch.context() as patch:
            patch.setattr(target, name, fail)
            metric = Smatch()
            with pytest.raises(MemoryError):
                metric([graph], [graph])
            assert metric.get_metric()["smatch"] == 0.0
    # a graph penman cannot read within Python's stack was the placeholder too; only text that is not PENMAN is
    monkeypatch.setattr(smatch_module.penman, "decode", lambda text: (_ for _ in ()).throw(RecursionError("too deep")))
    with pytest.raises(RecursionError):
        Smatch()([graph], [graph])


# ------------------------------------------------------------ exact Smatch


def test_exact_smatch_scores_graphs_over_its_limit_by_a_greedy_lower_bound_and_says_so(caplog):
    big, _ = document(400)
    metric = ExactSmatch()
    assert metric.max_nodes == 200
    with caplog.at_level(logging.WARNING, logger="toolkit.metrics.smatch"), timed(5):
        metric([WANT_BOY, big], [WANT_BOY, big])
    triples = len(big.triples)
    assert metric.get_metric()["exact_smatch_greedy"] == 1 and metric.state()["matched"] == 4 + smatch_module.greedy_counts(big, big)[0]
    assert metric.state()["gold"] == 4 + smatch_module.greedy_counts(big, big)[2] and triples > 300
    assert "exact_smatch: 1 of 2 graph pairs have a graph of more than exact_smatch.max_nodes = 200 variables (the first: pair 2" in caplog.text


def test_exact_smatch_has_a_time_limit_and_says_when_it_is_reached(caplog):
    """200-variable graphs with little in common took 50 s in the programs; every concept alike, longer."""
    rng, size = random.Random(0), 120
    gold, test = (
        penman.Graph([(f"v{i}", ":instance", "thing") for i in range(size)] + [(f"v{rng.randrange(i)}", ":ARG0", f"v{i}") for i in range(1, size)], top="v0")
        for _ in range(2)
    )
    metric = ExactSmatch(time_limit=1.0)
    with caplog.at_level(logging.WARNING, logger="toolkit.metrics.exact_smatch.metric"), timed(8):
        metric([test], [gold])
    pair = metric.pair_scores[0]
    assert pair.proof == "unproven" and metric.get_metric()["exact_smatch_unproven"] == 1
    assert 0 < pair.matched <= pair.test == pair.gold == 2 * size  # the best mapping found: a lower bound
    assert _Problem(read_graph(penman.encode(test)), read_graph(penman.encode(gold))).score(pair.mapping) == pair.matched
    assert "not proven optimal within time_limit = 1.0 s (the first: pair 1)" in caplog.text


def test_a_memory_error_inside_exact_smatch_is_an_error_not_a_score(monkeypatch):
    from toolkit.metrics.exact_smatch import solver

    def out_of_memory(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(solver, "read_graph", out_of_memory)  # the prediction's reading used to be any-exception-is-empty
    with pytest.raises(MemoryError):
        ExactSmatch()([WANT_BOY], [WANT_BOY])
