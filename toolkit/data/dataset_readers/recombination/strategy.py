"""What every recombination strategy is: its interface, its candidates, and the conventions they share.

A strategy makes :class:`Candidate` examples from the originals; the reader seeds its generator
and tells it which (question, LF) pairs already exist, so that strategies stay independent of
each other and of the reader. The placeholder pattern and :func:`replace_span` are here because
both abstraction strategies (entities and whole phrases) edit anonymized questions the same way.
"""

from __future__ import annotations

import logging
import random
import re
from abc import abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from toolkit.data.example import Example
from toolkit.errors import ConfigurationError
from toolkit.from_params import as_params
from toolkit.params import Params
from toolkit.registrable import Registrable

logger = logging.getLogger(__name__)

PLACEHOLDER = re.compile(r"([a-z]+)\d+")  # an anonymized entity: its type and its number (``ci1``)

Question = tuple[str, ...]
Pair = tuple[Question, str]  # (question tokens, logical form): what makes an example new


@dataclass(frozen=True)
class Candidate:
    """A recombined example before sampling, with the lines of the originals it came from."""

    question: Question
    target: str
    sources: tuple[Any, ...]

    @property
    def pair(self) -> Pair:
        return self.question, self.target


class RecombinationStrategy(Registrable):
    """One way of making new examples; *ratio* is how many, relative to the original set.

    Errors in a strategy's own settings name their key path (``dataset_reader.strategies.1.ratio``).
    """

    def __init__(self, ratio: float = 0.5) -> None:
        if ratio < 0:
            raise ConfigurationError(f"ratio: must be >= 0, got {ratio}")
        self.ratio = ratio

    @classmethod
    def from_params(cls, params: Params | Mapping[str, Any], **extras: Any) -> RecombinationStrategy:
        params = as_params(params)
        where = params.history
        try:
            return super().from_params(params, **extras)
        except ConfigurationError as error:
            message = str(error)
            if where and not message.startswith(where) and re.match(r"[a-z_]+: ", message):
                raise ConfigurationError(where + message) from None
            raise

    @property
    def name(self) -> str:
        """The registered name, which augmented examples carry in ``meta["recombination"]``."""
        return self.registered_name()

    @abstractmethod
    def sample(self, examples: Sequence[Example], count: int, rng: random.Random, known: set[Pair]) -> list[Candidate]:
        """Up to *count* new candidates, none in *known*, drawn with *rng* alone."""


class EnumeratedStrategy(RecombinationStrategy):
    """A strategy whose new examples can all be listed: sample uniformly from that list."""

    def sample(self, examples: Sequence[Example], count: int, rng: random.Random, known: set[Pair]) -> list[Candidate]:
        pool = {candidate.pair: candidate for candidate in self.candidates(unique(examples)) if candidate.pair not in known}
        ordered = [pool[pair] for pair in sorted(pool)]  # sorted: independent of hash seeds and set order
        if len(ordered) < count:
            logger.info("%s: only %d new examples exist, %d wanted", self.name, len(ordered), count)
        return rng.sample(ordered, min(count, len(ordered)))

    @abstractmethod
    def candidates(self, examples: Sequence[Example]) -> Iterable[Candidate]:
        """Every recombined example this strategy can make from the (deduplicated) *examples*."""


def unique(examples: Sequence[Example]) -> list[Example]:
    """The first example of each distinct (question, LF) pair, in order."""
    seen: dict[Pair, Example] = {}
    for example in examples:
        seen.setdefault(pair_of(example), example)
    return list(seen.values())


def pair_of(example: Example) -> Pair:
    """What makes an example distinct: its tokens and its LF, as hashable values."""
    return tuple(example.tokens), str(example.target)


def source_of(example: Example) -> Any:
    """The line an original came from, which its recombined examples cite in ``meta["sources"]``."""
    return example.meta.get("line")


def placeholders(tokens: Iterable[str]) -> set[str]:
    """The anonymized entities among *tokens* (question tokens or LF leaves)."""
    return {token for token in tokens if PLACEHOLDER.fullmatch(token)}


def replace_span(question: Question, span: Question, new: Question) -> Question | None:
    """*question* with its one occurrence of *span* replaced by *new*; ``None`` unless it occurs exactly once."""
    starts = [i for i in range(len(question) - len(span) + 1) if question[i : i + len(span)] == span]
    if len(starts) != 1:
        return None
    start = starts[0]
    return question[:start] + new + question[start + len(span) :]
