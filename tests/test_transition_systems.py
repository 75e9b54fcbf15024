"""Transition systems: hand-checked oracles, projectivity, and properties over random trees."""

import json
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import FIXTURES, data_root
from toolkit.cli import main
from toolkit.data.dataset_readers import DatasetReader
from toolkit.data.dataset_readers.conllu import DependencyTree
from toolkit.data.example import Example
from toolkit.errors import ConfigurationError, DataError
from toolkit.grammars import Grammar
from toolkit.oracle import replay_oracle
from transition_systems import (
    TransitionSystem,
    ValidActions,
    is_projective,
    non_projective_arcs,
    projective_components,
    projective_order,
    projectivize,
    split_action,
)
from transition_systems.arc_standard import arc_standard_derivation

LABELS = ["a", "b", "c"]
SYSTEMS = {
    "arc_standard": {"type": "arc_standard"},
    "arc_hybrid": {"type": "arc_hybrid"},
    "arc_swap": {"type": "arc_swap"},
    "arc_swap_eager": {"type": "arc_swap", "swap_oracle": "eager"},
}
PROJECTIVE_SYSTEMS = ["arc_standard", "arc_hybrid"]


def example(heads, labels, path="data.conllu", line=1):
    return Example([f"w{i}" for i in range(1, len(heads) + 1)], DependencyTree(tuple(heads), tuple(labels)), {"path": path, "line": line})


def system(name, **options) -> TransitionSystem:
    return Grammar.from_params({**SYSTEMS[name], **options})


# "She ate the fish": She <-nsubj- ate, ate <-root- ROOT, the <-det- fish, fish <-obj- ate.
FISH = example([2, 0, 4, 2], ["nsubj", "root", "det", "obj"])
# Nivre (2009)'s non-projective example: "A hearing is scheduled on the issue today ."
# (hearing -> on and scheduled -> today cross each other and the arcs from "is").
HEARING = example([2, 3, 0, 3, 2, 7, 5, 4, 3], ["det", "sbj", "root", "vg", "nmod", "det", "pc", "adv", "p"])


def replay(grammar, ex):
    state = grammar.initial_state(ex)
    for symbol in grammar.oracle(ex):
        state = state.apply(symbol)
    return state


# ------------------------------------------------------------------ hand-checked sequences


def test_arc_standard_oracle_on_a_small_tree():
    assert system("arc_standard").oracle(FISH) == [
        "SHIFT",
        "SHIFT",
        "LEFT-ARC:nsubj",
        "SHIFT",
        "SHIFT",
        "LEFT-ARC:det",
        "RIGHT-ARC:obj",
        "RIGHT-ARC:root",
    ]


def test_arc_hybrid_oracle_on_a_small_tree():
    assert system("arc_hybrid").oracle(FISH) == [
        "SHIFT",
        "LEFT-ARC:nsubj",
        "SHIFT",
        "SHIFT",
        "LEFT-ARC:det",
        "SHIFT",
        "RIGHT-ARC:obj",
        "RIGHT-ARC:root",
    ]


def test_arc_swap_without_crossing_arcs_is_arc_standard():
    assert system("arc_swap").oracle(FISH) == system("arc_standard").oracle(FISH)


def test_arc_swap_oracles_on_a_small_non_projective_tree():
    # a <-obj- c, b is the root, c <-xcomp- b, d <-punct- b: c -> a crosses the root arc of b.
    tree = example([3, 0, 2, 2], ["obj", "root", "xcomp", "punct"])
    expected = ["SHIFT", "SHIFT", "SWAP", "SHIFT", "SHIFT", "LEFT-ARC:obj", "RIGHT-ARC:xcomp", "SHIFT", "RIGHT-ARC:punct", "RIGHT-ARC:root"]
    assert system("arc_swap").oracle(tree) == expected
    assert system("arc_swap_eager").oracle(tree) == expected
    assert replay(system("arc_swap"), tree).result() == DependencyTree((3, 0, 2, 2), ("obj", "root", "xcomp", "punct"))


