"""Registrable base of decoding searches, and the model interface every search runs on.

A search knows nothing of trees, transitions or Transformers: it asks the model for next-symbol
log-probabilities, masks them with the grammar states' allowed symbols, and applies the chosen
symbols to the states. Every grammar therefore gets greedy and beam search for free, and every
prediction is a final (well-formed) state.
"""

import copy
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import torch

from toolkit.data.example import Example
from toolkit.from_params import PositiveInt
from toolkit.grammars.grammar import Grammar, State
from toolkit.registrable import Registrable

logger = logging.getLogger(__name__)
DEFAULT_MAX_STEPS = 500  # an input's step limit where neither the config nor the grammar gives one
DOUBT = "doubt"  # the key of Example.meta where a search says why it does not stand behind its output


@dataclass(frozen=True)
class Doubted:
    """A final state a search returns without standing behind it (a reading its model is unsure of), and *why*.

    It is the state in every other respect; :meth:`Search.results` gives its result as any other and notes
    *why* in its example's ``meta[DOUBT]``, for a predictor that abstains to say so.
    """

    state: State
    why: str

    def __getattr__(self, name: str) -> Any:
        return getattr(self.state, name)


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


class StateList(list):
    """Python states as a search advances them, with the operations of a grammar's tensor states
    (:meth:`~toolkit.grammars.grammar.Grammar.tensor_states`), so one search loop serves both: a row per hypothesis.
    """

    def __init__(self, states: Sequence[State], model: IncrementalModel):
        super().__init__(states)
        self.model = model

    def finished(self) -> torch.Tensor:
        return torch.tensor([state.is_final() for state in self], dtype=torch.bool)

    def allowed_mask(self) -> torch.Tensor:
        return self.model.allowed_mask(self)

    def select(self, index: torch.Tensor) -> "StateList":
        return StateList([self[i] for i in index.tolist()], self.model)

    def with_rows(self, index: torch.Tensor, other: Sequence[State]) -> "StateList":
        rows = list(self)
        for i, state in zip(index.tolist(), other):
            rows[i] = state
        return StateList(rows, self.model)

    def apply(self, symbols: torch.Tensor, moving: torch.Tensor | None = None) -> "StateList":
        """Each state after its symbol (vocabulary ids), where *moving* holds (default: every row)."""
        names = self.model.symbols(symbols.tolist())
        moves = [True] * len(self) if moving is None else moving.tolist()
        return StateList([state.apply(name) if move else state for state, name, move in zip(self, names, moves)], self.model)

    def rows(self) -> list[State]:
        return list(self)


def as_rows(model: IncrementalModel, states: Any) -> Any:
    """*states* as a search advances them: a grammar's tensor states as they are, Python states in a :class:`StateList`."""
    return states if hasattr(states, "allowed_mask") else StateList(states, model)


class Search(Registrable):
    """Turns initial grammar states into final ones, one batch at a time.

    *max_steps* is one step limit for every input. Left out, each input has its own: what its
    grammar says a decode of it can take (:meth:`Grammar.max_steps`, e.g. ``2n`` for a dependency
    parse), else ``DEFAULT_MAX_STEPS``, and no more than the decoder has positions for; so a limit
    set for one corpus does not cut the longer inputs of another. A state the search leaves unfinished
    at its limit is cut short: ``cut_short`` counts those inputs, and its result is what the grammar
    makes of a partial output (AMR's says so in a ``# ::warning`` line).
    """

    default_implementation = "greedy"
    hypotheses_per_input = 1  # rows a search decodes per input sentence; prediction sizes its batches by it
    # A class whose search() runs on a grammar's tensor states (Grammar.tensor_states) says so in its own body
    # (searches_tensors = True); on_tensors turns it off for an instance. Other searches get Python states.
    on_tensors = True

    def __init__(self, max_steps: PositiveInt | None = None, use_cache: bool = True):
        self.fixed_steps = max_steps is not None
        self.max_steps, self.use_cache = max_steps or DEFAULT_MAX_STEPS, use_cache
        self.cut_short = 0
        self.stopped = 0  # outputs whose grammar cut a degenerate part of them (State.stopped)

    def copied(self) -> "Search":
        """A shallow copy of this search whose counts start at 0: the model's own search keeps counting its own."""
        copied = copy.copy(self)
        copied.cut_short = copied.stopped = 0
        return copied

    def search(
        self, model: IncrementalModel, batch: dict[str, torch.Tensor], states: Any, limits: Sequence[int] | None = None
    ) -> list[State]:  # pragma: no cover - abstract
        """Final states (or those left at their step limit) for *states*, Python states or a grammar's tensor states
        (rows of them, each with ``result()`` and ``is_final()``); *limits*: each one's (default: ``max_steps``).
        """
        raise NotImplementedError

    def step_limits(self, model: IncrementalModel, examples: Sequence[Example]) -> list[int] | None:
        """Each input's step limit (see the class docstring); ``None`` where ``max_steps`` is one limit for all."""
        if self.fixed_steps:
            return None
        positions = getattr(model, "max_output_length", None) or float("inf")
        bounds = [model.grammar.max_steps(example) for example in examples]
        return [int(min(self.max_steps if bound is None else bound, positions)) for bound in bounds]

    def tensor_states(self, model: IncrementalModel, examples: Sequence[Example]) -> Any | None:
        """The grammar's tensor states for *examples* (``model.tensor_states``), where this search runs on them; else ``None``."""
        writer = next(klass for klass in type(self).__mro__ if "search" in vars(klass))  # a subclass with its own loop gets Python states
        make = getattr(model, "tensor_states", None) if self.on_tensors and vars(writer).get("searches_tensors") else None
        return make(examples) if make is not None else None

    @torch.no_grad()
    def results(self, model: IncrementalModel, examples: Sequence[Example]) -> list[Any]:
        """Decode *examples* (one batch) from the grammar's initial states; each final state's result."""
        batch, limits = model.decoding_batch(examples), self.step_limits(model, examples)
        states = self.tensor_states(model, examples)
        if states is None:
            states = [model.grammar.initial_state(example) for example in examples]
        states = self.search(model, batch, states) if limits is None else self.search(model, batch, states, limits)
        if short := sum(not state.is_final() for state in states):
            self.cut_short += short
            logger.info(
                "%d of %d inputs reached the search's step limit unfinished; their outputs are cut short (%d so far)", short, len(states), self.cut_short
            )
        if stopped := sum(bool(getattr(state, "stopped", "")) for state in states):
            self.stopped += stopped
            logger.info(
                "%d of %d outputs come from hypotheses the grammar stopped as degenerate (repeats, no progress; each output's warning says where); %d so far",
                stopped,
                len(states),
                self.stopped,
            )
        for example, state in zip(examples, states):
            example.meta.pop(DOUBT, None)
            if isinstance(state, Doubted):
                example.meta[DOUBT] = state.why
        return [state.result() for state in states]
