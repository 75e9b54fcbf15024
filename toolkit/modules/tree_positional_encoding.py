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

from toolkit.from_params import PositiveInt
from toolkit.modules.positional_encoding import PositionalEncoding


def branch_one_hots(paths: Sequence[Sequence[int]], degree: int, max_depth: int) -> torch.Tensor:
    """(N, degree * max_depth) float one-hots of *paths* (root-first branch indices), newest branch first.

    One scatter for all paths: a beam step asks for hundreds of paths tens of branches deep.
    """
    recent = [path[-max_depth:] for path in paths]
    branches = torch.tensor([branch for path in recent for branch in reversed(path)], dtype=torch.long)
    lengths = torch.tensor([len(path) for path in recent], dtype=torch.long)
    out = torch.zeros(len(paths), degree * max_depth)
    if len(branches):
        rows = torch.repeat_interleave(torch.arange(len(paths)), lengths)
        outside = ((branches < 0) | (branches >= degree)).nonzero().flatten()
        if len(outside):
            first = int(outside[0])
            raise ValueError(f"branch {int(branches[first])} in path {tuple(paths[int(rows[first])])} is outside a degree-{degree} tree")
        levels = torch.arange(len(branches)) - torch.repeat_interleave(lengths.cumsum(0) - lengths, lengths)  # 0 for each path's newest
        out[rows, levels * degree + branches] = 1.0
    return out


@PositionalEncoding.register("tree")
class TreePositionalEncoding(PositionalEncoding):
    """Tree positions of width *dim*: branch one-hots (..., n·k) mapped to (..., dim) vectors and added.

    The owner gathers every symbol's branch path and turns it into one-hots with :meth:`one_hots`
    or :meth:`batch_one_hots` (on the CPU, once per example or step), and passes them to
    :meth:`forward`. Registered as ``"tree"``; it has no length limit.
    """

    reads_trees = True

    def __init__(self, dim: int, degree: PositiveInt = 2, max_depth: PositiveInt = 32, parameterized: bool = True):
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

    def batch_one_hots(self, sequences: Sequence[Sequence[Sequence[int]]], length: int) -> torch.Tensor:
        """(B, length, n·k) one-hots of each sequence's paths; padding sits at the root (zero), and is masked anyway."""
        padded = [path for paths in sequences for path in list(paths) + [()] * (length - len(paths))]
        return self.one_hots(padded).view(len(sequences), length, self.width)

    def encode(self, one_hots: torch.Tensor) -> torch.Tensor:
        """The (..., dim) position vectors of branch one-hots (..., n·k)."""
        x = one_hots
        if self.parameterized:
            p = torch.tanh(self.raw_p)  # (h,)
            weights = p[:, None] ** self.levels[None, :] * torch.sqrt(1 - p[:, None] ** 2)  # (h, n·k)
            x = (one_hots.unsqueeze(-2) * weights * (self.dim / 2) ** 0.5).flatten(-2)  # (..., h·n·k)
        return self.projection(x) if self.projection is not None else x

    def forward(self, x: torch.Tensor, paths: torch.Tensor | None = None, *, offset: int = 0) -> torch.Tensor:
        """*x* (B, T, D) plus the positions of *paths* (B, T, n·k); *offset* means nothing in a tree."""
        if paths is None:
            raise ValueError("tree positions need every symbol's branch path: use a tree reader such as 'tree_pairs', or a tree grammar")
        return x + self.encode(paths).to(x.dtype)
