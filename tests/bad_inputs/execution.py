"""Queries that run against a database: unbounded beams, runaway Prolog, answers that are not ground."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.bad_inputs.checks import QUESTIONS, repacked_archive
from tests.bad_inputs.machinery import Case, Env
from tests.conftest import REPO, require_swipl
from toolkit.params import data_root

GEO = Path(data_root()) / "geo-raw"
UNBOUND = "_answer ( A , _state ( B ) )"
ENDLESS = "answer(A,(state(A),state(B),state(C),state(D),state(E),state(F),fail))"  # 51**6 rows before it fails


def sharing_bomb(doublings: int) -> str:
    """A short query whose answer is a term of 2**doublings leaves, its subterms shared: its text is exponential."""
    steps = ",".join(f"X{i + 1}=f(X{i},X{i})" for i in range(doublings))
    return f"answer(A,(X0=texas,{steps},A=X{doublings}))"


def geobase() -> Path:
    require_swipl()
    if not (GEO / "geoquery.pl").exists():
        pytest.skip(f"Geobase not found at {GEO}")
    return GEO


def geo_archive(env: Env) -> Path:
    archive = env.request.getfixturevalue("geo_raw_archive")
    env.capsys.readouterr()  # the first case to ask trains it: training's output is not the case's
    return archive


def executed(form: str, **settings) -> Callable[[Env], str]:
    """A check: the denotation of *form* by ``geoquery_prolog`` with *settings*, as ``str(Denotation)`` writes it."""

    def check(env: Env) -> str:
        from toolkit.execution import GeoQueryProlog

        with GeoQueryProlog(str(geobase()), **{"timeout_seconds": 600.0, **settings}) as executor:
            return str(executor.execute([form])[0])

    return check


# ---- item 4: a beam is bounded by the input, and one that cannot fit is refused


def capped(*args: str, headroom: int, unknown_free: bool = False) -> tuple[int, str]:
    """`toolkit ARGS` in a process of its own whose address space is capped (``ulimit -v``) at *headroom* bytes
    more than it holds once torch is imported; with *unknown_free* the search is not told how much memory is
    free, so only an allocation that fails can stop it. Its exit status and stderr.
    """
    patch = "import toolkit.decoding.beam as beam; beam.free_bytes = lambda device: None; " if unknown_free else ""
    code = (
        "import re, resource, sys, torch; from toolkit.cli import main; "
        + patch
        + "size = int(re.search(r'VmSize:\\s+(\\d+)', open('/proc/self/status').read()).group(1)) << 10; "
        f"resource.setrlimit(resource.RLIMIT_AS, (size + {headroom}, size + {headroom})); sys.argv[0] = 'toolkit'; main()"
    )
    done = subprocess.run([sys.executable, "-c", code, *args], cwd=REPO, capture_output=True, text=True, timeout=900)
    return done.returncode, done.stderr


def one_error_line(code: int, err: str) -> str:
    lines = err.strip().splitlines()
    assert code == 1 and len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, (code, err)
    return lines[0]


def guided_beam_of_100000(env: Env) -> str:
    questions = env.write({"questions.txt": "What is the capital of Texas?\n"})
    return one_error_line(
        *capped("predict", str(geo_archive(env)), str(questions), "--beam-size", "100000", "--execution-guided", "--device", "cpu", headroom=2 << 30)
    )


def beam_of_30000_that_allocation_stops(env: Env) -> str:
    data = env.write({"data.tsv": "what is the capital of texas ?\t_answer ( A , _capital ( A ) )\n"})
    args = ("evaluate", str(geo_archive(env)), str(data), "--beam-size", "30000", "--execution-guided", "--device", "cpu")
    return one_error_line(*capped(*args, headroom=200 << 20, unknown_free=True))


def config_beam_of_a_million(env: Env) -> str:
    """The archive's own search is a beam of 1,000,000 (`model.search.beam_size`), on a machine with 256 MB free."""

    def change(name: str, data: bytes) -> bytes:
        if name != "config.json":
            return data
        config = json.loads(data)
        config["model"]["search"] = {"type": "beam", "beam_size": 1_000_000, "early_stopping": False}
        return json.dumps(config).encode()

    archive = repacked_archive(env, "wide.tar.gz", change)
    env.monkeypatch.setattr("toolkit.decoding.beam.free_bytes", lambda device: 256 << 20)
    return env.cli_error("predict", archive, env.write({"input.txt": QUESTIONS}), "--device", "cpu")


