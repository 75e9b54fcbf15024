"""What every recombination strategy is: its interface, its candidates, and the conventions they share.

A strategy draws :class:`Candidate` examples from the originals, in an order its seeded generator
decides; the reader turns each into an example, keeps the new and valid ones and stops at the
count it wants, so that strategies stay independent of each other and of the reader. The
placeholder pattern, the two notations of logical forms (:data:`LISP`, :data:`PROLOG`) and
:func:`replace_span` are here because the abstraction strategies (entities and whole phrases) edit
anonymized questions and trees the same way.
"""

from __future__ import annotations

import random
import re
from abc import abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolkit.data.example import Example
from toolkit.errors import ConfigurationError
from toolkit.from_params import as_params
from toolkit.params import Params
from toolkit.registrable import Registrable
from tree_codecs.prolog import parse_prolog, to_prolog
from tree_codecs.tree import Tree, parse_lisp, to_lisp

if TYPE_CHECKING:
    from toolkit.entities.anonymizer import Anonymizer

PLACEHOLDER = re.compile(r"([a-z]+)\d+")  # an anonymized entity: its type and its number (``ci1``)

Question = tuple[str, ...]
Pair = tuple[Question, str]  # (question tokens, logical form): what makes an example new


@dataclass(frozen=True)
class Notation:
    """How logical forms are written: read into a tree, printed back, and what a variable looks like."""

    parse: Callable[[str], Tree]
    show: Callable[[Tree], str]
    variable: re.Pattern[str]


LISP = Notation(parse_lisp, to_lisp, re.compile(r"\$\d+"))  # Dong & Lapata's lambda calculus: ( lambda $0 e ( state:t $0 ) )
PROLOG = Notation(parse_prolog, to_prolog, re.compile(r"[A-Z]\w*"))  # GEO's raw Prolog: _answer ( A , _state ( A ) )


@dataclass(frozen=True)
class Candidate:
    """A recombined example before it is kept, with the lines of the originals it came from.

    On raw data (a base reader with an anonymizer) *question* is the raw question and *target*
    the query with entity names, which the base reader then anonymizes. *forms* are what an
    executor checks, where that is not the target itself (CONCAT's parts).
    """

    question: Question
    target: str
    sources: tuple[Any, ...]
    forms: tuple[str, ...] | None = None

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
    def draws(self, examples: Sequence[Example], count: int, rng: random.Random, anonymizer: Anonymizer | None) -> Iterator[Candidate]:
        """Candidates in the order *rng* decides, enough for *count* new ones when some are dropped.

        The reader takes them until it has *count* new, valid examples. *anonymizer* is the base
        reader's: ``None`` for data whose entities are already placeholders (Dong & Lapata's),
        else the examples are raw questions and Prolog queries with entity names (GEO raw).
        """


class EnumeratedStrategy(RecombinationStrategy):
    """A strategy whose new examples can all be listed: draw them in a random order, each once."""

    def draws(self, examples: Sequence[Example], count: int, rng: random.Random, anonymizer: Anonymizer | None) -> Iterator[Candidate]:
        pool = {candidate.pair: candidate for candidate in self.candidates(unique(examples), anonymizer)}
        ordered = [pool[pair] for pair in sorted(pool)]  # sorted: independent of hash seeds and set order
        rng.shuffle(ordered)
        return iter(ordered)

    @abstractmethod
    def candidates(self, examples: Sequence[Example], anonymizer: Anonymizer | None = None) -> Iterable[Candidate]:
        """Every recombined example this strategy can make from the (deduplicated) *examples*."""


def unique(examples: Sequence[Example]) -> list[Example]:
    """The first example of each distinct (question, LF) pair, in order."""
    seen: dict[Pair, Example] = {}
    for example in examples:
        seen.setdefault(pair_of(example), example)
    return list(seen.values())


def pair_of(example: Example) -> Pair:
    """What makes an example distinct: its tokens and its LF, as hashable values.

    For an anonymized example the LF is the anonymized one: what the parser learns from. Two raw
    examples that differ only in entity names are one example to it.
    """
    return tuple(example.tokens), str(example.meta.get("anonymized_target", example.target))


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
