import doctest

import penman
import pytest

import toolkit.metrics.logic_match as logic_match_module
from toolkit.data.dependency_tree import DependencyTree
from toolkit.data.example import Example
from toolkit.errors import DataError
from toolkit.metrics import ExactMatch, LogicMatch, Metric, canonical, parse_sexpr
from toolkit.metrics.metric import check_golds


def test_doctests():
    assert doctest.testmod(logic_match_module).failed == 0


def test_registered():
    assert Metric.by_name("exact_match") is ExactMatch
    assert Metric.by_name("logic_match") is LogicMatch
    metric = Metric.from_params({"type": "logic_match", "commutative": ["and"]})
    assert isinstance(metric, LogicMatch) and metric.commutative == {"and"}


class TestExactMatch:
    def test_whitespace_and_token_lists(self):
        metric = ExactMatch()
        metric(["a  b ", ["a", "b"], "a c"], ["a b", "a b", ["a", "b"]])
        assert metric.get_metric() == {"exact_match": pytest.approx(2 / 3)}

    def test_reset_and_empty(self):
        metric = ExactMatch()
        assert metric.get_metric() == {"exact_match": 0.0}
        metric(["x"], ["x"])
        assert metric.get_metric(reset=True) == {"exact_match": 1.0}
        assert metric.state() == {"correct": 0.0, "total": 0.0}

    def test_states_sum_across_processes(self):
        first, second = ExactMatch(), ExactMatch()
        first(["a", "b"], ["a", "x"])
        second(["c"], ["c"])
        merged = ExactMatch()
        merged.load_state({k: first.state()[k] + second.state()[k] for k in first.state()})
        assert merged.get_metric() == {"exact_match": pytest.approx(2 / 3)}
        with pytest.raises(ValueError, match="keys"):
            merged.load_state({"correct": 1})

    def test_length_mismatch(self):
        with pytest.raises(ValueError, match="2 predictions but 1 golds"):
            ExactMatch()(["a", "b"], ["a"])


class TestParse:
    def test_nested(self):
        assert parse_sexpr("( lambda $0 e ( and ( state:t $0 ) ( next_to:t $0 s0 ) ) )") == (
            "lambda",
            "$0",
            "e",
            ("and", ("state:t", "$0"), ("next_to:t", "$0", "s0")),
        )

    def test_atom_and_token_list(self):
        assert parse_sexpr("s0") == "s0"
        assert parse_sexpr(["(", "a", "b", ")"]) == ("a", "b")

    @pytest.mark.parametrize("text", ["", "( a", "a )", ") (", "( a ) ( b )"])
    def test_malformed(self, text):
        with pytest.raises(ValueError):
            parse_sexpr(text)

    def test_canonical_without_commutative_reproduces_input(self):
        text = "( lambda $0 e ( and ( b $0 ) ( a $0 ) ) )"
        assert canonical(parse_sexpr(text), []) == text


