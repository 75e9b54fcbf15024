"""A grammar over anonymized logical forms whose results name the entities again.

The reader (``tsv`` with an ``anonymizer``) replaces each entity mention of a question with a
placeholder (``what is the capital of e0 ?``), keeps the gold logical form as it is in
``example.target``, and puts the anonymized one (``... _stateid ( e0 ) ...``) and the mentions in
``example.meta``. This grammar trains its inner grammar on the anonymized form, and its states'
results are the inner results with every placeholder restored from the mentions of that very
question. So the decoder learns a vocabulary without entity names, entities no training question
names are parsed as well as the others, and metrics and predictors see real logical forms, which
an executor can run. A placeholder that cannot be restored (one the question does not have) stays
as it is: the form then fails to execute, and scores as wrong.

**Every id constructor reachable** (``all_constructors``): the vocabulary holds every id constructor
the anonymizer restores (``_lakeid``, ``_mountainid``...) and the placeholders ``e0`` to
``e{max_placeholders - 1}``, also where no training query has them, so a constructor that only new
data (schema templates) or no data at all shows can still be written. The grammar asks its inner
grammar how it spells them: the symbols of its oracle of ``_lakeid ( e0 )`` (``_lakeid/1 e0/0`` for a
tree codec, ``_lakeid ( e0 ) @end@`` for a sequence); :meth:`Grammar.extra_symbols` hands them to
the vocabulary.

**Only what the question's mentions fit** (``constrain_constructors``, which puts the same symbols in
the vocabulary): decoding writes an id constructor only if some placeholder of the question has a
reading of its kind (restore's own rule, :meth:`~toolkit.entities.anonymizer.Anonymizer.arguments`),
under it only such placeholders (``_riverid ( e0 )`` for "texas" cannot be written, whatever the
model learned; a city's state is ``_`` or a placeholder naming a state), and a placeholder nowhere
else. So every query decoded restores, with no placeholder left: a question that names no lake gets
no ``_lakeid``, and one that names nothing gets no id constructor at all. It needs an inner grammar
that writes a constructor's arguments right after it (a depth-first tree codec, a sequence); the
training oracle replays from the unconstrained state (:meth:`derivation_state`), so a gold query that
keeps an entity's name (no mention matched it) still trains.
"""

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from toolkit.data.example import Example
from toolkit.entities.anonymizer import Anonymizer, RestoreError
from toolkit.entities.lexicon import CONSTRUCTOR_TYPES, EntityLexicon, find_constants
from toolkit.entities.mentions import Mention
from toolkit.errors import ConfigurationError, ToolkitError
from toolkit.from_params import PositiveInt
from toolkit.grammars.grammar import Allowed, Grammar, State

ANONYMIZED_TARGET, MENTIONS, QUESTION = "anonymized_target", "mentions", "question"  # the keys of Example.meta the reader fills
# What an id constructor just written still needs, in order: a symbol (a sequence's "("), or one of the symbols that fit an argument.
Pending = tuple[str | tuple[str, ...], ...]


@dataclass(frozen=True)
class WithoutIds:
    """*inner*'s answer less *refused* (the placeholders, the id constructors no mention fits): hashable, so
    the model memoises its mask as it does *inner*'s.
    """

    inner: Allowed
    refused: frozenset[str]

    def __contains__(self, symbol: object) -> bool:
        return symbol not in self.refused and (self.inner is None or symbol in self.inner)


@dataclass(frozen=True, eq=False)
class Fitting:
    """What one question's mentions fit: the symbols refused outside an id constructor's arguments, and
    what each id constructor's symbol that fits is followed by.
    """

    refused: frozenset[str]
    after: Mapping[str, Pending]


