"""The bracketed grammar: every walk through its allowed symbols ends in one balanced s-expression."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.data.example import Example
from toolkit.data.vocabulary import Vocabulary
from toolkit.grammars import AllExcept, BracketedGrammar
from toolkit.metrics import parse_sexpr

ALPHABET = ["(", ")", "and", "state:t", "$0", "s0", Vocabulary.EOS]


def choices(allowed):
    return [symbol for symbol in ALPHABET if symbol in allowed] if allowed is not None else ALPHABET


@settings(max_examples=300, deadline=None)
@given(max_length=st.integers(min_value=1, max_value=12), picks=st.lists(st.integers(min_value=0, max_value=1000), min_size=13, max_size=13))
def test_every_allowed_walk_is_a_balanced_expression(max_length, picks):
    state = BracketedGrammar(max_length=max_length).initial_state(Example(["q"]))
    for pick in picks:
        if state.is_final():
            break
        options = choices(state.allowed())
        assert options, f"stuck after {state.tokens}"
        state = state.apply(options[pick % len(options)])
    assert state.is_final(), state.tokens
    assert 1 <= len(state.tokens) <= max_length
    tree = parse_sexpr(state.result())  # raises on unbalanced brackets
    if isinstance(tree, tuple):
        assert isinstance(tree[0], str) and tree[0] not in "()"  # head first


def test_hand_checked_steps():
    grammar = BracketedGrammar(max_length=6)
    state = grammar.initial_state(Example(["q"]))
    assert state.allowed() == AllExcept(frozenset({")", Vocabulary.EOS}))
    state = state.apply("(")
    assert "(" not in state.allowed() and ")" not in state.allowed() and "state:t" in state.allowed()
    state = state.apply("state:t").apply("(").apply("a")  # 4 used, depth 2: both remaining slots must close
    assert list(state.allowed()) == [")"]
    state = state.apply(")").apply(")")
    assert list(state.allowed()) == [Vocabulary.EOS]
    assert state.apply(Vocabulary.EOS).result() == "( state:t ( a ) )"


def test_single_atom_is_a_whole_expression():
    state = BracketedGrammar().initial_state(Example(["q"])).apply("s0")
    assert list(state.allowed()) == [Vocabulary.EOS]


@pytest.mark.parametrize("name", ["geo/train.txt", "atis/dev.tsv"])
def test_oracle_derives_every_real_logical_form(name):
    from tests.conftest import data_root
    from toolkit.data.dataset_readers import TsvReader

    path = data_root() / name
    if not path.exists():
        pytest.skip(f"{path} not found")
    grammar = BracketedGrammar(max_length=150)
    for example in TsvReader().read(path):
        assert grammar.derive(example).symbols[-1] == Vocabulary.EOS
