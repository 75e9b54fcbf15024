"""Registrable base of sentence encoders: (B, S, D) embeddings and a (B, S) mask in, (B, S, D) states out."""

from collections.abc import Sequence
from typing import Any

import torch
from torch import nn

from toolkit.registrable import Registrable


class Seq2SeqEncoder(nn.Module, Registrable):
    default_implementation = "transformer"
    uses_token_paths = False  # encoders of tree inputs set this, and implement batch_paths

    def forward(
        self, embedded: torch.Tensor, mask: torch.Tensor, token_paths: Any = None
    ) -> torch.Tensor:  # pragma: no cover - abstract
        """*token_paths* is what :meth:`batch_paths` made of the batch's ``Example.token_paths``."""
        raise NotImplementedError

    def batch_paths(self, paths: Sequence[Sequence[Sequence[int]]], device: torch.device) -> Any:
        """Turn each example's token branch paths (tree inputs) into what :meth:`forward` takes."""
        return None

    def get_output_dim(self) -> int:  # pragma: no cover - abstract
        raise NotImplementedError
