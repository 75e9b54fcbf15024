"""Twenty fresh questions about US geography, with their gold Prolog queries and answers from Geobase.

``tests/fixtures/geo_fresh_questions.tsv`` has one question a line and three tab-separated columns
(no header: the tsv reader has no comment lines, and it reads two columns, so this file is read
here and by ``benchmarks/geo_answers.py``, never as training data):

1. the question as a user would type it (``What is the area of NY?``, ``what's the tallest
   mountain in Washington state``): mixed case, ``?`` attached, abbreviations, multiword and
   ambiguous names (``salt lake city``, ``new york``, ``mississippi`` the state and the river,
   ``washington``), and names of Geobase's lexicon that no training question has (``boise``,
   ``tahoe``, ``mount rainier``, ``snake``, ``albuquerque``, ``yellowstone``);
2. its gold query in the GEO data's token format (``_answer ( A , ... )``, multiword names as
   ``' salt lake city '``), so the anonymizer and the executor read it as they read the data;
3. the answer SWI-Prolog gives for the gold query (``geoquery_prolog``: ``Denotation.answers``) as a
   JSON list, hand-checked against ``geobase.pl`` (Maryland's density: 4217000 / 10460).

The questions were written for this file: none is in GEO's train or test files (checked below) or
rewords one of their questions; some share a pattern with a question about another entity
(``How many states border Missouri?``), as most GEO questions do. Each test says what it needs:
``swipl`` (skipped where missing, but a failure with ``REQUIRE_SWIPL=1``, as in
``tests/test_execution.py``) or the GEO data under ``DATA_ROOT/geo-raw`` (skipped where missing).

The larger set (issue 61), ``tests/fixtures/geo_fresh_dev.tsv`` and ``geo_fresh_heldout.tsv``, is
checked here without any trained model: each half is what ``tests/fixtures/geo_fresh_build.py``
writes (its header, four columns, its order), the styles come from its fixed list in balanced
numbers, no question is written twice or is one of GEO's, the halves are its stated split, and
every gold query executes to its recorded answer. ``benchmarks/geo_answers.py`` reads both formats
and scores an output right, wrong or abstained as its docstring says.
"""

import importlib.util
import json
import random
import re
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import REPO, require_swipl
from tests.fixtures.geo_fresh_build import HALVES, STYLES, FreshQuestion, header, ordered, read, split
from toolkit.data.dataset_readers import TsvReader
from toolkit.entities import Anonymizer, find_constants, normalize
from toolkit.execution import GeoQueryProlog
from toolkit.params import data_root

FIXTURE = Path(__file__).parent / "fixtures" / "geo_fresh_questions.tsv"
GEO = Path(data_root()) / "geo-raw"
DATA_FILES = ("geo_prolog_train.tsv", "geo_prolog_test.tsv", "geo_prolog_test_fixed.tsv")


def read_fixture() -> list[tuple[str, str, list[str]]]:
    """(question, gold query, answers) per line of the fixture."""
    rows = []
    for line in FIXTURE.read_text(encoding="utf-8").splitlines():
        question, gold, answers = line.split("\t")
        rows.append((question, gold, json.loads(answers)))
    return rows


ROWS = read_fixture()
IDS = [question for question, _, _ in ROWS]
LARGER = {half: read(path) for half, path in HALVES.items()}
FRESH = [row for rows in LARGER.values() for row in rows]


def needs(*names: str) -> Path:
    """The GEO raw data folder, or a skip when one of the *names* is not in it."""
    missing = [name for name in names if not (GEO / name).is_file()]
    if missing:
        pytest.skip(f"GEO raw data not found at {GEO}: {', '.join(missing)}")
    return GEO


def words(question: str) -> str:
    """A question as comparable text: lower case, words and numbers only."""
    return " ".join(re.findall(r"[a-z0-9]+", question.lower()))


@pytest.fixture(scope="module")
def executor():
    require_swipl()
    folder = needs("geobase.pl", "geoquery.pl")
    # The default inference limit decides; the time limit is a backstop no busy machine comes near (no test may depend on speed).
    with GeoQueryProlog(str(folder), workers=1, timeout_seconds=600.0) as executor:
        yield executor


@pytest.fixture(scope="module", params=[False, True], ids=["plain", "type_words"])
def anonymizer(request):
    """The anonymizer of ``jsonnet_configs/geo_raw_transformer.jsonnet``, with and without its ``type_words``
    (``unknown: "error"``: a gap is a failure here).
    """
    lexicon = needs("geo_entities.json") / "geo_entities.json"
    return Anonymizer.from_params({"type": "geo_prolog", "finder": {"type": "lexicon", "lexicon": {"path": str(lexicon)}}, "type_words": request.param})


