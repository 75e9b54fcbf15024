"""The n-gram BiLSTM computes what ``nn.LSTM`` computes on each window, outputs and gradients alike."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.modules.ngram_lstm import NgramLSTM, NgramRecurrence
from toolkit.modules.phrase_attention import ngram_windows


def reference(composer: NgramLSTM, x: torch.Tensor) -> torch.Tensor:
    """The definition: ``nn.LSTM`` (PyTorch's own kernel) run on every window; both final hidden states summed."""
    windows = ngram_windows(x, composer.n).reshape(-1, composer.n, x.size(-1))
    _, (hidden, _) = composer.lstm(windows)
    return (hidden[0] + hidden[1]).view(x.shape)


def outputs_and_gradients(composer: NgramLSTM, x: torch.Tensor, run) -> list[torch.Tensor]:
    weights = torch.linspace(-1.0, 2.0, x.numel(), dtype=x.dtype).view(x.shape)  # a loss that weighs every output differently
    x = x.detach().clone().requires_grad_(True)
    out = run(composer, x)
    grads = torch.autograd.grad((out * weights).sum(), [x, *composer.parameters()])
    return [out.detach(), *grads]


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_outputs_and_gradients_match_nn_lstm_on_every_window(n):
    torch.manual_seed(n)
    composer = NgramLSTM(n, 8).double()
    x = torch.randn(3, 2, 2, 7, 8, dtype=torch.float64)  # (q/k/v, batch, heads, length, head size)
    ours = outputs_and_gradients(composer, x, lambda module, inputs: module(inputs))
    theirs = outputs_and_gradients(composer, x, reference)
    names = ["output", "input", *(name for name, _ in composer.named_parameters())]
    for name, a, b in zip(names, ours, theirs):
        assert torch.allclose(a, b, atol=1e-12, rtol=1e-10), name


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 4), batch=st.integers(1, 3), length=st.integers(1, 9), dim=st.sampled_from([1, 3, 8]), seed=st.integers(0, 2**16))
def test_float32_matches_nn_lstm_on_any_shape(n, batch, length, dim, seed):
    torch.manual_seed(seed)
    composer = NgramLSTM(n, dim)
    x = torch.randn(batch, length, dim)
    for a, b in zip(outputs_and_gradients(composer, x, lambda module, inputs: module(inputs)), outputs_and_gradients(composer, x, reference)):
        assert torch.allclose(a, b, atol=1e-5, rtol=1e-4)


def test_the_recurrence_passes_gradcheck():
    torch.manual_seed(0)
    n, dim = 3, 4
    projected = torch.randn(2, n - 1 + 5, 8 * dim, dtype=torch.float64, requires_grad=True)
    weights = torch.randn(2, dim, 4 * dim, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda p, w: NgramRecurrence.apply(p, w, n), (projected, weights))


def test_under_bf16_autocast_the_recurrence_stays_in_fp32():
    torch.manual_seed(0)
    composer = NgramLSTM(3, 8)
    x = torch.randn(2, 6, 8)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = composer(x)
    assert out.dtype == torch.bfloat16  # the input projection's dtype, as autocast gives it
    assert torch.allclose(out.float(), reference(composer, x), atol=0.05)
    out.float().sum().backward()
    assert all(p.grad is not None and p.grad.dtype == torch.float32 for p in composer.parameters())


def test_dropout_drops_positions_in_training_only():
    torch.manual_seed(0)
    composer = NgramLSTM(2, 8, dropout=0.5)
    x = torch.randn(2, 6, 8)
    assert torch.equal(composer.eval()(x), composer(x))
    assert not torch.allclose(composer.train()(x), composer.eval()(x))


def test_checkpoints_keep_nn_lstm_parameter_names():
    names = sorted(name for name, _ in NgramLSTM(2, 4).state_dict().items())
    assert names == sorted(f"lstm.{kind}_{part}_l0{suffix}" for kind in ("weight", "bias") for part in ("ih", "hh") for suffix in ("", "_reverse"))


def test_compile_falls_back_to_eager_where_torch_compile_fails(monkeypatch, caplog):
    def unsupported(*args, **kwargs):
        raise RuntimeError("torch.compile is not supported on this platform")

    monkeypatch.setattr(torch, "compile", unsupported)
    torch.manual_seed(0)
    eager, compiled = NgramLSTM(3, 8), NgramLSTM(3, 8, compile=True)
    compiled.load_state_dict(eager.state_dict())
    x = torch.randn(2, 5, 8)
    with caplog.at_level("WARNING"):
        for a, b in zip(outputs_and_gradients(compiled, x, lambda module, inputs: module(inputs)), outputs_and_gradients(eager, x, lambda m, i: m(i))):
            assert torch.equal(a, b)
    assert compiled.kernels.compile is False
    assert [record.message for record in caplog.records] == [
        "phrase heads: torch.compile failed here (torch.compile is not supported on this platform), so they run eagerly"
    ]


@pytest.mark.slow
def test_compiled_kernels_match_eager():
    """The fused pointwise steps (about a minute to compile both, once) compute what the eager ones do."""
    torch.manual_seed(0)
    eager, compiled = NgramLSTM(3, 8), NgramLSTM(3, 8, compile=True)
    compiled.load_state_dict(eager.state_dict())
    for shape in [(2, 5, 8), (3, 2, 7, 8)]:  # a second shape reuses the dynamic-shape kernels
        x = torch.randn(*shape)
        ours = outputs_and_gradients(compiled, x, lambda module, inputs: module(inputs))
        if not compiled.kernels.compile:
            pytest.skip("torch.compile does not work here")
        for a, b in zip(ours, outputs_and_gradients(eager, x, lambda module, inputs: module(inputs))):
            assert torch.allclose(a, b, atol=1e-5, rtol=1e-5)


def test_the_encoder_config_turns_compiling_on():
    from toolkit.modules.encoders import Seq2SeqEncoder
    from toolkit.params import Params

    encoder = Seq2SeqEncoder.from_params(Params({"type": "phrase_transformer", "input_dim": 16, "gram_sizes": [0, 2], "compile": True}))
    assert encoder.layers[0].attention.composers["2"].kernels.compile is True
    plain = Seq2SeqEncoder.from_params(Params({"type": "phrase_transformer", "input_dim": 16, "gram_sizes": [0, 2]}))
    assert plain.layers[0].attention.composers["2"].kernels.compile is False
