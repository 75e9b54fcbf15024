"""The example plugin's grammars (examples/plugin): arc-eager and the post-order tree codec.

Imported here from the source tree, so the properties run in-process; test_plugins.py installs
the same package with pip and drives it through the CLI.
"""

import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import REPO
from tests.test_transition_systems import HEARING, LABELS, any_heads, check_oracle_walk, example, labelled, projective_heads
from tests.test_tree_codecs import trees
from toolkit.data.example import Example
from toolkit.errors import ConfigurationError, DataError
from toolkit.grammars import Grammar
from toolkit.oracle import replay_oracle
from transition_systems import is_projective, projective_order, projectivize

sys.path.insert(0, str(REPO / "examples" / "plugin"))
from toolkit_example_plugin.postorder import END, PostorderCodec, postorder

FISH = example([2, 0, 4, 2], ["nsubj", "root", "det", "obj"])  # "She ate the fish"


def arc_eager(**options):
    return Grammar.from_params({"type": "arc_eager", **options})


def covington(**options):
    return Grammar.from_params({"type": "covington", **options})


# ------------------------------------------------------------------ arc-eager


def test_arc_eager_oracle_on_a_small_tree():
    assert arc_eager().oracle(FISH) == [
        "SHIFT",
        "LEFT-ARC:nsubj",
        "RIGHT-ARC:root",
        "SHIFT",
        "LEFT-ARC:det",
        "RIGHT-ARC:obj",
        "REDUCE",
        "REDUCE",
    ]


def test_arc_eager_refuses_to_strand_a_word_without_a_head():
    """Shifting the last word, or popping the root's only dependent too early, would leave no way to finish."""
    state = arc_eager().initial_state(FISH)
    for action in ("SHIFT", "LEFT-ARC:nsubj", "RIGHT-ARC:root"):
        state = state.apply(action)
    assert "REDUCE" not in state.allowed()  # "ate" is the only word the rest can hang from
    for action in ("SHIFT", "LEFT-ARC:det", "RIGHT-ARC:obj"):
        state = state.apply(action)
    assert not state.buffer and "SHIFT" not in state.allowed() and "REDUCE" in state.allowed()


@settings(max_examples=100, deadline=None)
@given(projective_heads(), st.data())
def test_arc_eager_round_trips_projective_trees(heads, data):
    ex = labelled(heads, data)
    grammar = arc_eager()
    assert check_oracle_walk(grammar, ex) == grammar.gold(ex) == ex.target
    assert len(grammar.oracle(ex)) == 2 * len(heads)  # each word is pushed once and popped once


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 9), st.booleans(), st.data())
def test_arc_eager_random_valid_actions_always_finish_with_a_well_formed_tree(n, single_root, data):
    grammar = arc_eager(single_root=single_root)
    state = grammar.initial_state(Example(["w"] * n))
    for _ in range(2 * n):
        options = state.allowed().expand(LABELS + ["root"])
        assert options, f"dead end at {state.stack} {state.buffer}"
        state = state.apply(data.draw(st.sampled_from(options)))
    assert state.is_final()
    tree = state.result()
    assert tree.heads.count(0) == (1 if n else 0) or (not single_root and tree.heads.count(0) >= 1)
    assert len(projective_order(tree.heads)) == n + 1 and is_projective(tree.heads)


def test_arc_eager_projectivizes_like_the_shipped_systems():
    hearing = example([2, 3, 0, 3, 2, 7, 5, 4, 3], ["det", "sbj", "root", "vg", "nmod", "det", "pc", "adv", "p"])
    assert check_oracle_walk(arc_eager(), hearing).heads == projectivize(hearing.target.heads)[0]
    with pytest.raises(DataError):
        arc_eager(non_projective="skip").oracle(hearing)


def test_a_plugins_projective_system_parses_non_projective_trees_pseudo_projectively():
    """What the plugin guide promises: ``non_projective`` defaults to "projectivize", and "pseudo_projective"
    works for a plugin's ProjectiveTransitionSystem as for the shipped ones, with nothing in the plugin.
    """
    assert arc_eager().non_projective == "projectivize"
    grammar = arc_eager(non_projective="pseudo_projective")
    assert "RIGHT-ARC:nmod^sbj" in grammar.oracle(HEARING) or "LEFT-ARC:nmod^sbj" in grammar.oracle(HEARING)  # the lifted arc says whence
    assert check_oracle_walk(grammar, HEARING) == HEARING.target.without_upos()  # and the crossing arcs come back
    report = replay_oracle(grammar, [HEARING, FISH])
    assert report["exact_round_trips"] == 2 and report["uas"] == report["las"] == 1.0 and report["lifted_arcs"] == 2


