"""Registrable base of decoding searches, and the model interface every search runs on.

A search knows nothing of trees, transitions or Transformers: it asks the model for next-symbol
log-probabilities, masks them with the grammar states' allowed symbols, and applies the chosen
symbols to the states. Every grammar therefore gets greedy and beam search for free, and every
prediction is a final (well-formed) state.
"""

from collections.abc import Sequence
from typing import Any, Protocol

import torch

from toolkit.data.example import Example
from toolkit.from_params import PositiveInt
from toolkit.grammars.grammar import Grammar, State
from toolkit.registrable import Registrable


class DecodingContext(Protocol):
    def reorder(self, index: torch.Tensor, same_sources: bool = False) -> "DecodingContext":
        """Keep the hypotheses at *index*, in that order; *same_sources*: new row i reads the source old row i read."""


class IncrementalModel(Protocol):
    """What a search needs of a model; :class:`~toolkit.models.encoder_decoder.EncoderDecoder` and
    :class:`~toolkit.models.ensemble.Ensemble` provide it.
    """

    pad_index: int
    bos_index: int
    grammar: Grammar

    def decoding_batch(self, examples: Sequence[Example]) -> dict[str, torch.Tensor]:
        """The batch ``start_decoding`` reads for *examples* (their targets left out), on the model's device."""

    def start_decoding(self, batch: dict[str, torch.Tensor], use_cache: bool) -> DecodingContext: ...

    def decode_step(self, prefix: torch.Tensor, context: Any, states: Sequence[State]) -> tuple[torch.Tensor, Any]:
        """Log-probabilities (N, V) of the next symbol after *prefix* (N, t)."""

    def allowed_mask(self, states: Sequence[State]) -> torch.Tensor:
        """(N, V) bool: the symbols each state allows; a final state allows only padding."""

    def symbols(self, indices: Sequence[int]) -> list[str]: ...


class Search(Registrable):
    """Turns initial grammar states into final ones, one batch at a time."""

    default_implementation = "greedy"
    hypotheses_per_input = 1  # rows a search decodes per input sentence; prediction sizes its batches by it

    def __init__(self, max_steps: PositiveInt = 500, use_cache: bool = True):
        self.max_steps, self.use_cache = max_steps, use_cache

    def search(self, model: IncrementalModel, batch: dict[str, torch.Tensor], states: Sequence[State]) -> list[State]:  # pragma: no cover - abstract
        raise NotImplementedError

    @torch.no_grad()
    def results(self, model: IncrementalModel, examples: Sequence[Example]) -> list[Any]:
        """Decode *examples* (one batch) from the grammar's initial states; each final state's result."""
        states = [model.grammar.initial_state(example) for example in examples]
        return [state.result() for state in self.search(model, model.decoding_batch(examples), states)]
