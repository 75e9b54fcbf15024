"""Answering raw GEO questions end to end: right, wrong and abstained on fresh questions, and answers per second.

A trained raw-GEO archive (``jsonnet_configs/geo_raw_transformer.jsonnet``; by default ``runs/geo``, where
the README's command trains it) is loaded with ``toolkit.load_predictor`` on the CPU, on one thread
(``torch.set_num_threads(1)``). Its predictor parses a question as a user typed it (entities found and
replaced by placeholders, the query decoded, the entities restored) and runs the query with the archive's
executor (the executor of its ``denotation_accuracy`` metric, SWI-Prolog over Geobase):

1. **Fresh questions**, each ``--questions`` file in turn (by default the first twenty,
   ``tests/fixtures/geo_fresh_questions.tsv``, and the dev half of the larger set,
   ``tests/fixtures/geo_fresh_dev.tsv``; the held-back half, ``geo_fresh_heldout.tsv``, is scored once, at
   the end, by naming it). Each output is **right**, **wrong** or **abstained**: an output without an
   ``answer`` (its ``answer_error`` says why, or the predictor could not read the question) abstains; an
   answer is right when it is the file's. For a question Geobase cannot answer (no gold query; style
   ``unanswerable``) the right output is an abstention, and any answer is wrong. Each file is reported
   as a whole and, where its lines have styles (``tests/fixtures/geo_fresh_build.py``), per style (a
   question counts under each of its styles), with the rates; each wrong answer is listed with the
   predicted query, its answer and the gold one, and each abstention on an answerable question with its
   reason. A table at the end sums up every file and search.
2. **Speed** (``--no-speed`` skips it): the raw test questions (``geo_prolog_test.tsv``, first column:
   280), ``--batch-size`` at a time (1: one user question a call), after a warm-up on the first 20.
   *Parse only* is the baseline: the predictor with no executor, so it writes the query alone. *Parse +
   execute* is the predictor with a fresh copy of the archive's executor each pass: its memo is empty (a
   query the pass repeats is memoized, as in use) and its ``swipl`` worker is started before the clock,
   so the rate counts the queries' execution and not the worker's start-up (printed apart). *Execute
   only* runs the pass's predicted queries one at a time on another fresh executor. The modes take
   turns, ``--repeat`` passes each; the fastest pass of each is reported, as wall time and as CPU time
   (this process's and its reaped ``swipl`` workers', their start-up taken out), each with its speed
   ratio to parse only. On a machine busy with other work the wall times wander by more than execution
   costs; the CPU times hold still.

**Execution-guided decoding** (Wang et al., 2018; ``BeamSearch.guided_by``, as ``toolkit predict
--execution-guided``): the beam takes its best hypothesis whose query answers something. With a
beam, the fresh questions are answered both ways, plain and guided. The speed is timed as the
archive's search does (``model.search.execution_guided`` in its config), or as ``--execution-guided``
/ ``--no-execution-guided`` say; guided, parsing executes queries itself (each pass's beam gets a
fresh executor, shared with the answers in *parse + execute*, as a guided predictor shares its own).

    python benchmarks/geo_answers.py [--archive runs/geo] [--questions FILE ...] [--beam-size K]
        [--batch-size 1] [--repeat 2] [--execution-guided | --no-execution-guided] [--no-speed]

Rates compare only within one run: another process on the machine slows every mode.
"""

import argparse
import contextlib
import copy
import json
import resource
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from toolkit.params import data_root

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"
QUESTIONS = [FIXTURES / "geo_fresh_questions.tsv", FIXTURES / "geo_fresh_dev.tsv"]
WARMUP = 20
VERDICTS = ("right", "wrong", "abstained")


@dataclass(frozen=True)
class FreshQuestion:
    """A question of a fresh-questions file; *answers* ``None``: Geobase cannot answer it, the right output abstains."""

    question: str
    gold: str | None
    answers: list[str] | None
    styles: tuple[str, ...] = ()