def wide_beam_on_a_small_grammar(env: Env) -> None:
    from tests.test_search import AlternatingGrammar, count_rows, examples, tiny_model
    from toolkit.decoding import BeamSearch

    model = tiny_model(AlternatingGrammar(), seed=0)
    rows = count_rows(model)
    assert model.predict(examples(), BeamSearch(beam_size=100_000)) == model.predict(examples(), BeamSearch(beam_size=6))
    assert max(rows) <= 4 * len(examples())  # at most four open prefixes a sentence: all the grammar can make


# ---- item 5: the limits cover a query's whole life, and a query they stop is named


def evaluate_warnings(env: Env, golds: list[str]) -> list[str]:
    """`toolkit evaluate` of the GEO archive on these golds (a question each); its JSON and its warnings."""
    data = env.write({"data.tsv": "".join(f"what is the capital of texas ?\t{gold}\n" for gold in golds)})
    caplog = env.request.getfixturevalue("caplog")
    archive = geo_archive(env)
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        code, out, err = env.cli("evaluate", archive, data, "--device", "cpu")
    assert code == 0, err
    scores = json.loads(out)
    assert scores["denotation_gold_failures"] == 1 / len(golds), scores
    return [env.clean(record.getMessage()) for record in caplog.records if record.levelname == "WARNING"]


def evaluate_names_a_gold_stopped_by_a_limit(env: Env) -> str:
    warnings = evaluate_warnings(env, ["_answer ( A , ( _capital ( A ) , _loc ( A , B ) , _const ( B , _stateid ( texas ) ) ) )", sharing_bomb(27)])
    [named] = [warning for warning in warnings if "was stopped" in warning]
    return named


# ---- item 15: limits that hold on a busy machine


def half_the_cpu(executor, form: str) -> str:
    """*form*'s denotation while its worker is stopped every other 50 ms (a machine busy with something else)."""
    executor.execute(["answer(A,state(A))"])  # the worker is started
    worker = executor._started[0].process
    finished = threading.Event()

    def throttle() -> None:
        with contextlib.suppress(ProcessLookupError):  # a worker that is gone needs no throttling
            while not finished.wait(0.05):
                os.kill(worker.pid, signal.SIGSTOP)
                finished.wait(0.05)
                os.kill(worker.pid, signal.SIGCONT)

    thread = threading.Thread(target=throttle)
    thread.start()
    try:
        return str(executor.execute([form])[0])
    finally:
        finished.set()
        thread.join()
        with contextlib.suppress(ProcessLookupError):
            os.kill(worker.pid, signal.SIGCONT)


def gold_258(env: Env) -> str:
    from toolkit.execution import GeoQueryProlog

    form = (geobase() / "geo_prolog_test_fixed.tsv").read_text(encoding="utf-8").splitlines()[257].split("\t")[1]
    with GeoQueryProlog(str(GEO), timeout_seconds=600.0) as executor:  # the default inference limit decides
        return str(executor.execute([form])[0])


def endless_on_a_busy_machine(env: Env) -> str:
    from toolkit.execution import GeoQueryProlog

    geobase()
    with GeoQueryProlog(str(GEO), timeout_seconds=600.0, max_inferences=1_000_000) as executor:
        return half_the_cpu(executor, ENDLESS)


def execution_tests_read_no_clock(env: Env) -> None:
    files = [REPO / "tests" / name for name in ("test_execution.py", "test_execution_guided.py", "test_fresh_questions.py")]
    clocks = [
        f"{path.name}: {match.group()}" for path in files for match in re.finditer(r"time\.(monotonic|time|perf_counter|process_time)\(", path.read_text())
    ]
    assert clocks == []


# ---- item 10: an answer that is not ground is a failure of the query


def unbound_answers_scored(env: Env) -> None:
    from toolkit.metrics import Metric

    metric = Metric.from_params({"type": "denotation_accuracy", "executor": {"database": str(geobase()), "timeout_seconds": 600.0}})
    metric(["_answer ( A , _river ( B ) )"], [UNBOUND])
    assert metric.get_metric(reset=True) == {"denotation_accuracy": 0.0, "denotation_gold_failures": 1.0, "denotation_prediction_failures": 1.0}
    metric.executor.close()


