"""Models that read through token embedders: composition, optimizer groups, and archives of pretrained parts."""

import json
import shutil
import subprocess
import sys

import numpy
import pytest
import torch

from tests.conftest import FIXTURES, REPO, run, save_tiny_bert
from toolkit.archive import load_archive
from toolkit.data.example import Example
from toolkit.data.vocabulary import Vocabulary
from toolkit.errors import ArchiveError, ConfigurationError, DataError
from toolkit.grammars.grammar import Grammar
from toolkit.models.model import Model
from toolkit.modules.token_embedders import TokenEmbedder
from toolkit.modules.token_embedders.upos import OTHER, TAG_IDS
from toolkit.training.optimizers import AdamOptimizer, parameter_groups

CONFIG = str(FIXTURES / "tiny_seq2seq.jsonnet")
WORDS = [["the", "dogs", "run"], ["a", "dog"]]


def tiny_model(token_embedders: dict, word_embedding: bool = True) -> Model:
    vocab = Vocabulary({"tokens": {w: 1 for s in WORDS for w in s}, "symbols": {"x": 1, "y": 1}})
    layer = {"input_dim": 32, "layers": {"num_layers": 1, "num_heads": 2, "ff_dim": 64}}
    return Model.from_params(
        {
            "type": "encoder_decoder",
            "encoder": {"type": "transformer", **layer},
            "decoder": {"type": "transformer", **layer},
            "token_embedders": token_embedders,
            "word_embedding": word_embedding,
        },
        vocab=vocab,
        grammar=Grammar.from_params({"type": "sequence"}),
    )


def batch(model: Model) -> dict:
    return model.collate([model.index(Example(words, "x y")) for words in WORDS])


def bert(tiny_bert, **params) -> dict:
    return {"type": "pretrained_transformer", "model_name": str(tiny_bert), **params}


# ------------------------------------------------------------------ composition


def test_embedders_are_concatenated_with_the_word_embedding_and_projected(tiny_bert):
    model = tiny_model({"bert": bert(tiny_bert), "chars": {"type": "characters", "num_filters": 4, "widths": [2]}})
    assert model.token_embedders.projection.in_features == 32 + 32 + 4  # word embedding, BERT, characters
    assert model.token_embedders.projection.out_features == 32
    loss = model(batch(model))["loss"]
    loss.backward()
    assert model.source_embedding.weight.grad is not None
    assert model.token_embedders.embedders["chars"].embedding.weight.grad is not None


def test_without_a_word_embedding_the_embedders_alone_are_read(tiny_bert):
    model = tiny_model({"bert": bert(tiny_bert)}, word_embedding=False)
    assert model.source_embedding is None and model.token_embedders.projection.in_features == 32
    assert torch.isfinite(model(batch(model))["loss"])
    with pytest.raises(ConfigurationError, match="^word_embedding: false needs token_embedders"):
        tiny_model({}, word_embedding=False)


def test_the_pretrained_weights_survive_model_initialisation(tiny_bert):
    """The model's xavier initialisation must not overwrite a pretrained transformer."""
    import transformers

    reference = transformers.AutoModel.from_pretrained(tiny_bert)
    model = tiny_model({"bert": bert(tiny_bert)})
    loaded = model.token_embedders.embedders["bert"].transformer.state_dict()
    assert all(torch.equal(tensor, loaded[name]) for name, tensor in reference.state_dict().items())


def test_frozen_parts_get_no_optimizer_state_and_fine_tuned_ones_their_own_rate(tiny_bert):
    frozen = tiny_model({"bert": bert(tiny_bert, freeze=True)})
    optimizer = AdamOptimizer(parameter_groups(frozen), lr=1e-3)
    frozen(batch(frozen))["loss"].backward()
    optimizer.step()
    transformer = {id(p) for p in frozen.token_embedders.embedders["bert"].transformer.parameters()}
    assert len(optimizer.param_groups) == 1
    assert not transformer & {id(p) for group in optimizer.param_groups for p in group["params"]}
    assert not transformer & {id(p) for p in optimizer.state}
    assert len(optimizer.state) == sum(1 for p in frozen.parameters() if p.requires_grad)

    tuned = tiny_model({"bert": bert(tiny_bert, freeze=False, learning_rate=2e-5, warmup_steps=7)})
    rest, group = AdamOptimizer(parameter_groups(tuned), lr=1e-3).param_groups
    assert rest["lr"] == 1e-3 and group["lr"] == 2e-5 and group["warmup_steps"] == 7
    assert {id(p) for p in group["params"]} == {id(p) for p in tuned.token_embedders.embedders["bert"].transformer.parameters()}
    assert not {id(p) for p in group["params"]} & {id(p) for p in rest["params"]}