def test_lazy_swap_oracle_swaps_less_than_the_eager_one():
    lazy, eager = system("arc_swap").oracle(HEARING), system("arc_swap_eager").oracle(HEARING)
    assert lazy == [
        "SHIFT",
        "SHIFT",
        "LEFT-ARC:det",
        "SHIFT",
        "SHIFT",
        "SHIFT",
        "SHIFT",
        "SHIFT",
        "LEFT-ARC:det",
        "RIGHT-ARC:pc",
        "SWAP",
        "SWAP",
        "RIGHT-ARC:nmod",
        "SHIFT",
        "LEFT-ARC:sbj",
        "SHIFT",
        "SHIFT",
        "RIGHT-ARC:adv",
        "RIGHT-ARC:vg",
        "SHIFT",
        "RIGHT-ARC:p",
        "RIGHT-ARC:root",
    ]
    assert eager.count("SWAP") == 6
    for grammar in (system("arc_swap"), system("arc_swap_eager")):
        assert replay(grammar, HEARING).result() == HEARING.target


def test_arc_swap_fit_learns_the_swap_budget_that_bounds_decoding_but_not_the_oracle():
    grammar = system("arc_swap_eager")
    assert grammar.fit([FISH, HEARING]) == {"max_swaps_per_word": 0.666667}  # HEARING: 6 swaps, 9 words
    assert grammar.swap_budget(9) == 6 and grammar.max_actions(9) == 30 and grammar.swap_budget(4) == 3
    assert replay(grammar, HEARING).result() == HEARING.target  # the budget lets the worst training tree through
    tight = system("arc_swap_eager", max_swaps_per_word=0.5)  # 5 swaps for HEARING's 9 words: one short
    state = tight.initial_state(HEARING)
    for symbol in tight.oracle(HEARING):  # the oracle starts from derivation_state, unbounded: a held-out tree keeps its loss
        if symbol == "SWAP" and state.swaps == 5:
            assert "SWAP" not in state.allowed().moves and state.allowed().parse("SWAP") is None
            break
        state = state.apply(symbol)
    else:
        raise AssertionError("the sixth swap was never refused")
    unfitted = system("arc_swap")
    assert unfitted.max_actions(9) == 18 and unfitted.initial_state(HEARING).swap_budget is None  # as archives before the budget
    assert unfitted.max_steps(HEARING) == 18 + 81 > len(unfitted.oracle(HEARING))  # a search gives its swaps room to end
    assert tight.max_steps(HEARING) == tight.max_actions(9) == 2 * (9 + 5)


def test_projective_order_and_components_of_the_hearing_example():
    heads = HEARING.target.heads
    assert projective_order(heads) == [0, 1, 2, 5, 6, 7, 3, 4, 8, 9]
    assert projective_components(heads) == (0, 2, 2, 3, 4, 5, 5, 5, 8, 9)
    assert non_projective_arcs(heads) == [(2, 5), (4, 8)]  # and scheduled -> today crosses it
    assert not is_projective(heads)
    # Lifting moves the shorter arc first, "on" from "hearing" up to "is"; "today" still crosses it and goes up too.
    assert projectivize(heads) == ((2, 3, 0, 3, 3, 7, 5, 3, 3), 2)


def test_features_list_stack_and_buffer_positions_nearest_first():
    grammar = system("arc_standard")
    state = grammar.initial_state(FISH)
    assert state.features() == {"stack": (), "buffer": (0, 1, 2, 3)}
    state = state.apply("SHIFT").apply("SHIFT")
    assert state.features() == {"stack": (1, 0), "buffer": (2, 3)}
    state = state.apply("LEFT-ARC:nsubj")
    assert state.features() == {"stack": (1,), "buffer": (2, 3)}