def test_the_fixture_is_twenty_distinct_questions_with_answers():
    assert len(ROWS) == 20
    assert len({words(question) for question in IDS}) == 20
    for question, gold, answers in ROWS:
        assert question == question.strip() and "\t" not in question
        assert gold.startswith("_answer ( A , ") and gold == " ".join(gold.split())
        assert answers and answers == sorted(set(answers)), question  # as a Denotation writes them


@pytest.mark.parametrize(("question", "gold", "answers"), ROWS, ids=IDS)
def test_every_gold_query_executes_to_its_stated_answer(executor, question, gold, answers):
    (denotation,) = executor.execute([gold])
    assert denotation.ok, f"{question}: {denotation}"
    assert list(denotation.answers) == answers


@pytest.mark.parametrize(("question", "gold", "answers"), ROWS, ids=IDS)
def test_the_lexicon_finds_every_entity_of_the_gold_query(anonymizer, question, gold, answers):
    """Tokenized as the predictor tokenizes a raw question, the question's mentions cover every entity constant
    of the gold query: each becomes a placeholder, restoring the placeholders gives the gold query back, and
    the finder finds no entity the query does not name (``Which state has the fewest people?`` has none).
    """
    tokens = TsvReader(anonymizer=anonymizer).text_to_example(question).meta["question"].split()
    anonymized = anonymizer.anonymize(tokens, gold)
    constants = [constant for constant in find_constants(gold.split()) if constant.constructor in anonymizer.constructors]
    assert anonymized.unmatched == [], f"{question}: {tokens}"
    assert anonymized.replaced == len(constants)
    for constant in find_constants(anonymized.logical_form):
        assert constant.name_words[0].startswith(anonymizer.prefix), constant
        assert constant.state in (None, "_") or constant.state.startswith(anonymizer.prefix), constant  # "springfield , il"
    assert anonymizer.restore(anonymized.logical_form, anonymized.placeholders).text == gold
    used = {token for token in anonymized.logical_form if re.fullmatch(rf"{anonymizer.prefix}\d+", token)}
    assert len(used) == len(anonymized.placeholders), f"{question}: a mention the gold query does not use: {anonymized.placeholders}"


def test_no_question_is_in_the_geo_data():
    folder = needs(*DATA_FILES)
    known = {words(line.split("\t")[0]) for name in DATA_FILES for line in (folder / name).read_text(encoding="utf-8").splitlines() if line.strip()}
    assert len(known) > 800
    assert [question for question in IDS + [row.question for row in FRESH] if words(question) in known] == []


def test_some_entities_are_in_the_lexicon_but_in_no_training_question(anonymizer):
    """At least two gold entities are names no training question uses: the parser never saw them."""
    folder = needs("geo_prolog_train.tsv")
    training = " | ".join(normalize(line.split("\t")[0]) for line in (folder / "geo_prolog_train.tsv").read_text(encoding="utf-8").splitlines())
    unseen = set()
    for _, gold, _ in ROWS:
        for constant in find_constants(gold.split()):
            name = normalize(" ".join(constant.name_words))
            if constant.constructor in anonymizer.constructors and anonymizer.lexicon.lookup(name) and not re.search(rf"\b{re.escape(name)}\b", training):
                unseen.add(name)
    assert len(unseen) >= 2, unseen


def test_each_half_of_the_larger_set_is_what_its_builder_writes():
    """Header, columns (JSON answers as ``json.dumps`` writes them, ``-`` and ``null`` for no query) and order: a
    hand edit of a half shows here until ``python tests/fixtures/geo_fresh_build.py`` has run.
    """
    for half, path in HALVES.items():
        assert path.read_text(encoding="utf-8") == header(half, len(FRESH)) + "".join(row.line() + "\n" for row in ordered(LARGER[half])), half


