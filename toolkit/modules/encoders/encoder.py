"""Registrable base of sentence encoders: (B, S, D) embeddings and a (B, S) mask in, (B, S, D) states out."""

import torch
from torch import nn

from toolkit.registrable import Registrable


class Seq2SeqEncoder(nn.Module, Registrable):
    default_implementation = "transformer"

    def forward(self, embedded: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:  # pragma: no cover - abstract
        raise NotImplementedError

    def get_output_dim(self) -> int:  # pragma: no cover - abstract
        raise NotImplementedError
