"""Pseudo-projective parsing (Nivre & Nilsson, 2005): lifting with the original head's relation, and lowering back."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import data_root
from tests.test_transition_systems import FISH, HEARING, replay, system
from toolkit.data.dataset_readers import DatasetReader
from toolkit.oracle import replay_oracle
from transition_systems.projectivity import is_projective
from transition_systems.pseudo_projective import lift, lower


def test_the_hearing_example_lifts_with_its_heads_relations_and_lowers_back():
    heads, labels = HEARING.target.heads, HEARING.target.deprels
    lifted_heads, lifted_labels = lift(heads, labels)
    assert lifted_heads == (2, 3, 0, 3, 3, 7, 5, 3, 3)  # "on" and "today" lifted to "is", as projectivize does
    assert lifted_labels == ("det", "sbj", "root", "vg", "nmod^sbj", "det", "pc", "adv^vg", "p")
    assert lower(lifted_heads, lifted_labels) == (heads, labels)


def test_a_rank_says_which_of_several_same_relation_nodes_was_the_head():
    """Word 4's head (word 1, 'y') is the second 'y' below the root word once word 1 is lowered under word 3."""
    heads, labels = (3, 0, 2, 1), ("y", "root", "y", "x")
    assert lift(heads, labels) == ((2, 0, 2, 2), ("y^y", "root", "y", "x^y#2"))
    assert lower(*lift(heads, labels)) == (heads, labels)
    assert lower((2, 0, 2, 2), ("y^y", "root", "y", "x^y")) == ((3, 0, 2, 3), ("y", "root", "y", "x"))  # without the rank: the paper's loss


def test_lowering_a_predicted_tree_never_fails():
    assert lower((0, 1, 1), ("root", "x^nothing", "y^x#9")) == ((0, 1, 2), ("root", "x", "y"))  # no candidate: stays; rank too high: the last
    assert lower((0, 1), ("root", "x^y#0")) == ((0, 1), ("root", "x"))  # a nonsense rank reads as 1
    assert lower((0, 0, 0), ("root", "_", "_")) == ((0, 0, 0), ("root", "_", "_"))  # an unfinished parse, untouched


def test_relations_that_use_the_encoding_characters_are_refused():
    with pytest.raises(ValueError, match=r"relation 'a\^b' contains"):
        lift((0, 1), ("root", "a^b"))


@st.composite
def trees(draw):
    """A random dependency tree (one root) with relations from a small set, so that ranks are needed."""
    n = draw(st.integers(2, 14))
    order = draw(st.permutations(range(1, n + 1)))
    heads = [0] * n
    for position, word in enumerate(order[1:], start=1):
        heads[word - 1] = order[draw(st.integers(0, position - 1))]
    labels = ["root" if head == 0 else draw(st.sampled_from("abc")) for head in heads]
    return tuple(heads), tuple(labels)


@settings(max_examples=400, deadline=None)
@given(trees())
def test_every_tree_lifts_to_a_projective_one_that_lowers_back(tree):
    heads, labels = tree
    lifted_heads, lifted_labels = lift(heads, labels)
    assert is_projective(lifted_heads)
    assert lower(lifted_heads, lifted_labels) == (heads, labels)
    assert (lifted_heads == heads) == is_projective(heads)


def test_projective_systems_parse_non_projective_trees_pseudo_projectively():
    for name in ("arc_standard", "arc_hybrid"):
        grammar = system(name, non_projective="pseudo_projective")
        assert "RIGHT-ARC:nmod^sbj" in grammar.oracle(HEARING) or "LEFT-ARC:nmod^sbj" in grammar.oracle(HEARING)
        assert replay(grammar, HEARING).result() == HEARING.target.without_upos()  # the crossing arcs come back
        report = replay_oracle(grammar, [HEARING, FISH])
        assert report["exact_round_trips"] == 2 and report["uas"] == report["las"] == 1.0 and report["lifted_arcs"] == 2


def test_every_ewt_training_tree_round_trips():
    path = data_root() / "ud-english-ewt" / "en_ewt-ud-train.conllu"
    if not path.exists():
        pytest.skip(f"UD English EWT not found at {path}")
    trees = [example.target for example in DatasetReader.from_params({"type": "conllu"}).read(path)]
    non_projective = [tree for tree in trees if not is_projective(tree.heads)]
    assert len(trees) == 12544 and len(non_projective) == 288
    for tree in non_projective:
        assert lower(*lift(tree.heads, tree.deprels)) == (tree.heads, tree.deprels), json.dumps(tree.heads)
