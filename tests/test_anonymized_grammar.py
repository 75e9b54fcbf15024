"""Raw GEO questions through the ``tsv`` reader's anonymizer and the ``anonymized`` grammar: the decoder
sees placeholders, the results and the metrics see entity names again.
"""

import json

import pytest

from tests.conftest import run
from toolkit.data.dataset_readers import TsvReader
from toolkit.data.symbols import EOS
from toolkit.entities.anonymizer import GeoPrologAnonymizer
from toolkit.entities.lexicon import EntityLexicon
from toolkit.entities.mentions import LexiconMentionFinder
from toolkit.grammars import AnonymizedGrammar, SequenceGrammar
from toolkit.oracle import replay_oracle

ENTITIES = [
    {"value": "texas", "abbreviation": "tx", "type": "state"},
    {"value": "austin", "type": "city"},
    {"value": "mississippi", "abbreviation": "ms", "type": "state"},
    {"value": "mississippi", "type": "river"},
    {"value": "utah", "abbreviation": "ut", "type": "state"},
]
CAPITAL = "what is the capital of texas ?\t_answer ( A , ( _capital ( A ) , _loc ( A , B ) , _const ( B , _stateid ( texas ) ) ) )"
LENGTH = "how long is the mississippi river ?\t_answer ( A , ( _len ( B , A ) , _const ( B , _riverid ( mississippi ) ) ) )"


@pytest.fixture
def parts(tmp_path):
    lexicon = tmp_path / "entities.json"
    lexicon.write_text(json.dumps(ENTITIES), encoding="utf-8")
    anonymizer = GeoPrologAnonymizer(LexiconMentionFinder(EntityLexicon(str(lexicon))), unknown="keep")
    data = tmp_path / "train.tsv"
    data.write_text(CAPITAL + "\n" + LENGTH + "\n", encoding="utf-8")
    return TsvReader(anonymizer=anonymizer), AnonymizedGrammar(SequenceGrammar(), anonymizer), data


def test_the_decoder_sees_placeholders_and_the_results_names(parts):
    reader, grammar, data = parts
    capital, length = reader.read(data)
    assert capital.tokens == "what is the capital of e0 ?".split()
    assert capital.target == CAPITAL.split("\t")[1]  # the gold form stays as it is, for metrics and executors
    assert " ".join(grammar.oracle(capital)).startswith(CAPITAL.split("\t")[1].replace("texas", "e0"))
    assert "texas" not in grammar.oracle(capital) and "mississippi" not in grammar.oracle(length)
    assert replay_oracle(grammar, [capital, length])["exact_round_trips"] == 2  # results restored to the gold forms


def test_an_entity_no_training_question_names_is_parsed_as_any_other(parts):
    """Utah is in the lexicon and in no training question: its question reads like texas's."""
    reader, grammar, _ = parts
    question = reader.text_to_example("What is the capital of Utah?")
    assert question.tokens == "what is the capital of e0 ?".split()
    state = grammar.initial_state(question)
    decoded = "_answer ( A , ( _capital ( A ) , _loc ( A , B ) , _const ( B , _stateid ( e0 ) ) ) )"
    for symbol in decoded.split() + [EOS]:
        state = state.apply(symbol)
    assert state.is_final() and state.result() == decoded.replace("e0", "utah")


def test_raw_questions_keep_their_capitals_for_the_finder_and_spell_out_contractions(parts):
    """Mentions are found in the words as written ("UT" is Utah, "ut" is no word to find), the
    model reads lower case, contractions become the data's words, and the output keeps the question as asked.
    """
    reader, _, _ = parts
    shouted = reader.text_to_example("What's the capital of UT?")
    assert shouted.tokens == "what is the capital of e0 ?".split()
    assert shouted.meta["question"] == "What's the capital of UT?"
    assert reader.text_to_example("which rivers don't cross Texas").tokens == "which rivers do not cross e0".split()


def test_the_constructor_the_parser_chooses_resolves_an_ambiguous_name(parts):
    reader, grammar, _ = parts
    question = reader.text_to_example("what states border mississippi")
    for constructor, expected in (("_stateid", "mississippi"), ("_riverid", "mississippi")):
        state = grammar.initial_state(question)
        for symbol in f"_const ( B , {constructor} ( e0 ) )".split() + [EOS]:
            state = state.apply(symbol)
        assert state.result() == f"_const ( B , {constructor} ( {expected} ) )"


def test_a_placeholder_the_question_lacks_stays_a_placeholder(parts):
    reader, grammar, _ = parts
    state = grammar.initial_state(reader.text_to_example("what is the capital of texas ?"))
    for symbol in "_const ( B , _stateid ( e1 ) )".split() + [EOS]:
        state = state.apply(symbol)
    assert state.result() == "_const ( B , _stateid ( e1 ) )"  # it fails to execute, and scores as wrong


def test_raw_questions_in_answers_out(geo_raw_archive, tmp_path, monkeypatch, capsys):
    """End to end on a GEO slice: a seconds-sized parser trained on raw questions, asked in the user's own spelling."""
    archive = geo_raw_archive
    assert "test_denotation_accuracy" in json.loads((archive.parent / "metrics.json").read_text())
    capsys.readouterr()  # training's output
    questions = tmp_path / "questions.txt"
    questions.write_text("What is the capital of Texas?\n\nhow long is the Rio Grande ?\n", encoding="utf-8")
    code, out, err = run(monkeypatch, capsys, "predict", archive, questions, "--device", "cpu")
    assert code == 0, err
    records = [json.loads(line) for line in out.splitlines()]
    assert [record.get("question") for record in records] == ["What is the capital of Texas?", None, "how long is the Rio Grande ?"]  # as asked
    assert "error" in records[1]
    for record in (records[0], records[2]):  # two epochs: the form may be wrong, but it is a real query, executed
        assert isinstance(record.get("answer", []), list) and ("answer" in record) != ("answer_error" in record)


def test_a_query_with_an_unrestored_placeholder_is_an_answer_error_not_an_empty_answer(parts):
    """``_stateid ( e0 )`` for "houston" runs in Prolog and finds nothing; the predictor says why instead."""
    from predictors.semantic_parser import SemanticParserPredictor

    reader, grammar, _ = parts
    question = reader.text_to_example("How long is the Mississippi River?")
    state = grammar.initial_state(question)
    for symbol in "_const ( B , _cityid ( e0 , _ ) )".split() + [EOS]:  # a river under the city constructor
        state = state.apply(symbol)
    assert grammar.anonymizer.unrestored(state.result()) == ["e0"]
    assert grammar.anonymizer.unrestored("_const ( B , _riverid ( mississippi ) )") == []

    class NeverRun:
        def execute(self, forms):
            raise AssertionError("an unrestored query must not be run")

    predictor = object.__new__(SemanticParserPredictor)
    predictor.executor, predictor.anonymizer = NeverRun(), grammar.anonymizer
    output = predictor.to_json(question, state.result())
    assert output["question"] == "How long is the Mississippi River?" and "answer" not in output
    assert output["answer_error"] == "the query has e0 where no entity of the question fits"
