"""Registrable base of sentence encoders: (B, S, D) embeddings and a (B, S) mask in, (B, S, D) states out."""

from collections.abc import Mapping, Sequence
from typing import Any

import torch
from torch import nn

from toolkit.data.example import Example
from toolkit.registrable import Registrable


class Seq2SeqEncoder(nn.Module, Registrable):
    """Contextual states for embedded tokens.

    An encoder may read more of an example than its tokens (tree paths, phrases): it says what in
    :meth:`example_inputs`, which a model calls once per example when indexing it, and pads a
    batch of those in :meth:`batch_inputs`, whose answer the model passes to :meth:`forward` as
    keyword arguments. Models need no knowledge of any particular encoder's inputs.
    """

    default_implementation = "transformer"
    max_length: int | None = None  # the longest input the encoder has positions for (None: any)

    def forward(self, embedded: torch.Tensor, mask: torch.Tensor, **inputs: Any) -> torch.Tensor:  # pragma: no cover - abstract
        raise NotImplementedError

    def example_inputs(self, example: Example) -> dict[str, Any]:
        """What this encoder reads of *example* besides its tokens; computed once, at indexing time."""
        return {}

    def batch_inputs(self, inputs: Sequence[Mapping[str, Any]], num_tokens: int) -> dict[str, torch.Tensor]:
        """The batch's :meth:`example_inputs`, padded to *num_tokens* tokens: ``forward``'s keyword arguments."""
        return {}

    def get_output_dim(self) -> int:  # pragma: no cover - abstract
        raise NotImplementedError
