"""Answering raw GEO questions end to end: accuracy on twenty fresh questions, and answers per second.

A trained raw-GEO archive (``jsonnet_configs/geo_raw_transformer.jsonnet``) is loaded with
``toolkit.load_predictor`` on the CPU, on one thread (``torch.set_num_threads(1)``). Its predictor
parses a question as a user typed it (entities found and replaced by placeholders, the query
decoded, the entities restored) and runs the query with the archive's executor (the executor of its
``denotation_accuracy`` metric, SWI-Prolog over Geobase):

1. **Fresh questions**: the twenty of ``tests/fixtures/geo_fresh_questions.tsv`` (written for it,
   in none of GEO's files; see ``tests/test_fresh_questions.py``). A question is right when its
   answer is the fixture's; each miss is listed with the predicted query, its answer (or why it has
   none) and the gold one.
2. **Speed**: the raw test questions (``geo_prolog_test.tsv``, first column: 280), ``--batch-size``
   at a time (1: one user question a call), after a warm-up on the first 20. *Parse only* is the
   baseline: the predictor with no executor, so it writes the query alone. *Parse + execute* is the
   predictor with a fresh copy of the archive's executor each pass: its memo is empty (a query the
   pass repeats is memoized, as in use) and its ``swipl`` worker is started before the clock, so the
   rate counts the queries' execution and not the worker's start-up (printed apart). *Execute only*
   runs the pass's predicted queries one at a time on another fresh executor. The modes take turns,
   ``--repeat`` passes each; the fastest pass of each is reported, as wall time and as CPU time
   (this process's and its reaped ``swipl`` workers', their start-up taken out), each with its speed
   ratio to parse only. On a machine busy with other work the wall times wander by more than
   execution costs; the CPU times hold still.

**Execution-guided decoding** (Wang et al., 2018; ``BeamSearch.guided_by``, as ``toolkit predict
--execution-guided``): the beam takes its best hypothesis whose query answers something. With a
beam, the fresh questions are answered both ways, plain and guided. The speed is timed as the
archive's search does (``model.search.execution_guided`` in its config), or as ``--execution-guided``
/ ``--no-execution-guided`` say; guided, parsing executes queries itself (each pass's beam gets a
fresh executor, shared with the answers in *parse + execute*, as a guided predictor shares its own).

    python benchmarks/geo_answers.py [--archive runs/geo_raw/model.tar.gz] [--beam-size K]
        [--batch-size 1] [--repeat 2] [--execution-guided | --no-execution-guided]

Rates compare only within one run: another process on the machine slows every mode.
"""

import argparse
import contextlib
import copy
import json
import resource
import time
from pathlib import Path

import torch

from toolkit.params import data_root

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "tests" / "fixtures" / "geo_fresh_questions.tsv"
WARMUP = 20


def read_fixture(path: Path) -> list[tuple[str, str, list[str]]]:
    """(question, gold query, answers) per line of a fresh-questions file."""
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            question, gold, answers = line.split("\t")
            rows.append((question, gold, json.loads(answers)))
    return rows


def fresh_executor(executor):
    """A copy of *executor* with nothing memoized, its worker started (and the seconds that took)."""
    copied = copy.deepcopy(executor)
    start = time.perf_counter()
    copied.execute(["answer(A,(capital(A),loc(A,B),const(B,stateid(texas))))"])
    return copied, time.perf_counter() - start


def cpu_seconds() -> float:
    """CPU seconds of this process and of its children that have ended (a closed executor's workers)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def answer_all(predictor, questions: list[str], batch_size: int) -> tuple[list[dict], float]:
    """The predictor's outputs for *questions*, *batch_size* a call, and the seconds they took."""
    outputs: list[dict] = []
    start = time.perf_counter()
    for first in range(0, len(questions), batch_size):
        outputs.extend(predictor.predict_batch(questions[first : first + batch_size]))
    return outputs, time.perf_counter() - start


