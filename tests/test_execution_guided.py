"""Execution-guided decoding (Wang et al., 2018): beam search passes over hypotheses whose form fails
to execute or answers nothing. Hand-checked on a scripted model whose beam is known exactly, with a
fake executor; end to end on a GEO slice with SWI-Prolog where it is installed.
"""

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from tests.bad_inputs.search_options import GEO_QUESTIONS
from tests.conftest import run
from tests.test_search import SENTENCES, end_or_go_on_model, tiny_model
from toolkit.cli_options import guided as cli_guided
from toolkit.cli_options import search_for
from toolkit.data.example import Example
from toolkit.data.vocabulary import Vocabulary
from toolkit.decoding import BeamSearch, GreedySearch, Search, search_with_beam
from toolkit.errors import ConfigurationError
from toolkit.execution import Denotation, Executor
from toolkit.execution.answer_kinds import GeoEnglish
from toolkit.grammars import SequenceGrammar
from toolkit.metrics import Metric

# The scripted model's first symbol and its probability; then it ends. Beam 3 keeps all three, in this order.
FIRST = {"state:t": 0.5, "city:t": 0.3, "s0": 0.2}


@Executor.register("fake_answers")
class FakeExecutor(Executor):
    """Every form answers ``["yes"]``, except the *failing* ones (an error) and the *empty* ones (no answer);
    it records the forms of each call.
    """

    def __init__(self, failing: list[str] = (), empty: list[str] = ()):
        self.failing, self.empty, self.calls = set(failing), set(empty), []

    def execute(self, forms):
        self.calls.append(list(forms))
        return [Denotation.error("fails") if form in self.failing else Denotation.of([] if form in self.empty else ["yes"]) for form in forms]


def scripted_model():
    """One symbol of FIRST, then the end: three finished outputs ranked state:t, city:t, s0."""
    model = tiny_model(SequenceGrammar(max_length=5))
    end = model.target_ids[Vocabulary.EOS]

    def step(prefix, context, states):
        log_probs = torch.full((prefix.size(0), len(model.target_tokens)), float("-inf"))
        if prefix.size(1) == 1:
            for symbol, p in FIRST.items():
                log_probs[:, model.target_ids[symbol]] = torch.tensor(p).log()
        else:
            log_probs[:, end] = 0.0
        return log_probs, context

    model.decode_step = step
    return model


def guided(beam_size=3, **fake) -> BeamSearch:
    return BeamSearch(beam_size=beam_size).guided_by(FakeExecutor(**fake))


def test_the_unguided_beam_ranks_every_finished_hypothesis():
    model = scripted_model()
    search = BeamSearch(beam_size=3)
    ranked = search.ranked(model, model.decoding_batch([Example(SENTENCES[0])]), [model.grammar.initial_state(Example(SENTENCES[0]))])
    assert [[state.result() for state in hypotheses] for hypotheses in ranked] == [["state:t", "city:t", "s0"]]
    assert model.predict([Example(SENTENCES[0])], search) == ["state:t"]


def test_the_first_hypothesis_that_answers_replaces_the_top_one():
    model = scripted_model()
    search = guided(failing=["state:t"], empty=["city:t"])
    assert model.predict([Example(SENTENCES[0])], search) == ["s0"]  # an error, then nothing, then an answer
    assert search.guided_changes == 1
    search = guided(failing=["state:t"])
    assert model.predict([Example(SENTENCES[0])], search) == ["city:t"]  # the first one that answers, not the last


def test_the_top_hypothesis_stays_when_it_answers_or_when_none_does():
    model = scripted_model()
    search = guided(failing=["city:t"])
    assert model.predict([Example(SENTENCES[0])], search) == ["state:t"]
    assert search.execution_guided.calls == [["state:t"]]  # the others are never run
    search = guided(failing=["state:t", "s0"], empty=["city:t"])
    assert model.predict([Example(SENTENCES[0])], search) == ["state:t"]  # nothing is lost
    assert search.guided_changes == 0


def test_a_beam_of_one_is_unchanged():
    model = scripted_model()
    search = guided(beam_size=1, failing=["state:t"])
    assert model.predict([Example(SENTENCES[0])], search) == model.predict([Example(SENTENCES[0])], BeamSearch(beam_size=1)) == ["state:t"]
    assert search.guided_changes == 0


def test_one_executor_call_per_rank_for_the_undecided_inputs_of_a_batch():
    model = scripted_model()
    search = guided(failing=["state:t"])
    examples = [Example(sentence) for sentence in SENTENCES]
    assert model.predict(examples, search) == ["city:t"] * 3
    assert search.execution_guided.calls == [["state:t"] * 3, ["city:t"] * 3]
    assert search.guided_changes == 3