def test_the_allowed_answer_is_a_small_hashable_value_that_admits_any_relation():
    state = system("arc_standard").initial_state(FISH).apply("SHIFT").apply("SHIFT")
    allowed = state.allowed()
    expected = ValidActions(frozenset({"SHIFT"}), frozenset({"LEFT-ARC", "RIGHT-ARC"}), root_label="root")
    assert allowed == expected and hash(allowed) == hash(expected)
    assert allowed is ValidActions.of(moves=["SHIFT"], arcs=["LEFT-ARC", "RIGHT-ARC"], root_label="root")  # shared
    assert all(symbol in allowed for symbol in ["SHIFT", "LEFT-ARC:nsubj", "RIGHT-ARC:nmod:poss"])
    for symbol in ["SWAP", "LEFT-ARC:root", "RIGHT-ARC:root", "LEFT-ARC", "LEFT-ARC:", "REDUCE", "@@PAD@@", None]:
        assert symbol not in allowed
    # The word below the top is the root: only the root arc, and only with the root relation, once the buffer is empty.
    last = system("arc_standard").initial_state(example([0], ["root"])).apply("SHIFT")
    assert "RIGHT-ARC:root" in last.allowed() and "RIGHT-ARC:obj" not in last.allowed()
    assert last.allowed().expand(["obj", "root"]) == ["RIGHT-ARC:root"]


def test_states_are_values():
    grammar = system("arc_standard")
    start = grammar.initial_state(FISH)
    after = start.apply("SHIFT")
    assert start.stack == (0,) and after.stack == (0, 1)
    assert after == grammar.initial_state(FISH).apply("SHIFT") and hash(after) == hash(grammar.initial_state(FISH).apply("SHIFT"))


def test_apply_rejects_invalid_actions():
    state = system("arc_hybrid").initial_state(FISH)
    for symbol in ["LEFT-ARC:nsubj", "RIGHT-ARC:root", "SWAP", "JUMP"]:
        with pytest.raises(ValueError):
            state.apply(symbol)
    assert split_action("NO-ARC") == ("NO-ARC", None) and split_action("LEFT-2:nmod:poss") == ("LEFT-2", "nmod:poss")
    for malformed in ("", ":x", "LEFT-ARC:"):
        with pytest.raises(ValueError):
            split_action(malformed)


def test_result_of_an_unfinished_parse_attaches_the_rest_to_the_root():
    state = system("arc_standard").initial_state(FISH).apply("SHIFT").apply("SHIFT").apply("LEFT-ARC:nsubj")
    assert not state.is_final()
    assert state.result() == DependencyTree((2, 0, 0, 0), ("nsubj", "_", "_", "_"))


def test_empty_sentence_is_final_at_once():
    state = system("arc_swap").initial_state(example([], []))
    assert state.is_final() and state.result() == DependencyTree((), ())


# ------------------------------------------------------------------ non-projective handling and errors


def test_projective_systems_projectivize_or_skip_non_projective_trees():
    for name in PROJECTIVE_SYSTEMS:
        lifting = system(name)
        assert replay(lifting, HEARING).result().heads == (2, 3, 0, 3, 3, 7, 5, 3, 3)
        assert not lifting.skips(HEARING) and not lifting.skips(FISH)
        assert lifting.data_report([HEARING, FISH]) == {"non_projective_trees": 1, "lifted_arcs": 2}
        skipping = system(name, non_projective="skip")
        assert skipping.skips(HEARING) and not skipping.skips(FISH)
        assert skipping.data_report([HEARING, FISH]) == {"non_projective_trees": 1, "skipped_trees": 1}
        with pytest.raises(DataError, match=r"data.conllu:1: a non-projective tree"):
            skipping.oracle(HEARING)
    assert system("arc_swap").data_report([HEARING, FISH]) == {"non_projective_trees": 1, "swaps": 2, "max_swaps_per_word": 0.222222}


