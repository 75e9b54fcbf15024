"""The hypernode encoder: equal to the plain Transformer without phrases, phase 2 masked by inclusion, padding-independent."""

import pytest
import torch

from toolkit.errors import ConfigurationError
from toolkit.modules.encoders import HypernodeTransformerEncoder, Seq2SeqEncoder, TransformerEncoder
from toolkit.modules.transformer_settings import TransformerSettings
from toolkit.params import Params
from toolkit.phrases import NgramPhrases, PhraseGenerator, node_adjacency


class NoPhrases(PhraseGenerator):
    def generate(self, tokens):
        return []


class EveryPair(PhraseGenerator):
    """Phrases that depend on more than the length, so they must come per example."""

    def generate(self, tokens):
        return [(i, j) for i in range(len(tokens)) for j in range(i + 1, len(tokens)) if tokens[i] == tokens[j]]


def encoders(norm_first: bool, **options):
    torch.manual_seed(0)
    plain = TransformerEncoder(16, layers=TransformerSettings(num_layers=2, num_heads=2, ff_dim=32, norm_first=norm_first)).eval()
    hypernode = HypernodeTransformerEncoder(
        16, options.pop("phrases", NoPhrases()), layers=TransformerSettings(num_layers=2, num_heads=2, ff_dim=32, norm_first=norm_first), **options
    )
    return plain, hypernode.eval()


@pytest.mark.parametrize("norm_first", [True, False])
def test_without_hypernodes_and_phase_two_it_is_the_plain_transformer_exactly(norm_first, monkeypatch):
    from toolkit.modules.encoders.transformer import TransformerEncoderLayer

    monkeypatch.setattr(TransformerEncoderLayer, "packs", property(lambda layer: False))  # the plain one padded, as the hypernode one runs
    plain, hypernode = encoders(norm_first, phase_two_layers=[])
    hypernode.load_state_dict(plain.state_dict(), strict=True)  # the very same parameters, nothing more
    x = torch.randn(3, 7, 16)
    mask = torch.tensor([[True] * 7, [True] * 4 + [False] * 3, [True] * 1 + [False] * 6])
    expected = plain(x, mask)
    assert torch.equal(hypernode(x, mask, hypernodes=torch.zeros(3, 0, 7, dtype=torch.bool)), expected)
    no_phrases = hypernode.batch_hypernodes([hypernode.hypernodes(["w"] * int(n)) for n in mask.sum(-1)], 7)
    assert no_phrases.shape == (3, 0, 7) and torch.equal(hypernode(x, mask, hypernodes=no_phrases), expected)


def test_phase_two_changes_the_states_even_without_hypernodes():
    plain, hypernode = encoders(True)
    hypernode.load_state_dict(plain.state_dict(), strict=False)
    x, mask = torch.randn(2, 5, 16), torch.ones(2, 5, dtype=torch.bool)
    assert not torch.allclose(hypernode(x, mask, hypernodes=torch.zeros(2, 0, 5, dtype=torch.bool)), plain(x, mask))


def silence_phase_one_and_feedforward(encoder):
    """Zero the output projections of phase 1 and of the feed-forward blocks: only phase 2 moves states."""
    with torch.no_grad():
        for layer in encoder.layers:
            for linear in (layer.attention.output, layer.feedforward[-1]):
                linear.weight.zero_()
                linear.bias.zero_()


def test_phase_two_reaches_only_adjacent_nodes():
    """With phase 1 silenced, a word sees another word only through a phrase holding both: with
    bigrams, one layer lets no other word in and two layers reach exactly the neighbours.
    """
    for num_layers, reached in ((1, [3]), (2, [2, 3, 4])):
        torch.manual_seed(0)
        encoder = HypernodeTransformerEncoder(
            16, NgramPhrases(2), layers=TransformerSettings(num_layers=num_layers, num_heads=2, ff_dim=32, dropout=0.0)
        ).eval()
        silence_phase_one_and_feedforward(encoder)
        x, mask = torch.randn(1, 7, 16), torch.ones(1, 7, dtype=torch.bool)
        changed = x.clone()
        changed[0, 3] = torch.randn(16)  # not a uniform shift, which LayerNorm would hide
        moved = (encoder(changed, mask) - encoder(x, mask)).abs().sum(-1)[0] > 1e-4
        assert moved.nonzero().flatten().tolist() == reached