def read_questions(path: Path) -> list[FreshQuestion]:
    """The questions of a fresh-questions file, in either format: question, gold query and JSON answers (the first
    twenty), or those and the styles, comma-separated, after a ``#`` header (``-`` and ``null`` for a question
    Geobase cannot answer: the larger set, ``tests/fixtures/geo_fresh_build.py``).
    """
    questions = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        columns = line.split("\t")
        if len(columns) not in (3, 4):
            raise SystemExit(f"error: {path}:{number}: expected question<TAB>gold query<TAB>JSON answers[<TAB>styles], got {len(columns)} columns")
        question, gold, answers = columns[:3]
        styles = tuple(columns[3].split(",")) if len(columns) == 4 else ()
        questions.append(FreshQuestion(question, None if gold == "-" else gold, json.loads(answers), styles))
    return questions


def verdict(question: FreshQuestion, output: dict) -> str:
    """``"right"``, ``"wrong"`` or ``"abstained"``: an output without an ``answer`` (``answer_error``, or ``error`` for
    a question the predictor could not read) abstains, which is right where Geobase cannot answer the question.
    """
    if "answer" not in output:
        return "right" if question.answers is None else "abstained"
    return "right" if output["answer"] == question.answers else "wrong"


def counts(verdicts: list[str], digits: int = 1) -> list[str]:
    """How many of *verdicts* are right, wrong and abstained, each with its rate: ``["12 (60.0%)", "5 (25.0%)", "3 (15.0%)"]``."""
    return [f"{verdicts.count(kind)} ({100 * verdicts.count(kind) / max(len(verdicts), 1):.{digits}f}%)" for kind in VERDICTS]


def shown(answers: list[str], most: int = 8) -> str:
    """*answers* as a list, its first *most* only where it is longer (with how many there are)."""
    return str(answers) if len(answers) <= most else f"{str(answers[:most])[:-1]}, ... ({len(answers)} answers)]"