def test_the_tagger_reads_through_token_embedders_alone():
    """Characters and UPOS tags alone, without a word embedding table: no word is unknown to it."""
    vocab = Vocabulary({"tokens": {"a": 1}, "symbols": {"NOUN": 1, "VERB": 1}})
    layer = {"input_dim": 16, "layers": {"num_layers": 1, "num_heads": 2, "ff_dim": 32, "dropout": 0.0}}
    model = Model.from_params(
        {
            "type": "tagger",
            "encoder": {"type": "transformer", **layer},
            "word_embedding": False,
            "token_embedders": {"chars": {"type": "characters", "num_filters": 4, "widths": [2]}, "upos": {"type": "upos", "source": "data"}},
        },
        vocab=vocab,
        grammar=Grammar.from_params({"type": "tags"}),
    ).eval()
    assert model.source_embedding is None and model.token_embedders.projection.in_features == 4 + 32
    examples = [Example(["unseen", "words"], meta={"upos": ("NOUN", "VERB")}), Example(["a"], meta={"upos": ("NOUN",)})]
    together = model.predict(examples)
    assert [len(tags) for tags in together] == [2, 1]
    assert model.predict(examples[:1]) == together[:1]  # batching changes nothing


# ------------------------------------------------------------------ UPOS tags as input


def test_upos_tags_come_from_the_data_and_unknown_tags_share_one_id():
    module = TokenEmbedder.from_params({"type": "upos", "source": "data", "embedding_dim": 4})
    example = Example(["I", "run", "?"], meta={"upos": ("PRON", "VERB", "weird")})
    assert module.example_inputs(example) == {"tags": [TAG_IDS["PRON"], TAG_IDS["VERB"], OTHER]}
    inputs = module.batch_inputs([module.example_inputs(example), {"tags": [TAG_IDS["X"]]}], 3)
    assert inputs["tags"].tolist() == [[TAG_IDS["PRON"], TAG_IDS["VERB"], OTHER], [TAG_IDS["X"], 0, 0]]
    vectors = module(None, inputs["tags"] != 0, **inputs)
    assert vectors.shape == (2, 3, 4) and vectors[1, 1:].abs().sum() == 0
    with pytest.raises(DataError, match=r"raw.txt:3: .*needs one UPOS tag per word"):
        module.example_inputs(Example(["no", "tags"], meta={"path": "raw.txt", "line": 3}))


def test_the_conllu_reader_keeps_upos_for_prediction(ewt):
    from toolkit.data.dataset_readers import DatasetReader

    example = next(iter(DatasetReader.from_params({"type": "conllu"}).read(ewt["train"])))
    assert example.meta["upos"] == example.target.upos and len(example.meta["upos"]) == len(example.tokens)


def test_the_dependency_predictor_passes_a_conllu_inputs_upos_on():
    from predictors.dependency import DependencyPredictor, Sentence

    tagged = Sentence("in:1", tokens=["I", "ran"], rows=[["1", "I", "_", "PRON"] + ["_"] * 6, ["2", "ran", "_", "VERB"] + ["_"] * 6])
    assert DependencyPredictor.example(tagged).meta == {"upos": ("PRON", "VERB")}
    untagged = Sentence("in:1", tokens=["I", "ran"], rows=[None, None])
    assert DependencyPredictor.example(untagged).meta == {}


# ------------------------------------------------------------------ spaCy vectors


@pytest.fixture(scope="module")
def vector_pipeline(tmp_path_factory):
    spacy = pytest.importorskip("spacy")
    nlp = spacy.blank("en")
    for i, word in enumerate(["the", "dog", "run"]):
        nlp.vocab.set_vector(word, numpy.full(4, float(i + 1), dtype="float32"))
    directory = tmp_path_factory.mktemp("vectors_pipeline")
    nlp.to_disk(directory)
    return directory


def test_spacy_vectors_are_fixed_with_one_learned_vector_for_unknown_words(vector_pipeline):
    module = TokenEmbedder.from_params({"type": "spacy_vectors", "pipeline": str(vector_pipeline)})
    inputs = module.batch_inputs([module.example_inputs(Example(["The", "dog", "zebra"]))], 3)
    vectors = module(None, torch.ones(1, 3, dtype=torch.bool), **inputs)
    assert vectors[0, 0].tolist() == [1.0] * 4 and vectors[0, 1].tolist() == [2.0] * 4  # "The" found in lowercase
    assert vectors[0, 2].tolist() == [0.0] * 4  # the unknown vector, learned from zero
    assert [name for name, _ in module.named_parameters()] == ["unknown"]  # the table is neither trained nor archived
    assert "table" not in module.state_dict()
    assert module.pretrained_source()["vectors_sha256"]


# ------------------------------------------------------------------ archives