def test_oracle_report_counts_skips_and_scores_the_oracle_trees():
    report = replay_oracle(system("arc_standard", non_projective="skip"), [HEARING, FISH])
    assert report["skipped"] == 1 and report["exact_round_trips"] == 1 and report["skipped_trees"] == 1
    report = replay_oracle(system("arc_standard"), [HEARING, FISH])
    assert report["exact_round_trips"] == 1 and report["lifted_arcs"] == 2
    assert report["uas"] == pytest.approx(11 / 13) and report["las"] == pytest.approx(11 / 13)
    report = replay_oracle(system("arc_swap"), [HEARING, FISH])
    assert report["exact_round_trips"] == 2 and report["uas"] == report["las"] == 1.0
    assert report["swaps"] == 2 and report["max_swaps_per_word"] == 0.222222 and "swap_budget_per_word" not in report  # HEARING: 2 of 9
    eager = system("arc_swap_eager")
    eager.fit([HEARING, FISH])  # as `toolkit oracle` fits it
    assert replay_oracle(eager, [HEARING, FISH]).items() >= {"swaps": 6, "max_swaps_per_word": 0.666667, "swap_budget_per_word": 0.666667}.items()


def test_oracle_errors_name_file_and_line():
    two_roots = example([0, 0], ["root", "root"], line=17)
    with pytest.raises(DataError, match=r"data.conllu:17: 2 words attach to the root"):
        system("arc_standard").oracle(two_roots)
    assert replay(system("arc_standard", single_root=False), two_roots).result() == two_roots.target
    # Lifting word 3 over the second root attaches it to the root itself, where only the relation 'root' may go.
    lifted_to_root = example([0, 0, 1], ["root", "root", "obj"], line=9)
    with pytest.raises(DataError, match=r"data.conllu:9: the ArcStandard oracle's 'RIGHT-ARC:obj' is not allowed"):
        system("arc_standard", single_root=False).oracle(lifted_to_root)
    bad_root_label = example([0, 1], ["top", "obj"], line=3)
    with pytest.raises(DataError, match=r"data.conllu:3: word 1 has head 0 and relation 'top'"):
        system("arc_hybrid").oracle(bad_root_label)
    assert replay(system("arc_hybrid", root_label=None), bad_root_label).result() == bad_root_label.target
    with pytest.raises(DataError, match="needs a dependency tree"):
        system("arc_swap").oracle(Example(["a"], "( a )", {"path": "x.tsv", "line": 2}))
    with pytest.raises(DataError, match="2 words but the sentence has 1"):
        system("arc_swap").oracle(Example(["a"], DependencyTree((0, 1), ("root", "x"))))


def test_configuration_errors():
    with pytest.raises(ConfigurationError, match="non_projective"):
        system("arc_standard", non_projective="drop")
    with pytest.raises(ConfigurationError, match="swap_oracle"):
        system("arc_swap", swap_oracle="sometimes")
    with pytest.raises(ConfigurationError, match="non_projective"):
        system("arc_swap", non_projective="skip")  # arc-swap builds every tree: the option does not exist
    for rate in (-0.5, float("nan")):
        with pytest.raises(ConfigurationError, match="^max_swaps_per_word: must be at least 0"):
            system("arc_swap", max_swaps_per_word=rate)
    assert {"arc_standard", "arc_hybrid", "arc_swap"} <= set(Grammar.list_available())


# ------------------------------------------------------------------ properties over random trees


@st.composite
def projective_heads(draw, max_words=10):
    """A random projective single-rooted tree: each span is a head with contiguous subtrees on both sides."""
    n = draw(st.integers(0, max_words))
    heads = [0] * n

    def build(low, high, head):  # words low..high (inclusive) form one subtree under *head*
        top = draw(st.integers(low, high))
        heads[top - 1] = head
        for start, end in ((low, top - 1), (top + 1, high)):
            while start <= end:  # split the side into consecutive subtrees of *top*
                size = draw(st.integers(1, end - start + 1))
                build(start, start + size - 1, top)
                start += size

    if n:
        build(1, n, 0)
    return heads


