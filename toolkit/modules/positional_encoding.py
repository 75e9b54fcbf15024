"""Sinusoidal positions (Vaswani et al., 2017, section 3.5)."""

import math

import torch
from torch import nn


class SinusoidalPositionalEncoding(nn.Module):
    """Adds ``PE(pos, 2i) = sin(pos / 10000^(2i/d))`` and its cosine twin to a sequence.

    The table is a non-persistent buffer: it follows ``.to(device)`` but never enters a checkpoint.
    """

    def __init__(self, dim: int, max_length: int = 1024):
        super().__init__()
        position = torch.arange(max_length, dtype=torch.float32).unsqueeze(1)
        inverse_frequency = torch.exp(torch.arange(0, dim, 2, dtype=torch.float32) * (-math.log(10000.0) / dim))
        table = torch.zeros(max_length, dim)
        table[:, 0::2] = torch.sin(position * inverse_frequency)
        table[:, 1::2] = torch.cos(position * inverse_frequency[: dim // 2])
        self.register_buffer("table", table, persistent=False)

    def forward(self, x: torch.Tensor, offset: int = 0) -> torch.Tensor:
        """*x* is (B, T, D); positions start at *offset* (the step, when decoding one token at a time)."""
        length = x.size(1)
        if offset + length > self.table.size(0):
            raise ValueError(f"sequence of {offset + length} positions exceeds max_length {self.table.size(0)}")
        return x + self.table[offset : offset + length].to(x.dtype)
