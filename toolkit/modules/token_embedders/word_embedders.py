"""A model's token embedders, composed: their vectors concatenated with the word embedding and projected."""

from collections.abc import Mapping, Sequence
from typing import Any

import torch
from torch import nn

from toolkit.data.example import Example
from toolkit.errors import ConfigurationError
from toolkit.modules.dropout import Dropout
from toolkit.modules.token_embedders.token_embedder import TokenEmbedder


class WordEmbedders(nn.Module):
    """The vectors an encoder reads for each word, beside or instead of the model's own word embedding.

    Every embedder gives one vector per word; with the word embedding (if the model has one) they
    are concatenated in config order and projected to the model's width by one linear layer. The
    embedders are keyed by their config name, so ``model.token_embedders.minilm`` is the module
    ``token_embedders.embedders.minilm``, and each one's :meth:`~TokenEmbedder.example_inputs` are
    kept under its name.
    """

    def __init__(self, embedders: Mapping[str, TokenEmbedder], word_dim: int, output_dim: int, dropout: float = 0.0):
        super().__init__()
        if not embedders:
            raise ConfigurationError("is empty: leave it out to read the word embedding alone", key="token_embedders")
        self.embedders = nn.ModuleDict(dict(embedders))
        self.word_dim = word_dim
        width = word_dim + sum(embedder.get_output_dim() for embedder in self.embedders.values())
        self.projection = nn.Linear(width, output_dim)
        self.dropout = Dropout(dropout)

    def example_inputs(self, example: Example) -> dict[str, Any]:
        return {name: embedder.example_inputs(example) for name, embedder in self.embedders.items()}

    def batch_inputs(self, inputs: Sequence[Mapping[str, Any]], num_tokens: int) -> dict[str, dict[str, torch.Tensor]]:
        return {name: embedder.batch_inputs([item[name] for item in inputs], num_tokens) for name, embedder in self.embedders.items()}

    def forward(self, words: torch.Tensor | None, token_ids: torch.Tensor, mask: torch.Tensor, inputs: Mapping[str, Any]) -> torch.Tensor:
        """(B, S, output_dim): *words* (the word embedding, or None) and every embedder's vectors, projected."""
        parts = [] if words is None else [words]
        parts += [embedder(token_ids, mask, **inputs[name]) for name, embedder in self.embedders.items()]
        return self.projection(self.dropout(torch.cat(parts, dim=-1)))