@pytest.mark.parametrize("linear", [False, True])
def test_phase_two_is_masked_attention_with_a_sigmoid_unless_linear(linear):
    torch.manual_seed(0)
    encoder = HypernodeTransformerEncoder(16, NgramPhrases(3), layers=TransformerSettings(num_layers=1, num_heads=2, ff_dim=32), linear=linear).eval()
    layer = encoder.layers[0]
    membership = encoder.batch_hypernodes([encoder.hypernodes(["w"] * 5)], 5)
    adjacency, _ = node_adjacency(membership, torch.ones(1, 5, dtype=torch.bool))
    x = torch.randn(1, 5 + membership.size(1), 16)
    h = layer.norm_phrase(x)
    attended = layer.phrase_attention(h, h, adjacency[:, None])
    expected = x + (attended if linear else torch.sigmoid(attended))
    assert torch.allclose(layer.phrase_sublayer(x, adjacency[:, None]), expected)


@pytest.mark.parametrize("per_example", [True, False])
def test_a_sentence_alone_equals_the_sentence_batched_with_a_longer_one(per_example):
    torch.manual_seed(0)
    encoder = HypernodeTransformerEncoder(16, NgramPhrases(3), layers=TransformerSettings(num_layers=2, num_heads=2, ff_dim=32)).eval()
    short, long = torch.randn(1, 4, 16), torch.randn(1, 9, 16)
    batch = torch.cat([torch.cat([short, torch.randn(1, 5, 16)], 1), long])  # garbage in the padding
    mask = torch.tensor([[True] * 4 + [False] * 5, [True] * 9])

    def hypernodes(lengths, width):
        return encoder.batch_hypernodes([encoder.hypernodes(["w"] * n) for n in lengths], width) if per_example else None

    alone = encoder(short, torch.ones(1, 4, dtype=torch.bool), hypernodes=hypernodes([4], 4))
    batched = encoder(batch, mask, hypernodes=hypernodes([4, 9], 9))
    assert torch.allclose(batched[0, :4], alone[0], atol=1e-5)
    assert torch.isfinite(batched).all()


def test_data_dependent_phrases_must_be_passed_per_example():
    encoder = HypernodeTransformerEncoder(16, EveryPair(), layers=TransformerSettings(num_layers=1, num_heads=2, ff_dim=32)).eval()
    tokens = "a b a c b".split()
    assert encoder.phrases(tokens) == ((0, 2), (1, 4))
    assert encoder.hypernodes(tokens).int().tolist() == [[1, 0, 1, 0, 0], [0, 1, 0, 0, 1]]
    x, mask = torch.randn(1, 5, 16), torch.ones(1, 5, dtype=torch.bool)
    assert encoder(x, mask, hypernodes=encoder.batch_hypernodes([encoder.hypernodes(tokens)], 5)).shape == (1, 5, 16)
    with pytest.raises(ConfigurationError, match="generated per example"):
        encoder(x, mask)


def test_built_from_a_config_with_errors_that_name_the_key():
    encoder = Seq2SeqEncoder.from_params(
        {"type": "hypernode_transformer", "input_dim": 16, "layers": {"num_heads": 2, "num_layers": 2}, "phrases": {"type": "ngram", "max_n": 3}}
    )
    assert isinstance(encoder.phrases, NgramPhrases) and encoder.phrases.max_n == 3
    assert [layer.phase_two for layer in encoder.layers] == [True, True]
    config = {"type": "hypernode_transformer", "input_dim": 16, "layers": {"num_layers": 2}, "phrases": {"type": "ngram"}, "phase_two_layers": [3]}
    with pytest.raises(ConfigurationError, match=r"^model\.encoder\.phase_two_layers: are layer numbers from 1 to layers\.num_layers \(2\)"):
        Seq2SeqEncoder.from_params(Params(config, "model.encoder."))
    with pytest.raises(ConfigurationError, match=r"phrases\.type: 'ngrams' is not a registered PhraseGenerator.*Available: ngram, spacy_dependency"):
        Seq2SeqEncoder.from_params({"type": "hypernode_transformer", "input_dim": 16, "phrases": {"type": "ngrams"}})
