"""Executing GeoQuery Prolog forms over Geobase with SWI-Prolog, and the denotation_accuracy metric.

Skipped where ``swipl`` is missing, except with ``REQUIRE_SWIPL=1``, which ``.ci/run`` sets once it
has installed it (``apt-get install swi-prolog-nox``).
"""

import os
import signal
import time
from pathlib import Path

import pytest

from tests.conftest import require_swipl
from toolkit.errors import ConfigurationError, DataError
from toolkit.execution import Denotation, Executor, GeoQueryProlog, canonical_answer, prolog_query
from toolkit.execution.prolog import MISSING_SWIPL
from toolkit.metrics import Metric
from toolkit.params import data_root

require_swipl()

GEO = Path(data_root()) / "geo-raw"
if not (GEO / "geoquery.pl").exists():
    pytest.skip(f"Geobase not found at {GEO}", allow_module_level=True)

CAPITAL_OF_TEXAS = "_answer ( A , ( _capital ( A ) , _loc ( A , B ) , _const ( B , _stateid ( texas ) ) ) )"
BORDERING_TEXAS = "_answer ( A , ( _state ( A ) , _next_to ( A , B ) , _const ( B , _stateid ( texas ) ) ) )"
# 51^6 conjunctions before the final fail: it never ends in practice, and uses only allowed predicates.
ENDLESS = "answer(A,(state(A),state(B),state(C),state(D),state(E),state(F),fail))"


@pytest.fixture(scope="module")
def executor():
    with GeoQueryProlog(str(GEO), workers=1, timeout_seconds=1.0) as executor:
        yield executor


def test_the_surface_form_loses_its_underscores_but_keeps_variables():
    assert prolog_query(CAPITAL_OF_TEXAS) == "answer( A , ( capital( A ) , loc( A , B ) , const( B , stateid( texas ) ) ) )"
    assert prolog_query("_answer ( A , _population ( B , A ) , _const ( B , _cityid ( austin , _ ) ) )").endswith("cityid( austin , _ ) ) )")
    assert prolog_query(["_const", "(", "B", ",", "_X", ")"]) == "const( B , _X )"  # tokens; `_X` is a variable
    assert prolog_query("_cityid ( ' salt _lake _city ' , _ )") == "cityid( 'salt lake city' , _ )"
    assert prolog_query("\\+ ( _loc ( A , B ) )") == "\\+ ( loc( A , B ) )"  # `\+ (` keeps its space: `\+(a, b)` is another term
    fixed = "answer(A,(loc(B,A),const(B,cityid('san antonio',_))))"
    assert prolog_query(fixed) == fixed


def test_numbers_are_canonical():
    assert canonical_answer("14229000.0") == canonical_answer("14229000") == "14229000"
    assert canonical_answer("53.33068472720000001") == "53.3306847272"
    assert Denotation.of(["b", "a", "a"]) == Denotation(("a", "b"))
    assert Denotation.error("one reason") == Denotation.error("another")  # the detail does not count


def test_hand_checked_answers(executor):
    population = "_answer ( A , ( _population ( B , A ) , _const ( B , _stateid ( texas ) ) ) )"
    count = "answer(A,count(B,(state(B),next_to(B,C),const(C,stateid(iowa))),A))"
    alaska = "answer(A,(state(A),next_to(A,B),const(B,stateid(alaska))))"
    found = executor.execute([CAPITAL_OF_TEXAS, BORDERING_TEXAS, population, count, alaska])
    assert found == [
        Denotation(("austin",)),
        Denotation(("arkansas", "louisiana", "new mexico", "oklahoma")),
        Denotation(("14229000",)),  # Geobase has 14.229e+6, a float
        Denotation(("6",)),  # minnesota, wisconsin, illinois, missouri, nebraska, south dakota
        Denotation(()),  # an empty answer is an answer
    ]
    assert all(denotation.ok for denotation in found)


def test_an_endless_query_times_out_and_the_worker_goes_on(executor):
    start = time.monotonic()
    (denotation,) = executor.execute([ENDLESS])
    assert denotation.failure == "timeout"
    assert time.monotonic() - start < 1.0 + 2.0
    assert executor.execute([CAPITAL_OF_TEXAS + " "]) == [Denotation(("austin",))]


def test_a_worker_that_stops_answering_is_replaced():
    with GeoQueryProlog(str(GEO), timeout_seconds=0.5, cache_size=0) as executor:
        assert executor.execute([CAPITAL_OF_TEXAS])[0].answers == ("austin",)
        process = executor._started[0].process
        os.kill(process.pid, signal.SIGSTOP)  # hung beyond the worker's own time limit
        (denotation,) = executor.execute([BORDERING_TEXAS])
        assert denotation.failure == "timeout" and executor.restarts == 1
        assert process.poll() is not None  # killed and reaped
        assert executor.execute([CAPITAL_OF_TEXAS])[0].answers == ("austin",)
        last = executor._started[0].process
    assert last.poll() is not None  # closed with the context