@pytest.fixture
def data_env(monkeypatch, geo_slice):
    monkeypatch.setenv("TRAIN", str(geo_slice["train"]))
    monkeypatch.setenv("TEST", str(geo_slice["test"]))
    return geo_slice


def train_with_bert(monkeypatch, capsys, directory, bert_dir, **params):
    overrides = {"trainer.num_epochs": 1, "model.token_embedders": {"bert": bert(bert_dir, **params)}}
    code, _, err = run(monkeypatch, capsys, "train", CONFIG, "-s", directory, "-f", "-o", json.dumps(overrides))
    assert code == 0, err
    return directory / "model.tar.gz"


def predict_in_a_fresh_process(archive, questions) -> tuple[int, str, str]:
    process = subprocess.run([sys.executable, "-m", "toolkit", "predict", str(archive), str(questions)], capture_output=True, text=True, cwd=REPO)
    return process.returncode, process.stdout, process.stderr


def test_an_archive_keeps_a_copy_and_predicts_the_same_in_a_fresh_process(data_env, tmp_path, monkeypatch, capsys):
    bert_dir = save_tiny_bert(tmp_path / "bert")
    archive = train_with_bert(monkeypatch, capsys, tmp_path / "run", bert_dir, freeze=False)
    [record] = json.loads((tmp_path / "run" / "pretrained.json").read_text())
    assert record["module"] == "token_embedders.embedders.bert" and record["copy"] == "pretrained/0"
    assert record["source"]["model_name"] == str(bert_dir) and "model.safetensors" in record["source"]["sha256"]
    questions = tmp_path / "questions.txt"
    questions.write_text("".join(line.split("\t")[0] + "\n" for line in data_env["test"].read_text().splitlines()))
    loaded = load_archive(archive)
    expected = [
        " ".join(result) if isinstance(result, (list, tuple)) else str(result)
        for result in loaded.model.predict([Example(q.split()) for q in questions.read_text().splitlines()])
    ]

    shutil.rmtree(bert_dir)  # the archive's copy (config, tokenizer; fine-tuned weights) is all it needs
    code, out, err = predict_in_a_fresh_process(archive, questions)
    assert code == 0, err
    predicted = [json.loads(line)["logical_form"] for line in out.splitlines()]
    assert predicted == expected and len(predicted) == 10
    from toolkit import load_predictor

    api = load_predictor(archive, device="cpu").predict_batch(questions.read_text().splitlines())
    assert [answer["logical_form"] for answer in api] == expected


def test_an_archive_of_a_cut_transformer_keeps_only_the_layers_it_runs(data_env, tmp_path, monkeypatch, capsys):
    bert_dir = save_tiny_bert(tmp_path / "bert")  # 2 layers
    archive = train_with_bert(monkeypatch, capsys, tmp_path / "run", bert_dir, freeze=False, num_layers=1)
    trained = load_archive(archive).model
    shutil.rmtree(bert_dir)  # built from the archive's copy of the cut config
    loaded = load_archive(archive).model
    [embedder] = [module for module in loaded.modules() if hasattr(module, "transformer")]
    assert len(embedder.transformer.encoder.layer) == 1
    assert not any(".layer.1." in name for name in loaded.state_dict())
    questions = [Example(line.split("\t")[0].split()) for line in data_env["test"].read_text().splitlines()]
    assert loaded.predict(questions) == trained.predict(questions)


def test_a_referenced_transformer_that_is_missing_or_different_refuses_the_archive(data_env, tmp_path, monkeypatch, capsys):
    bert_dir = save_tiny_bert(tmp_path / "bert")
    archive = train_with_bert(monkeypatch, capsys, tmp_path / "run", bert_dir, archive="reference")
    assert not (tmp_path / "run" / "pretrained").exists()
    assert load_archive(archive).model is not None  # the weights it refers to are there

    save_tiny_bert(bert_dir, seed=1)  # other weights under the same name
    with pytest.raises(ArchiveError, match="trained with different pretrained weights for its token_embedders.embedders.bert"):
        load_archive(archive)

    shutil.rmtree(bert_dir)
    questions = tmp_path / "questions.txt"
    questions.write_text("how big is texas\n")
    code, out, err = predict_in_a_fresh_process(archive, questions)
    assert code != 0 and out == ""
    assert err.strip().count("\n") == 0 and err.startswith("error: ") and "Traceback" not in err
    assert f"from the directory {bert_dir}, which is missing" in err


def test_a_fine_tuned_transformer_cannot_be_left_out_of_the_archive(tiny_bert):
    with pytest.raises(ConfigurationError, match="^archive: must be 'copy' or 'reference'"):
        TokenEmbedder.from_params(bert(tiny_bert, freeze=False, archive="reference"))