@st.composite
def any_heads(draw, max_words=10):
    """A random single-rooted tree, projective or not: words attach in random order to attached nodes."""
    n = draw(st.integers(0, max_words))
    order = draw(st.permutations(range(1, n + 1)))
    heads = [0] * n
    for i, word in enumerate(order[1:], start=1):
        heads[word - 1] = draw(st.sampled_from(order[:i]))
    return heads


@settings(max_examples=200, deadline=None)
@given(any_heads(max_words=12))
def test_is_projective_agrees_with_the_projective_order(heads):
    """The fast crossing-arc test says what its definition says: the in-order traversal is the sentence order."""
    assert is_projective(heads) == (projective_order(heads) == list(range(len(heads) + 1)))


def labelled(heads, data):
    labels = [("root" if head == 0 else data.draw(st.sampled_from(LABELS))) for head in heads]
    return example(heads, labels)


def assert_allowed_matches_apply(state):
    """Every enumerated symbol the state allows is applied without error; every other one is rejected."""
    allowed = state.allowed()
    offered = set(allowed.expand(LABELS + ["root"]))
    for symbol in ["SHIFT", "SWAP", "REDUCE", "NO-ARC"] + [f"{kind}:{label}" for kind in ("LEFT-ARC", "RIGHT-ARC") for label in LABELS + ["root"]]:
        if symbol in offered:
            state.apply(symbol)
        else:
            with pytest.raises(ValueError):
                state.apply(symbol)
    assert offered or state.is_final()


def check_oracle_walk(grammar, ex):
    """Replay the oracle step by step: each action allowed, allowed() consistent with apply; return the result."""
    state = grammar.initial_state(ex)
    for symbol in grammar.oracle(ex):
        assert not state.is_final()
        assert symbol in state.allowed()
        assert_allowed_matches_apply(state)
        state = state.apply(symbol)
    assert state.is_final() and not set(state.allowed().expand(LABELS + ["root"]))
    return state.result()


@settings(max_examples=100, deadline=None)
@given(projective_heads(), st.data())
def test_every_system_round_trips_projective_trees(heads, data):
    assert is_projective(heads)
    ex = labelled(heads, data)
    for name in SYSTEMS:
        grammar = system(name)
        assert check_oracle_walk(grammar, ex) == grammar.gold(ex) == ex.target
        assert len(grammar.oracle(ex)) == 2 * len(heads) or name.startswith("arc_swap")
    assert system("arc_swap").oracle(ex).count("SWAP") == 0


@settings(max_examples=100, deadline=None)
@given(any_heads(), st.data())
def test_arc_swap_round_trips_every_tree(heads, data):
    ex = labelled(heads, data)
    for name in ("arc_swap", "arc_swap_eager"):
        assert check_oracle_walk(system(name), ex) == ex.target
    assert (system("arc_swap").oracle(ex).count("SWAP") == 0) == is_projective(heads)


@settings(max_examples=100, deadline=None)
@given(any_heads(), st.data())
def test_projective_systems_projectivize_or_skip_any_tree(heads, data):
    ex = labelled(heads, data)
    lifted, lifts = projectivize(heads)
    assert is_projective(lifted) and (lifts == 0) == is_projective(heads)
    for name in PROJECTIVE_SYSTEMS:
        result = check_oracle_walk(system(name), ex)
        assert result.heads == lifted and result.deprels == ex.target.deprels
        assert system(name, non_projective="skip").skips(ex) == (not is_projective(heads))
        assert system(name, non_projective="skip").data_report([ex]) == {
            "non_projective_trees": int(not is_projective(heads)),
            "skipped_trees": int(not is_projective(heads)),
        }


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 9), st.sampled_from(sorted(SYSTEMS)), st.data())
def test_random_valid_actions_always_finish_with_a_well_formed_tree(n, name, data):
    """Decoding can never reach a dead end: any walk through allowed actions ends in a tree."""
    grammar = system(name)
    state = grammar.initial_state(Example(["w"] * n))
    for _ in range(2 * n + n * n + 1):
        if state.is_final():
            break
        options = state.allowed().expand(LABELS + ["root"])
        assert options, f"dead end at {state.stack} {state.buffer}"
        state = state.apply(data.draw(st.sampled_from(options)))
    assert state.is_final()
    tree = state.result()
    assert tree.heads.count(0) == (1 if n else 0)
    assert [label == "root" for label in tree.deprels] == [head == 0 for head in tree.heads]
    assert len(projective_order(tree.heads)) == n + 1  # every word reached from the root: no cycles
    if name in PROJECTIVE_SYSTEMS:
        assert is_projective(tree.heads)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 9), st.sampled_from([0.0, 0.3, 1.0]), st.data())
