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


def move_rows_in_place(tensors: torch.Tensor | Sequence[torch.Tensor], index: torch.Tensor) -> bool:
    """Make each tensor's first ``len(index)`` rows what ``tensor.index_select(0, index)`` would be, if at most half of them change.

    Only the rows that change are copied (out of place first, since a source row may be a target),
    so compacting a batch after a few sentences finished, or a beam step, costs a few rows instead of
    a fresh tensor; for caches of tens of megabytes a fresh one costs more in page faults than in
    copying. Returns whether it did (``False``: too many rows move, or autograd records a tensor).
    """
    tensors = [tensors] if isinstance(tensors, torch.Tensor) else tensors
    rows = len(index)
    if any(tensor.requires_grad or rows > len(tensor) for tensor in tensors):
        return False
    moved = (index != torch.arange(rows, device=index.device)).nonzero().flatten()
    if 2 * len(moved) > rows:
        return False
    if len(moved):
        sources = index[moved]
        for tensor in tensors:
            tensor.index_copy_(0, moved, tensor.index_select(0, sources))
    return True


def take_rows(tensor: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """``tensor.index_select(0, index)``, in place in *tensor*'s storage where few rows move (the tensor belongs to one search)."""
    return tensor[: len(index)] if move_rows_in_place(tensor, index) else tensor.index_select(0, index)


class SelfAttentionCache:
    """Every layer's self-attention keys and values, preallocated along time and written in place.

    One tensor (L, 2, N, H, capacity, d) holds them all: a step writes its new keys and values into
    place, with no ``torch.cat`` and no fresh allocation per step, which on long outputs (AMR's
    action sequences) used to be most of decoding's time. The capacity doubles when full.

    Each layer's keys (and values) are one contiguous (N, H, capacity, d) block, and attention reads
    the whole block, masking the positions not yet written (:func:`~toolkit.modules.attention.attend_prefix`):
    a slice up to the current length would be strided, and CPU kernels copy strided operands first,
    which made attention over the slice 3-4 times slower than over the block. An unwritten
    position's key may hold anything (its score is overwritten); its value is zero or a stale value,
    always finite, so its zero weight contributes exactly zero.

    The cache belongs to one search: steps and reorders update it in place.
    """

    ROWS = 2  # the hypotheses' dimension of the buffer

    def __init__(self, layers: int, capacity: int = 4):
        self.layers, self.capacity, self.length = layers, capacity, 0
        self.buffer: torch.Tensor | None = None  # allocated at the first write, with the keys' dtype and device
        self.spare: torch.Tensor | None = None  # the reorder target, swapped with the buffer

    def extend(self, layer: int, keys: torch.Tensor, values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, int]:
        """Write *layer*'s keys/values (N, H, T, d) for the T new steps.

        Returns that layer's whole (N, H, capacity, d) keys and values and how many positions of them
        are written (``length + T``): attend to those only.
        """
        end = self.length + keys.size(2)
        if self.buffer is None:
            rows, heads, _, dim = keys.shape
            self.capacity = max(self.capacity, end)
            self.buffer = self.allocate(keys.new_empty(self.layers, 2, rows, heads, self.capacity, dim))
        elif end > self.capacity:
            self.capacity = max(2 * self.capacity, end)
            grown = self.buffer.new_empty(*self.buffer.shape[:4], self.capacity, self.buffer.size(-1))
            grown[..., : self.length, :] = self.buffer[..., : self.length, :]
            self.buffer, self.spare = self.allocate(grown), None
        self.buffer[layer, 0, :, :, self.length : end] = keys
        self.buffer[layer, 1, :, :, self.length : end] = values
        return self.buffer[layer, 0], self.buffer[layer, 1], end

    def allocate(self, buffer: torch.Tensor) -> torch.Tensor:
        """*buffer*, fresh, with the values past the written positions set to zero: attention weighs them by zero, which must stay zero."""
        buffer[:, 1, ..., self.length :, :] = 0
        return buffer

    def advance(self, steps: int) -> None:
        """Every layer has written *steps* new positions."""
        self.length += steps

    def reorder(self, index: torch.Tensor) -> "SelfAttentionCache":
        """Keep the rows at *index*, in that order.

        When at most half the rows change (a beam whose hypotheses mostly extend themselves, greedy
        search filling the rows of finished sentences from its last rows) only those are copied, in
        place (:func:`move_rows_in_place`). Otherwise all are copied into the spare buffer, which then
        becomes the buffer; rows only ever stay or shrink in number (beams reorder, finished
        sentences leave), so the spare's first rows suffice and no step allocates.
        """
        if self.buffer is None:
            return self
        rows = self.ROWS
        if self.buffer.requires_grad:  # decoding under autograd (out= is not differentiable): out of place
            self.buffer, self.spare = self.buffer.index_select(rows, index), None
            return self
        # Row by row of each layer's keys and values: selecting along dim 0 of each runs 3x faster than along dim 2 of all.
        filled = self.buffer[..., : self.length, :].flatten(0, 1)  # (2L, N, H, length, d)
        if move_rows_in_place(filled.unbind(), index):
            self.buffer = self.buffer[:, :, : len(index)]
            return self
        if self.spare is None or self.spare.size(rows) < len(index):
            self.spare = self.allocate(self.buffer.new_empty(*self.buffer.shape[:rows], len(index), *self.buffer.shape[rows + 1 :]))
        target = self.spare[:, :, : len(index)]
        for source, rows_out in zip(filled, target[..., : self.length, :].flatten(0, 1)):
            torch.index_select(source, 0, index, out=rows_out)
        self.buffer, self.spare = target, self.buffer
        return self


@dataclass
class DecoderCache:
    """What incremental decoding keeps between steps; every tensor has the hypotheses on dim 0."""

    memory_mask: torch.Tensor  # (N, S)
    memory_keys_values: list[tuple[torch.Tensor, ...]]  # per layer, what it reads of the source: a Transformer layer's keys and values, each (N, H, S, d)
    self_attention: SelfAttentionCache
    step: int = 0
    extra: dict[str, torch.Tensor] = field(default_factory=dict)  # decoder-specific state, e.g. the last node's position
    shared: dict[str, torch.Tensor] = field(default_factory=dict)  # tensors no row owns (a table rows point into): reorders keep them

    def reorder(self, index: torch.Tensor, same_sources: bool = False) -> "DecoderCache":
        """Keep the hypotheses at *index* (N',), in that order (beam search's backpointers).

        With *same_sources*, each new row i reads the source old row i read (a sentence's beams
        trading places, the last rows dropped), so the source-side tensors are kept, cut to N' rows,
        instead of being copied.
        """
        rows = len(index)
        pick = (lambda tensor: tensor[:rows]) if same_sources else (lambda tensor: take_rows(tensor, index))
        return DecoderCache(
            self.memory_mask[:rows] if same_sources else self.memory_mask.index_select(0, index),
            [tuple(map(pick, tensors)) for tensors in self.memory_keys_values],
            self.self_attention.reorder(index),
            self.step,
            {name: tensor.index_select(0, index) for name, tensor in self.extra.items()},
            self.shared,
        )

    def advanced(self, steps: int = 1, extra: dict[str, torch.Tensor] | None = None) -> "DecoderCache":
        """The cache after a decoder step of *steps* positions (every layer has written its keys and values)."""
        self.self_attention.advance(steps)
        return DecoderCache(self.memory_mask, self.memory_keys_values, self.self_attention, self.step + steps, extra or {}, self.shared)


class Decoder(nn.Module, Registrable):
    default_implementation = "transformer"
    uses_features = False  # decoders that read grammar features set this, and implement batch_features
    features_read: frozenset[str] = frozenset()  # the keys of State.features() they read
    max_length: int | None = None  # the longest output the decoder has positions for (None: any)
    # True where tensor_step_features of successive steps, stacked along time (B, T, ...), are what forward() reads as
    # its features: training with exploration then records a path's features as tensors (state_mlp)
    tensor_features_stack = False

    def forward(
        self, embedded: torch.Tensor, memory: torch.Tensor, memory_mask: torch.Tensor, features: Any = None
    ) -> torch.Tensor:  # pragma: no cover - abstract
        """Teacher forcing: (B, T, D) embedded inputs -> (B, T, D) states; step t sees inputs <= t."""
        raise NotImplementedError

    def start(self, memory: torch.Tensor, memory_mask: torch.Tensor) -> DecoderCache:  # pragma: no cover - abstract
        """The cache before the first step of incremental decoding."""
        raise NotImplementedError

    def step(self, embedded: torch.Tensor, cache: DecoderCache, features: Any = None) -> tuple[torch.Tensor, DecoderCache]:  # pragma: no cover - abstract
        """One step: (N, 1, D) embedded last symbols -> (N, 1, D) states and the extended cache."""
        raise NotImplementedError

    def index_features(self, steps: Sequence[Mapping[str, Any]]) -> Any:
        """One example's per-step grammar features as stored at indexing time (once, not every epoch);
        a decoder may flatten them here into what its :meth:`batch_features` collates fastest.
        """
        return steps

    def batch_features(self, features: Sequence[Sequence[Mapping[str, Any]]], device: torch.device) -> Any:
        """Turn per-example, per-step grammar features (teacher forcing) into what :meth:`forward` takes."""
        return None

    def step_features(self, features: Sequence[Mapping[str, Any]], device: torch.device) -> Any:
        """Turn each hypothesis's current ``state.features()`` into what :meth:`step` takes."""
        return None

    def reads_stack_buffer_tensors(self) -> bool:
        """Whether :meth:`tensor_step_features` is implemented: a search may then run on a grammar's tensor states
        (:mod:`toolkit.decoding.tensor_configurations`). A decoder that reads no features needs none.
        """
        return not self.uses_features or type(self).tensor_step_features is not Decoder.tensor_step_features

    def tensor_step_features(self, states: Any) -> Any:
        """What :meth:`step` takes, from a batch of tensor states: their ``positions(stack, buffer)``, asked for the
        widths this decoder reads (``None``: all), are (N, width) source positions nearest first, ``-1`` padded.
        """
        raise NotImplementedError
