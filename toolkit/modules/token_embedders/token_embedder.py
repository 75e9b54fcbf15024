"""Registrable base of token embedders: a sentence's words in, exactly one vector per word out."""

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import torch
from torch import nn

from toolkit.data.example import Example
from toolkit.registrable import Registrable


class TokenEmbedder(nn.Module, Registrable):
    """One (B, S, D) vector per word, whatever the embedder reads underneath (subwords, characters).

    Grammars, tree paths, phrase indices and Stack-Transformer masks all count words, so an
    embedder must give exactly one vector per word, in order, padded words last. Like
    :class:`~toolkit.modules.encoders.Seq2SeqEncoder`, it says what it reads of an example in
    :meth:`example_inputs` (called once per example, at indexing time; plain picklable lists),
    pads a batch of those in :meth:`batch_inputs`, and gets that answer as :meth:`forward`'s
    keyword arguments.
    """

    def forward(self, token_ids: torch.Tensor, mask: torch.Tensor, **inputs: Any) -> torch.Tensor:  # pragma: no cover - abstract
        """(B, S, D) word vectors for the (B, S) vocabulary ids *token_ids* and bool *mask*; padded words are zero."""
        raise NotImplementedError

    def example_inputs(self, example: Example) -> dict[str, Any]:
        """What this embedder reads of *example* besides its vocabulary ids; computed once, at indexing time."""
        return {}

    def batch_inputs(self, inputs: Sequence[Mapping[str, Any]], num_tokens: int) -> dict[str, torch.Tensor]:
        """The batch's :meth:`example_inputs`, padded to *num_tokens* words: ``forward``'s keyword arguments."""
        return {}

    def parameter_groups(self) -> list[dict[str, Any]]:
        """Optimizer parameter groups with their own settings (``[{"params": [...], "lr": 2e-5}]``).

        A trainer gives these parameters the group's settings instead of the optimizer's defaults,
        and the rest of the model's parameters the defaults.
        """
        return []

    def get_output_dim(self) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def inputs_source(self) -> dict[str, Any]:
        """What shapes :meth:`example_inputs` besides the config (a tokenizer's files): part of the
        key of the preprocessing cache (``toolkit/data/cache.py``), so a changed tokenizer is re-read.
        """
        return {}

    # ---------------------------------------------------------------- archives

    def pretrained_source(self) -> dict[str, Any] | None:
        """What identifies the pretrained weights this embedder reads (a name, a content hash); None if it has none.

        A model archive records it; loading builds the embedder again and refuses the archive in
        one line if the answer differs (unless the archive holds its own copy, see :meth:`archive_copy`).
        """
        return None

    def archive_copy(self, directory: Path) -> bool:
        """Write into *directory* what rebuilds this embedder without its pretrained source; False if the archive keeps none."""
        return False

    def unarchived_state(self) -> list[str]:
        """Prefixes of this module's state-dict keys that archives leave out: loading reads them from the pretrained source."""
        return []


def pad_lists(sequences: Sequence[Sequence[int]], length: int | None = None, value: int = 0) -> torch.Tensor:
    """A (N, length) long tensor of right-padded integer lists (*length* defaults to the longest, at least 1).

    Built from one flat tensor and a length mask, not a tensor per list.
    """
    lengths = torch.tensor([len(sequence) for sequence in sequences], dtype=torch.long)
    width = max(int(lengths.max()) if len(sequences) else 0, 1) if length is None else length
    out = torch.full((len(sequences), width), value, dtype=torch.long)
    flat = torch.tensor([item for sequence in sequences for item in sequence[:width]], dtype=torch.long)
    out[torch.arange(width) < lengths.clamp(max=width).unsqueeze(1)] = flat
    return out
