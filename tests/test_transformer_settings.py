"""The shared Transformer settings block, positional encodings as registered components, and every config built with them."""

import inspect
from collections import Counter
from dataclasses import fields
from pathlib import Path

import pytest
import torch

from tests.conftest import REPO
from toolkit.data.example import Example
from toolkit.data.vocabulary import Vocabulary
from toolkit.errors import ConfigurationError
from toolkit.grammars import SequenceGrammar
from toolkit.models import Model
from toolkit.modules.decoders import Decoder, StackTransformerDecoder, TransformerDecoder
from toolkit.modules.encoders import HypernodeTransformerEncoder, PhraseTransformerEncoder, Seq2SeqEncoder, TransformerEncoder
from toolkit.modules.positional_encoding import PositionalEncoding, SinusoidalPositionalEncoding
from toolkit.modules.transformer_settings import TransformerSettings
from toolkit.modules.tree_positional_encoding import TreePositionalEncoding
from toolkit.params import Params

TRANSFORMERS = [TransformerEncoder, HypernodeTransformerEncoder, PhraseTransformerEncoder, TransformerDecoder, StackTransformerDecoder]
CONFIGS = sorted((REPO / "jsonnet_configs").glob("*.jsonnet")) + sorted((REPO / "examples" / "plugin" / "configs").glob("*.jsonnet"))
PAPER_SIZE = REPO / "jsonnet_configs" / "overrides" / "paper_size.jsonnet"


@pytest.mark.parametrize("cls", TRANSFORMERS, ids=lambda cls: cls.__name__)
def test_the_settings_block_is_the_only_place_the_layer_parameters_are_declared(cls):
    parameters = inspect.signature(cls).parameters
    assert parameters["layers"].annotation is TransformerSettings
    repeated = {field.name for field in fields(TransformerSettings)} | {"max_length", "tree_degree", "tree_max_depth", "tree_parameterized"}
    assert not repeated & set(parameters)


def test_the_registry_lists_both_positional_encodings():
    assert PositionalEncoding.list_available()[:2] == ["sinusoidal", "tree"]
    assert PositionalEncoding.by_name("tree") is TreePositionalEncoding
    with pytest.raises(ConfigurationError, match=r"^model\.encoder\.positional_encoding\.type: 'rotary' is not a registered .*Available: sinusoidal, tree"):
        Seq2SeqEncoder.from_params(Params({"input_dim": 16, "positional_encoding": {"type": "rotary"}}, "model.encoder."))


def test_wrong_keys_name_their_path():
    with pytest.raises(ConfigurationError, match=r"^unknown key 'model\.encoder\.layers\.num_head' \(did you mean 'num_heads'\?\)"):
        Seq2SeqEncoder.from_params(Params({"input_dim": 16, "layers": {"num_head": 2}}, "model.encoder."))
    with pytest.raises(ConfigurationError, match=r"^model\.decoder\.positional_encoding\.max_length: must be at least 1, got 0"):
        Decoder.from_params(Params({"input_dim": 16, "positional_encoding": {"max_length": 0}}, "model.decoder."))
    with pytest.raises(ConfigurationError, match=r"^model\.encoder\.layers\.dropout: must be from 0 to 1, got 2"):
        Seq2SeqEncoder.from_params(Params({"input_dim": 16, "layers": {"dropout": 2}}, "model.encoder."))


@pytest.mark.parametrize("name", ["transformer", "stack_transformer"])
def test_max_length_is_the_positional_encoding_s(name):
    default = Decoder.from_params({"type": name, "input_dim": 16})
    assert isinstance(default.positions, SinusoidalPositionalEncoding) and default.max_length == 1024
    assert Decoder.from_params({"type": name, "input_dim": 16, "positional_encoding": {"max_length": 64}}).max_length == 64
    encoder = Seq2SeqEncoder.from_params({"input_dim": 16, "positional_encoding": {"type": "tree"}})
    assert encoder.max_length is None and encoder.reads_trees  # a tree has no length limit


