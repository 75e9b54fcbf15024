"""Ensembles: several archives of one grammar decoding as one model (``--ensemble``)."""

import copy
import json
import math

import pytest
import torch

from tests.conftest import DEPENDENCY_OVERRIDES, FIXTURES, SEQ2SEQ_OVERRIDES, run, train_archive
from toolkit import load_predictor
from toolkit.archive import load_archive
from toolkit.decoding import BeamSearch, GreedySearch
from toolkit.errors import ConfigurationError
from toolkit.evaluation import predict
from toolkit.models.ensemble import Ensemble, ensemble_archive
from toolkit.models.model import Model


@pytest.fixture(scope="module")
def second_seq2seq(seq2seq_archive, tmp_path_factory):
    """The seq2seq fixture's config and data trained with another seed: same grammar and symbols, other weights."""
    data = seq2seq_archive.parent.parent
    overrides = json.dumps({**json.loads(SEQ2SEQ_OVERRIDES), "random_seed": 8})
    return train_archive(FIXTURES / "tiny_seq2seq.jsonnet", tmp_path_factory.mktemp("seed8"), data / "train.tsv", data / "test.tsv", "-o", overrides)


@pytest.fixture(scope="module")
def second_dependency(ewt, tmp_path_factory):
    overrides = json.dumps({**DEPENDENCY_OVERRIDES, "random_seed": 8})
    return train_archive(FIXTURES / "tiny_dependency.jsonnet", tmp_path_factory.mktemp("dependency_seed8"), ewt["train"], ewt["test"], "-o", overrides)


def test_each_step_is_the_log_of_the_members_mean_probability(seq2seq_archive, second_seq2seq):
    first, second = load_archive(seq2seq_archive), load_archive(second_seq2seq)
    examples = first.dataset_reader.read(str(seq2seq_archive.parent.parent / "test.tsv"))[:4]
    ensemble = Ensemble([first.model, second.model])
    states = [ensemble.grammar.initial_state(example) for example in examples]
    prefix = torch.full((len(examples), 1), ensemble.bos_index)
    with torch.no_grad():
        ours, _ = ensemble.decode_step(prefix, ensemble.start_decoding(ensemble.decoding_batch(examples), True), states)
        singles = [model.decode_step(prefix, model.start_decoding(model.decoding_batch(examples), True), states)[0] for model in (first.model, second.model)]
    assert not torch.allclose(singles[0], singles[1])  # two different models, or the test shows nothing
    expected = torch.log((singles[0].exp() + singles[1].exp()) / 2)
    torch.testing.assert_close(ours, expected)
    torch.testing.assert_close(ours.exp().sum(-1), torch.ones(len(examples)))  # still a distribution
    assert math.isclose(ensemble.log_size, math.log(2))


@pytest.mark.parametrize("search", [GreedySearch(max_steps=80), BeamSearch(beam_size=3, max_steps=80)], ids=["greedy", "beam"])
@pytest.mark.parametrize("fixture", ["seq2seq_archive", "dependency_archive"])
def test_a_model_ensembled_with_itself_decodes_as_it_does_alone(fixture, search, request, ewt):
    archive = request.getfixturevalue(fixture)
    loaded = load_archive(archive)
    data = ewt["test"] if fixture == "dependency_archive" else archive.parent.parent / "test.tsv"
    examples = loaded.dataset_reader.read(str(data))
    alone = [str(result) for result in predict(loaded.model, examples, search=search)]
    twice = [str(result) for result in predict(Ensemble([loaded.model, loaded.model]), examples, search=search)]
    assert twice == alone


def test_two_stack_transformers_decode_together_with_their_own_caches(dependency_archive, second_dependency, ewt):
    """Each member reads the grammar's stack and buffer features into its own decoder; the trees are whole."""
    first, second = load_archive(dependency_archive), load_archive(second_dependency)
    examples = first.dataset_reader.read(str(ewt["test"]))
    ensemble = ensemble_archive([first, second], ["first", "second"]).model
    for search in (GreedySearch(max_steps=200), BeamSearch(beam_size=2, max_steps=200)):
        trees = predict(ensemble, examples, search=search)
        assert [len(tree.heads) for tree in trees] == [len(example.tokens) for example in examples]