def test_the_guided_copy_leaves_the_model_s_search_as_it_was():
    model = scripted_model()
    own = BeamSearch(beam_size=3)
    copy = own.guided_by(FakeExecutor(failing=["state:t"]))
    assert own.execution_guided is None and copy.beam_size == own.beam_size
    assert model.predict([Example(SENTENCES[0])], own) == ["state:t"]
    assert model.predict([Example(SENTENCES[0])], copy) == ["city:t"]


def test_guidance_decodes_past_the_best_hypothesis_unless_told_to_stop_early():
    """Every step: end with p = 0.6, go on with '(' with p = 0.4. The empty output is best and fails to execute."""
    model = end_or_go_on_model()
    example = [Example(SENTENCES[0])]
    assert model.predict(example, BeamSearch(beam_size=3, length_penalty=0.0)) == [""]  # unguided, it stops at once
    assert model.predict(example, BeamSearch(beam_size=3, length_penalty=0.0).guided_by(FakeExecutor(failing=[""]))) == ["("]
    early = BeamSearch(beam_size=3, length_penalty=0.0, early_stopping=True).guided_by(FakeExecutor(failing=[""]))
    assert model.predict(example, early) == [""]  # nothing else finished: the best stays


def test_the_ranking_keeps_the_finished_beams_best_first():
    search = BeamSearch(beam_size=4, length_penalty=0.0)
    scores, lengths = torch.tensor([-1.0, float("-inf"), -0.5, -2.0]), torch.ones(4)
    assert search.ranking(scores, torch.tensor([True, True, False, True]), lengths) == [0, 3]  # the open and the dead left out
    assert search.ranking(scores, torch.tensor([False] * 4), lengths) == [2]  # none finished: the best raw score
    assert search.ranking(torch.tensor([-1.0, -1.0]), torch.tensor([True, True]), torch.ones(2)) == [0, 1]  # ties in beam order


def test_a_config_turns_it_on():
    search = Search.from_params({"type": "beam", "beam_size": 3, "execution_guided": {"type": "fake_answers", "failing": ["state:t"]}})
    assert isinstance(search.execution_guided, FakeExecutor)
    assert scripted_model().predict([Example(SENTENCES[0])], search) == ["city:t"]


def test_the_cli_flag_needs_an_executor_and_a_beam():
    no_executor = SimpleNamespace(metrics=[Metric.by_name("exact_match")()], model=SimpleNamespace(search=BeamSearch()))
    with pytest.raises(ConfigurationError, match=r"^--execution-guided needs an executor, and this archive has none"):
        cli_guided(None, no_executor)
    greedy = SimpleNamespace(metrics=[Metric.by_name("denotation_accuracy")(FakeExecutor())], model=SimpleNamespace(search=GreedySearch()))
    with pytest.raises(ConfigurationError, match="give --beam-size K"):
        cli_guided(None, greedy)
    search = cli_guided(BeamSearch(beam_size=2), greedy)
    assert search.beam_size == 2 and isinstance(search.execution_guided, FakeExecutor)
    with pytest.raises(ConfigurationError, match="give --beam-size K"):
        search_for(greedy, None, execution_guided=True)
    greedy.model.search = GreedySearch(max_steps=40)
    search = search_for(greedy, 2, execution_guided=True)  # a beam made of the greedy search, its step limit kept
    assert (search.beam_size, search.max_steps, search.fixed_steps) == (2, 40, True) and isinstance(search.execution_guided, FakeExecutor)


def test_evaluate_and_predict_guided_end_to_end(geo_raw_archive, tmp_path, monkeypatch, capsys, caplog):
    """A seconds-sized parser on a geo-raw slice: guidance only ever trades a failing form for one that answers."""
    archive = geo_raw_archive
    capsys.readouterr()  # training's output
    scores = {}
    for flags in ((), ("--execution-guided",)):
        code, out, err = run(monkeypatch, capsys, "evaluate", archive, archive.parent.parent / "test.tsv", "--beam-size", "4", "--device", "cpu", *flags)
        assert code == 0, err
        scores[flags] = json.loads(out)
    plain, guided_scores = scores[()], scores[("--execution-guided",)]
    assert "execution_guided_changes" not in plain and isinstance(guided_scores["execution_guided_changes"], int)
    assert guided_scores["denotation_prediction_failures"] <= plain["denotation_prediction_failures"]
    questions = tmp_path / "questions.txt"
    questions.write_text("What is the capital of Texas?\n", encoding="utf-8")
    with caplog.at_level("INFO", logger="toolkit.cli"):
        code, out, err = run(monkeypatch, capsys, "predict", archive, questions, "--execution-guided", "--beam-size", "3", "--device", "cpu")
    assert code == 0, err
    assert "execution guidance changed the choice of" in caplog.text
    [record] = [json.loads(line) for line in out.splitlines()]
    assert record["question"] == "What is the capital of Texas?" and ("answer" in record) != ("answer_error" in record)