def test_the_phrase_transformer_reads_tree_positions():
    torch.manual_seed(0)
    config = {"type": "phrase_transformer", "input_dim": 16, "gram_sizes": [0, 2], "layers": {"num_layers": 1, "ff_dim": 32, "dropout": 0.0}}
    encoder = Seq2SeqEncoder.from_params({**config, "positional_encoding": {"type": "tree", "max_depth": 4}}).eval()
    assert encoder.reads_trees and encoder.max_length is None
    paths = [[(), (0,), (0, 1)], [(), (1,)]]
    examples = [Example(["x"] * len(p), token_paths=p) for p in paths]
    inputs = encoder.batch_inputs([encoder.example_inputs(e) for e in examples], 3)
    embedded, mask = torch.randn(2, 3, 16), torch.tensor([[True] * 3, [True, True, False]])
    out = encoder(embedded, mask, **inputs)
    assert out.shape == (2, 3, 16) and torch.isfinite(out).all()
    moved = encoder(embedded, mask, **encoder.batch_inputs([{"token_paths": [(), (1,), (1, 1)]}, {"token_paths": [(), (0,)]}], 3))
    assert not torch.allclose(moved, out, atol=1e-3)  # the paths are read
    with pytest.raises(ConfigurationError, match="tree_pairs"):
        encoder.example_inputs(Example(["x"]))


def test_a_phrase_transformer_with_tree_positions_trains_a_step():
    torch.manual_seed(0)
    examples = [Example(["f/1", "x/0"], "what is x", token_paths=[(), (0,)]), Example(["g/2", "a/0", "b/0"], "a and b", token_paths=[(), (0,), (0, 1)])]
    grammar = SequenceGrammar()
    vocab = Vocabulary({"tokens": Counter(t for e in examples for t in e.tokens), "symbols": Counter(s for e in examples for s in grammar.oracle(e))})
    layers = {"num_layers": 1, "ff_dim": 32, "dropout": 0.0}
    config = {
        "type": "encoder_decoder",
        "encoder": {
            "type": "phrase_transformer",
            "input_dim": 16,
            "gram_sizes": [0, 2],
            "layers": layers,
            "positional_encoding": {"type": "tree", "degree": 2},
        },
        "decoder": {"type": "transformer", "input_dim": 16, "layers": {**layers, "num_heads": 2}},
    }
    model = Model.from_params(config, vocab=vocab, grammar=grammar)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    batch = model.collate([model.index(example) for example in examples])
    assert batch["encoder_inputs"]["token_paths"].shape == (2, 3, 64)
    before = model.encoder.positions.raw_p.detach().clone()
    loss = model(batch)["loss"]
    loss.backward()
    optimizer.step()
    assert torch.isfinite(loss) and not torch.equal(before, model.encoder.positions.raw_p)  # the tree positions learn


def built(config: dict, key: str):
    base = Seq2SeqEncoder if key == "encoder" else Decoder
    return base.from_params(Params(config["model"][key], f"model.{key}."))


@pytest.mark.parametrize("path", CONFIGS, ids=lambda path: path.name)
def test_every_config_builds_its_encoder_and_decoder(path: Path):
    if "spacy" in path.name:
        pytest.importorskip("spacy")  # its phrases come from a spaCy pipeline
    config = Params.from_file(path).as_dict()
    encoder = built(config, "encoder")
    assert isinstance(encoder, Seq2SeqEncoder)
    if "decoder" in config["model"]:
        decoder = built(config, "decoder")
        assert decoder.input_dim == encoder.get_output_dim()
    if path.stem.endswith("seq2tree"):
        assert decoder.uses_features and isinstance(decoder.positions, TreePositionalEncoding)


@pytest.mark.parametrize("name", ["geo_transformer", "geo_phrase_transformer", "geo_seq2tree", "amr_stack_transformer"])
def test_the_paper_size_override_reaches_the_settings_block(name):
    config = Params.from_file(REPO / "jsonnet_configs" / f"{name}.jsonnet", str(PAPER_SIZE)).as_dict()
    encoder, decoder = built(config, "encoder"), built(config, "decoder")
    assert (encoder.settings.num_layers, encoder.settings.num_heads, encoder.settings.ff_dim) == (6, 8, 2048)
    assert len(decoder.layers) == 6 and decoder.input_dim == 512
