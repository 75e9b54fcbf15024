"""Archives trained before a config key moved still load, with their own weights and predictions."""

import copy
import json

import torch
from safetensors.torch import load_file, save_file

from tests.conftest import FIXTURES
from toolkit import load_predictor
from toolkit.params import Params
from toolkit.training.train import train_model
from toolkit.upgrades import upgrade_config, upgrade_weights
from toolkit.weights import sha256


def rehash(directory) -> None:
    """Record the members' new SHA-256 in the manifest, as an archive written that way would have."""
    manifest = json.loads((directory / "manifest.json").read_text())
    manifest["sha256"] = {member: sha256(directory / member) for member in manifest["sha256"]}
    (directory / "manifest.json").write_text(json.dumps(manifest))


def flat(kind: str, **keys) -> dict:
    return {"type": kind, "input_dim": 32, **keys}


def test_flat_transformer_keys_move_into_layers_and_a_sinusoidal_encoding():
    config = {
        "model": {
            "encoder": flat("transformer", num_layers=2, num_heads=2, ff_dim=64, dropout=0.2, attention_dropout=0.1, norm_first=False, max_length=80),
            "decoder": flat("stack_transformer", num_layers=1, stack_heads=[0], max_position=16),
        }
    }
    moved = upgrade_config(config)
    assert config["model"] == {
        "encoder": {
            "type": "transformer",
            "input_dim": 32,
            "layers": {"num_layers": 2, "num_heads": 2, "ff_dim": 64, "dropout": 0.2, "attention_dropout": 0.1, "norm_first": False},
            "positional_encoding": {"type": "sinusoidal", "max_length": 80},
        },
        "decoder": {
            "type": "stack_transformer",
            "input_dim": 32,
            "layers": {"num_layers": 1},
            "positional_encoding": {"type": "sinusoidal"},
            "stack_heads": [0],
            "max_position": 16,
        },
    }
    assert moved[:2] == ["model.encoder.num_layers", "model.encoder.num_heads"] and "model.encoder.max_length" in moved
    assert "model.decoder.num_layers" in moved and len(moved) == 8


def test_the_tree_switch_becomes_a_tree_encoding_and_its_length_is_dropped():
    config = {
        "model": {"encoder": flat("phrase_transformer", gram_sizes=[0, 2], positional_encoding="tree", tree_degree=3, tree_parameterized=False, max_length=9)}
    }
    assert upgrade_config(config) == [
        "model.encoder.max_length",
        "model.encoder.tree_degree",
        "model.encoder.tree_parameterized",
        "model.encoder.positional_encoding",
    ]
    assert config["model"]["encoder"] == {
        "type": "phrase_transformer",
        "input_dim": 32,
        "gram_sizes": [0, 2],
        "positional_encoding": {"type": "tree", "degree": 3, "parameterized": False},
    }


def test_a_current_config_and_other_components_are_left_alone():
    current = {
        "model": {
            "encoder": {"input_dim": 32, "layers": {"num_layers": 1}, "positional_encoding": {"type": "tree", "degree": 2}},
            "decoder": {"type": "my_plugin_decoder", "num_layers": 4, "max_length": 7},  # a plugin's own keys
        },
        "grammar": {"type": "sequence", "max_length": 60},
    }
    before = copy.deepcopy(current)
    assert upgrade_config(current) == [] and current == before
    assert upgrade_config({"model": "not a block"}) == [] and upgrade_config({}) == []


def test_an_archive_with_the_old_keys_loads_and_predicts_as_before(geo_slice, tmp_path, caplog):
    directory = tmp_path / "run"
    overrides = {"trainer.num_epochs": 1, "test_data_path": None, "model.encoder.positional_encoding.max_length": 80}
    ext_vars = {"TRAIN": str(geo_slice["train"]), "TEST": str(geo_slice["test"])}
    train_model(Params.from_file(FIXTURES / "tiny_seq2seq.jsonnet", overrides=overrides, ext_vars=ext_vars), directory)
    questions = [line.split("\t")[0] for line in geo_slice["test"].read_text().splitlines()]
    expected = list(load_predictor(directory).predict_lines(questions))

    config = json.loads((directory / "config.json").read_text())
    for part in ("encoder", "decoder"):  # written back the way configs were before the keys moved
        block = config["model"][part]
        block.update(block.pop("layers"))
        if "max_length" in (encoding := block.pop("positional_encoding", {})):
            block["max_length"] = encoding["max_length"]
    assert config["model"]["encoder"]["max_length"] == 80 and config["model"]["encoder"]["num_layers"] == 1
    (directory / "config.json").write_text(json.dumps(config))
    rehash(directory)

    with caplog.at_level("INFO"):
        predictor = load_predictor(directory)
    assert "keys that have moved" in caplog.text and "model.encoder.max_length" in caplog.text
    assert predictor.archive.model.encoder.max_length == 80
    assert list(predictor.predict_lines(questions)) == expected
    assert all(torch.isfinite(p).all() for p in predictor.archive.model.parameters())


def test_weights_renamed_since_are_read_under_their_new_names():
    weights = {"embedding.weight": torch.ones(2), "encoder.w": torch.zeros(1)}
    assert upgrade_weights(weights, {"source_embedding.weight", "encoder.w"}) == ["embedding.weight"]
    assert set(weights) == {"source_embedding.weight", "encoder.w"} and torch.equal(weights["source_embedding.weight"], torch.ones(2))
    unchanged = {"embedding.weight": torch.ones(2)}  # a model that still has the old name keeps it
    assert upgrade_weights(unchanged, {"embedding.weight"}) == [] and set(unchanged) == {"embedding.weight"}


TAGGER = """{
  dataset_reader: { type: 'conllu' },
  train_data_path: std.extVar('TRAIN'),
  grammar: { type: 'tags' },
  model: { type: 'tagger', encoder: { type: 'transformer', input_dim: 16, layers: { num_layers: 1, num_heads: 2, ff_dim: 32 } } },
  trainer: { optimizer: { type: 'adam', lr: 3e-3 }, num_epochs: 1, max_tokens: 1024, device: 'cpu', progress_bar: false },
  random_seed: 3,
}"""


def test_a_tagger_archive_with_its_old_embedding_name_loads_and_tags_as_before(ewt, tmp_path, caplog):
    (tmp_path / "tagger.jsonnet").write_text(TAGGER)
    directory = tmp_path / "run"
    train_model(Params.from_file(tmp_path / "tagger.jsonnet", ext_vars={"TRAIN": str(ewt["train"])}), directory)
    sentences = ["The old man sat down by the river .", "Tags for every word here"]
    expected = list(load_predictor(directory).predict_lines(sentences))

    weights = load_file(str(directory / "weights.safetensors"))
    weights["embedding.weight"] = weights.pop("source_embedding.weight")  # the name the tagger used to save it under
    save_file(weights, str(directory / "weights.safetensors"))
    rehash(directory)

    with caplog.at_level("INFO"):
        predictor = load_predictor(directory)
    assert "weights renamed since it was written" in caplog.text and "embedding.weight" in caplog.text
    assert list(predictor.predict_lines(sentences)) == expected
