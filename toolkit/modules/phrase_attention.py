"""Phrase-level multi-head attention (Nguyen et al., "PhraseTransformer: an incorporation of local
context information into sequence-to-sequence semantic parsing", 2022).

An ordinary head compares words. A phrase head of size n first replaces each position's query,
key and value by a representation of the n-gram ending there (zero vectors before the first
word), so it compares phrases: a bidirectional LSTM over the n vectors, whose forward and
backward final hidden states are summed (Eq. 7-12), or, in the Sum variant, the plain sum of the
n vectors (Eq. 14-15; scaled by 1/n here, as the authors' code does, to keep its size). The LSTM
is :mod:`toolkit.modules.ngram_lstm`, which computes every window of every sequence at once. An
optional residual gate mixes the phrase back with the word, ``sigmoid(s) * phrase + (1 - sigmoid(s)) * s``
(Eq. 13). Heads of the same n share one composer, which also serves their queries, keys and values.

Shapes: B batch, H heads, S length, d head size.
"""

from typing import Literal

import torch
import torch.nn.functional as F
from torch import nn

from toolkit.modules.attention import MultiHeadAttention
from toolkit.modules.ngram_lstm import NgramLSTM

Composition = Literal["lstm", "sum"]


def ngram_windows(x: torch.Tensor, n: int) -> torch.Tensor:
    """(..., S, d) -> (..., S, n, d): at position k the n vectors ending at k, oldest first, zeros before the start."""
    padded = F.pad(x, (0, 0, n - 1, 0))  # n - 1 zero vectors before the first position
    return padded.unfold(-2, n, 1).transpose(-1, -2)  # a view: no copy until the composer reads it


class NgramSum(nn.Module):
    """Eq. 14-15: the n vectors of each n-gram summed (times 1/n), without parameters."""

    def __init__(self, n: int):
        super().__init__()
        self.n = n

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ngram_windows(x, self.n).sum(dim=-2) / self.n


class PhraseMultiHeadAttention(MultiHeadAttention):
    """Self-attention whose heads look at n-grams: ``gram_sizes[h]`` is head h's n (0: an ordinary head)."""

    def __init__(
        self,
        dim: int,
        gram_sizes: list[int],
        composition: Composition = "lstm",
        residual_gate: bool = False,
        dropout: float = 0.0,
        phrase_dropout: float = 0.0,
        compile: bool = False,
    ):
        super().__init__(dim, len(gram_sizes), dropout)
        head_dim = dim // len(gram_sizes)
        self.residual_gate = residual_gate
        sizes = sorted({n for n in gram_sizes if n > 0})
        self.composers = nn.ModuleDict({str(n): NgramLSTM(n, head_dim, phrase_dropout, compile) if composition == "lstm" else NgramSum(n) for n in sizes})
        self.runs = head_runs(gram_sizes)  # consecutive heads of one n: a view each, no gathering

    def forward(self, query: torch.Tensor, source: torch.Tensor, mask: torch.Tensor | None = None, causal: bool = False) -> torch.Tensor:
        """Self-attention over *query* (B, S, D) (*source* must be the same sequence); *mask* (B, 1, 1, S)."""
        if source is not query:
            raise ValueError("phrase attention is self-attention: n-grams of queries and keys come from one sequence")
        keys, values = self.project_keys_values(source)
        qkv = torch.stack((self.split_heads(self.query(query)), keys, values))  # (3, B, H, S, d)
        padding = None if mask is None else ~mask.transpose(-1, -2).unsqueeze(0)  # (1, B, 1, S, 1)
        parts = []
        for start, stop, n in self.runs:
            words = qkv[:, :, start:stop]  # (3, B, H_run, S, d)
            if n:
                if padding is not None:  # zeros for padding, as the n-grams before the first word see
                    words = words.masked_fill(padding, 0.0)
                phrases = self.composers[str(n)](words).to(qkv.dtype)
                if self.residual_gate:
                    gate = torch.sigmoid(words)
                    phrases = gate * phrases + (1 - gate) * words
                words = phrases
            parts.append(words)
        q, keys, values = (torch.cat(parts, dim=2) if len(parts) > 1 else parts[0]).unbind(0)
        return self.attend_heads(q, keys, values, mask, causal)


def head_runs(gram_sizes: list[int]) -> list[tuple[int, int, int]]:
    """Maximal runs of consecutive heads with one gram size, as (start, stop, n): [0, 0, 2, 2, 3] -> (0, 2, 0), (2, 4, 2), (4, 5, 3)."""
    runs: list[tuple[int, int, int]] = []
    for head, n in enumerate(gram_sizes):
        if runs and runs[-1][2] == n:
            runs[-1] = (runs[-1][0], head + 1, n)
        else:
            runs.append((head, head + 1, n))
    return runs
