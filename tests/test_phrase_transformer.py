"""PhraseTransformer: n-gram windows, the LSTM and Sum composers, the gate, sharing, padding, layers."""

import pytest
import torch

from toolkit.errors import ConfigurationError
from toolkit.modules.attention import MultiHeadAttention, padding_mask
from toolkit.modules.encoders import PhraseTransformerEncoder, Seq2SeqEncoder
from toolkit.modules.phrase_attention import NgramLSTM, NgramSum, PhraseMultiHeadAttention, ngram_windows
from toolkit.modules.transformer_settings import TransformerSettings
from toolkit.params import Params


def test_ngram_windows_end_at_each_position_with_zeros_before_the_start():
    x = torch.tensor([[1.0], [2.0], [3.0]])  # (S=3, d=1)
    assert ngram_windows(x, 2).squeeze(-1).tolist() == [[0, 1], [1, 2], [2, 3]]
    assert ngram_windows(x, 3).squeeze(-1).tolist() == [[0, 0, 1], [0, 1, 2], [1, 2, 3]]
    assert ngram_windows(x, 1).squeeze(-1).tolist() == [[1], [2], [3]]


def test_sum_composer_is_the_scaled_window_sum():
    x = torch.tensor([[[1.0, 10.0], [2.0, 20.0], [4.0, 40.0]]])  # (1, 3, 2)
    assert NgramSum(2)(x).tolist() == [[[0.5, 5.0], [1.5, 15.0], [3.0, 30.0]]]


def test_lstm_composer_sums_the_final_states_of_both_directions():
    torch.manual_seed(0)
    composer = NgramLSTM(3, 4).eval()
    x = torch.randn(2, 5, 4)
    out = composer(x)
    # position 3 of sentence 1, by hand: the LSTM over x[1, 1:4] alone
    _, (hidden, _) = composer.lstm(x[1, 1:4].unsqueeze(0))
    assert torch.allclose(out[1, 3], hidden[0, 0] + hidden[1, 0], atol=1e-6)
    # position 0: two zero vectors, then x[0, 0]
    window = torch.cat([torch.zeros(2, 4), x[0, :1]]).unsqueeze(0)
    _, (hidden, _) = composer.lstm(window)
    assert torch.allclose(out[0, 0], hidden[0, 0] + hidden[1, 0], atol=1e-6)


def test_a_word_reaches_only_the_n_grams_that_contain_it():
    torch.manual_seed(0)
    composer = NgramLSTM(2, 4).eval()
    x = torch.randn(1, 6, 4)
    changed = x.clone()
    changed[0, 2] += 1.0
    moved = (composer(changed) - composer(x)).abs().sum(-1)[0] > 1e-6
    assert moved.tolist() == [False, False, True, True, False, False]


def test_heads_of_one_size_share_one_composer_per_layer():
    encoder = PhraseTransformerEncoder(32, gram_sizes=[0, 0, 2, 2, 3, 3, 4, 4], layers=TransformerSettings(num_layers=2))
    attention = encoder.layers[0].attention
    assert sorted(attention.composers) == ["2", "3", "4"]
    assert attention.runs == [(0, 2, 0), (2, 4, 2), (4, 6, 3), (6, 8, 4)]
    lstm_parameters = sum(p.numel() for p in attention.composers.parameters())
    head_dim = 4
    one_bilstm = 2 * (4 * head_dim * head_dim * 2 + 2 * 4 * head_dim)  # two directions of W_ih, W_hh, b_ih, b_hh
    assert lstm_parameters == 3 * one_bilstm


def capture_heads(module):
    """Record the per-head queries, keys and values *module* attends with."""
    seen = {}

    def attend_heads(q, keys, values, mask=None, causal=False):
        seen["q"], seen["k"], seen["v"] = q, keys, values
        return torch.zeros(q.size(0), q.size(2), q.size(1) * q.size(3))

    module.attend_heads = attend_heads
    return seen


def test_phrase_heads_change_only_their_heads():
    """With gram sizes [0, 2], head 0 must equal an ordinary head; head 1 must not."""
    torch.manual_seed(0)
    phrase = PhraseMultiHeadAttention(8, [0, 2]).eval()
    plain = MultiHeadAttention(8, 2).eval()
    plain.load_state_dict(phrase.state_dict(), strict=False)
    seen_phrase, seen_plain = capture_heads(phrase), capture_heads(plain)
    x = torch.randn(2, 5, 8)
    phrase(x, x)
    plain(x, x)
    for name in "qkv":
        assert torch.allclose(seen_phrase[name][:, 0], seen_plain[name][:, 0])
        assert not torch.allclose(seen_phrase[name][:, 1], seen_plain[name][:, 1])


def test_residual_gate_is_equation_13():
    torch.manual_seed(0)
    gated = PhraseMultiHeadAttention(4, [2], composition="sum", residual_gate=True).eval()
    seen = capture_heads(gated)
    x = torch.randn(1, 3, 4)
    gated(x, x)
    s = gated.split_heads(gated.query(x))  # the word-level queries
    gate = torch.sigmoid(s)
    assert torch.allclose(seen["q"], gate * NgramSum(2)(s) + (1 - gate) * s, atol=1e-6)


