"""N-gram phrases: every contiguous span of 2 to ``max_n`` words."""

from collections.abc import Sequence

import torch

from toolkit.errors import ConfigurationError
from toolkit.phrases.phrase_generator import Hypernode, PhraseGenerator


@PhraseGenerator.register("ngram")
class NgramPhrases(PhraseGenerator):
    """Every span of n consecutive words for n = 2..``max_n``, shorter spans first, then by start.

    A sentence of length L has ``sum(L - n + 1)`` such spans (none of a length above L). Since the
    spans depend on the length alone, :meth:`batch_membership` builds them for a whole batch
    without per-example work, in the same order.

    Registered as ``"ngram"``.
    """

    def __init__(self, max_n: int = 2):
        if max_n < 2:
            raise ConfigurationError(f"must be at least 2 (phrases have two or more words), got {max_n}", key="max_n")
        self.max_n = max_n

    def generate(self, tokens: Sequence[str]) -> list[Hypernode]:
        length = len(tokens)
        return [tuple(range(start, start + n)) for n in range(2, self.max_n + 1) for start in range(length - n + 1)]

    def spans(self, num_words: int, device: torch.device | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """(starts, ends) of every span a sentence of *num_words* words can hold, ends exclusive."""
        sizes = torch.arange(2, self.max_n + 1, device=device)
        counts = (num_words - sizes + 1).clamp(min=0)
        span_sizes = torch.repeat_interleave(sizes, counts)
        first = torch.repeat_interleave(torch.cumsum(counts, 0) - counts, counts)  # index of each size's first span
        starts = torch.arange(span_sizes.numel(), device=device) - first
        return starts, starts + span_sizes

    def batch_membership(self, lengths: torch.Tensor, num_words: int) -> torch.Tensor:
        """(B, M, num_words): span j of sentence b covers word i; spans past a sentence's end are empty rows."""
        starts, ends = self.spans(num_words, lengths.device)
        words = torch.arange(num_words, device=lengths.device)
        covers = (starts[:, None] <= words) & (words < ends[:, None])  # (M, N)
        fits = ends[None, :] <= lengths[:, None]  # (B, M)
        return covers[None] & fits[:, :, None]
