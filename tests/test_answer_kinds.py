"""Answers of the kind the question asks for, and abstaining where no reading gives one (issue 61 items 4, 5, 8).

The rules run on questions written here, none from GEO's data; the guide and the predictor are checked with
hand-made hypotheses and a fake executor whose answers carry kinds, then with SWI-Prolog over Geobase
where it is installed, and end to end on a seconds-sized parser whose config turns both on.
"""

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import run
from toolkit.data.example import Example
from toolkit.decoding import BeamSearch, Search
from toolkit.execution import Denotation, Executor
from toolkit.execution.answer_kinds import AnswerKinds, GeoEnglish
from toolkit.params import data_root

RULES = GeoEnglish()
GEO = Path(data_root()) / "geo-raw"


@pytest.mark.parametrize(
    "question, wanted",
    [
        ("How many rivers run through Colorado?", "a number"),
        ("how much water does lake superior hold", "a number"),
        ("Colorado has how many rivers", "a number"),
        ("count the states next to ohio", "a number"),
        ("How high is Mount Hood?", "a number"),
        ("how long is the rio grande", "a number"),
        ("How big is Nevada?", "a number"),
        ("how large is the biggest lake", "a number"),
        ("What is the capital of Ohio?", "a city"),
        ("what's the capitol of maine", "a city"),
        ("What state capital is the smallest?", "a city"),
        ("which state's capital is boise", "a state"),
        ("what states capital is salem", "a state"),
        ("Which states touch Nevada?", "a state"),
        ("what are the 3 largest states", "a state"),
        ("Which city in Utah has the most people?", "a city"),
        ("Which rivers cross Kansas?", "a river"),
        ("name every lake in minnesota", "a lake"),
        ("list the tallest mountains in alaska", "a mountain"),
        ("what is the lowest point in louisiana", "a high or low point"),
        ("What is the highest elevation in Maine?", "a height or the point at that height"),
        ("what is the elevation of mount hood", "a number"),
        ("What is Ohio's population?", "a number"),
        ("what is the combined area of the states bordering iowa", "a number"),
        ("what is the name of the longest river in oregon", "a river"),
        ("What's the postal abbreviation of Vermont?", "an abbreviation"),
        ("Where is Lake Tahoe?", "a place"),
        ("can you tell me which states border utah", "a state"),
        ("Who is the governor of Ohio?", "a person"),
        ("name the mayor of boston", "a person"),
        ("When did Ohio become a state?", "a date or time"),
        ("tell me about the weather in denver", "the weather"),
        ("what is the average temperature in reno", "the weather"),
        ("How many national parks does Wyoming have?", "a kind of place or thing that Geobase does not hold"),
        ("which is the tallest building in chicago", "a kind of place or thing that Geobase does not hold"),
        ("name the universities in iowa", "a kind of place or thing that Geobase does not hold"),
        ("how many counties are in delaware", "a kind of place or thing that Geobase does not hold"),
    ],
)
def test_the_rules_read_the_kind_asked_from_the_question_words(question, wanted):
    expected = RULES.expected(question)
    assert expected is not None and expected.wanted == wanted


@pytest.mark.parametrize(
    "question",
    ["is ohio a state", "tell me a story", "ohio rivers", "what borders ohio", "what does the mississippi river run through", "hello"],
)
def test_where_the_rules_cannot_tell_any_answer_fits(question):
    assert RULES.expected(question) is None
    assert RULES.problem(question, Denotation.of(["3"], ["number"])) is None


NOUNS = {"states": "a state", "cities": "a city", "rivers": "a river", "lakes": "a lake", "capitals": "a city"}
QUALIFIERS = ["the", "all", "major", "largest", "most", "populous", "50", "other", "biggest", "northernmost"]


@given(
    start=st.sampled_from(["which", "what are the", "name the", "list all the", "give me the", "show me the"]),
    qualifiers=st.lists(st.sampled_from(QUALIFIERS), max_size=4),
    noun=st.sampled_from(sorted(NOUNS)),
    then=st.sampled_from(["in", "that", "with", "border", "of", "are"]),
    rest=st.lists(st.sampled_from(["in", "ohio", "border", "that", "with", "people", "population", "area", "of"]), max_size=6),
)
def test_words_that_only_qualify_the_head_noun_leave_its_kind_and_what_follows_it_does_not_matter(start, qualifiers, noun, then, rest):
    """Past the head noun and a word that is no noun ("states population" would be the states' population), nothing counts."""
    question = " ".join([start, *qualifiers, noun, then, *rest])
    assert RULES.expected(question).wanted == NOUNS[noun]


