"""Dropout whose CPU mask costs a quarter of ``bernoulli_``'s.

torch draws a CPU dropout mask with ``bernoulli_``: a call of the random generator per element,
23% of a GEO training step on the 2-core CI machine. Here one 64-bit draw gives the 16 random bits
of four elements, and an element is kept when its bits reach a threshold, so *p* is rounded to a
multiple of 1/65536. The mask is a bool tensor, saved for the backward pass as ``nn.Dropout``
saves its own, and the draws come from torch's generator, so ``torch.manual_seed`` still makes a
run repeatable. On other devices (whose dropout kernels are fused), in eval mode, and for p = 0 or
1 this is ``nn.Dropout``.
"""

from __future__ import annotations

import torch
from torch import nn

_LANES = 4  # 16-bit draws per 64-bit word


def keep_mask(shape: torch.Size, p: float, device: torch.device) -> torch.Tensor:
    """A bool tensor of *shape*, each element true with probability 1 - p (p rounded to 1/65536)."""
    count = shape.numel()
    words = torch.empty(-(-count // _LANES), dtype=torch.int64, device=device).random_(-(2**63), 2**63 - 1)
    bits = words.view(torch.int16)[:count]
    return (bits >= round(p * 65536) - 32768).view(shape)


class _MaskedScale(torch.autograd.Function):
    """``x * mask / (1 - p)``, its backward the same of the gradient: one mask, no float copy of it."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, p: float) -> torch.Tensor:
        mask = keep_mask(x.shape, p, x.device)
        ctx.save_for_backward(mask)
        ctx.scale = 1.0 / (1.0 - p)
        return x.mul(mask).mul_(ctx.scale)

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> tuple[torch.Tensor, None]:
        (mask,) = ctx.saved_tensors
        return grad.mul(mask).mul_(ctx.scale), None


class Dropout(nn.Dropout):
    """``nn.Dropout`` with the cheaper CPU mask of :func:`keep_mask` (see the module docstring)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training or x.device.type != "cpu" or self.inplace or not 0.0 < self.p < 1.0:
            return super().forward(x)
        return _MaskedScale.apply(x, self.p)