def fresh_accuracy(predictor, rows: list[tuple[str, str, list[str]]], title: str) -> None:
    """Prints how many fixture questions the predictor answers as the fixture does, and each miss."""
    outputs = predictor.predict_batch([question for question, _, _ in rows])
    misses = [(row, output) for row, output in zip(rows, outputs) if output.get("answer") != row[2]]
    right = len(rows) - len(misses)
    print(f"\n{title}: {right}/{len(rows)} answered right ({100 * right / len(rows):.1f}%)")
    for (question, gold, answers), output in misses:
        found = output["answer"] if "answer" in output else f"<{output.get('answer_error') or output.get('error')}>"
        print(f"  miss: {question}\n    predicted {output.get('logical_form')}  ->  {found}\n    gold      {gold}  ->  {answers}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--archive", default=str(REPO / "runs" / "geo_raw" / "model.tar.gz"))
    parser.add_argument("--beam-size", type=int, default=None, help="a beam of this size instead of the archive's own search")
    parser.add_argument(
        "--execution-guided",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="time the beam that takes its best hypothesis whose query answers something (default: as the archive's search does)",
    )
    parser.add_argument("--fixture", default=str(FIXTURE), help="question<TAB>gold query<TAB>JSON answers, one a line")
    parser.add_argument("--test", default=str(Path(data_root()) / "geo-raw" / "geo_prolog_test.tsv"), help="the questions timed: the first column")
    parser.add_argument("--batch-size", type=int, default=1, help="questions per predict_batch call")
    parser.add_argument("--repeat", type=int, default=2, help="timed passes of each mode (the fastest is reported)")
    args = parser.parse_args()
    if args.batch_size < 1 or args.repeat < 1:
        parser.error("--batch-size and --repeat must be at least 1")
    torch.set_num_threads(1)
    with contextlib.suppress(RuntimeError):  # settable once per process, before any parallel work
        torch.set_num_interop_threads(1)

    from toolkit import load_predictor
    from toolkit.decoding import BeamSearch

    predictor = load_predictor(args.archive, device="cpu", beam_size=args.beam_size)
    executor = predictor.executor
    if executor is None:
        raise SystemExit(f"{args.archive} has no executor (no denotation_accuracy metric): it answers nothing")
    search = copy.copy(predictor.search or predictor.model.search)  # the archive's own, unguided below
    can_guide = isinstance(search, BeamSearch) and hasattr(search, "guided_by")
    archive_guided = getattr(search, "execution_guided", None) is not None
    guide = archive_guided if args.execution_guided is None else args.execution_guided
    if guide and not can_guide:
        raise SystemExit(f"--execution-guided chooses among a beam's hypotheses, and the search is {type(search).__name__}: give --beam-size K")
    if archive_guided:
        search.execution_guided = None
    shown = f"{type(search).__name__}{f', beam {search.beam_size}' if isinstance(search, BeamSearch) else ''}"
    print(f"archive {args.archive}; search {shown}{' (execution-guided in the archive)' if archive_guided else ''}; 1 CPU thread")

    rows = read_fixture(Path(args.fixture))
    predictor.search = search
    fresh_accuracy(predictor, rows, f"fresh questions ({Path(args.fixture).name}){', plain beam' if can_guide else ''}")
    if can_guide:
        predictor.search = search.guided_by(executor)
        fresh_accuracy(predictor, rows, "fresh questions, execution-guided")
        print(f"  the guidance changed {predictor.search.guided_changes} choice(s)")
        predictor.search = search

    questions = [line.split("\t")[0] for line in Path(args.test).read_text(encoding="utf-8").splitlines() if line.strip()]
    guided: list = []  # the guided beams of the timed passes, each with its fresh executor

    def release() -> None:
        """Stop (and reap) the executors the last pass started; the archive's own stays."""
        for used in (predictor.executor, guided[-1].execution_guided if guided else None):
            if used is not None and used is not executor:
                used.close()

    def configure(execute: bool) -> None:
        """A fresh executor (memo empty, worker started) for the predictor to answer with if *execute*, and for a
        guided beam to choose with: the same one, as a predictor that guides its beam would use.
        """
        release()
        predictor.executor = None
        if not execute and not guide:
            return
        fresh, startup = fresh_executor(executor)
        startups.append(startup)
        predictor.executor = fresh if execute else None
        if guide:
            guided.append(search.guided_by(fresh))
            predictor.search = guided[-1]

    startups: list[float] = []
    before = cpu_seconds()
    fresh_executor(executor)[0].close()
    startup_cpu = cpu_seconds() - before  # a worker's CPU to load Geobase, counted when it is reaped
    configure(execute=False)
    answer_all(predictor, questions[:WARMUP], args.batch_size)  # warm-up: first calls allocate and fill caches
    release()
    modes = ("parse only", "parse + execute", "execute only")
    walls: dict[str, list[float]] = {mode: [] for mode in modes}
    cpus: dict[str, list[float]] = {mode: [] for mode in modes}

    def measure(mode: str, run, reaped: bool, end=release):
        """*run*'s result, its wall and CPU time recorded under *mode*; *end* stops the executors it used, and
        with *reaped* one of them was started before the clock (its start-up CPU is taken out).
        """
        wall, cpu = time.perf_counter(), cpu_seconds()
        result = run()
        walls[mode].append(time.perf_counter() - wall)
        end()
        cpus[mode].append(cpu_seconds() - cpu - reaped * startup_cpu)
        return result

    outputs: list[dict] = []
    for _ in range(args.repeat):
        configure(execute=False)
        parsed, _ = measure("parse only", lambda: answer_all(predictor, questions, args.batch_size), guide)
        forms = [output.get("logical_form", "") for output in parsed]
        configure(execute=True)
        outputs, _ = measure("parse + execute", lambda: answer_all(predictor, questions, args.batch_size), True)
        runner, _ = fresh_executor(executor)

        def execute_each(runner=runner, forms=forms) -> None:
            for form in forms:
                runner.execute([form])

        measure("execute only", execute_each, True, runner.close)
    answered = sum("answer" in output for output in outputs)
    failed = sum("answer_error" in output for output in outputs)

    print(
        f"\n{len(questions)} questions of {Path(args.test).name}, {args.batch_size} a call, {'execution-guided' if guide else 'plain'} beam, fastest of {args.repeat} pass(es) each"
    )
    print(
        f"executor start-up (not counted): {1000 * min(startups):.0f} ms wall, {1000 * startup_cpu:.0f} ms CPU; queries that ran: {answered}, failed: {failed}"
    )
    print("| mode | wall s | questions/s | ratio | CPU s | questions/CPU s | ratio |\n|---|---:|---:|---:|---:|---:|---:|")
    for mode in modes:
        wall, cpu = min(walls[mode]), min(cpus[mode])
        base_wall, base_cpu = min(walls["parse only"]), min(cpus["parse only"])
        n = len(questions)
        print(f"| {mode} | {wall:.2f} | {n / wall:,.1f} | {base_wall / wall:.2f} | {cpu:.2f} | {n / cpu:,.1f} | {base_cpu / cpu:.2f} |")
    if guide:
        changed = sum(beam.guided_changes for beam in guided[1:])  # the first beam is the warm-up's
        print(f"the guidance changed {changed} choice(s) in {2 * args.repeat} passes over the {len(questions)} questions")


if __name__ == "__main__":
    main()