def test_random_arc_swap_walks_end_within_max_actions(n, rate, data):
    """With a swap budget a parse surely ends within max_actions, so the predictor's word limit is true."""
    grammar = system("arc_swap", max_swaps_per_word=rate)
    state = grammar.initial_state(Example(["w"] * n))
    for _ in range(grammar.max_actions(n)):
        if state.is_final():
            break
        swaps = [action for action in state.allowed().expand(LABELS + ["root"]) if action == "SWAP"]
        options = swaps or state.allowed().expand(LABELS + ["root"])  # swap whenever allowed: the longest walks
        state = state.apply(data.draw(st.sampled_from(options)))
    assert state.is_final() and state.swaps <= grammar.swap_budget(n)


@st.composite
def any_forests(draw, max_words=10):
    """Random trees and forests, their relations "root" exactly on the root's dependents or anywhere."""
    n = draw(st.integers(0, max_words))
    order = draw(st.permutations(range(1, n + 1)))
    heads = [0] * n
    for i, word in enumerate(order):
        heads[word - 1] = draw(st.sampled_from([0, *order[:i]]))
    if draw(st.booleans()):
        return example(heads, [draw(st.sampled_from(["root", *LABELS])) for _ in heads])
    return example(heads, ["root" if head == 0 else draw(st.sampled_from(LABELS)) for head in heads])


def derive_or_error(derive, ex):
    try:
        return derive(ex)
    except DataError as error:
        return str(error)


@settings(max_examples=300, deadline=None)
@given(any_forests(), st.booleans(), st.sampled_from(["root", None]), st.sampled_from(["projectivize", "skip"]), st.booleans())
def test_arc_standard_list_oracle_derives_what_the_walk_derives(ex, single_root, root_label, non_projective, labeled_shift):
    """The list-based derivation gives the walk's actions and features, and fails where the walk fails, with its message."""
    grammar = system("arc_standard", single_root=single_root, root_label=root_label, non_projective=non_projective)
    if labeled_shift:
        grammar.shift_words = frozenset(["w1", "w3"])
    walked = derive_or_error(lambda ex: TransitionSystem.derive(grammar, ex), ex)
    assert derive_or_error(grammar.derive, ex) == walked
    try:
        tree = grammar.oracle_tree(ex)
    except DataError:
        return  # refused before either oracle runs
    listed = arc_standard_derivation(*tree, grammar.shift_symbols(ex.tokens), single_root, root_label)
    assert listed == walked if listed else isinstance(walked, str)  # not merely rescued by the walk


# ------------------------------------------------------------------ `toolkit oracle` on real data


@pytest.fixture
def ewt_slice(tmp_path, monkeypatch):
    """The first 100 sentences of UD English-EWT dev (5 of them non-projective), as TRAIN and TEST."""
    source = data_root() / "ud-english-ewt" / "en_ewt-ud-dev.conllu"
    if not source.exists():
        pytest.skip(f"UD English-EWT not found at {source}")
    sentences = source.read_text(encoding="utf-8").split("\n\n")[:100]
    path = tmp_path / "dev100.conllu"
    path.write_text("\n\n".join(sentences) + "\n\n", encoding="utf-8")
    monkeypatch.setenv("TRAIN", str(path))
    monkeypatch.setenv("TEST", str(path))
    return path


