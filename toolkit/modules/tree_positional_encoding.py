"""Tree positional encodings (Shiv & Quirk, 2019, "Novel positional encodings to enable tree-based transformers").

A node's position is its branch path from the root. With trees of degree n and a depth budget k,
the position is a vector of n·k entries: k one-hot chunks of width n, the most recent branch
first. Going down to child i is ``D_i(x) = e_i ; x[:-n]`` (shift and concatenate: push a chunk,
drop the oldest), so paths deeper than k forget their oldest branches, as the paper intends. The
root is the zero vector.

The parameterized form keeps h = d_model // (n·k) copies of that vector, each with a learned
``p = tanh(w)`` that weights depth level l by ``p^l``, normalised by ``sqrt(1 - p^2)`` and scaled by
``sqrt(d_model / 2)``; a linear map brings the result to d_model when n·k·h differs from it.
"""

from collections.abc import Sequence

import torch
from torch import nn


def branch_one_hots(paths: Sequence[Sequence[int]], degree: int, max_depth: int) -> torch.Tensor:
    """(N, degree * max_depth) float one-hots of *paths* (root-first branch indices), newest branch first."""
    rows, columns = [], []
    for row, path in enumerate(paths):
        for level, branch in enumerate(reversed(path[-max_depth:])):
            if not 0 <= branch < degree:
                raise ValueError(f"branch {branch} in path {tuple(path)} is outside a degree-{degree} tree")
            rows.append(row)
            columns.append(level * degree + branch)
    out = torch.zeros(len(paths), degree * max_depth)
    out[rows, columns] = 1.0
    return out


class TreePositionalEncoding(nn.Module):
    """Maps branch one-hots (..., n·k) to (..., d_model) position vectors."""

    def __init__(self, dim: int, degree: int, max_depth: int = 32, parameterized: bool = True):
        super().__init__()
        self.dim, self.degree, self.max_depth = dim, degree, max_depth
        self.width = degree * max_depth
        self.parameterized = parameterized
        copies = max(1, dim // self.width) if parameterized else 1
        if parameterized:
            # p starts spread over (0.5, 0.95): some copies look far up the tree, some only near.
            self.raw_p = nn.Parameter(torch.atanh(torch.linspace(0.5, 0.95, copies)))
            self.register_buffer("levels", torch.arange(max_depth).repeat_interleave(degree).float(), persistent=False)
        self.projection = nn.Linear(copies * self.width, dim, bias=False) if copies * self.width != dim else None

    def one_hots(self, paths: Sequence[Sequence[int]]) -> torch.Tensor:
        """(N, n·k) branch one-hots of *paths* for this encoding's degree and depth."""
        return branch_one_hots(paths, self.degree, self.max_depth)

    def forward(self, one_hots: torch.Tensor) -> torch.Tensor:
        x = one_hots
        if self.parameterized:
            p = torch.tanh(self.raw_p)  # (h,)
            weights = p[:, None] ** self.levels[None, :] * torch.sqrt(1 - p[:, None] ** 2)  # (h, n·k)
            x = (one_hots.unsqueeze(-2) * weights * (self.dim / 2) ** 0.5).flatten(-2)  # (..., h·n·k)
        return self.projection(x) if self.projection is not None else x
