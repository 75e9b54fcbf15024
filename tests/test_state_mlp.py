"""The state_mlp decoder: its precomputed table equals the feed-forward layer over concatenated words,
incremental decoding equals teacher forcing through reorders, the slots are read off the state by
hand-checked rules, and a parser built on it learns a small treebank.
"""

from collections import Counter

import pytest
import torch

from tests.conftest import FIXTURES
from tests.test_stack_transformer import BIRDS, FISH, SWIM, assert_incremental_decoding_equals_teacher_forcing
from toolkit.data.example import Example
from toolkit.data.vocabulary import Vocabulary
from toolkit.errors import ConfigurationError
from toolkit.grammars import Grammar
from toolkit.models import EncoderDecoder
from toolkit.modules.decoders import StateMlpDecoder
from toolkit.modules.encoders import TransformerEncoder
from toolkit.modules.transformer_settings import TransformerSettings
from toolkit.params import Params
from toolkit.training.train import build_vocabulary


def tiny_model(seed=0, examples=(FISH, SWIM, BIRDS), **options) -> EncoderDecoder:
    torch.manual_seed(seed)
    grammar = Grammar.from_params({"type": "arc_standard"})
    vocab = Vocabulary({"tokens": Counter(t for e in examples for t in e.tokens), "symbols": Counter(s for e in examples for s in grammar.oracle(e))})
    decoder = StateMlpDecoder(16, dropout=0.0, **options)
    with torch.no_grad():
        decoder.null.normal_()  # zero at initialisation; make it matter
    encoder = TransformerEncoder(16, layers=TransformerSettings(num_layers=1, num_heads=2, ff_dim=32, dropout=0.0))
    return EncoderDecoder(vocab, grammar, encoder, decoder).eval()


def test_slots_are_the_top_of_the_stack_and_the_front_of_the_buffer():
    decoder = StateMlpDecoder(8, stack=3, buffer=2)
    steps = [{"stack": (4, 2), "buffer": (5, 6, 7)}, {"stack": (), "buffer": (0,)}, {"stack": (9, 8, 7, 6), "buffer": ()}]
    assert decoder.slot_positions(steps).tolist() == [[4, 2, -1, 5, 6], [-1, -1, -1, 0, -1], [9, 8, 7, -1, -1]]
    assert StateMlpDecoder(8, stack=0, buffer=1).slot_positions(steps).tolist() == [[5], [0], [-1]]


def test_the_precomputed_table_is_the_layer_over_concatenated_words():
    """The hidden layer is tanh(W [m_s0; m_s1; m_b0] + U e + b), with a slot's null vector where it holds no word, padding left out."""
    torch.manual_seed(0)
    decoder = StateMlpDecoder(4, stack=2, buffer=1, dropout=0.0).eval()
    with torch.no_grad():
        decoder.null.normal_()
    memory, embedded = torch.randn(2, 5, 4), torch.randn(2, 3, 4)
    mask = torch.tensor([[True] * 5, [True, True, True, False, False]])
    positions = torch.tensor([[[0, 1, 2], [3, -1, 4], [-1, -1, -1]], [[2, 0, 1], [-1, -1, 0], [1, 2, -1]]])
    got = decoder(embedded, memory, mask, positions)
    weights = decoder.slot_projection.weight.view(3, 4, 4)  # (slot, out, in)
    for b in range(2):
        for t in range(3):
            total = decoder.previous(embedded[b, t])
            for j, p in enumerate(positions[b, t].tolist()):
                total = total + (decoder.null[j] if p < 0 else weights[j] @ memory[b, p])
            torch.testing.assert_close(got[b, t], torch.tanh(total))


@pytest.mark.parametrize("options", [{}, {"stack": 1, "buffer": 3}])
def test_incremental_decoding_equals_teacher_forcing(options):
    """Step by step, with rows swapped and duplicated midway as a beam does, the log-probabilities equal teacher forcing's."""
    assert_incremental_decoding_equals_teacher_forcing(tiny_model(**options))


def test_configuration_errors_name_the_key():
    with pytest.raises(ConfigurationError, match="stack"):
        StateMlpDecoder(8, stack=0, buffer=0)
    with pytest.raises(ConfigurationError, match="stack"):
        StateMlpDecoder(8, stack=-1)


@pytest.mark.parametrize("config", ["ud_ewt_state_mlp", "ud_ewt_state_mlp_hashed", "ud_ewt_state_mlp_explore", "ud_ewt_state_mlp_distilled"])
def test_the_fast_ewt_configs_build(config):
    """The fast EWT configs build (vocabulary from three sentences) and parse to a tree."""
    from toolkit.models.model import Model

    params = Params.from_file(str(FIXTURES.parent.parent / "jsonnet_configs" / f"{config}.jsonnet"))
    grammar = Grammar.from_params(params.pop("grammar"))
    model = Model.from_params(params.pop("model"), vocab=build_vocabulary([FISH, SWIM, BIRDS], grammar), grammar=grammar)
    assert isinstance(model.decoder, StateMlpDecoder) and (model.decoder.stack, model.decoder.buffer) == (3, 1)
    assert model.eval().predict([FISH])[0].heads.count(0) == 1


def test_a_state_mlp_parser_learns_a_small_treebank():
    """Trained on three sentences, it parses them back exactly, greedy and with a beam: the slots line up with the actions."""
    from toolkit.decoding import BeamSearch, GreedySearch

    model = tiny_model(seed=1).train()
    examples = [FISH, SWIM, BIRDS, Example("She swim".split(), SWIM.target)]
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    batch = model.collate([model.index(example) for example in examples])
    for _ in range(150):
        optimizer.zero_grad()
        model(batch)["loss"].backward()
        optimizer.step()
    model.eval()
    for search in (GreedySearch(), BeamSearch(beam_size=3)):
        assert model.predict(examples, search) == [example.target for example in examples]