@pytest.mark.parametrize("composition", ["lstm", "sum"])
def test_padding_never_leaks_between_sentences(composition):
    torch.manual_seed(0)
    encoder = PhraseTransformerEncoder(
        16, gram_sizes=[0, 2, 3, 4], composition=composition, layers=TransformerSettings(num_layers=2, ff_dim=32, dropout=0.0)
    ).eval()
    short, long = torch.randn(1, 3, 16), torch.randn(1, 7, 16)
    batch = torch.cat([torch.cat([short, torch.randn(1, 4, 16) * 100], dim=1), long])  # garbage in the padding
    mask = torch.tensor([[True] * 3 + [False] * 4, [True] * 7])
    together = encoder(batch, mask)
    assert torch.allclose(together[0, :3], encoder(short, torch.ones(1, 3, dtype=torch.bool))[0], atol=1e-5)
    assert torch.allclose(together[1], encoder(long, torch.ones(1, 7, dtype=torch.bool))[0], atol=1e-5)


def test_phrase_layers_choose_where_phrases_are_used():
    encoder = PhraseTransformerEncoder(16, gram_sizes=[0, 2], layers=TransformerSettings(num_layers=4), phrase_layers=[2, 3])
    kinds = [type(layer.attention) for layer in encoder.layers]
    assert kinds == [MultiHeadAttention, PhraseMultiHeadAttention, PhraseMultiHeadAttention, MultiHeadAttention]


def test_all_zero_gram_sizes_is_the_transformer():
    torch.manual_seed(0)
    phrase = PhraseTransformerEncoder(16, gram_sizes=[0, 0], layers=TransformerSettings(num_layers=2, ff_dim=32, dropout=0.0)).eval()
    plain = Seq2SeqEncoder.by_name("transformer")(16, layers=TransformerSettings(num_layers=2, num_heads=2, ff_dim=32, dropout=0.0)).eval()
    plain.load_state_dict(phrase.state_dict())
    x, mask = torch.randn(2, 5, 16), torch.tensor([[True] * 5, [True] * 3 + [False] * 2])
    assert torch.allclose(phrase(x, mask)[mask], plain(x, mask)[mask], atol=1e-6)  # padding states are never read


def test_gradients_reach_the_lstm():
    encoder = PhraseTransformerEncoder(16, gram_sizes=[0, 2], layers=TransformerSettings(num_layers=1, ff_dim=32))
    encoder(torch.randn(2, 4, 16), torch.ones(2, 4, dtype=torch.bool)).sum().backward()
    lstm = encoder.layers[0].attention.composers["2"].lstm
    assert lstm.weight_ih_l0.grad is not None and lstm.weight_ih_l0.grad.abs().sum() > 0


@pytest.mark.parametrize(
    "kwargs, key",
    [
        ({"gram_sizes": [0, -1]}, "gram_sizes"),
        ({"gram_sizes": [0, 2, 3]}, "divisible"),
        ({"gram_sizes": [0, 2], "phrase_layers": [0]}, "phrase_layers"),
        ({"gram_sizes": [0, 2], "composition": "max"}, "composition"),
    ],
)
def test_bad_settings_name_the_key(kwargs, key):
    with pytest.raises(ConfigurationError, match=key):
        PhraseTransformerEncoder(16, layers=TransformerSettings(num_layers=2), **kwargs)


def test_heads_are_one_per_gram_size():
    """``layers.num_heads`` left at its default becomes len(gram_sizes); another value is an error that names it."""
    assert PhraseTransformerEncoder(16, gram_sizes=[0, 2]).settings.num_heads == 2
    assert PhraseTransformerEncoder(16, gram_sizes=[0, 2], layers=TransformerSettings(num_heads=2)).settings.num_heads == 2
    config = {"type": "phrase_transformer", "input_dim": 16, "gram_sizes": [0, 2], "layers": {"num_heads": 8}}
    with pytest.raises(ConfigurationError, match=r"^model\.encoder\.layers\.num_heads: must be len\(gram_sizes\) = 2"):
        Seq2SeqEncoder.from_params(Params(config, "model.encoder."))


def test_padding_mask_shape_is_what_phrase_attention_reads():
    assert padding_mask(torch.tensor([[True, False]])).shape == (1, 1, 1, 2)


def test_head_runs_and_heads_of_one_size_apart_share_their_composer():
    from toolkit.modules.phrase_attention import head_runs

    assert head_runs([0, 0, 2, 2, 3, 3, 4, 4]) == [(0, 2, 0), (2, 4, 2), (4, 6, 3), (6, 8, 4)]
    assert head_runs([2, 0, 2, 3]) == [(0, 1, 2), (1, 2, 0), (2, 3, 2), (3, 4, 3)]
    torch.manual_seed(0)
    sizes = [2, 0, 2, 3]
    attention = PhraseMultiHeadAttention(16, sizes, residual_gate=True).eval()
    seen = capture_heads(attention)
    x = torch.randn(2, 5, 16)
    tokens = torch.arange(5) < torch.tensor([[5], [3]])  # (B, S): the second sentence has 3 words
    mask = padding_mask(tokens)
    attention(x, x, mask)
    # the reference: every head of one n gathered, composed together, and put back
    keys, values = attention.project_keys_values(x)
    qkv = torch.stack((attention.split_heads(attention.query(x)), keys, values))
    qkv = qkv.masked_fill(~mask.transpose(-1, -2).unsqueeze(0), 0.0)
    for n in (2, 3):
        heads = torch.tensor([h for h, size in enumerate(sizes) if size == n])
        words = qkv.index_select(2, heads)
        gate = torch.sigmoid(words)
        qkv = qkv.index_copy(2, heads, gate * attention.composers[str(n)](words) + (1 - gate) * words)
    real = tokens.view(2, 1, 5, 1)  # padded positions may differ: attention never reads them
    for got, expected in zip((seen["q"], seen["k"], seen["v"]), qkv.unbind(0)):
        assert torch.allclose(got * real, expected * real, atol=1e-6)