@given(rest=st.lists(st.sampled_from(["states", "people", "live", "in", "the", "capital", "of", "texas", "who", "where", "rivers"]), max_size=8))
def test_how_many_of_what_geobase_holds_asks_for_a_number(rest):
    assert RULES.expected(" ".join(["how", "many", *rest])).wanted == "a number"


def test_no_answer_fits_a_question_about_what_geobase_does_not_hold():
    assert RULES.problem("how many airports are in ohio", Denotation.of(["0"], ["number"])) is not None
    assert RULES.problem("how many lakes are in ohio", Denotation.of(["0"], ["number"])) is None


def test_an_answer_of_another_kind_is_a_problem_an_empty_or_untyped_one_is_not():
    city = RULES.expected("what is the capital of ohio")
    assert city.problem(Denotation.of(["columbus"], ["city"])) is None
    assert city.problem(Denotation.of(["10797600"], ["number"])) == "the question asks for a city, and no reading of it gives one"
    assert city.problem(Denotation.of(["ohio", "columbus"], ["state", "city"])) is not None  # every answer must fit
    assert city.problem(Denotation.of([])) is None and city.problem(Denotation.of(["columbus"])) is None
    person = RULES.expected("who is the president?")
    for denotation in (Denotation.of(["california"], ["state"]), Denotation.of([])):
        assert person.problem(denotation) == "the question asks for a person, and Geobase holds nothing of that kind"


# ------------------------------------------------------------------ the guide: hypotheses the search ranked, a fake executor


class Hypothesis:
    """What the guide reads of a finished hypothesis: its result, its question, the entities it names and the question does not."""

    def __init__(self, result: str, question: str | None = "how many rivers are in ohio", unnamed: tuple[str, ...] = (), unused: tuple[str, ...] = ()):
        self._result, self.question, self._unnamed, self._unused = result, question, list(unnamed), list(unused)

    def result(self) -> str:
        return self._result

    def unnamed(self) -> list[str]:
        return self._unnamed

    def unused(self) -> list[str]:
        return self._unused


@Executor.register("typed_answers")
class TypedAnswers(Executor):
    """Answers each form with the denotation it is mapped to (an error where it is not); records its calls."""

    def __init__(self, answers: dict):
        self.answers, self.calls = answers, []

    def execute(self, forms):
        self.calls.append(list(forms))
        return [self.answers.get(form, Denotation.error("unknown")) for form in forms]


RIVERS, COUNT = Denotation.of(["ohio", "scioto"], ["river"]), Denotation.of(["2"], ["number"])


def guiding(answers: dict, **settings) -> BeamSearch:
    return BeamSearch(beam_size=3, **settings).guided_by(TypedAnswers(answers))


def test_the_guide_passes_over_an_answer_of_the_wrong_kind():
    ranked = [[Hypothesis("rivers"), Hypothesis("count")]]
    assert [state.result() for state in guiding({"rivers": RIVERS, "count": COUNT}).guide(ranked)] == ["rivers"]  # without kinds: the first that answers
    search = guiding({"rivers": RIVERS, "count": COUNT}, answer_kinds=GeoEnglish())
    assert [state.result() for state in search.guide(ranked)] == ["count"]
    assert search.guided_changes == 1 and search.abstentions == 0


def test_where_no_reading_passes_the_best_stays_and_an_abstaining_search_counts_it():
    ranked = [[Hypothesis("rivers"), Hypothesis("broken")], [Hypothesis("count")], [Hypothesis("empty")]]
    answers = {"rivers": RIVERS, "count": COUNT, "empty": Denotation.of([])}
    search = guiding(answers, answer_kinds=GeoEnglish(), abstain=True)
    assert [state.result() for state in search.guide(ranked)] == ["rivers", "count", "empty"]
    assert search.abstentions == 1  # the rivers; "empty" ran, fits, and is an answer (none), as without guidance
    assert guiding(answers, answer_kinds=GeoEnglish()).guide(ranked)[0].result() == "rivers"  # kinds without abstain count nothing