def test_a_plugins_system_gets_labeled_shift_without_a_line_of_its_own():
    """arc-eager never names shift_symbol=: the configuration puts in SHIFT:<word>, the transition gets SHIFT."""
    grammar = arc_eager(shift_words=["w1", "w4"])  # "She" and "fish"
    actions = grammar.oracle(FISH)
    assert actions[0] == "SHIFT:w1" and actions[3] == "SHIFT" and "SHIFT:w4" not in actions  # "fish" comes in by RIGHT-ARC
    assert check_oracle_walk(grammar, FISH) == FISH.target.without_upos()
    first = grammar.initial_state(FISH).allowed()
    assert "SHIFT" not in first and "SHIFT:w1" in first and "SHIFT:w2" not in first


def test_arc_eager_makes_its_single_root_arc_early_and_keeps_the_tree_single_rooted():
    """single_root when the root arc is not the last action: the root's one dependent is never popped while
    words are left, so every later word can still hang below it (the random walks above check the rest).
    """
    state = arc_eager().initial_state(example([0, 1, 2], ["root", "a", "a"]))
    state = state.apply("RIGHT-ARC:root")  # the first word hangs from the root at once: the root arc is the first action
    assert state.stack == (0, 1) and "REDUCE" not in state.allowed()  # popping the root's one dependent would strand the rest
    state = state.apply("RIGHT-ARC:a")
    assert "REDUCE" in state.allowed()  # "w2" has its head, and "w1" stays for "w3"
    state = state.apply("REDUCE")
    assert "REDUCE" not in state.allowed() and "RIGHT-ARC:a" in state.allowed()
    assert check_oracle_walk(arc_eager(), example([0, 1, 2], ["root", "a", "a"])).heads == (0, 1, 2)


# ------------------------------------------------------------------ Covington (a new action kind, a configuration with more fields)


def test_covington_oracle_on_a_small_tree():
    # j = 1: nothing to compare with but the root; j = 2: "She" <- "ate", root -> "ate"; j = 3: no arc
    # with "ate"; j = 4: "the" <- "fish", "ate" -> "fish", and "She" has no arc left, so SHIFT ends it.
    assert covington().oracle(FISH) == ["SHIFT", "LEFT-ARC:nsubj", "RIGHT-ARC:root", "SHIFT", "SHIFT", "LEFT-ARC:det", "RIGHT-ARC:obj", "SHIFT"]
    state = covington().initial_state(FISH)
    for action in ["SHIFT", "LEFT-ARC:nsubj"]:
        state = state.apply(action)
    assert state.stack == (0,) and state.passed == (1,) and state.buffer == (2, 3, 4)
    assert state.features() == {"stack": (), "buffer": (1, 2, 3)}
    state = state.apply("RIGHT-ARC:root").apply("SHIFT")
    assert state.stack == (0, 1, 2) and state.passed == () and state.features()["stack"] == (1, 0)


def test_covington_builds_crossing_arcs_without_swaps():
    assert not is_projective(HEARING.target.heads)
    assert check_oracle_walk(covington(), HEARING) == HEARING.target
    assert "NO-ARC" in covington().oracle(HEARING)


def test_covington_refuses_cycles_and_strandings():
    state = covington().initial_state(example([0, 1, 2, 3], ["root", "a", "a", "a"]))
    for action in ["SHIFT", "RIGHT-ARC:a", "NO-ARC", "SHIFT", "RIGHT-ARC:a"]:  # w1 -> w2, w2 -> w3
        state = state.apply(action)
    assert state.stack == (0, 1) and state.buffer == (3, 4)
    assert "LEFT-ARC:a" not in state.allowed()  # w3 -> w1 would close the cycle w1 -> w2 -> w3 -> w1
    assert "RIGHT-ARC:a" not in state.allowed() and "NO-ARC" in state.allowed()  # w3 already has its head
    last = covington().initial_state(example([0], ["root"]))
    assert last.allowed().expand(["a", "root"]) == ["RIGHT-ARC:root"]  # shifting or passing the root would strand the word
    assert "NO-ARC" in last.allowed().but(moves=frozenset({"NO-ARC"}))


