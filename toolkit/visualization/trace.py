"""Decode one sentence and keep what the pictures need: the symbols, the parser states, the attention.

Prediction runs the model's own search, on grammar states wrapped in :class:`TracedState` so the
chosen symbols are remembered (greedy and beam search alike). The attention is then recorded in a
teacher-forced forward pass over those symbols: the decoder is causal, so row *t* is what the
decoder attended to when it predicted symbol *t*, all steps in one pass instead of one per step.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from toolkit.data.example import Example
from toolkit.data.vocabulary import TARGET
from toolkit.device import move_to_device
from toolkit.grammars.grammar import Grammar, State
from toolkit.models.model import Model
from toolkit.visualization.recording import record_attention


class TracedState(State):
    """A grammar state that remembers the symbols applied to reach it; it behaves as the state it wraps."""

    def __init__(self, inner: State, symbols: tuple[str, ...] = ()):
        self.inner, self.symbols = inner, symbols

    def allowed(self):
        return self.inner.allowed()

    def features(self) -> Mapping[str, Any]:
        return self.inner.features()

    def apply(self, symbol: str) -> "TracedState":
        return TracedState(self.inner.apply(symbol), self.symbols + (symbol,))

    def is_final(self) -> bool:
        return self.inner.is_final()

    def result(self) -> Any:
        return self.inner.result()


def replay(grammar: Grammar, example: Example, symbols: Sequence[str]) -> list[Mapping[str, Any]]:
    """``state.features()`` before each of *symbols*, replayed from the initial state (stack and buffer, tree paths)."""
    state, steps = grammar.derivation_state(example), []
    for symbol in symbols:
        steps.append(state.features())
        state = state.apply(symbol)
    return steps


@dataclass
class Trace:
    """One decoded sentence.

    ``attention`` maps an attention module's name (``encoder.layers.0.attention``,
    ``decoder.layers.2.cross_attention``) to its (H, T, S) probabilities for this sentence.
    ``symbols`` and ``steps`` are empty for a model without a decoder (a tagger).
    """

    tokens: list[str]
    result: Any
    symbols: list[str] = field(default_factory=list)
    steps: list[Mapping[str, Any]] = field(default_factory=list)
    attention: dict[str, torch.Tensor] = field(default_factory=dict)


def unlabelled(example: Example) -> Example:
    return Example(example.tokens, meta=example.meta, token_paths=example.token_paths)


@torch.no_grad()
def trace(model: Model, example: Example) -> Trace:
    """Decode *example* with *model*'s search and record its attention (see the module docstring)."""
    model.eval()
    example = unlabelled(example)
    if not hasattr(model, "decoder"):  # a tagger: one forward pass is the prediction
        with record_attention(model) as maps:
            result = model.predict([example])[0]
        return Trace(list(example.tokens), result, attention=first_calls(maps))
    indexed = model.index(example)
    batch = move_to_device(model.collate([indexed]), model.device)
    final = model.search.search(model, batch, [TracedState(model.grammar.initial_state(example))])[0]
    symbols = list(final.symbols)
    steps = replay(model.grammar, example, symbols)
    attention = teacher_forced_attention(model, indexed, symbols, steps) if symbols else {}
    return Trace(list(example.tokens), final.result(), symbols, steps, attention)


def teacher_forced_attention(model: Model, indexed: dict[str, Any], symbols: list[str], steps: list[Mapping[str, Any]]) -> dict[str, torch.Tensor]:
    """Every attention module's probabilities in one forward pass with *symbols* as the target."""
    indexed = dict(indexed, target=model.vocab.indices(symbols, TARGET))
    if model.decoder.uses_features:
        indexed["features"] = model.decoder.index_features(steps)
    batch = move_to_device(model.collate([indexed]), model.device)
    with record_attention(model) as maps:
        model(batch)
    return first_calls(maps)


def first_calls(maps: dict[str, list[torch.Tensor]]) -> dict[str, torch.Tensor]:
    """The single sentence's (H, T, S) map of each module's first call (a forward pass calls each once)."""
    return {name: calls[0][0] for name, calls in maps.items()}
