"""CONCAT-k (``concat``): k different examples in one, so the model sees longer, compositional inputs.

Questions are joined by ``separator`` (the paper's ``</s>``; not the toolkit's end symbol
``@end@``), LFs put under a new root: ``( concat LF1 ... LFk )``, one well-formed s-expression
that the bracketed grammar and the tree codecs read like any other (``concat/k`` is one more
node). Placeholders are not renumbered, so ``ci0`` may name two cities, one in each part, as in
the paper's concatenations of repeated entities.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from toolkit.data.dataset_readers.recombination.strategy import Candidate, Pair, RecombinationStrategy, source_of, unique
from toolkit.data.example import Example
from toolkit.errors import ConfigurationError

CONCAT = "concat"


@RecombinationStrategy.register("concat")
class Concat(RecombinationStrategy):
    """CONCAT-k: k different examples in one, questions joined by *separator*, LFs as ``( concat LF1 ... LFk )``.

    *max_target_tokens* skips draws whose LF would be longer (a grammar's ``max_length`` would
    drop them from training anyway).
    """

    def __init__(self, ratio: float = 0.5, k: int = 2, separator: str = "</s>", max_target_tokens: int | None = None) -> None:
        super().__init__(ratio)
        if k < 2:
            raise ConfigurationError(f"k: must be >= 2 (CONCAT-k joins k examples), got {k}")
        if not separator or len(separator.split()) != 1:
            raise ConfigurationError(f"separator: must be one token, got {separator!r}")
        self.k, self.separator, self.max_target_tokens = k, separator, max_target_tokens

    @property
    def name(self) -> str:
        return f"concat-{self.k}"

    def combine(self, parts: Sequence[Example]) -> Candidate:
        """The one example made of *parts*, in their order."""
        question: list[str] = []
        for part in parts:
            question += ([self.separator] if question else []) + list(part.tokens)
        target = " ".join(["(", CONCAT, *(str(part.target) for part in parts), ")"])
        return Candidate(tuple(question), target, tuple(source_of(part) for part in parts))

    def sample(self, examples: Sequence[Example], count: int, rng: random.Random, known: set[Pair]) -> list[Candidate]:
        pool = unique(examples)
        if len(pool) < self.k:
            return []
        drawn: dict[Pair, Candidate] = {}
        for _ in range(20 * count):  # draws that repeat an example or exceed the length are retried
            if len(drawn) == count:
                break
            candidate = self.combine([pool[index] for index in rng.sample(range(len(pool)), self.k)])
            too_long = self.max_target_tokens is not None and len(candidate.target.split()) > self.max_target_tokens
            if not too_long and candidate.pair not in known and candidate.pair not in drawn:
                drawn[candidate.pair] = candidate
        return list(drawn.values())
