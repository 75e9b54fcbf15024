"""Registrable base of models: how examples become tensors, a loss, and predictions."""

from collections.abc import Sequence
from typing import Any

import torch
from torch import nn

from toolkit.data.example import Example
from toolkit.errors import DataError
from toolkit.modules.token_embedders import TokenEmbedder
from toolkit.registrable import Registrable


class Model(nn.Module, Registrable):
    """A model indexes each example once, collates indexed examples into batches, and decodes.

    ``index`` runs once per example before training (oracles and vocabulary lookups are not
    repeated every epoch); ``collate`` pads a list of indexed examples; ``forward`` returns a
    dict with a scalar ``"loss"``; ``predict`` returns one output structure per example.
    """

    default_implementation = "encoder_decoder"

    def index(self, example: Example) -> dict[str, Any]:  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def max_input_length(self) -> int | None:
        """The most tokens an input may have (``None``: any); a model whose encoder has a position table says its size."""
        return None

    def check_length(self, example: Example) -> None:
        """A :class:`DataError` naming *example*'s file and line if it is longer than the model reads."""
        limit = self.max_input_length
        if limit is not None and len(example.tokens) > limit:
            raise DataError(
                f"an input of {len(example.tokens)} tokens is longer than this model can read ({limit} tokens: model.encoder.positional_encoding.max_length)",
                example.meta.get("path"),
                example.meta.get("line"),
            )

    def max_decodable_words(self, search: Any = None) -> int | None:
        """The longest input decoded whole: its words must fit the encoder's positions, and its symbols
        (``grammar.max_actions(n)``, ``2n`` for the shipped transition systems) the decoder's positions
        and a search's explicit ``max_steps`` (without one, each input gets the steps its size needs).
        A longer one is read or decoded cut short. ``None``: no limit this model knows of.
        """
        grammar, words = getattr(self, "grammar", None), self.max_input_length
        searching = search or getattr(self, "search", None)
        fixed = getattr(searching, "max_steps", None) if getattr(searching, "fixed_steps", True) else None
        steps = min(filter(None, [fixed, self.max_output_length]), default=None)
        if grammar is None or steps is None or grammar.max_actions(1) is None:
            return words
        limit, most = 0, words or steps
        while limit < most and grammar.max_actions(limit + 1) <= steps:
            limit += 1
        return limit

    @property
    def max_output_length(self) -> int | None:
        """The most symbols the decoder has positions for (``None``: any)."""
        return None

    def length(self, indexed: dict[str, Any]) -> int:
        """The number of tokens an indexed example contributes to a batch's token budget."""
        return sum(len(value) for value in indexed.values() if isinstance(value, list))

    def collate(self, indexed: Sequence[dict[str, Any]]) -> dict[str, torch.Tensor]:  # pragma: no cover - abstract
        raise NotImplementedError

    def predict(self, examples: Sequence[Example], search: Any = None) -> list[Any]:  # pragma: no cover - abstract
        raise NotImplementedError

    def start_epoch(self, epoch: int) -> None:
        """Called by the trainer before each training epoch (0-based), for what changes with the epoch (exploration)."""

    def parameter_groups(self) -> list[dict[str, Any]]:
        """Optimizer parameter groups with settings of their own (a fine-tuned transformer's learning rate).

        Gathered from every :class:`TokenEmbedder` in the model; the trainer gives the rest of
        the parameters the optimizer's settings.
        """
        return [group for module in self.modules() if isinstance(module, TokenEmbedder) for group in module.parameter_groups()]

    @property
    def device(self) -> torch.device:
        return next(self.parameters()).device