class TestLogicMatch:
    def score(self, prediction, gold, **kwargs):
        metric = LogicMatch(**kwargs)
        metric([prediction], [gold])
        return metric.get_metric()["logic_match"]

    def test_and_is_commutative(self):
        assert self.score("( and ( a $0 ) ( b $0 ) )", "( and ( b $0 ) ( a $0 ) )") == 1.0

    def test_operator_matters(self):
        assert self.score("( or ( b $0 ) ( a $0 ) )", "( and ( b $0 ) ( a $0 ) )") == 0.0

    def test_nested_and_or(self):
        gold = "( lambda $0 e ( and ( x $0 ) ( or ( p $0 ) ( q $0 ) ) ) )"
        assert self.score("( lambda $0 e ( and ( or ( q $0 ) ( p $0 ) ) ( x $0 ) ) )", gold) == 1.0
        assert self.score("( lambda $0 e ( and ( or ( q $0 ) ( x $0 ) ) ( p $0 ) ) )", gold) == 0.0

    def test_non_commutative_order_matters(self):
        assert self.score("( next_to:t s0 $0 )", "( next_to:t $0 s0 )") == 0.0
        assert self.score("( and ( a ) ( b ) )", "( and ( b ) ( a ) )", commutative=[]) == 0.0

    def test_duplicates_are_a_multiset(self):
        assert self.score("( and ( a ) ( a ) ( b ) )", "( and ( a ) ( b ) ( b ) )") == 0.0
        assert self.score("( and ( a ) ( b ) )", "( and ( a ) ( b ) ( b ) )") == 0.0
        assert self.score("( and ( b ) ( a ) ( b ) )", "( and ( a ) ( b ) ( b ) )") == 1.0

    def test_unbalanced_prediction_is_a_miss(self):
        metric = LogicMatch()
        metric(["( and ( a $0 ) ( b $0 )", "( a ) )", "( a )"], ["( and ( a $0 ) ( b $0 ) )", "( a )", "( a )"])
        assert metric.get_metric() == {"logic_match": pytest.approx(1 / 3)}

    def test_very_deep_prediction_is_a_miss(self):
        assert self.score("( " * 5000 + "a" + " )" * 5000, "( a )") == 0.0

    def test_malformed_gold_is_a_data_error(self):
        with pytest.raises(DataError, match="not well-formed"):
            LogicMatch()(["( a )"], ["( a"])


def test_token_accuracy_counts_positions_over_the_longer_side():
    from toolkit.metrics import TokenAccuracy

    metric = TokenAccuracy()
    metric(["( a b )", "( a"], ["( a c )", "( a b )"])
    # 3 of 4 in the first pair, 2 of 4 in the second (the prediction is two tokens short).
    assert metric.get_metric()["token_accuracy"] == pytest.approx(5 / 8)


# ------------------------------------------------------------------ a metric given golds it cannot score

GOLDS = {
    "tree": DependencyTree((2, 0), ("nsubj", "root"), upos=("PRON", "VERB")),
    "graph": penman.decode("(w / want-01 :ARG0 (b / boy))"),
    "penman text": "(w / want-01 :ARG0 (b / boy))",
    "logical form": "( lambda $0 e ( state:t $0 ) )",
    "tokens": "( lambda $0 e ( state:t $0 ) )".split(),
}
SCORES = {  # the golds each metric can score; every other kind is refused before decoding
    "exact_match": {"penman text", "logical form", "tokens"},
    "logic_match": {"penman text", "logical form", "tokens"},
    "bleu": {"penman text", "logical form", "tokens"},
    "token_accuracy": {"penman text", "logical form", "tokens"},
    "smatch": {"graph", "penman text"},
    "exact_smatch": {"graph", "penman text"},
    "attachment_scores": {"tree"},
    "tag_accuracy": {"tree", "penman text", "logical form", "tokens"},  # a string or list of tags is its own tags
}


@pytest.mark.parametrize("name", sorted(SCORES))
@pytest.mark.parametrize("kind", sorted(GOLDS))
def test_a_metric_refuses_golds_it_cannot_score_in_one_line(name, kind):
    """Smatch gave 1.0 on dependency trees and logical forms (both sides unreadable, so equal); the text metrics raised TypeError."""
    metric = Metric.by_name(name)()
    if kind in SCORES[name]:
        check_golds([metric], [Example([], GOLDS[kind])])
        metric([GOLDS[kind]], [GOLDS[kind]])  # and it scores a gold against itself
        assert max(metric.get_metric().values()) > 0
    else:
        with pytest.raises(DataError) as error:
            check_golds([metric], [Example([], GOLDS[kind])])
        message = str(error.value)
        assert "\n" not in message and any(what in message for what in ("AMR graphs", "compares text", "dependency trees", "gold tags"))


def test_tag_accuracy_refuses_predictions_without_tags():
    metric = Metric.by_name("tag_accuracy")()
    with pytest.raises(DataError, match=r"needs predicted tags \('upos'\); this model predicts DependencyTree without them"):
        metric([DependencyTree((0,), ("root",))], [DependencyTree((0,), ("root",), upos=("VERB",))])