class IdSpelling:
    """How the inner *grammar* spells the *anonymizer*'s id constructors and their arguments, read off its
    oracle of one small form per constructor (``_cityid ( e0 , _ )``: ``_cityid/2 e0/0 _/0`` for a tree codec).
    """

    def __init__(self, grammar: Grammar, anonymizer: Anonymizer, bound: int):
        self.grammar, self.anonymizer, self.bound = grammar, anonymizer, bound
        try:
            self.arguments = anonymizer.arguments(None, bound)
        except NotImplementedError:
            raise ConfigurationError(f"the {type(anonymizer).__name__} anonymizer does not say which id constructors it restores", key="anonymizer") from None
        self.symbols: dict[str, None] = {}  # every symbol the forms are spelled with, in order: the vocabulary's extra symbols
        self.constructor: dict[str, str] = {}  # id constructor -> its symbol
        self.pattern: dict[str, tuple[str | int, ...]] = {}  # id constructor -> what its symbol is followed by: symbols, argument numbers
        self.filler: dict[tuple[str, int, str], str] = {}  # (id constructor, argument, token) -> its symbol there
        for constructor, tokens in self.arguments.items():
            first = [options[0] for options in tokens]
            written = self.spell(constructor, first)
            positions = [self.position(constructor, first, written, argument) for argument in range(len(tokens))]
            self.constructor[constructor] = written[0]
            self.pattern[constructor] = tuple(
                positions.index(at) if at in positions else symbol for at, symbol in enumerate(written[1 : max(positions) + 1], 1)
            )
            for argument, options in enumerate(tokens):
                for token in options:
                    spelled = self.spell(constructor, [*first[:argument], token, *first[argument + 1 :]])
                    self.filler[constructor, argument, token] = spelled[positions[argument]]
                    self.symbols.update(dict.fromkeys(spelled))
        self.placeholders = frozenset(self.filler[constructor, 0, anonymizer.placeholder(number)] for constructor in self.arguments for number in range(bound))
        self._fitting: dict[tuple, Fitting] = {}

    def spell(self, constructor: str, arguments: Sequence[str], around: str = "{}") -> list[str]:
        """The inner grammar's symbols for *constructor* with *arguments* (inside the form *around*)."""
        form = around.format(f"{constructor} ( {' , '.join(arguments)} )")
        try:
            return self.grammar.oracle(Example([], form))
        except ToolkitError as error:
            raise ConfigurationError(f"the inner grammar cannot write {form!r}: {error}", key="grammar") from None

    def position(self, constructor: str, arguments: list[str], written: list[str], argument: int) -> int:
        """Where the inner grammar writes *argument* of *constructor*: the one symbol that changes with it."""
        probe = self.spell(constructor, [*arguments[:argument], "probe", *arguments[argument + 1 :]])
        changed = [at for at, (symbol, other) in enumerate(zip(written, probe)) if symbol != other]
        if len(probe) != len(written) or len(changed) != 1 or changed[0] == 0:
            raise ConfigurationError(f"the inner grammar does not write each argument of {constructor} as one symbol after it", key="grammar")
        return changed[0]

    def check_order(self) -> None:
        """Refuse an inner grammar that does not write an id constructor's arguments right after it (a breadth-first codec)."""
        for constructor, tokens in self.arguments.items():
            first = [options[0] for options in tokens]
            own = self.spell(constructor, first)[: len(self.pattern[constructor]) + 1]
            nested = self.spell(constructor, first, "_f ( _g ( A , B ) , {} , C )")
            if not any(nested[at : at + len(own)] == own for at in range(len(nested))):
                raise ConfigurationError(
                    f"needs an inner grammar that writes {constructor}'s arguments right after it (lcrs_dfs, nary_dfs, sequence); "
                    f"{type(self.grammar).__name__} does not",
                    key="constrain_constructors",
                )

    def fitting(self, mentions: Sequence[Mention]) -> Fitting:
        """What the question with *mentions* fits (see the module doc); questions alike share one answer."""
        arguments = self.anonymizer.arguments(mentions, self.bound)
        key = tuple(arguments.items())
        if key not in self._fitting:
            refused, after = set(self.placeholders), {}
            for constructor, options in arguments.items():
                if not all(options):  # an argument nothing fits
                    refused.add(self.constructor[constructor])
                    continue
                after[self.constructor[constructor]] = tuple(
                    item if isinstance(item, str) else tuple(self.filler[constructor, item, token] for token in options[item])
                    for item in self.pattern[constructor]
                )
            self._fitting[key] = Fitting(frozenset(refused), after)
        return self._fitting[key]


