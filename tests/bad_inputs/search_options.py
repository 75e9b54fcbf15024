"""Options that rebuild an archive's search: a beam size keeps the checks the archive's beam has."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests.bad_inputs.machinery import Case, Env

GEO_QUESTIONS = (
    "quelle est la capitale du Texas ?\nWie viele Menschen leben in Texas?\nWho is the president?\nWhat is the capital of Texas?\n"
    "how many rivers are in ohio ?\ntell me about the weather\n"
)

SIZED = ("--beam-size", "3", "--execution-guided")  # the archive's own size: the outputs must be its own


def abstaining_archive(env: Env) -> Path:
    """The tiny GEO parser with the main job's search: a guided beam of 3 with answer kinds, ``abstain`` and ``min_confidence``."""
    archive = env.request.getfixturevalue("geo_abstaining_archive")
    env.capsys.readouterr()  # the first case to ask trains it: training's output is not the case's
    return archive


def predicted(env: Env, *flags: str) -> list[dict]:

    code, out, err = env.cli("predict", abstaining_archive(env), env.write({"questions.txt": GEO_QUESTIONS}), "--device", "cpu", *flags)
    assert code == 0, err
    return [json.loads(line) for line in out.splitlines()]


def predicts_as_the_archive(*flags: str, ensemble: bool = False) -> Callable[[Env], None]:
    """A check: `toolkit predict` with *flags* (and, with *ensemble*, ``--ensemble`` the archive itself) writes what
    the archive's own search writes, abstentions included.
    """

    def check(env: Env) -> None:
        own = predicted(env)
        assert any(record.get("abstained") for record in own), own  # the checks have something to do
        assert predicted(env, *flags, *(("--ensemble", str(abstaining_archive(env))) if ensemble else ())) == own

    return check


def evaluate_at_a_size(env: Env) -> None:
    archive = abstaining_archive(env)
    data = env.request.getfixturevalue("geo_raw_archive").parent.parent / "test.tsv"
    scores = []
    for flags in ((), SIZED):
        code, out, err = env.cli("evaluate", archive, data, "--device", "cpu", *flags)
        assert code == 0, err
        scores.append(json.loads(out))
    own, sized = scores
    assert own["abstained"] > 0 and isinstance(sized.pop("execution_guided_changes"), int) and sized == own, (own, sized)


def load_predictor_at_a_size(env: Env) -> None:
    from toolkit import load_predictor
    from toolkit.serving.server import describe

    archive = abstaining_archive(env)
    wider = load_predictor(archive, device="cpu", beam_size=5)
    assert vars(wider.search) == {**vars(wider.model.search), "beam_size": 5} and wider.search.abstain and wider.search.execution_guided is not None
    assert describe(archive, wider, "semantic_parser")["search"] == {"type": "BeamSearch", "beam_size": 5}  # serve's /info
    texts = GEO_QUESTIONS.splitlines()
    assert load_predictor(archive, device="cpu", beam_size=3).predict_batch(texts) == load_predictor(archive, device="cpu").predict_batch(texts)


def guided_greedy_archive(env: Env) -> str:
    archive = env.request.getfixturevalue("geo_raw_archive")
    env.capsys.readouterr()
    return env.cli_error("predict", archive, env.write({"questions.txt": "What is the capital of Texas?\n"}), "--execution-guided", "--device", "cpu")


ARCHIVE = "an archive whose search is a guided beam of 3 with `answer_kinds`, `abstain` and `min_confidence` (as the main job's)"

CASES: list[Case] = [
    Case(
        "beam_size_keeps_the_checks",
        f"`--beam-size 3 --execution-guided`, {ARCHIVE}: it built a plain beam, and a 40-epoch parser at `--beam-size 20` "
        'answered "quelle est la capitale du Texas ?" with four states',
        "`toolkit predict` (GEO, raw questions)",
        "the archive's beam at that size, every check kept: the outputs and abstentions of the archive's own search",
        predicts_as_the_archive(*SIZED),
        message=False,
    ),
    Case(
        "beam_size_keeps_abstained",
        f"`--beam-size 3 --execution-guided`, {ARCHIVE}",
        "`toolkit evaluate` (GEO, raw questions)",
        "the scores and `abstained` of the archive's own search, `execution_guided_changes` beside them (`abstained` was missing)",
        evaluate_at_a_size,
        message=False,
    ),
    Case(
        "beam_size_in_load_predictor",
        f"`load_predictor(ARCHIVE, beam_size=5)`, what `toolkit serve --beam-size 5` loads, {ARCHIVE}",
        "`load_predictor` (`toolkit serve`)",
        "a copy of the archive's search with a beam of 5 and all else the same (executor, answer kinds, `abstain`, `min_confidence`, "
        "length penalty); at 3, the archive's own answers",
        load_predictor_at_a_size,
        message=False,
    ),
    Case(
        "beam_size_in_an_ensemble",
        f"`--beam-size 3 --ensemble ARCHIVE`, the archive with itself, {ARCHIVE}",
        "`toolkit predict` (GEO, raw questions)",
        "the first archive's search resized, its checks kept: the outputs and abstentions of the archive alone",
        predicts_as_the_archive("--beam-size", "3", ensemble=True),
        message=False,
    ),
    Case(
        "guided_greedy_archive",
        "`--execution-guided` without `--beam-size`, on an archive whose search is greedy",
        "`toolkit predict` (GEO, raw questions)",
        "error: --execution-guided chooses among a beam's hypotheses, and the model's search is GreedySearch: give --beam-size K",
        guided_greedy_archive,
    ),
]