def test_evaluate_and_predict_take_ensemble_archives(seq2seq_archive, second_seq2seq, tmp_path, monkeypatch, capsys):
    test = seq2seq_archive.parent.parent / "test.tsv"
    code, out, err = run(monkeypatch, capsys, "evaluate", seq2seq_archive, test, "--ensemble", second_seq2seq, "--beam-size", 2)
    assert code == 0, err
    assert set(json.loads(out)) >= {"examples", "exact_match", "logic_match"}

    questions = [line.split("\t")[0] for line in test.read_text(encoding="utf-8").splitlines()]
    lines = tmp_path / "in.txt"
    lines.write_text("\n".join([questions[0], "", *questions[1:]]) + "\n", encoding="utf-8")
    code, out, err = run(monkeypatch, capsys, "predict", seq2seq_archive, lines, "--ensemble", second_seq2seq, "--ensemble", seq2seq_archive)
    assert code == 0, err
    records = [json.loads(line) for line in out.splitlines()]
    assert len(records) == len(questions) + 1 and "error" in records[1]  # nothing dropped, nothing moved
    api = load_predictor(seq2seq_archive, ensemble=[second_seq2seq, seq2seq_archive], device="cpu")
    assert api.predict_batch(questions) == [record for i, record in enumerate(records) if i != 1]


def test_members_must_share_the_grammar_and_the_reader(seq2seq_archive, second_seq2seq):
    first, second = load_archive(seq2seq_archive), load_archive(second_seq2seq)
    second.config = copy.deepcopy(second.config)
    second.config["grammar"]["max_length"] = 50
    with pytest.raises(ConfigurationError, match=r"second was trained with another grammar than first \(grammar.max_length: 60 -> 50\)"):
        ensemble_archive([first, second], ["first", "second"])
    second.config = copy.deepcopy(first.config)
    second.config["dataset_reader"]["lowercase"] = True
    with pytest.raises(ConfigurationError, match=r"another dataset_reader .*dataset_reader.lowercase: '\(absent\)' -> True"):
        ensemble_archive([first, second], ["first", "second"])


def test_members_must_predict_the_same_symbols_and_decode(seq2seq_archive, dependency_archive):
    words, trees = load_archive(seq2seq_archive).model, load_archive(dependency_archive).model
    with pytest.raises(ConfigurationError, match=r"trees predicts other symbols than words \(.* the first difference at position \d+\)"):
        Ensemble([words, trees], ["words", "trees"])
    with pytest.raises(ConfigurationError, match="tagger is a Model, which does not decode step by step"):
        Ensemble([words, Model()], ["words", "tagger"])


def test_a_missing_member_is_one_error_line(seq2seq_archive, tmp_path, monkeypatch, capsys):
    test = seq2seq_archive.parent.parent / "test.tsv"
    code, out, err = run(monkeypatch, capsys, "evaluate", seq2seq_archive, test, "--ensemble", tmp_path / "nothing.tar.gz")
    assert code == 1 and out == ""
    assert err.strip().splitlines() == [f"error: archive not found: {tmp_path / 'nothing.tar.gz'}"]
    with pytest.raises(TypeError, match="ensemble is a list of archive paths"):
        load_predictor(seq2seq_archive, ensemble=str(seq2seq_archive))


def test_the_spacy_component_parses_with_an_ensemble(dependency_archive, second_dependency):
    spacy = pytest.importorskip("spacy", reason="the spaCy component needs the spaCy extra")
    nlp = spacy.blank("en")
    component = nlp.add_pipe("toolkit_parser", config={"archive": str(dependency_archive), "ensemble": [str(second_dependency)]})
    assert isinstance(component.predictor.model, Ensemble) and len(component.predictor.model.members) == 2
    doc = nlp("The cat sat on the mat .")
    expected = load_predictor(dependency_archive, ensemble=[second_dependency], device="cpu").predict_tokens([[token.text for token in doc]])[0]
    assert [0 if token.head == token else token.head.i + 1 for token in doc] == list(expected.heads)


def test_the_server_serves_an_ensemble_and_says_so(dependency_archive, second_dependency):
    pytest.importorskip("starlette")
    pytest.importorskip("httpx2")  # starlette's test client
    from starlette.testclient import TestClient

    from toolkit.serving.app import create_app
    from toolkit.serving.batcher import Batcher
    from toolkit.serving.server import describe

    predictor = load_predictor(dependency_archive, ensemble=[second_dependency], device="cpu")
    info = describe(dependency_archive, predictor, "dependency", [second_dependency])
    with TestClient(create_app(predictor, Batcher(predictor.predict_batch, batch_size=4), info)) as client:
        assert client.get("/info").json()["ensemble"] == [str(second_dependency)]
        sentences = ["The cat sat on the mat .", "Dogs bark"]
        assert isinstance(predictor.model, Ensemble)
        assert client.post("/predict", json={"inputs": sentences}).json() == {"outputs": [predictor.predict(sentence) for sentence in sentences]}
        drawn = client.post("/draw", json={"input": "Dogs bark"}).json()  # the picture needs spaCy's displaCy
        assert drawn["output"] == predictor.predict("Dogs bark") and (drawn["svg"] or "spaCy is not installed" in drawn["note"])