@dataclass(frozen=True)
class ConstrainedState(State):
    """The inner grammar's state, writing id constructors and placeholders only where the question's mentions fit them."""

    inner: State
    fitting: Fitting
    pending: Pending = ()

    def allowed(self) -> Allowed:
        allowed = self.inner.allowed()
        if not self.pending:
            if isinstance(allowed, Collection):
                return tuple(symbol for symbol in allowed if symbol not in self.fitting.refused)
            return WithoutIds(allowed, self.fitting.refused)
        wanted = (self.pending[0],) if isinstance(self.pending[0], str) else self.pending[0]
        kept = tuple(symbol for symbol in wanted if allowed is None or symbol in allowed)
        return kept or allowed  # where the inner grammar rules them all out (a sequence at its length limit), it decides

    def features(self) -> Mapping[str, Any]:
        return self.inner.features()

    def apply(self, symbol: str) -> "ConstrainedState":
        pending = self.pending[1:] if self.pending else self.fitting.after.get(symbol, ())
        return ConstrainedState(self.inner.apply(symbol), self.fitting, pending)

    def is_final(self) -> bool:
        return self.inner.is_final()

    def result(self) -> Any:
        return self.inner.result()


class RestoringState(State):
    """The inner grammar's state; its result has the question's entities in place of the placeholders.

    It keeps the *question* as the user wrote it, for what reads the result against it: the kind of
    answer it asks for (:mod:`toolkit.execution.answer_kinds`), the entities it names (:meth:`unnamed`).
    """

    def __init__(self, inner: State, anonymizer: Anonymizer, mentions: Sequence[Mention], question: str | None = None):
        self.inner, self.anonymizer, self.mentions, self.question = inner, anonymizer, mentions, question

    def allowed(self) -> Allowed:
        return self.inner.allowed()

    def features(self) -> Mapping[str, Any]:
        return self.inner.features()

    def apply(self, symbol: str) -> "RestoringState":
        return RestoringState(self.inner.apply(symbol), self.anonymizer, self.mentions, self.question)

    def is_final(self) -> bool:
        return self.inner.is_final()

    def result(self) -> Any:
        try:
            return self.anonymizer.restore(self.inner.result(), self.mentions).text
        except RestoreError:  # a placeholder the question does not have: kept, the form fails to execute
            return self.inner.result()

    def unnamed(self) -> list[str]:
        """The kinds of the entities the result names and the question does not (see :func:`unnamed_entities`)."""
        return unnamed_entities(self.anonymizer, str(self.result()), self.question, self.mentions)

    def unused(self) -> list[str]:
        """The words of the question's mentions the result leaves out (see :func:`unused_mentions`)."""
        return unused_mentions(self.anonymizer, str(self.result()), self.mentions)


def unnamed_entities(anonymizer: Anonymizer, form: str, question: str | None, mentions: Sequence[Mention]) -> list[str]:
    """The kinds of the entities logical *form* names and its *question* does not, each once: ``["river"]`` for
    ``_riverid ( e0 )`` where e0 is "texas", ``["country"]`` for ``_countryid ( usa )`` in a question that names no country.

    A placeholder restore could not fill names nothing. An entity the parser wrote by name (``usa``: the
    anonymizer leaves countries as names) is named where the question says one of its names in the
    anonymizer's lexicon ("us", "america", "the country"), or it is one of the question's mentions. Without
    a question, or a lexicon to read names in, only the placeholders left count.
    """
    tokens = form.split()
    left, lexicon = set(anonymizer.unrestored(tokens)), getattr(anonymizer, "lexicon", None)
    named: set[tuple[str, tuple[str, ...]]] | None = None
    kinds: dict[str, None] = {}
    for constant in find_constants(tokens):
        if constant.state in left:  # a city's state that restore could not fill
            kinds["state"] = None
        if len(constant.name) == 1 and constant.name[0] in left:
            kinds[constant.constructor.strip("_").removesuffix("id")] = None
        elif lexicon is not None and question is not None:
            named = named if named is not None else _named_entities(lexicon, question, mentions)
            if not any((kind, constant.name) in named for kind in CONSTRUCTOR_TYPES.get(constant.constructor, ())):
                kinds[constant.constructor.strip("_").removesuffix("id")] = None
    return list(kinds)


def unused_mentions(anonymizer: Anonymizer, form: str, mentions: Sequence[Mention]) -> list[str]:
    """The words of each of *mentions* that logical *form* leaves out: none of its readings is an entity
    constant of the form (by its spelling, or a state by its abbreviation in a city's state argument).

    A reading that ignores an entity the question names answers another question: 422 of the 423
    mentions of GEO's training questions are in their gold query.
    """
    lexicon = getattr(anonymizer, "lexicon", None)
    if lexicon is None or not mentions:
        return []
    constants = find_constants(form.split())
    written = {(kind, constant.name) for constant in constants for kind in CONSTRUCTOR_TYPES.get(constant.constructor, ())}
    written |= {("state", (constant.state,)) for constant in constants if constant.state not in (None, "_")}

    def used(entity) -> bool:
        return (entity.type, lexicon.spelling(entity)) in written or bool(entity.abbreviation and ("state", (entity.abbreviation,)) in written)

    return [mention.surface for mention in mentions if not any(used(entity) for entity in mention.candidates)]


