"""Tree positional encodings (Shiv & Quirk, 2019) and their use in the decoder."""

from collections import Counter

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from toolkit.data.example import Example
from toolkit.data.vocabulary import Vocabulary
from toolkit.from_params import Lazy
from toolkit.grammars import SequenceGrammar, State
from toolkit.models import EncoderDecoder
from toolkit.modules.decoders import TransformerDecoder
from toolkit.modules.encoders import TransformerEncoder
from toolkit.modules.positional_encoding import PositionalEncoding
from toolkit.modules.transformer_settings import TransformerSettings
from toolkit.modules.tree_positional_encoding import TreePositionalEncoding, branch_one_hots


def test_one_hots_put_the_newest_branch_first():
    assert branch_one_hots([(1, 0)], degree=2, max_depth=3).tolist() == [[1, 0, 0, 1, 0, 0]]
    assert branch_one_hots([()], degree=2, max_depth=3).tolist() == [[0] * 6]  # the root


@given(path=st.lists(st.integers(0, 2), max_size=8), branch=st.integers(0, 2))
def test_going_down_is_shift_and_concatenate(path, branch):
    degree, depth = 3, 4
    parent = branch_one_hots([tuple(path)], degree, depth)[0]
    child = branch_one_hots([tuple(path) + (branch,)], degree, depth)[0]
    expected = torch.cat([torch.nn.functional.one_hot(torch.tensor(branch), degree).float(), parent[:-degree]])
    assert torch.equal(child, expected)  # D_i(x) = e_i ; x[:-n]: beyond depth k the oldest branch is forgotten


@given(st.lists(st.lists(st.integers(0, 2), max_size=7), max_size=6))
def test_many_paths_at_once_are_each_path_alone(paths):
    """The batched scatter puts every path's branches in its own row, whatever the mix of depths (the root included)."""
    batched = branch_one_hots(paths, degree=3, max_depth=5)
    assert batched.shape == (len(paths), 15)
    for row, path in enumerate(paths):
        assert torch.equal(batched[row], branch_one_hots([path], degree=3, max_depth=5)[0])
        assert batched[row].sum() == min(len(path), 5)


def test_branch_outside_the_degree_is_an_error():
    with pytest.raises(ValueError, match="degree-2"):
        branch_one_hots([(0, 2)], degree=2, max_depth=4)
    with pytest.raises(ValueError, match=r"branch -1 in path \(1, -1\)"):
        branch_one_hots([(0,), (1, -1)], degree=2, max_depth=4)


def test_parameterized_form_weights_deeper_levels_less():
    encoding = TreePositionalEncoding(dim=16, degree=2, max_depth=4, parameterized=True)
    assert encoding.projection is None  # 2 copies of 2 x 4 entries fill d_model exactly
    x = branch_one_hots([(0, 0, 0, 0)], 2, 4)
    out = encoding.encode(x)[0].view(2, 4, 2)[:, :, 0]  # (copy, level) weights of branch 0
    p = torch.tanh(encoding.raw_p)
    expected = p[:, None] ** torch.arange(4.0) * torch.sqrt(1 - p[:, None] ** 2) * (16 / 2) ** 0.5
    assert torch.allclose(out, expected)
    assert (out[:, 1:] < out[:, :-1]).all()
    assert TreePositionalEncoding(dim=10, degree=2, max_depth=4).encode(x).shape == (1, 10)  # projected
    embedded = torch.randn(1, 1, 16)
    assert torch.equal(encoding(embedded, x[None]), embedded + encoding.encode(x[None]))  # forward adds the positions


class ChainState(State):
    """A toy grammar with features: symbol t sits at path (0,) * t and (1,) alternately; 4 symbols."""

    def __init__(self, n=0):
        self.n = n

    def allowed(self):
        return None if self.n < 4 else ()

    def features(self):
        return {"path": tuple(i % 2 for i in range(self.n))}

    def apply(self, symbol):
        return ChainState(self.n + 1)

    def is_final(self):
        return self.n == 4

    def result(self):
        return self.n


class ChainGrammar(SequenceGrammar):
    def oracle(self, example):
        return example.target.split()

    def initial_state(self, example):
        return ChainState()


def test_tree_positions_align_in_teacher_forcing_and_incremental_decoding():
    torch.manual_seed(0)
    grammar = ChainGrammar()
    examples = [Example(["a", "b"], "x y z x"), Example(["b"], "y y x z")]
    vocab = Vocabulary({"tokens": Counter("ab"), "symbols": Counter("xyz")})
    tree = Lazy(PositionalEncoding, {"type": "tree", "degree": 2, "max_depth": 3})
    decoder = TransformerDecoder(16, TransformerSettings(num_layers=2, num_heads=2, ff_dim=32, dropout=0.0), tree)
    encoder = TransformerEncoder(16, TransformerSettings(num_layers=1, num_heads=2, ff_dim=32, dropout=0.0))
    model = EncoderDecoder(vocab, grammar, encoder, decoder).eval()
    batch = model.collate([model.index(example) for example in examples])
    assert batch["features"][0][2]["path"] == (0, 1)
    memory, mask = model.encode(batch["source"], batch)
    features = decoder.batch_features(batch["features"], memory.device)
    assert torch.equal(features[:, 0], torch.zeros_like(features[:, 0]))  # the start symbol is at the root
    full = torch.log_softmax(model.output_projection(decoder(model.target_embedding(batch["target_in"]) * model.embedding_scale, memory, mask, features)), -1)

    context = model.start_decoding(batch, use_cache=True)
    states = [grammar.initial_state(example) for example in examples]
    for t in range(4):
        step, context = model.decode_step(batch["target_in"][:, : t + 1], context, states)
        assert torch.allclose(step, full[:, t], atol=1e-5), t
        states = [state.apply("x") for state in states]
