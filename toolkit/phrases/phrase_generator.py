"""Registrable base of phrase generators: a tokenised sentence in, its hypernodes out."""

from collections.abc import Sequence

import torch

from toolkit.registrable import Registrable

Hypernode = tuple[int, ...]
"""The sorted, distinct 0-based indices of the words a phrase covers (at least two)."""


class PhraseGenerator(Registrable):
    """Lists the phrases of a sentence as hypernodes.

    Subclasses implement :meth:`generate`; calling the generator normalises its answer (sorted
    index tuples, no duplicates, no single words) so that every generator, a plugin's included,
    hands the encoder the same kind of value. Generators run once per example, when the model
    indexes it, never inside the training loop.
    """

    def __call__(self, tokens: Sequence[str]) -> tuple[Hypernode, ...]:
        """The hypernodes of *tokens*, normalised, in the generator's order."""
        seen: dict[Hypernode, None] = {}
        for phrase in self.generate(tokens):
            node = tuple(sorted(set(phrase)))
            if node and not 0 <= node[0] <= node[-1] < len(tokens):
                raise ValueError(f"{type(self).__name__} produced {phrase} for a sentence of {len(tokens)} tokens")
            if len(node) > 1:
                seen.setdefault(node)
        return tuple(seen)

    def generate(self, tokens: Sequence[str]) -> Sequence[Sequence[int]]:  # pragma: no cover - abstract
        """The phrases of *tokens* as index collections (normalised by :meth:`__call__`)."""
        raise NotImplementedError

    def batch_membership(self, lengths: torch.Tensor, num_words: int) -> torch.Tensor | None:
        """For generators whose phrases depend on the sentence length alone: the (B, M, num_words)
        membership of a whole batch, built from its (B,) *lengths* with tensor operations.

        The others return ``None``: their hypernodes must come from :meth:`__call__`, per example.
        """
        return None