CASES: list[Case] = [
    Case(
        "beam_100000_guided",
        "`--beam-size 100000 --execution-guided`, 2 GB of address space free (`ulimit -v`; it grew past 15 GB until the kernel killed it)",
        "`toolkit predict` (GEO, raw questions)",
        "error: a beam of 100,000 (beam_size, --beam-size) does not fit in memory: … hypotheses for each of 1 input(s), up to … steps, "
        "take about … each, … in all, and … was free on cpu; a beam of at most … fits",
        guided_beam_of_100000,
    ),
    Case(
        "beam_30000_allocation_fails",
        "`--beam-size 30000 --execution-guided`, 200 MB of address space free (`ulimit -v`), the free memory unknown to the search "
        "(it was a `RuntimeError` traceback)",
        "`toolkit evaluate` (GEO, raw questions)",
        "error: decoding 1 input(s) ran out of memory with a beam of 30,000 (beam_size, --beam-size): a smaller beam needs less",
        beam_of_30000_that_allocation_stops,
    ),
    Case(
        "config_beam_of_a_million",
        '`"model": {"search": {"type": "beam", "beam_size": 1000000, "early_stopping": false}}` in the archive, 256 MB free',
        "`toolkit predict`",
        "error: a beam of 1,000,000 (beam_size, --beam-size) does not fit in memory: … hypotheses for each of 1 input(s), up to … steps, "
        "take about … each, … in all, and 256.0 MB was free on cpu; a beam of at most … fits",
        config_beam_of_a_million,
    ),
    Case(
        "beam_wider_than_the_grammar",
        "a beam of 100,000 on a grammar that makes six outputs",
        "`BeamSearch` (`tests/test_search.py`)",
        "at most four hypotheses a sentence at any step (all the prefixes there are), and the same output as a beam of 6",
        wide_beam_on_a_small_grammar,
        message=False,
    ),
    Case(
        "gold_printing_gigabytes",
        "a 500-byte gold query whose answer shares its subterms: 2**27 leaves, gigabytes of text (it took 3 GB and 40 s against a 20 s limit, "
        "named only by `gold_failures: 0.5`)",
        "`toolkit evaluate` (GEO, raw questions): its warning",
        "data.tsv:2: the gold query was stopped: answers over the size limit (1,000,000 characters)",
        evaluate_names_a_gold_stopped_by_a_limit,
    ),
    Case(
        "answer_of_two_million_digits",
        "`answer(A,A is 10^2000000)`",
        "executor `geoquery_prolog`",
        "<memory: answers over the size limit (1,000,000 characters)>",
        executed("answer(A,A is 10^2000000)"),
    ),
    Case(
        "query_over_the_stack_limit",
        "`answer(A,(state(A),state(B),state(C),state(D)))`: 51**4 rows collected before they are sorted",
        "executor `geoquery_prolog` (`memory_mb: 64`)",
        "<memory: over the memory limit (64 MB of Prolog stacks)>",
        executed("answer(A,(state(A),state(B),state(C),state(D)))", max_inferences=None, memory_mb=64),
    ),
    Case(
        "gold_258_on_any_machine",
        "gold #258 of `geo_prolog_test_fixed.tsv`, which runs for minutes (the time limit decided it, and on a busy machine #226 too)",
        "executor `geoquery_prolog` (default limits; `tests/test_execution.py::test_every_fixed_test_gold_executes`)",
        "<timeout: over the inference limit (300,000,000 inferences)>",
        gold_258,
    ),
    Case(
        "endless_query_on_a_busy_machine",
        "an endless query while its worker gets half the CPU",
        "executor `geoquery_prolog` (`max_inferences: 1000000`)",
        "<timeout: over the inference limit (1,000,000 inferences)>",
        endless_on_a_busy_machine,
    ),
    Case(
        "execution_tests_and_the_clock",
        "`tests/test_execution.py`, `tests/test_execution_guided.py`, `tests/test_fresh_questions.py`",
        "the test suite",
        "no test reads a clock: a query that must stop is stopped by inferences, or never ends",
        execution_tests_read_no_clock,
        message=False,
    ),
    Case(
        "unbound_answer",
        f"`{UNBOUND}` (its denotation was `[A]`)",
        "executor `geoquery_prolog`",
        "<error: an answer is not ground (it holds an unbound variable): _>",
        executed(UNBOUND),
    ),
    Case(
        "partly_ground_answer",
        "`answer(A,(state(B),A=f(B,C)))`",
        "executor `geoquery_prolog`",
        "<error: an answer is not ground (it holds an unbound variable): f(stateid(alabama),_)>",
        executed("answer(A,(state(B),A=f(B,C)))"),
    ),
    Case(
        "unbound_answers_scored",
        f"prediction `_answer ( A , _river ( B ) )` for the gold `{UNBOUND}`",
        "metric `denotation_accuracy`",
        "0.0, the gold and the prediction counted as failures (it was 1.0: both were `[A]`)",
        unbound_answers_scored,
        message=False,
    ),
    Case(
        "list_with_a_variable",
        "`answer(A,A=[B])`",
        "executor `geoquery_prolog`",
        "<error: '[|]'/2 is not allowed in a query>",
        executed("answer(A,A=[B])"),
    ),
]