def test_an_abstaining_guide_passes_over_a_reading_that_names_what_the_question_does_not():
    ranked = [[Hypothesis("usa", unnamed=("country",)), Hypothesis("count")]]
    answers = {"usa": Denotation.of(["307890000"], ["number"]), "count": COUNT}
    assert guiding(answers).guide(ranked)[0].result() == "usa"
    assert guiding(answers, abstain=True).guide(ranked)[0].result() == "count"


def test_an_abstaining_guide_passes_over_a_reading_that_leaves_out_what_the_question_names():
    ranked = [[Hypothesis("all rivers", unused=("ohio",)), Hypothesis("rivers")]]
    answers = {"all rivers": Denotation.of(["mississippi", "ohio", "scioto"], ["river"]), "rivers": RIVERS}
    assert guiding(answers).guide(ranked)[0].result() == "all rivers"
    assert guiding(answers, abstain=True).guide(ranked)[0].result() == "rivers"


def test_a_hypothesis_without_a_question_is_checked_for_running_alone():
    ranked = [[Hypothesis("rivers", question=None)]]
    search = guiding({"rivers": RIVERS}, answer_kinds=GeoEnglish(), abstain=True)
    assert search.guide(ranked)[0].result() == "rivers" and search.abstentions == 0


def test_the_config_switches_each_on():
    search = Search.from_params(
        {"type": "beam", "execution_guided": {"type": "typed_answers", "answers": {}}, "answer_kinds": {"type": "geo_english"}, "abstain": True}
    )
    assert isinstance(search.answer_kinds, GeoEnglish) and search.abstain is True
    plain = Search.from_params({"type": "beam"})
    assert plain.answer_kinds is None and plain.abstain is False
    assert isinstance(AnswerKinds.from_params({}), GeoEnglish)  # the default implementation
    copy = search.guided_by(TypedAnswers({}))
    assert copy.answer_kinds is search.answer_kinds and copy.abstain and copy.abstentions == 0


# ------------------------------------------------------------------ what the predictor writes


def anonymizer():
    from toolkit.entities.anonymizer import Anonymizer

    if not (GEO / "geo_entities.json").exists():
        pytest.skip(f"geo-raw not found at {GEO}")
    return Anonymizer.from_params({"type": "geo_prolog", "finder": {"type": "lexicon", "lexicon": {"path": str(GEO / "geo_entities.json")}}, "unknown": "keep"})


def predictor(answers: dict, anonymizing=None, **settings):
    """The semantic parser predictor around a fake executor and a search with *settings*, without a model."""
    from predictors.semantic_parser import SemanticParserPredictor

    parser = object.__new__(SemanticParserPredictor)
    parser.search, parser.executor, parser.anonymizer = BeamSearch(**settings), TypedAnswers(answers), anonymizing
    parser.model = SimpleNamespace(search=parser.search)
    return parser


def question(text: str, mentions=()) -> Example:
    return Example(text.lower().split(), meta={"question": text, "mentions": list(mentions)})


def test_the_predictor_abstains_in_plain_words_where_the_search_abstains():
    answers = {"count": COUNT, "rivers": RIVERS, "broken": Denotation.error("Unknown procedure: capitol/1")}
    kinds = predictor(answers, answer_kinds=GeoEnglish(), abstain=True)
    assert kinds.to_json(question("How many rivers are in Ohio?"), "count")["answer"] == ["2"]
    output = kinds.to_json(question("How many rivers are in Ohio?"), "rivers")
    assert output == {
        "question": "How many rivers are in Ohio?",
        "logical_form": "rivers",
        "answer_error": "the question asks for a number, and no reading of it gives one",
        "abstained": True,
    }
    failed = kinds.to_json(question("How many rivers are in Ohio?"), "broken")
    assert failed["abstained"] and failed["answer_error"] == (
        "the query could not run (it is malformed, names an unknown predicate, or failed while running): Unknown procedure: capitol/1"
    )
    guessing = predictor(answers, answer_kinds=GeoEnglish())  # kinds guide the beam, and the best reading's answer is given
    assert guessing.to_json(question("How many rivers are in Ohio?"), "rivers")["answer"] == ["ohio", "scioto"]
    plain = guessing.to_json(question("How many rivers are in Ohio?"), "broken")
    assert "abstained" not in plain and plain["answer_error"].startswith("the query could not run (") and not plain["answer_error"].startswith("error")


