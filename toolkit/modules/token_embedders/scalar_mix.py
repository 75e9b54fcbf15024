"""A learned scalar mix of layers (Peters et al., 2018, ELMo, equation 1)."""

from collections.abc import Sequence

import torch
from torch import nn


class ScalarMix(nn.Module):
    """``gamma * sum_k softmax(w)_k * h_k``: a task-specific weighting of a network's layers.

    Different layers of a pretrained encoder hold different information (syntax low, semantics
    high); a parser learns which it needs with ``num_layers + 1`` scalars. The weights start
    equal (``w = 0``) and *gamma* at *initial_gamma*.
    """

    def __init__(self, num_layers: int, initial_gamma: float = 1.0):
        super().__init__()
        self.weights = nn.Parameter(torch.zeros(num_layers))
        self.gamma = nn.Parameter(torch.tensor(float(initial_gamma)))

    def forward(self, layers: Sequence[torch.Tensor] | torch.Tensor) -> torch.Tensor:
        """Mix *layers* (a sequence of same-shaped tensors, or one tensor stacked on dimension 0)."""
        stacked = layers if isinstance(layers, torch.Tensor) else torch.stack(tuple(layers))
        if stacked.size(0) != self.weights.numel():
            raise ValueError(f"ScalarMix expected {self.weights.numel()} layers, got {stacked.size(0)}")
        weights = torch.softmax(self.weights, dim=0).to(stacked.dtype)
        return self.gamma.to(stacked.dtype) * torch.tensordot(weights, stacked, dims=1)
