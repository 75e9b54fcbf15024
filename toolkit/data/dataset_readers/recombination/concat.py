"""CONCAT-k (``concat``): k different examples in one, so the model sees longer, compositional inputs.

Questions are joined by ``separator`` (the paper's ``</s>``; not the toolkit's end symbol
``@end@``), LFs put under a new root: ``( concat LF1 ... LFk )``, one well-formed s-expression
that the bracketed grammar and the tree codecs read like any other (``concat/k`` is one more
node). Placeholders are not renumbered, so ``ci0`` may name two cities, one in each part, as in
the paper's concatenations of repeated entities.

On raw data (a base reader with an anonymizer, GEO's raw Prolog) the raw questions are joined and
the queries put under ``_concat``: ``_concat ( _answer ( A , ... ) , _answer ( A , ... ) )``, a
Prolog term the tree grammar reads like any other. The reader anonymizes the joined question as
one, so its placeholders are numbered through both parts. No executor runs ``_concat``: each part
is checked on its own (:attr:`Candidate.forms`).
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence

from toolkit.data.dataset_readers.recombination.strategy import Candidate, Question, RecombinationStrategy, source_of, unique
from toolkit.data.example import Example
from toolkit.entities.anonymizer import Anonymizer
from toolkit.errors import ConfigurationError

CONCAT = "concat"
PROLOG_CONCAT = "_concat"  # the data's predicates carry a leading underscore


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

    def combine(self, parts: Sequence[Example], raw: bool = False) -> Candidate:
        """The one example made of *parts*, in their order (*raw*: their raw questions and Prolog queries)."""
        question: list[str] = []
        for part in parts:
            question += ([self.separator] if question else []) + list(raw_question(part) if raw else part.tokens)
        if raw:
            target = " ".join([PROLOG_CONCAT, "(", " , ".join(str(part.target) for part in parts), ")"])
            return Candidate(tuple(question), target, tuple(source_of(part) for part in parts), tuple(str(part.target) for part in parts))
        target = " ".join(["(", CONCAT, *(str(part.target) for part in parts), ")"])
        return Candidate(tuple(question), target, tuple(source_of(part) for part in parts))

    def draws(self, examples: Sequence[Example], count: int, rng: random.Random, anonymizer: Anonymizer | None) -> Iterator[Candidate]:
        pool = unique(examples)
        if len(pool) < self.k:
            return
        seen: set[tuple[Question, str]] = set()
        for _ in range(20 * count):  # draws that repeat an example or exceed the length are retried
            candidate = self.combine([pool[index] for index in rng.sample(range(len(pool)), self.k)], raw=anonymizer is not None)
            too_long = self.max_target_tokens is not None and len(candidate.target.split()) > self.max_target_tokens
            if not too_long and candidate.pair not in seen:
                seen.add(candidate.pair)
                yield candidate


def raw_question(example: Example) -> list[str]:
    """The question as the file wrote it (the anonymizer's reader keeps it in ``meta["question"]``)."""
    return str(example.meta.get("question", " ".join(example.tokens))).split()