def test_the_predictor_abstains_where_the_search_doubts_the_reading_it_took():
    doubted = question("How many rivers are in Ohio?")
    doubted.meta["doubt"] = "I am not sure what the question asks (my reading of it has 30% of my confidence; I answer from 50%)"
    output = predictor({"count": COUNT}, answer_kinds=GeoEnglish(), abstain=True).to_json(doubted, "count")
    assert output["abstained"] and output["answer_error"] == doubted.meta["doubt"] and "answer" not in output
    assert predictor({"count": COUNT}, answer_kinds=GeoEnglish()).to_json(doubted, "count")["answer"] == ["2"]  # no abstaining: the answer
    output = predictor({"rivers": RIVERS}, answer_kinds=GeoEnglish(), abstain=True).to_json(doubted, "rivers")
    assert output["answer_error"] == "the question asks for a number, and no reading of it gives one"  # the plainer reason first


def test_the_predictor_names_no_placeholder_and_says_what_the_question_does_not_name():
    anonymizing = anonymizer()
    usa = "_answer ( A , ( _population ( B , A ) , _const ( B , _countryid ( usa ) ) ) )"
    answers = {usa: Denotation.of(["307890000"], ["number"])}
    weather = predictor(answers, anonymizing, abstain=True).to_json(question("tell me about the weather"), usa)
    assert weather["abstained"] and weather["answer_error"] == "I found no state, city, river, lake or mountain named in the question"
    assert predictor(answers, anonymizing, abstain=True).to_json(question("how many people live in the US?"), usa)["answer"] == ["307890000"]
    assert predictor(answers, anonymizing).to_json(question("tell me about the weather"), usa)["answer"] == ["307890000"]  # no abstaining: the answer
    texas = anonymizing.anonymize("what rivers run through texas ?".split()).placeholders
    unrestored = "_answer ( A , ( _river ( A ) , _const ( A , _riverid ( e0 ) ) ) )"
    output = predictor({}, anonymizing).to_json(question("what rivers run through texas ?", texas), unrestored)
    assert output["answer_error"] == "I found no river named in the question" and "e0" not in output["answer_error"] and "abstained" not in output


def test_a_mention_the_query_leaves_out_is_read_off_its_constants():
    from toolkit.grammars.anonymized import unused_mentions

    anonymizing = anonymizer()
    mentions = anonymizing.anonymize("how many people live in austin texas ?".split()).placeholders
    city = "_answer ( A , ( _population ( B , A ) , _const ( B , _cityid ( austin , tx ) ) ) )"
    assert unused_mentions(anonymizing, city, mentions) == []  # texas, as the city's state
    anywhere = "_answer ( A , ( _population ( B , A ) , _const ( B , _cityid ( austin , _ ) ) ) )"
    assert unused_mentions(anonymizing, anywhere, mentions) == ["texas"]
    rivers = anonymizing.anonymize("what rivers flow through mississippi ?".split()).placeholders
    river = "_answer ( A , ( _river ( A ) , _traverse ( A , B ) , _const ( B , _riverid ( mississippi ) ) ) )"
    assert unused_mentions(anonymizing, river, rivers) == []  # any reading of the mention counts
    assert unused_mentions(anonymizing, "_answer ( A , _river ( A ) )", rivers) == ["mississippi"]
    output = predictor({"_answer ( A , _river ( A ) )": RIVERS}, anonymizing, abstain=True).to_json(
        question("what rivers flow through mississippi ?", rivers), "_answer ( A , _river ( A ) )"
    )
    assert output["abstained"] and output["answer_error"] == "no reading of the question is about mississippi, which it names"


