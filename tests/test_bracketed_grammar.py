"""The bracketed grammar: every walk through its allowed symbols ends in one balanced s-expression."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.data.example import Example
from toolkit.data.vocabulary import Vocabulary
from toolkit.errors import ConfigurationError
from toolkit.grammars import AllExcept, BracketedGrammar
from toolkit.grammars.bracketed import Arities
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


# ------------------------------------------------------------------ learned arities


def sexpr(depth: int) -> st.SearchStrategy:
    """Operator-first s-expressions over a few operators (each with the arities it is drawn with) and leaves."""
    leaf = st.sampled_from(["$0", "s0", "ci0", "1200"])
    return st.recursive(
        leaf, lambda inner: st.tuples(st.sampled_from(["and", "state:t", "flight", "lambda"]), st.lists(inner, min_size=1, max_size=4)), max_leaves=depth
    )


def tokens_of(tree) -> list[str]:
    if isinstance(tree, str):
        return [tree]
    head, arguments = tree
    return ["(", head, *(token for argument in arguments for token in tokens_of(argument)), ")"]


def fitted(targets: list[str], max_length: int = 150) -> BracketedGrammar:
    grammar = BracketedGrammar(max_length=max_length, restrict_arities=True)
    config = grammar.fit([Example(["q"], target) for target in targets])
    assert set(config) == {"arities"}
    return grammar


def allowed_walk(state, picks, alphabet):
    for pick in picks:
        if state.is_final():
            break
        options = [symbol for symbol in alphabet if symbol in state.allowed()]
        assert options, f"stuck after {state.tokens}"
        state = state.apply(options[pick % len(options)])
    return state


@settings(max_examples=200, deadline=None)
@given(
    trees=st.lists(sexpr(12), min_size=1, max_size=6),
    max_length=st.integers(min_value=1, max_value=40),
    picks=st.lists(st.integers(min_value=0, max_value=1000), min_size=41, max_size=41),
)
def test_arities_admit_every_training_target_and_every_walk_keeps_to_them(trees, max_length, picks):
    """Each training target is a path through the fitted states (no gold symbol refused), and any walk
    through their allowed symbols ends, within *max_length*, in an expression whose every operator takes
    an argument count training showed, and whose every argument is an atom that stood alone in training.
    """
    targets = [" ".join(tokens_of(tree)) for tree in trees]
    grammar = fitted(targets)
    for target in targets:
        state = grammar.initial_state(Example(["q"]))
        for symbol in target.split() + [Vocabulary.EOS]:
            assert symbol in state.allowed(), (target, state.tokens, symbol)
            state = state.apply(symbol)
        assert state.is_final() and state.result() == target
    grammar = fitted(targets, max_length=max_length)
    alphabet = sorted({token for target in targets for token in target.split()}) + [Vocabulary.EOS]
    state = allowed_walk(grammar.initial_state(Example(["q"])), picks, alphabet)
    assert state.is_final() and 1 <= len(state.tokens) <= max_length, state.tokens
    for atom, counts in Arities.of([state.tokens], "(", ")").table.items():  # the walk's arities, counted as fit does
        assert counts <= grammar.arities.table[atom], (atom, counts, state.tokens)


def test_hand_checked_arities():
    grammar = fitted(["( lambda $0 e ( flight $0 ) )", "( lambda $0 e ( and ( flight $0 ) ( from $0 ci0 ) ) )", "ci0"])
    assert grammar.arities.to_config() == {"$0": [0], "and": [2], "ci0": [0], "e": [0], "flight": [1], "from": [2], "lambda": [3]}
    state = grammar.initial_state(Example(["q"]))
    assert state.allowed() == frozenset({"(", "$0", "ci0", "e"})  # an atom alone, or an operator's brackets
    state = state.apply("(")
    assert state.allowed() == frozenset({"and", "flight", "from", "lambda"})  # operators only
    state = state.apply("flight")
    assert ")" not in state.allowed() and "(" in state.allowed() and "$0" in state.allowed()
    state = state.apply("$0")
    assert state.allowed() == frozenset({")"})  # flight took one argument, always
    state = state.apply(")")
    assert state.allowed() == (Vocabulary.EOS,)


def test_arities_plan_the_arguments_into_max_length():
    """`( lambda $0 e` with 2 symbols left: lambda's third argument must be an atom, then `)`; a bracket
    (`(`, an operator of at least one argument, `)`, then lambda's `)`) fits only in 9.
    """
    grammar = fitted(["( lambda $0 e ( flight $0 ) )", "( lambda $0 e $0 )"], max_length=6)
    state = grammar.initial_state(Example(["q"]))
    for symbol in "( lambda $0 e".split():
        state = state.apply(symbol)
    assert state.allowed() == frozenset({"$0", "e"})
    for max_length, opens in [(8, False), (9, True)]:  # `( flight $0 ) )` after the 4 symbols: 9 in all
        grammar = fitted(["( lambda $0 e ( flight $0 ) )", "( lambda $0 e $0 )", "( and ( flight $0 ) ( flight $0 ) )"], max_length=max_length)
        state = grammar.initial_state(Example(["q"]))
        for symbol in "( lambda $0 e".split():
            state = state.apply(symbol)
        assert ("(" in state.allowed()) is opens
    assert state.apply("(").allowed() == frozenset({"flight"})  # and (2 arguments) would need 11


def test_a_held_out_target_with_an_unseen_arity_still_derives():
    """Validation targets are derived for their loss: the learned arities must not refuse them."""
    grammar = fitted(["( flight $0 )"])
    derivation = grammar.derive(Example(["q"], "( flight $0 $0 )"))
    assert derivation.symbols == ["(", "flight", "$0", "$0", ")", Vocabulary.EOS]
    assert "$0" not in grammar.initial_state(Example(["q"])).apply("(").apply("flight").apply("$0").allowed()


def test_an_archive_rebuilds_the_fitted_arities_without_data():
    grammar = fitted(["( flight $0 )", "( and ( flight $0 ) ( flight s0 ) )"])
    rebuilt = BracketedGrammar(restrict_arities=True, arities=grammar.arities.to_config())
    assert rebuilt.fit([Example(["q"], "( other a b c )")]) == {}  # given, the table wins over fitting
    assert rebuilt.arities.table == grammar.arities.table


def test_copied_atoms_only_where_the_question_has_them():
    """`ci0` was copied from the question by every target that has it; `flight` was not (its question
    said "flights"), nor `e`, which no question has: only the copied atom is tied to its question.
    """
    pairs = [
        ("flights from ci0", "( lambda $0 e ( and ( flight $0 ) ( from $0 ci0 ) ) )"),
        ("ci0 flight", "( lambda $0 e ( and ( flight $0 ) ( from $0 ci0 ) ) )"),
        ("to ci1", "( lambda $0 e ( to $0 ci1 ) )"),  # once only: too rare to tell
    ]
    grammar = BracketedGrammar(restrict_arities=True, copy_atoms=True)
    assert grammar.fit([Example(question.split(), target) for question, target in pairs])["copied"] == ["ci0"]

    def allowed_in_from(question: str):
        state = grammar.initial_state(Example(question.split()))
        for symbol in "( lambda $0 e ( from $0".split():
            state = state.apply(symbol)
        return state.allowed()

    assert "ci0" in allowed_in_from("flights from ci0 please") and "ci1" in allowed_in_from("flights from ci0 please")
    assert "ci0" not in allowed_in_from("flights from ci1") and {"$0", "e", "ci1"} <= allowed_in_from("flights from ci1")
    with pytest.raises(ConfigurationError, match="^copy_atoms: copy_atoms needs restrict_arities"):
        BracketedGrammar(copy_atoms=True)
    rebuilt = BracketedGrammar(restrict_arities=True, arities=grammar.arities.to_config(), copy_atoms=True, copied=["ci0"])
    assert rebuilt.fit([]) == {} and "ci0" not in rebuilt.initial_state(Example(["flights"])).allowed()


def test_a_trained_archive_decodes_with_the_constraints_it_learned(geo_slice, tmp_path):
    """`toolkit train` with the learned constraints on: the tables go into config.json, and the archive,
    loaded without the training data, decodes the questions within them.
    """
    import json

    from tests.conftest import FIXTURES, REPO, train_archive
    from toolkit.archive import load_archive
    from toolkit.evaluation import predict

    override = json.dumps({"grammar": {"type": "bracketed", "max_length": 60}, "trainer.num_epochs": 2})
    archive = train_archive(
        FIXTURES / "tiny_seq2seq.jsonnet",
        tmp_path / "run",
        geo_slice["train"],
        geo_slice["test"],
        "-o",
        override,
        "-o",
        str(REPO / "jsonnet_configs/overrides/learned_constraints.jsonnet"),
    )
    grammar_config = json.loads((tmp_path / "run" / "config.json").read_text())["grammar"]
    assert grammar_config["restrict_arities"] and grammar_config["arities"]["state:t"] == [1] and "s0" in grammar_config["copied"]
    loaded = load_archive(archive)
    grammar = loaded.model.grammar
    assert grammar.arities.to_config() == grammar_config["arities"] and grammar.copied == frozenset(grammar_config["copied"])
    examples = loaded.dataset_reader.read(geo_slice["test"])
    for example, prediction in zip(examples, predict(loaded.model, examples)):
        parse_sexpr(prediction)
        for atom, counts in Arities.of([prediction.split()], "(", ")").table.items():
            assert counts <= grammar.arities.table[atom], (atom, prediction)
            assert atom not in grammar.copied or atom in example.tokens, (atom, example.tokens)