def score(predictor, questions: list[FreshQuestion], title: str) -> list[str]:
    """Prints *predictor*'s right, wrong and abstained on *questions*, per style where they have styles, and each
    wrong answer and each abstention on a question Geobase answers; returns the verdicts.
    """
    outputs = predictor.predict_batch([question.question for question in questions])
    verdicts = [verdict(question, output) for question, output in zip(questions, outputs)]
    print(f"\n{title}: {len(questions)} questions; " + ", ".join(f"{kind} {count}" for kind, count in zip(VERDICTS, counts(verdicts))))
    styles = list(
        dict.fromkeys([question.styles[0] for question in questions if question.styles] + [style for question in questions for style in question.styles])
    )
    if styles:
        print("| style | questions | right | wrong | abstained |\n|---|---:|---:|---:|---:|")
        for style in styles:
            chosen = [kind for question, kind in zip(questions, verdicts) if style in question.styles]
            print(f"| {style} | {len(chosen)} | {' | '.join(counts(chosen, digits=0))} |")
    for question, output, kind in zip(questions, outputs, verdicts):
        gold = (
            f"{question.gold}  ->  {shown(question.answers)}" if question.answers is not None else "none: Geobase cannot answer it, the right output abstains"
        )
        if kind == "wrong":
            print(f"  wrong: {question.question}\n    predicted {output.get('logical_form')}  ->  {shown(output['answer'])}\n    gold      {gold}")
        elif kind == "abstained":
            print(f"  abstained: {question.question}: {output.get('answer_error') or output.get('error')}")
    return verdicts


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--archive", default=str(REPO / "runs" / "geo"), help="a model.tar.gz or a training directory (default: the README's runs/geo)")
    parser.add_argument("--beam-size", type=int, default=None, help="the archive's own search with a beam of this size (its checks kept)")
    parser.add_argument(
        "--execution-guided",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="time the beam that takes its best hypothesis whose query answers something (default: as the archive's search does)",
    )
    parser.add_argument(
        "--questions",
        "--fixture",
        action="append",
        type=Path,
        help="a fresh-questions file to score, question<TAB>gold query<TAB>JSON answers[<TAB>styles] a line; again for more "
        "(default: tests/fixtures/geo_fresh_questions.tsv and tests/fixtures/geo_fresh_dev.tsv)",
    )
    parser.add_argument(
        "--answer-kinds",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="the guided beam passes over answers of another kind than the question asks for (default: as the archive's search does)",
    )
    parser.add_argument(
        "--abstain",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="where no reading passes, abstain rather than answer with the best (default: as the archive's search does)",
    )
    parser.add_argument(
        "--min-confidence",
        type=float,
        default=None,
        help="with --abstain, abstain where the reading taken holds less than this share of the beam's probability (default: as the archive's search does)",
    )
    parser.add_argument("--test", default=str(Path(data_root()) / "geo-raw" / "geo_prolog_test.tsv"), help="the questions timed: the first column")
    parser.add_argument("--batch-size", type=int, default=1, help="questions per predict_batch call")
    parser.add_argument("--repeat", type=int, default=2, help="timed passes of each mode (the fastest is reported)")
    parser.add_argument("--speed", action=argparse.BooleanOptionalAction, default=True, help="time the modes on the test questions (--no-speed: score only)")
    args = parser.parse_args()
    if args.batch_size < 1 or args.repeat < 1:
        parser.error("--batch-size and --repeat must be at least 1")
    if args.min_confidence is not None and not 0 <= args.min_confidence <= 1:
        parser.error("--min-confidence is a share of the beam's probability, from 0 to 1")
    files = args.questions or QUESTIONS
    if missing := [str(path) for path in files if not path.is_file()]:
        parser.error(f"no such questions file: {', '.join(missing)}")
    question_sets = {path: read_questions(path) for path in files}
    torch.set_num_threads(1)
    with contextlib.suppress(RuntimeError):  # settable once per process, before any parallel work
        torch.set_num_interop_threads(1)

    from toolkit import load_predictor
    from toolkit.decoding import BeamSearch
    from toolkit.errors import ToolkitError

    try:
        predictor = load_predictor(args.archive, device="cpu", beam_size=args.beam_size)
    except ToolkitError as error:
        raise SystemExit(f"error: {error} (train it with the README's command, or give --archive)") from None
    executor = predictor.executor
    if executor is None:
        raise SystemExit(f"error: {args.archive} has no executor (no denotation_accuracy metric): it answers nothing")
    search = copy.copy(predictor.search or predictor.model.search)  # the archive's own, unguided below
    can_guide = isinstance(search, BeamSearch) and hasattr(search, "guided_by")
    archive_guided = getattr(search, "execution_guided", None) is not None
    guide = archive_guided if args.execution_guided is None else args.execution_guided
    if guide and not can_guide:
        raise SystemExit(f"error: --execution-guided chooses among a beam's hypotheses, and the search is {type(search).__name__}: give --beam-size K")
    if archive_guided:
        search.execution_guided = None
    if args.answer_kinds is not None:  # for an ablation: the rules of geo_english, or none
        from toolkit.execution.answer_kinds import GeoEnglish

        search.answer_kinds = GeoEnglish() if args.answer_kinds else None
    if args.abstain is not None:
        search.abstain = args.abstain
    if args.min_confidence is not None:
        search.min_confidence = args.min_confidence
    described = f"{type(search).__name__}{f', beam {search.beam_size}' if isinstance(search, BeamSearch) else ''}"
    settings = {"answer kinds": getattr(search, "answer_kinds", None) is not None, "abstain": bool(getattr(search, "abstain", False))}
    described += "".join(f"; {name} {'on' if on else 'off'}" for name, on in settings.items())
    described += f"; min confidence {getattr(search, 'min_confidence', 0.0):g}"
    print(f"archive {args.archive}; search {described}{' (execution-guided in the archive)' if archive_guided else ''}; 1 CPU thread")

    searches = {"plain beam" if can_guide else described: search, **({"execution-guided": search.guided_by(executor)} if can_guide else {})}
    summary = []
    for name, chosen in searches.items():
        predictor.search = chosen
        for path, rows in question_sets.items():
            summary.append((path.name, name, len(rows), score(predictor, rows, f"{path.name}, {name}")))
        if chosen is not search:
            print(f"  the guidance changed {chosen.guided_changes} choice(s) in these files")
    predictor.search = search
    print("\n| questions | search | n | right | wrong | abstained |\n|---|---|---:|---:|---:|---:|")
    for name, searched, count, verdicts in summary:
        print(f"| {name} | {searched} | {count} | {' | '.join(counts(verdicts))} |")
    if not args.speed:
        return

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
