"""The CPU dropout with 16-bit masks: the keep rate, the scaling, the gradient, the fallbacks."""

import pytest
import torch
from torch import nn

from toolkit.modules.dropout import Dropout, keep_mask


@pytest.mark.parametrize("p", [0.1, 0.3, 0.5])
def test_each_element_is_kept_with_probability_one_minus_p(p):
    torch.manual_seed(0)
    mask = keep_mask(torch.Size([1001, 999]), p, torch.device("cpu"))  # not a multiple of 4 elements
    n = mask.numel()
    rate = mask.float().mean().item()
    assert abs(rate - (1 - p)) < 4 * (p * (1 - p) / n) ** 0.5  # within 4 standard deviations
    # and the four elements drawn from one 64-bit word are independent: each lane keeps at the same rate
    lanes = mask.flatten()[: n - n % 4].view(-1, 4).float().mean(0)
    assert torch.allclose(lanes, torch.full((4,), 1 - p), atol=4 * (p * (1 - p) / (n / 4)) ** 0.5)


def test_kept_elements_are_scaled_and_the_gradient_follows_the_mask():
    torch.manual_seed(1)
    x = (torch.rand(7, 13, 5) + 0.5).requires_grad_()  # no zeros, so a zero output means dropped
    dropout = Dropout(0.25).train()
    y = dropout(x)
    kept = y != 0
    assert 0 < kept.float().mean() < 1
    assert torch.equal(y[kept], x[kept] * (1 / 0.75))  # as nn.Dropout scales
    grad = torch.randn_like(y)
    y.backward(grad)
    assert torch.equal(x.grad, torch.where(kept, grad * (1 / 0.75), 0.0))


def test_a_seed_repeats_the_mask_and_eval_p0_p1_are_nn_dropout():
    x = torch.randn(64, 32)
    torch.manual_seed(5)
    first = Dropout(0.1).train()(x)
    torch.manual_seed(5)
    assert torch.equal(Dropout(0.1).train()(x), first)
    assert torch.equal(Dropout(0.5).eval()(x), x)
    assert torch.equal(Dropout(0.0).train()(x), x)
    assert torch.equal(Dropout(1.0).train()(x), nn.Dropout(1.0).train()(x))  # zeros, no division by zero


def test_bf16_inputs_keep_their_dtype():
    x = torch.randn(8, 16, dtype=torch.bfloat16, requires_grad=True)
    y = Dropout(0.2).train()(x)
    y.sum().backward()
    assert y.dtype == x.grad.dtype == torch.bfloat16