def test_arc_standard_list_oracle_refuses_what_the_system_forbids():
    """Cases oracle_tree refuses before they get here, should a caller skip it: two roots, a root relation below the root."""
    assert arc_standard_derivation((0, 0), ("root", "root"), (), single_root=True, root_label="root") is None
    assert arc_standard_derivation((0, 0), ("root", "root"), (), single_root=False, root_label="root").symbols == [
        "SHIFT",
        "RIGHT-ARC:root",
        "SHIFT",
        "RIGHT-ARC:root",
    ]
    assert arc_standard_derivation((2, 0), ("root", "root"), (), single_root=True, root_label="root") is None
    assert arc_standard_derivation((2, 0), ("root", "root"), (), single_root=True, root_label=None).symbols[2] == "LEFT-ARC:root"
    assert arc_standard_derivation((0, 1), ("root", "root"), (), single_root=True, root_label="root") is None


def test_arc_standard_list_oracle_on_ewt(ewt_slice):
    """Every tree of the slice, the five non-projective ones included, derives as the walk derives it, labeled SHIFT too."""
    examples = DatasetReader.by_name("conllu")().read(ewt_slice)
    for grammar in (system("arc_standard"), system("arc_standard", shift_words=["the", ",", "."])):
        derivations = [grammar.derive(ex) for ex in examples]
        assert derivations == [TransitionSystem.derive(grammar, ex) for ex in examples]
        assert any("SHIFT:the" in derivation.symbols for derivation in derivations) == bool(grammar.shift_words)


def toolkit_oracle(monkeypatch, capsys, *args):
    monkeypatch.setattr(sys, "argv", ["toolkit", "oracle", str(FIXTURES / "tiny_dependency.jsonnet"), *map(str, args)])
    try:
        main()
    except SystemExit as exit:
        assert not exit.code, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def test_toolkit_oracle_on_ewt(ewt_slice, monkeypatch, capsys):
    report = toolkit_oracle(monkeypatch, capsys, ewt_slice, "-o", '{"grammar": {"type": "arc_standard", "non_projective": "skip"}}')
    assert report["examples"] == 100 and report["non_projective_trees"] == 5 and report["skipped"] == report["skipped_trees"] == 5
    assert report["exact_round_trips"] == 95 and report["oracle_errors"] == 0 and report["uas"] == report["las"] == 1.0
    report = toolkit_oracle(monkeypatch, capsys, ewt_slice)  # the fixture's arc_standard, projectivizing
    assert report["exact_round_trips"] == 95 and report["lifted_arcs"] >= 5 and report["skipped"] == 0
    assert 0.99 < report["uas"] < 1.0 and report["las"] == report["uas"]
    for swap_oracle in ("lazy", "eager"):
        report = toolkit_oracle(monkeypatch, capsys, ewt_slice, "-o", json.dumps({"grammar": {"type": "arc_swap", "swap_oracle": swap_oracle}}))
        assert report["exact_round_trips"] == 100 and report["round_trip_accuracy"] == 1.0 and report["uas"] == report["las"] == 1.0
        assert report["non_projective_trees"] == 5 and report["oracle_errors"] == 0


def test_toolkit_oracle_names_file_and_line_of_trees_it_cannot_derive(ewt_slice, monkeypatch, capsys):
    report = toolkit_oracle(monkeypatch, capsys, ewt_slice, "-o", '{"grammar": {"type": "arc_hybrid", "root_label": "top"}}')
    assert report["oracle_errors"] == 100 and report["exact_round_trips"] == 0
    assert report["first_errors"][0].startswith(f"{ewt_slice}:1: word ")