def test_the_larger_set_is_well_formed():
    assert len(FRESH) >= 120
    texts = [words(row.question) for row in FRESH] + [words(question) for question in IDS]
    assert [text for text, count in Counter(texts).items() if count > 1] == []
    for row in FRESH:
        assert row.question == " ".join(row.question.split()) and row.question, row
        assert row.styles and set(row.styles) <= set(STYLES) and len(set(row.styles)) == len(row.styles), row
        assert "unanswerable" not in row.styles[1:], row  # its own stratum, so each half has half of them
        assert ("unanswerable" in row.styles) == (row.gold is None) == (row.answers is None), row
        if row.gold is not None:
            assert row.gold.startswith("_answer ( A , ") and row.gold == " ".join(row.gold.split()), row
            assert row.answers and list(row.answers) == sorted(set(row.answers)), row  # as a Denotation writes them
        plain = row.question == row.question.lower() and not re.search(r"[?!.,;:]", row.question)
        assert ("lowercase" in row.styles) == plain, row
    first = Counter(row.styles[0] for row in FRESH)
    assert set(first) == set(STYLES)
    assert min(first.values()) >= 12, first
    assert 0.12 <= first["unanswerable"] / len(FRESH) <= 0.20, first  # about 15%


def test_the_halves_are_the_stated_split():
    by_question = {half: sorted(rows, key=lambda row: row.question) for half, rows in split(FRESH).items()}
    assert by_question == {half: sorted(rows, key=lambda row: row.question) for half, rows in LARGER.items()}
    assert len(LARGER["dev"]) == len(LARGER["heldout"])


@given(
    st.lists(st.tuples(st.text(min_size=1), st.sampled_from(list(STYLES))), unique_by=lambda pair: pair[0], max_size=60),
    st.randoms(use_true_random=False),
)
def test_the_split_rule_is_stratified_even_and_blind_to_order(pairs, shuffler: random.Random):
    rows = [FreshQuestion(question, None, None, (style,)) for question, style in pairs]
    halves = split(rows)
    shuffled = list(rows)
    shuffler.shuffle(shuffled)
    assert split(shuffled) == halves
    assert sorted(halves["dev"] + halves["heldout"], key=lambda row: row.question) == sorted(rows, key=lambda row: row.question)
    for style in STYLES:
        dev, heldout = (sum(row.styles[0] == style for row in halves[half]) for half in ("dev", "heldout"))
        assert dev - heldout in (0, 1), style


def test_every_gold_query_of_the_larger_set_executes_to_its_recorded_answer(executor):
    answerable = [row for row in FRESH if row.answerable]
    denotations = executor.execute([row.gold for row in answerable])
    assert [f"{row.question}: {denotation}" for row, denotation in zip(answerable, denotations) if not denotation.ok or denotation.answers != row.answers] == []


def load_benchmark():
    spec = importlib.util.spec_from_file_location("geo_answers", REPO / "benchmarks" / "geo_answers.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_benchmark_reads_both_formats_and_scores_right_wrong_and_abstained():
    benchmark = load_benchmark()
    assert [path.resolve() for path in benchmark.QUESTIONS] == [FIXTURE.resolve(), HALVES["dev"]]  # the held-back half only when named
    twenty = benchmark.read_questions(FIXTURE)
    assert [(row.question, row.gold, row.answers, row.styles) for row in twenty] == [(question, gold, answers, ()) for question, gold, answers in ROWS]
    for half, path in HALVES.items():
        read_back = [(row.question, row.gold, row.answers, row.styles) for row in benchmark.read_questions(path)]
        assert read_back == [(row.question, row.gold, None if row.answers is None else list(row.answers), row.styles) for row in LARGER[half]]
    answerable = benchmark.FreshQuestion("How long is the Rio Grande?", "_answer ( A , ... )", ["3033"], ("synonym",))
    unanswerable = benchmark.FreshQuestion("Who is the president?", None, None, ("unanswerable",))
    outputs = {
        "right answer": {"logical_form": "...", "answer": ["3033"]},
        "wrong answer": {"logical_form": "...", "answer": ["3034"]},
        "empty answer": {"logical_form": "...", "answer": []},
        "answer_error": {"logical_form": "...", "answer_error": "I found no lake, river or state named in the question"},
        "unreadable": {"error": 'a JSON input line needs a "question" string', "input": "{}"},
    }
    verdicts = {name: (benchmark.verdict(answerable, output), benchmark.verdict(unanswerable, output)) for name, output in outputs.items()}
    assert verdicts == {
        "right answer": ("right", "wrong"),
        "wrong answer": ("wrong", "wrong"),
        "empty answer": ("wrong", "wrong"),
        "answer_error": ("abstained", "right"),
        "unreadable": ("abstained", "right"),
    }
    assert benchmark.counts(["right", "right", "wrong", "abstained"]) == ["2 (50.0%)", "1 (25.0%)", "1 (25.0%)"]