def _named_entities(lexicon: EntityLexicon, question: str, mentions: Sequence[Mention]) -> set[tuple[str, tuple[str, ...]]]:
    """(type, spelling in a logical form) of each entity that *mentions* or any words of *question* name, by
    its spelling and by its abbreviation (the country's names all stand for ``usa``).
    """
    words = re.findall(r"[\w.'-]+", re.sub(r"'s\b", "", question.lower()))  # "america's": "america"
    entities = [entity for mention in mentions for entity in mention.candidates]
    for start in range(len(words)):
        for end in range(start + 1, min(len(words), start + max(lexicon.max_words, 1)) + 1):
            entities += lexicon.lookup(" ".join(words[start:end]))
    named = {(entity.type, lexicon.spelling(entity)) for entity in entities}
    return named | {(entity.type, (entity.abbreviation,)) for entity in entities if entity.abbreviation}


@Grammar.register("anonymized")
class AnonymizedGrammar(Grammar):
    """*grammar* over the anonymized targets the reader made, its results restored by *anonymizer*
    (the same component as the reader's, configured once in a jsonnet ``local``).

    Args:
        all_constructors: the vocabulary holds every id constructor the anonymizer restores, and the
            placeholders below *max_placeholders* (see the module doc); off by default, as before.
        constrain_constructors: decode id constructors and placeholders only where the question's
            mentions fit them (see the module doc; puts the same symbols in the vocabulary); off by default.
        max_placeholders: how many placeholders the vocabulary holds; a constrained decoder writes no later one.
    """

    def __init__(
        self,
        grammar: Grammar,
        anonymizer: Anonymizer,
        all_constructors: bool = False,
        constrain_constructors: bool = False,
        max_placeholders: PositiveInt = 6,
    ):
        self.grammar, self.anonymizer = grammar, anonymizer
        self.default_predictor, self.result_kind = grammar.default_predictor, grammar.result_kind
        self.constrain_constructors, self.max_placeholders = constrain_constructors, max_placeholders
        self.spelling = IdSpelling(grammar, anonymizer, max_placeholders) if all_constructors or constrain_constructors else None
        if self.spelling is not None and constrain_constructors:
            self.spelling.check_order()

    @staticmethod
    def anonymized(example: Example) -> Example:
        """*example* with the anonymized logical form as its target (as it is, when the reader made none)."""
        if ANONYMIZED_TARGET not in example.meta:
            return example
        return Example(example.tokens, example.meta[ANONYMIZED_TARGET], example.meta, example.token_paths)

    def oracle(self, example: Example) -> list[str]:
        return self.grammar.oracle(self.anonymized(example))

    def initial_state(self, example: Example) -> RestoringState:
        state, mentions = self.grammar.initial_state(self.anonymized(example)), example.meta.get(MENTIONS, ())
        if self.constrain_constructors and self.spelling is not None:
            state = ConstrainedState(state, self.spelling.fitting(mentions))
        return RestoringState(state, self.anonymizer, mentions, example.meta.get(QUESTION) or " ".join(example.tokens))

    def derivation_state(self, example: Example) -> RestoringState:
        return RestoringState(self.grammar.derivation_state(self.anonymized(example)), self.anonymizer, example.meta.get(MENTIONS, ()))

    def fit(self, examples: Sequence[Example]) -> dict[str, Any]:
        fitted = self.grammar.fit([self.anonymized(example) for example in examples])
        return {"grammar": fitted} if fitted else {}

    def skips(self, example: Example) -> bool:
        return self.grammar.skips(self.anonymized(example))

    def data_report(self, examples: Sequence[Example]) -> dict[str, int]:
        return self.grammar.data_report([self.anonymized(example) for example in examples])

    def extra_symbols(self) -> list[str]:
        extra = self.grammar.extra_symbols()
        return extra + [symbol for symbol in self.spelling.symbols if symbol not in extra] if self.spelling is not None else extra

    def max_actions(self, words: int) -> int | None:
        return self.grammar.max_actions(words)

    def max_steps(self, example: Example) -> int | None:
        return self.grammar.max_steps(self.anonymized(example))