@pytest.mark.parametrize(
    "form",
    [
        "answer(A,(capital(A),loc(A,B)",  # unbalanced
        "answer(A,(capital(A),loc(A,B))))",  # one bracket too many
        "answer(A,(capitol(A),loc(A,B)))",  # an unknown predicate
        "answer(A,(state(A),B))",  # an unbound goal
        "answer(A,(state(A),halt))",  # not allowed: it would end the worker
        "answer(A,(state(A),shell('true')))",
        "state(A)",  # not an answer(Var, Goal) form
        "answer ( A . B",
        "'",
        "",
    ],
)
def test_malformed_forms_are_errors(executor, form):
    (denotation,) = executor.execute([form])
    assert denotation.failure == "error", denotation
    assert executor.execute([CAPITAL_OF_TEXAS]) == [Denotation(("austin",))]  # and the worker is still in step


def test_answers_are_memoized(executor):
    executor.execute([BORDERING_TEXAS])
    started = executor._started[0]
    started.process.stdin.close()  # a query that reached the worker now would find it dead
    assert executor.execute([BORDERING_TEXAS])[0].answers[0] == "arkansas"
    executor.close()


def test_several_workers_answer_a_batch_in_order():
    forms = [f"answer(A,(capital(A),loc(A,B),const(B,stateid({state}))))" for state in ("texas", "ohio", "iowa", "utah")]
    with GeoQueryProlog(str(GEO), workers=2, timeout_seconds=1.0) as executor:
        assert [denotation.answers for denotation in executor.execute(forms + forms[:1])] == [
            ("austin",),
            ("columbus",),
            ("des moines",),
            ("salt lake city",),
            ("austin",),
        ]
        start = time.monotonic()
        slow = executor.execute([ENDLESS, ENDLESS.replace("fail", "false")])  # two forms, one second each
        assert [denotation.failure for denotation in slow] == ["timeout", "timeout"]
        assert time.monotonic() - start < 1.9  # side by side
        assert len(executor._started) == 2


def test_a_missing_swipl_is_one_line(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ConfigurationError) as error:
        GeoQueryProlog(str(GEO))
    assert str(error.value) == MISSING_SWIPL


def test_a_missing_database_is_one_line(tmp_path):
    with pytest.raises(ConfigurationError, match="no geobase.pl and geoquery.pl in"):
        GeoQueryProlog(str(tmp_path))


def test_the_metric_scores_right_and_wrong_predictions():
    metric = Metric.from_params({"type": "denotation_accuracy", "executor": {"type": "geoquery_prolog", "database": str(GEO), "timeout_seconds": 1.0}})
    assert isinstance(metric.executor, Executor)
    golds = [
        CAPITAL_OF_TEXAS,
        BORDERING_TEXAS.split(),  # tokens
        "_answer ( A , _sum ( C , _state ( C ) , _area ( C ) , A ) )",  # a train gold with no sum/4: it fails
    ]
    predictions = [
        "answer(A,(capital(A),loc(A,B),const(B,stateid(texas)),city(A)))",  # written otherwise, same answer: right
        "answer(A,(state(A),next_to(A,B),const(B,stateid(ohio))))",  # wrong
        "_answer ( A , _sum ( C , _state ( C ) , _area ( C ) , A ) )",  # equal to its gold, but the gold fails: not right
    ]
    metric(predictions, golds)
    assert metric.state() == {"correct": 1.0, "total": 3.0, "gold_failed": 1.0, "predicted_failed": 1.0}
    metric([ENDLESS, "answer(A,(capital(A),loc(A,B)"], [CAPITAL_OF_TEXAS, CAPITAL_OF_TEXAS])  # a timeout and an error are misses
    scores = metric.get_metric(reset=True)
    assert scores == {"denotation_accuracy": 1 / 5, "denotation_gold_failures": 1 / 5, "denotation_prediction_failures": 3 / 5}
    assert metric.state() == {"correct": 0.0, "total": 0.0, "gold_failed": 0.0, "predicted_failed": 0.0}
    metric.executor.close()


def test_the_metric_refuses_golds_that_are_not_prolog_forms():
    metric = Metric.from_params({"type": "denotation_accuracy", "executor": {"database": str(GEO)}})  # the default executor
    metric.check_gold(CAPITAL_OF_TEXAS)
    metric.check_gold(CAPITAL_OF_TEXAS.split())
    for gold in ["( lambda $0 e ( state:t $0 ) )", "answer(state(stateid('texas')))", ("state", 1)]:
        with pytest.raises(DataError) as error:
            metric.check_gold(gold)
        assert "\n" not in str(error.value)


@pytest.mark.slow
def test_every_fixed_test_gold_executes():
    """Every gold of geo_prolog_test_fixed.tsv runs, but #258, which runs for minutes in geoquery.pl."""
    forms = [line.split("\t")[1] for line in (GEO / "geo_prolog_test_fixed.tsv").read_text().splitlines()]
    assert len(forms) == 280
    with GeoQueryProlog(str(GEO), timeout_seconds=20.0) as executor:
        denotations = executor.execute(forms)
    failed = {number: denotation for number, denotation in enumerate(denotations, 1) if not denotation.ok}
    assert set(failed) == {258} and failed[258].failure == "timeout"
    assert sum(bool(denotation.answers) for denotation in denotations) == 268
