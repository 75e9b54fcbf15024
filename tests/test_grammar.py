import pytest

from toolkit.data.example import Example
from toolkit.data.vocabulary import Vocabulary
from toolkit.errors import DataError
from toolkit.grammars import Grammar, SequenceGrammar, State


def test_sequence_oracle_ends_with_eos_and_derives():
    grammar = SequenceGrammar()
    example = Example(["what", "state"], "( state:t $0 )")
    derivation = grammar.derive(example)
    assert derivation.symbols == ["(", "state:t", "$0", ")", Vocabulary.EOS]
    assert len(derivation.features) == len(derivation.symbols)


def test_sequence_state_is_a_value_and_result_drops_eos():
    start = SequenceGrammar().initial_state(Example(["a"]))
    after = start.apply("x").apply("y")
    assert start.result() == "" and not start.is_final()
    done = after.apply(Vocabulary.EOS)
    assert done.is_final() and done.result() == "x y" and not after.is_final()
    assert done.allowed() == ()


def test_sequence_state_forces_eos_at_max_length():
    state = SequenceGrammar(max_length=2).initial_state(Example(["a"]))
    assert state.allowed() is None
    state = state.apply("x").apply("y")
    assert list(state.allowed()) == [Vocabulary.EOS]


def test_default_grammar_is_sequence():
    assert isinstance(Grammar.from_params({}), SequenceGrammar)


class _EvenOnly(State):
    """A state that refuses odd-length tokens; used to check that derive validates the oracle."""

    def __init__(self, n=0):
        self.n = n

    def allowed(self):
        return {"aa", "bbbb", Vocabulary.EOS} if self.n < 3 else {Vocabulary.EOS}

    def apply(self, symbol):
        return _EvenOnly(99 if symbol == Vocabulary.EOS else self.n + 1)

    def is_final(self):
        return self.n == 99

    def result(self):
        return self.n


class _EvenGrammar(SequenceGrammar):
    def initial_state(self, example):
        return _EvenOnly()


def test_derive_reports_an_illegal_gold_symbol_with_file_and_line():
    example = Example(["q"], "aa bbb", meta={"path": "data/train.tsv", "line": 12})
    with pytest.raises(DataError, match=r"data/train.tsv:12: gold symbol 'bbb' at step 1"):
        _EvenGrammar().derive(example)