def test_unnamed_entities_are_read_off_the_query_the_question_and_its_mentions():
    from toolkit.grammars.anonymized import unnamed_entities

    anonymizing = anonymizer()
    usa = "_answer ( A , ( _population ( B , A ) , _const ( B , _countryid ( usa ) ) ) )"
    assert unnamed_entities(anonymizing, usa, "tell me about the weather", []) == ["country"]
    for named in ("how many people live in the us", "What is America's population?", "how many people live in this country"):
        assert unnamed_entities(anonymizing, usa, named, []) == []
    assert unnamed_entities(anonymizing, usa, None, []) == []  # no question: only placeholders left count
    texas = anonymizing.anonymize("how many people live in texas ?".split()).placeholders
    restored = "_answer ( A , ( _population ( B , A ) , _const ( B , _stateid ( texas ) ) ) )"
    assert unnamed_entities(anonymizing, restored, "how many people live in texas ?", texas) == []
    assert unnamed_entities(anonymizing, restored, "how many people live here ?", []) == ["state"]
    city = "_answer ( A , ( _population ( B , A ) , _const ( B , _cityid ( austin , e1 ) ) ) )"
    assert unnamed_entities(anonymizing, city, "how many people live in austin", []) == ["state"]  # a city's state restore could not fill


# ------------------------------------------------------------------ with SWI-Prolog over Geobase


def test_the_guide_reads_the_kinds_off_geobase_s_typed_answers():
    from tests.conftest import require_swipl
    from toolkit.execution import GeoQueryProlog

    require_swipl()
    if not (GEO / "geoquery.pl").exists():
        pytest.skip(f"Geobase not found at {GEO}")
    rivers = "_answer ( A , ( _river ( A ) , _loc ( A , B ) , _const ( B , _stateid ( ohio ) ) ) )"
    count = "_answer ( A , _count ( B , ( _river ( B ) , _loc ( B , C ) , _const ( C , _stateid ( ohio ) ) ) , A ) )"
    capital = "_answer ( A , ( _capital ( A ) , _loc ( A , B ) , _const ( B , _stateid ( ohio ) ) ) )"
    with GeoQueryProlog(str(GEO), timeout_seconds=600.0) as prolog:
        assert [denotation.kinds for denotation in prolog.execute([rivers, count, capital])] == [("river",), ("number",), ("city",)]
        search = BeamSearch(beam_size=3, answer_kinds=GeoEnglish(), abstain=True).guided_by(prolog)
        ranked = [
            [Hypothesis(rivers), Hypothesis(count)],
            [Hypothesis(count, "what is the capital of ohio"), Hypothesis(capital, "what is the capital of ohio")],
        ]
        assert [state.result() for state in search.guide(ranked)] == [count, capital]
        assert search.guided_changes == 2 and search.abstentions == 0


def test_evaluate_and_predict_abstain_end_to_end(geo_raw_archive, tmp_path, monkeypatch, capsys):
    """A seconds-sized parser whose search has answer kinds and abstains: evaluate reports the rate, predict abstains
    on a question that asks for what Geobase does not hold, whatever the parser wrote.
    """
    run_directory = geo_raw_archive.parent
    config = json.loads((run_directory / "config.json").read_text(encoding="utf-8"))
    executor = config["metrics"][1]["executor"]
    overrides = {"model.search": {"type": "beam", "beam_size": 3, "execution_guided": executor, "answer_kinds": {"type": "geo_english"}, "abstain": True}}
    code, out, err = run(
        monkeypatch,
        capsys,
        "train",
        str(run_directory / "config.json"),
        "-s",
        str(tmp_path / "run"),
        "-o",
        json.dumps({**overrides, "trainer.progress_bar": False}),
    )
    assert code == 0, err
    archive = tmp_path / "run" / "model.tar.gz"
    code, out, err = run(monkeypatch, capsys, "evaluate", str(archive), str(run_directory.parent / "test.tsv"), "--device", "cpu")
    assert code == 0, err
    scores = json.loads(out)
    assert 0.0 <= scores["abstained"] <= 1.0 and "denotation_accuracy" in scores
    questions = tmp_path / "questions.txt"
    questions.write_text("Who is the president?\nWhat is the capital of Texas?\n", encoding="utf-8")
    code, out, err = run(monkeypatch, capsys, "predict", str(archive), str(questions), "--device", "cpu")
    assert code == 0, err
    president, capital = (json.loads(line) for line in out.splitlines())
    assert president["abstained"] is True and "answer" not in president
    assert president["answer_error"] in ("the question asks for a person, and Geobase holds nothing of that kind",) or president["answer_error"].startswith(
        ("I found no", "the query could not run", "the query ran past", "the query needed")
    )
    assert ("answer" in capital) != ("answer_error" in capital) and "e0" not in capital.get("answer_error", "")
