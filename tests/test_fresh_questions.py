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
"""

import json
import re
from pathlib import Path

import pytest

from tests.conftest import require_swipl
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
    assert [question for question in IDS if words(question) in known] == []


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
