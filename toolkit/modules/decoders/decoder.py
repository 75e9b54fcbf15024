"""Registrable base of autoregressive decoders, and the explicit cache of incremental decoding.

A decoder maps embedded target symbols to hidden states, attending to the encoded source. It
works in two modes: all steps at once under teacher forcing (:meth:`Decoder.forward`), and one
step at a time during search (:meth:`Decoder.step`), carrying a :class:`DecoderCache` whose
tensors the search reorders as beams are pruned. Grammar features (tree positions, stack and
buffer masks) reach the decoder through :meth:`Decoder.batch_features`; the plain Transformer
decoder uses none.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

from toolkit.registrable import Registrable


@dataclass
class DecoderCache:
    """What incremental decoding keeps between steps; every tensor has the hypotheses on dim 0."""

    memory_mask: torch.Tensor  # (N, S)
    memory_keys_values: list[tuple[torch.Tensor, torch.Tensor]]  # per layer, each (N, H, S, d)
    self_keys_values: list[tuple[torch.Tensor, torch.Tensor] | None] = field(default_factory=list)
    step: int = 0
    extra: dict[str, torch.Tensor] = field(default_factory=dict)  # decoder-specific state, e.g. the last node's position

    def reorder(self, index: torch.Tensor, same_sources: bool = False) -> "DecoderCache":
        """Keep the hypotheses at *index* (N',), in that order (beam search's backpointers).

        With *same_sources*, *index* only moves hypotheses among rows that encode the same source
        (a sentence's beams), so the source-side tensors stay as they are instead of being copied.
        """
        pick = lambda pair: None if pair is None else (pair[0].index_select(0, index), pair[1].index_select(0, index))  # noqa: E731
        return DecoderCache(
            self.memory_mask if same_sources else self.memory_mask.index_select(0, index),
            self.memory_keys_values if same_sources else [pick(kv) for kv in self.memory_keys_values],
            [pick(kv) for kv in self.self_keys_values],
            self.step,
            {name: tensor.index_select(0, index) for name, tensor in self.extra.items()},
        )


class Decoder(nn.Module, Registrable):
    default_implementation = "transformer"
    uses_features = False  # decoders that read grammar features set this, and implement batch_features

    def forward(
        self, embedded: torch.Tensor, memory: torch.Tensor, memory_mask: torch.Tensor, features: Any = None
    ) -> torch.Tensor:  # pragma: no cover - abstract
        """Teacher forcing: (B, T, D) embedded inputs -> (B, T, D) states; step t sees inputs <= t."""
        raise NotImplementedError

    def start(self, memory: torch.Tensor, memory_mask: torch.Tensor) -> DecoderCache:  # pragma: no cover - abstract
        """The cache before the first step of incremental decoding."""
        raise NotImplementedError

    def step(
        self, embedded: torch.Tensor, cache: DecoderCache, features: Any = None
    ) -> tuple[torch.Tensor, DecoderCache]:  # pragma: no cover - abstract
        """One step: (N, 1, D) embedded last symbols -> (N, 1, D) states and the extended cache."""
        raise NotImplementedError

    def index_features(self, steps: Sequence[Mapping[str, Any]]) -> Any:
        """One example's per-step grammar features as stored at indexing time (once, not every epoch);
        a decoder may flatten them here into what its :meth:`batch_features` collates fastest."""
        return steps

    def batch_features(self, features: Sequence[Sequence[Mapping[str, Any]]], device: torch.device) -> Any:
        """Turn per-example, per-step grammar features (teacher forcing) into what :meth:`forward` takes."""
        return None

    def step_features(self, features: Sequence[Mapping[str, Any]], device: torch.device) -> Any:
        """Turn each hypothesis's current ``state.features()`` into what :meth:`step` takes."""
        return None
