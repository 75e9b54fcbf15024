"""Positional encodings, registered under :class:`PositionalEncoding`; sinusoidal positions (Vaswani et al., 2017, section 3.5).

Encoders and decoders take ``positional_encoding: Lazy[PositionalEncoding]`` and build it with
their width, so any of them can take any encoding::

    positional_encoding: { type: 'sinusoidal', max_length: 1024 }   // the default
    positional_encoding: { type: 'tree', degree: 2, max_depth: 32 }  // toolkit/modules/tree_positional_encoding.py
"""

import math

import torch
from torch import nn

from toolkit.from_params import PositiveInt
from toolkit.registrable import Registrable


class PositionalEncoding(nn.Module, Registrable):
    """Adds a position vector to every embedded symbol.

    A sequence encoding numbers the symbols; a tree encoding (``reads_trees``) instead reads each
    symbol's branch path from the root, which its owner gathers (from the examples or the grammar
    states) and passes to :meth:`forward` as one-hots. Owners ask ``reads_trees`` to know whether
    to gather paths, and report ``max_length`` as the longest sequence they can read.
    """

    default_implementation = "sinusoidal"
    max_length: int | None = None  # the most positions the encoding has (None: any)
    reads_trees: bool = False  # whether forward needs the symbols' branch paths

    def forward(self, x: torch.Tensor, paths: torch.Tensor | None = None, *, offset: int = 0) -> torch.Tensor:  # pragma: no cover - abstract
        """*x* (B, T, D) with positions added; *paths* are tree one-hots, *offset* the first symbol's number."""
        raise NotImplementedError


@PositionalEncoding.register("sinusoidal")
class SinusoidalPositionalEncoding(PositionalEncoding):
    """Adds ``PE(pos, 2i) = sin(pos / 10000^(2i/d))`` and its cosine twin to a sequence.

    The table is a non-persistent buffer: it follows ``.to(device)`` but never enters a checkpoint.
    """

    def __init__(self, dim: int, max_length: PositiveInt = 1024):
        super().__init__()
        self.max_length = max_length
        position = torch.arange(max_length, dtype=torch.float32).unsqueeze(1)
        inverse_frequency = torch.exp(torch.arange(0, dim, 2, dtype=torch.float32) * (-math.log(10000.0) / dim))
        table = torch.zeros(max_length, dim)
        table[:, 0::2] = torch.sin(position * inverse_frequency)
        table[:, 1::2] = torch.cos(position * inverse_frequency[: dim // 2])
        self.register_buffer("table", table, persistent=False)

    def forward(self, x: torch.Tensor, paths: torch.Tensor | None = None, *, offset: int = 0) -> torch.Tensor:
        """*x* is (B, T, D); positions start at *offset* (the step, when decoding one token at a time)."""
        length = x.size(1)
        if offset + length > self.table.size(0):
            raise ValueError(f"sequence of {offset + length} positions exceeds max_length {self.table.size(0)}")
        return x + self.table[offset : offset + length].to(x.dtype)
