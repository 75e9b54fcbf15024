"""Word tags predicted beside a structure from the same encoding (a parser's UPOS and FEATS).

A grammar whose results carry word tags (``grammar.tags``: a transition system's ``upos`` and
``feats``) names them and their tag sets; the model puts one linear classifier per field on its
encoder's states and adds their cross-entropy to its loss, as UDPipe 2 and spaCy's morphologizer
share an encoder with the parser. Each tag string is one class (a whole FEATS string such as
``Gender=Fem|Number=Sing``, as UDPipe 2 does): no tag is predicted that training never saw.
"""

from collections.abc import Mapping, Sequence

import torch
import torch.nn.functional as F
from torch import nn

from toolkit.modules.dropout import Dropout

IGNORED = -100  # a padded word, or a gold tag outside the training's set (a dev tree's): not scored


class TagHeads(nn.Module):
    """One classifier per field over (N, S, D) encoder states; see the module doc."""

    def __init__(self, tag_sets: Mapping[str, Sequence[str]], dim: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.tag_sets = {field: tuple(tags) for field, tags in tag_sets.items()}
        self.ids = {field: {tag: i for i, tag in enumerate(tags)} for field, tags in self.tag_sets.items()}
        self.dropout = Dropout(dropout)
        self.heads = nn.ModuleDict({field: nn.Linear(dim, len(tags)) for field, tags in self.tag_sets.items()})

    def index(self, tags: Mapping[str, Sequence[str]]) -> dict[str, list[int]]:
        """Each field's tag ids, :data:`IGNORED` for a tag training never saw."""
        return {field: [self.ids[field].get(tag, IGNORED) for tag in tags[field]] for field in self.heads}

    def loss(self, memory: torch.Tensor, gold: Mapping[str, torch.Tensor]) -> torch.Tensor:
        """The fields' summed mean cross-entropy against *gold* (N, S) ids, :data:`IGNORED` where not scored."""
        states = self.dropout(memory)
        losses = [F.cross_entropy(head(states).flatten(0, 1).float(), gold[field].flatten(), ignore_index=IGNORED) for field, head in self.heads.items()]
        return torch.stack(losses).nan_to_num().sum()  # nan: a batch without one scored tag

    @torch.no_grad()
    def distributions(self, memory: torch.Tensor) -> dict[str, torch.Tensor]:
        """Each field's (N, S, tags) probabilities (an ensemble averages its members')."""
        return {field: head(memory).float().softmax(-1) for field, head in self.heads.items()}

    def best(self, distributions: Mapping[str, torch.Tensor], mask: torch.Tensor) -> list[dict[str, tuple[str, ...]]]:
        """Each sentence's most likely tag per word and field (one argmax per field for the batch)."""
        lengths = mask.sum(1).tolist()
        best = {field: distributions[field].argmax(-1).tolist() for field in self.heads}
        return [{field: tuple(self.tag_sets[field][i] for i in best[field][row][:length]) for field in self.heads} for row, length in enumerate(lengths)]