def test_a_query_whose_answer_is_not_ground_is_passed_over_like_one_that_fails():
    """The scripted beam's best output stands for ``_answer ( A , _state ( B ) )``, run by SWI-Prolog over Geobase:
    its answer A is unbound, which used to be the answer ``["A"]`` and was chosen; the next one answers austin.
    """
    from tests.conftest import require_swipl
    from toolkit.execution import GeoQueryProlog
    from toolkit.params import data_root

    require_swipl()
    geo = Path(data_root()) / "geo-raw"
    if not (geo / "geoquery.pl").exists():
        pytest.skip(f"Geobase not found at {geo}")
    forms = {
        "state:t": "_answer ( A , _state ( B ) )",
        "city:t": "_answer ( A , ( _capital ( A ) , _loc ( A , B ) , _const ( B , _stateid ( texas ) ) ) )",
        "s0": "_answer ( A , _river ( A ) )",
    }

    class Standing(Executor):
        """Runs the form each scripted output stands for."""

        def __init__(self, executor):
            self.executor = executor

        def execute(self, outputs):
            return self.executor.execute([forms[output] for output in outputs])

    with GeoQueryProlog(str(geo), timeout_seconds=600.0) as prolog:
        assert not prolog.execute([forms["state:t"]])[0].ok
        search = BeamSearch(beam_size=3).guided_by(Standing(prolog))
        assert scripted_model().predict([Example(SENTENCES[0])], search) == ["city:t"]
        assert search.guided_changes == 1


# ------------------------------------------------------------------ confidence: each reading's share of the beam's probability


def test_each_reading_has_its_share_of_the_beams_probability():
    model = scripted_model()
    [readings] = BeamSearch(beam_size=3).ranked(model, model.decoding_batch([Example(SENTENCES[0])]), [model.grammar.initial_state(Example(SENTENCES[0]))])
    assert readings.shares == pytest.approx([0.5, 0.3, 0.2])  # FIRST's probabilities: the one symbol, then an end of probability 1


def test_an_abstaining_beam_doubts_a_reading_it_holds_little_of_and_says_so_in_the_example():
    model = scripted_model()
    example = Example(SENTENCES[0])
    search = BeamSearch(beam_size=3, abstain=True, min_confidence=0.4).guided_by(FakeExecutor(failing=["state:t"]))
    assert model.predict([example], search) == ["city:t"]  # still the reading guidance takes, for metrics to score
    assert "30%" in example.meta["doubt"] and "40%" in example.meta["doubt"] and search.abstentions == 1
    trusted = BeamSearch(beam_size=3, abstain=True, min_confidence=0.25).guided_by(FakeExecutor(failing=["state:t"]))
    assert model.predict([example], trusted) == ["city:t"] and "doubt" not in example.meta  # a later search's own verdict
    assert trusted.abstentions == 0


def test_min_confidence_acts_only_with_abstain_and_also_without_guidance():
    model = scripted_model()
    example = Example(SENTENCES[0])
    assert model.predict([example], BeamSearch(beam_size=3, min_confidence=0.9)) == ["state:t"] and "doubt" not in example.meta
    assert model.predict([example], BeamSearch(beam_size=3, abstain=True, min_confidence=0.6)) == ["state:t"]
    assert "50%" in example.meta["doubt"]
    assert model.predict([example], BeamSearch(beam_size=3, abstain=True, min_confidence=0.5)) == ["state:t"] and "doubt" not in example.meta


def test_min_confidence_is_a_share_of_probability():
    with pytest.raises(ConfigurationError, match="min_confidence"):
        Search.from_params({"type": "beam", "abstain": True, "min_confidence": 1.5})


# ------------------------------------------------------------------ --beam-size: another size, and everything else the archive's search has

COUNTS = {"guided_changes": 0, "abstentions": 0, "cut_short": 0, "stopped": 0}


def abstaining_beam() -> BeamSearch:
    """A beam configured as the main job's is, with every other setting off its default and its counts running."""
    search = BeamSearch(
        beam_size=5,
        length_penalty=0.3,
        max_steps=40,
        use_cache=False,
        early_stopping=True,
        execution_guided=FakeExecutor(failing=["state:t"]),
        answer_kinds=GeoEnglish(),
        abstain=True,
        min_confidence=0.4,
    )
    search.guided_changes = search.abstentions = search.cut_short = search.stopped = 2
    return search