@settings(max_examples=150, deadline=None)
@given(any_heads(), st.data())
def test_covington_round_trips_any_tree(heads, data):
    ex = labelled(heads, data)
    grammar = covington()
    assert check_oracle_walk(grammar, ex) == grammar.gold(ex) == ex.target
    assert len(grammar.oracle(ex)) <= grammar.max_actions(len(heads))


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 8), st.booleans(), st.data())
def test_covington_random_valid_actions_always_finish_with_a_tree(n, single_root, data):
    grammar = covington(single_root=single_root)
    state = grammar.initial_state(Example(["w"] * n))
    for _ in range(grammar.max_actions(n)):
        if state.is_final():
            break
        options = state.allowed().expand(LABELS + ["root"])
        assert options, f"dead end at {state.stack} {state.passed} {state.buffer}"
        state = state.apply(data.draw(st.sampled_from(options)))
    assert state.is_final()
    heads = state.result().heads
    assert "_" not in state.result().deprels  # every word attached by an action
    assert heads.count(0) == 1 if single_root and n else heads.count(0) >= (1 if n else 0)
    for word in range(1, n + 1):  # no cycles: every chain of heads ends at the root within n steps
        for _ in range(n):
            word = heads[word - 1] if word else 0
        assert word == 0


# ------------------------------------------------------------------ the post-order codec


LAMBDA = "( lambda $0 e ( and:t ( state:t $0 ) ( loc:t c0 $0 ) ) )"


def test_postorder_oracle_and_allowed_arities():
    codec = PostorderCodec()
    ex = Example(["where"], LAMBDA)
    assert codec.oracle(ex) == ["$0/0", "e/0", "$0/0", "state:t/1", "c0/0", "$0/0", "loc:t/2", "and:t/2", "lambda/3", END]
    state = codec.initial_state(ex)
    assert "x/0" in state.allowed() and "f/1" not in state.allowed() and END not in state.allowed()
    for symbol in ("$0/0", "e/0", "$0/0"):
        state = state.apply(symbol)
    assert "f/3" in state.allowed() and "f/4" not in state.allowed() and END not in state.allowed()
    state = state.apply("f/3")
    assert END in state.allowed() and not state.is_final()
    assert state.apply(END).result() == "( f $0 e $0 )"


def test_postorder_keeps_the_tree_within_max_nodes():
    state = PostorderCodec(max_nodes=3).initial_state(Example(["x"]))
    state = state.apply("a/0").apply("b/0")
    assert "c/0" not in state.allowed() and "c/1" not in state.allowed() and "c/2" in state.allowed()
    assert state.apply("c/2").allowed() == state.apply("c/2").allowed() and END in state.apply("c/2").allowed()
    with pytest.raises(ValueError):
        state.apply("c/0")


def test_postorder_errors():
    with pytest.raises(ConfigurationError, match="^max_nodes: must be at least 1"):
        PostorderCodec(max_nodes=0)
    with pytest.raises(DataError, match="data.tsv:7"):
        PostorderCodec().oracle(Example(["x"], "( a ( b", {"path": "data.tsv", "line": 7}))


@settings(max_examples=150, deadline=None)
@given(trees())
def test_postorder_round_trips_every_tree(tree):
    from tree_codecs import to_lisp

    codec = PostorderCodec()
    ex = Example(["x"], to_lisp(tree))
    assert [node.label for node in postorder(tree)][-1] == tree.label
    assert codec.replay(ex).result() == codec.gold(ex) == to_lisp(tree)


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 12), st.sampled_from([None, 1, 2, 3, 4]), st.data())
def test_postorder_random_walks_end_in_a_tree_within_max_nodes(max_nodes, max_arity, data):
    """Any walk through allowed symbols, using only leaves and nodes of the widest arity, finishes a tree."""
    state = PostorderCodec(max_nodes=max_nodes, max_arity=max_arity).initial_state(Example(["x"]))
    arities = range(max_nodes + 1) if max_arity is None else {0, max_arity}  # unbounded: the model may know any
    known = [f"n/{arity}" for arity in arities] + [END]
    while not state.is_final():
        options = [symbol for symbol in known if symbol in state.allowed()]
        assert options, f"dead end after {state.symbols}"
        state = state.apply(data.draw(st.sampled_from(options)))
    tree = state.tree()
    assert 1 <= len(state.symbols) <= max_nodes and tree.size == len(state.symbols)
    assert max_arity is None or tree.max_degree <= max_arity


def test_postorder_learns_the_widest_node_from_training_trees():
    codec = PostorderCodec()
    assert codec.fit([Example(["x"], LAMBDA), Example(["x"], "( f a b )")]) == {"max_arity": 3}
    state = codec.initial_state(Example(["x"]))
    for _ in range(4):
        state = state.apply("a/0")
    assert "f/4" not in state.allowed() and "f/3" in state.allowed()
    with pytest.raises(DataError, match="more than grammar.max_arity = 3"):
        codec.oracle(Example(["x"], "( f a b c d )"))
    assert PostorderCodec(max_arity=2).fit([Example(["x"], LAMBDA)]) == {}