def test_a_size_keeps_everything_else_the_archive_s_beam_has():
    """``--beam-size K`` built a plain beam: the executor, answer kinds, abstention and min_confidence were gone."""
    own = abstaining_beam()
    resized = search_with_beam(own, 2)
    assert type(resized) is BeamSearch and vars(resized) == {**vars(own), "beam_size": 2, **COUNTS}
    assert own.beam_size == 5 and own.abstentions == 2  # the model's own search is left as it was
    guided = resized.guided_by(FakeExecutor())  # --execution-guided on top: another executor, nothing else changed
    assert vars(guided) == {**vars(resized), "execution_guided": guided.execution_guided}


def test_a_resized_beam_doubts_what_the_archive_s_beam_doubts():
    model, example = scripted_model(), Example(SENTENCES[0])
    for size in (3, 4):  # the scripted model has three readings: a wider beam finds the same
        search = search_with_beam(abstaining_beam(), size)
        assert model.predict([example], search) == ["city:t"] and "30%" in example.meta["doubt"] and search.abstentions == 1


def test_a_size_makes_a_greedy_search_a_beam_with_its_limits():
    beam = search_with_beam(GreedySearch(max_steps=40, use_cache=False), 3)
    assert (type(beam), beam.beam_size, beam.max_steps, beam.fixed_steps, beam.use_cache) == (BeamSearch, 3, 40, True, False)
    assert not search_with_beam(GreedySearch(), 3).fixed_steps  # each input keeps the limit its grammar gives
    plain = search_with_beam(None, 3)  # a tagger has no search
    assert plain.beam_size == 3 and plain.execution_guided is None and not plain.abstain
    assert search_with_beam(abstaining_beam(), None) is None  # the model's own search, as it is


@pytest.mark.parametrize("beam_size, message", [(0, "must be at least 1, got 0"), ("3", "expected int, got '3'")])
def test_a_bad_size_is_refused_as_the_config_s_beam_size_is(beam_size, message):
    for search in (abstaining_beam(), GreedySearch(), None):
        with pytest.raises(ConfigurationError, match=f"^beam_size: {message}$"):
            search_with_beam(search, beam_size)


def test_predict_at_a_size_abstains_where_the_archive_s_search_does(geo_abstaining_archive, tmp_path, monkeypatch, capsys):
    """The archive's guided beam of 3 abstains; ``--beam-size 3 --execution-guided``, alone or with an ensemble of the
    archive and itself, writes what its defaults write (a plain beam answered French and German questions with states).
    """
    archive = geo_abstaining_archive
    capsys.readouterr()  # training's output
    questions = tmp_path / "questions.txt"
    questions.write_text(GEO_QUESTIONS, encoding="utf-8")
    outputs = {}
    for flags in ((), ("--beam-size", "3", "--execution-guided"), ("--beam-size", "3", "--ensemble", archive)):
        code, out, err = run(monkeypatch, capsys, "predict", archive, questions, "--device", "cpu", *flags)
        assert code == 0, err
        outputs[flags] = [json.loads(line) for line in out.splitlines()]
    default = outputs[()]
    assert len(default) == 6 and any(record.get("abstained") for record in default)  # the checks have something to do
    assert all(records == default for records in outputs.values())


def test_load_predictor_and_serve_keep_the_checks_at_any_size(geo_abstaining_archive):
    from toolkit import load_predictor
    from toolkit.serving.server import describe

    own = load_predictor(geo_abstaining_archive, device="cpu")
    for predictor in (
        load_predictor(geo_abstaining_archive, device="cpu", beam_size=5),
        load_predictor(geo_abstaining_archive, device="cpu", beam_size=5, ensemble=[geo_abstaining_archive]),
    ):
        search, archive_search = predictor.search, predictor.model.search
        assert search is not archive_search and (search.beam_size, archive_search.beam_size) == (5, 3)
        assert vars(search) == {**vars(archive_search), "beam_size": 5}
        assert (search.abstain, search.min_confidence, search.length_penalty, type(search.answer_kinds)) == (True, 0.5, 0.5, GeoEnglish)
        assert search.execution_guided is not None
        assert describe(geo_abstaining_archive, predictor, "semantic_parser")["search"] == {"type": "BeamSearch", "beam_size": 5}  # what serve's /info says
    same = load_predictor(geo_abstaining_archive, device="cpu", beam_size=3)
    texts = GEO_QUESTIONS.splitlines()
    assert same.predict_batch(texts) == own.predict_batch(texts)
