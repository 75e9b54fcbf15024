"""Anonymizing entities in question/logical-form pairs and restoring them in predictions (Dong & Lapata style).

:class:`Anonymizer` is the registered base; ``"geo_prolog"`` (:class:`GeoPrologAnonymizer`) works on
GEO's Prolog logical forms.

**Placeholders.** Each mention the finder returns (left to right) whose candidates include a type
some id constructor takes gets the next placeholder ``e0``, ``e1``... In the question the mention's
tokens become that one token; in the logical form the entity's *name argument* becomes it, and the
id constructor stays::

    what rivers flow through mississippi ?   _answer ( A , ( _river ( A ) , _traverse ( A , B ) , _const ( B , _stateid ( mississippi ) ) ) )
    what rivers flow through e0 ?            _answer ( A , ( _river ( A ) , _traverse ( A , B ) , _const ( B , _stateid ( e0 ) ) ) )

so an ambiguous name is resolved at restore time by the constructor the parser chose: ``e0`` under
``_stateid`` is the state *mississippi*, under ``_riverid`` the river. A city's state argument
(``_cityid ( seattle , wa )``) becomes the placeholder of a state mention in the question
(``seattle washington``: ``_cityid ( e0 , e1 )``) and is restored as that state's abbreviation; ``_``
stays ``_``. A constant is replaced only when a mention's candidate of the constructor's types is
spelled exactly as the constant (:meth:`EntityLexicon.spelling`), so restoring gives back the gold
tokens. A constant no mention matches is left as its name (the parser then writes it token by
token); :attr:`Anonymized.unmatched` lists them.

**Type words.** A placeholder alone hides what it names: ``how many people live in e0 ?`` reads the
same for houston and for texas, so the parser can only guess ``_cityid`` or ``_stateid``. With
``type_words``, the question keeps the mention's candidate types before its placeholder, in the
order the context prefers (``how many people live in city e0 ?``, ``rivers in state river e0``),
so the constructor is read off the question; the logical form is unchanged.

**Restoring** a predicted logical form replaces each placeholder by the spelling of the first
candidate of its mention (the one the context prefers) of the constructor's types. A placeholder
with no mention in the question, one whose mention has no candidate of the constructor's types
(``_riverid ( e0 )`` for "texas"), or one outside an id constructor raises :class:`RestoreError`
with ``unknown: "error"`` (the default), or, with ``unknown: "keep"``, stays as it is in the output
and is listed in :attr:`Restored.problems`.

**What restore can fill** (:meth:`GeoPrologAnonymizer.arguments`): for a question's mentions, each
id constructor's arguments and the placeholders restore fills them with (``_stateid``: the
placeholders whose mention has a state reading; ``_cityid``'s state: ``_`` and those naming a
state). The ``anonymized`` grammar decodes only those, so every query it writes restores; without
mentions, every placeholder up to a bound, which is what its vocabulary holds.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from toolkit.entities.lexicon import CONSTRUCTOR_TYPES, Constant, Entity, EntityLexicon, find_constants
from toolkit.entities.mentions import Mention, MentionFinder
from toolkit.errors import ConfigurationError, ToolkitError
from toolkit.registrable import Registrable


class RestoreError(ToolkitError, ValueError):
    """A predicted logical form has a placeholder that cannot be restored from its question."""


@dataclass
class Anonymized:
    """An anonymized pair: the question and logical form tokens, and what each placeholder stands for.

    ``placeholders[i]`` is the mention that placeholder ``{prefix}{i}`` replaced; ``unmatched`` the
    logical form's entity constants (as text) that no mention matched, left as names.
    """

    question: list[str]
    logical_form: list[str] | None
    placeholders: list[Mention]
    unmatched: list[str] = field(default_factory=list)
    replaced: int = 0  # entity constants of the logical form replaced by a placeholder


@dataclass
class Restored:
    """A restored logical form's tokens and the placeholders that could not be restored (``unknown: "keep"``)."""

    tokens: list[str]
    problems: list[str]

    @property
    def text(self) -> str:
        """The tokens joined by spaces."""
        return " ".join(self.tokens)


class Anonymizer(Registrable):
    """Replaces entity mentions by placeholders in training pairs and puts entities back into predictions."""

    default_implementation = "geo_prolog"

    def anonymize(self, question: Sequence[str], logical_form: str | Sequence[str] | None = None) -> Anonymized:
        """Placeholders for the question's mentions, and for their entities in the gold *logical_form* if given."""
        raise NotImplementedError

    def restore(self, logical_form: str | Sequence[str], placeholders: Sequence[Mention]) -> Restored:
        """Put the entities of *placeholders* (from ``anonymize(question)``) back into a predicted *logical_form*."""
        raise NotImplementedError

    def unrestored(self, logical_form: str | Sequence[str]) -> list[str]:
        """The placeholders a restored *logical_form* still has (``unknown: "keep"``): its answer would be about no entity."""
        raise NotImplementedError

    def placeholder(self, number: int) -> str:
        """The placeholder token of the *number*-th mention (``e0``)."""
        raise NotImplementedError

    def arguments(self, placeholders: Sequence[Mention] | None, bound: int) -> dict[str, tuple[tuple[str, ...], ...]]:
        """Each id constructor restore fills, with the tokens each of its arguments may be: for a question
        whose mentions are *placeholders*, the placeholders (numbered below *bound*) that restore fills
        there; for ``None``, every placeholder below *bound*. ``{"_stateid": (("e0",),), "_cityid": ((), ("_", "e0"))}``
        for "texas": no city fits, so ``_cityid`` has no name.
        """
        raise NotImplementedError


@Anonymizer.register("geo_prolog")
class GeoPrologAnonymizer(Anonymizer):
    """Anonymizes GEO Prolog pairs by placeholder per mention, keeping the id constructor (see the module doc).

    Args:
        finder: finds the mentions (its lexicon is the one restore spells entities with).
        constructors: the id constructors whose names are anonymized; ``_countryid`` is left out by
            default, as Dong & Lapata did (``usa`` is one constant the parser learns like a word).
        prefix: placeholder prefix; placeholders are ``{prefix}0``, ``{prefix}1``...
        unknown: ``"error"`` (raise :class:`RestoreError`) or ``"keep"`` (leave the placeholder, report it).
        type_words: write each mention's candidate types before its placeholder in the question.
    """

    def __init__(self, finder: MentionFinder, constructors: list[str] | None = None, prefix: str = "e", unknown: str = "error", type_words: bool = False):
        self.finder = finder
        lexicon = getattr(finder, "lexicon", None)
        if not isinstance(lexicon, EntityLexicon):
            raise ConfigurationError("needs a mention finder with a lexicon", key="finder")
        self.lexicon = lexicon
        chosen = [name for name in CONSTRUCTOR_TYPES if name != "_countryid"] if constructors is None else constructors
        if unknown_constructors := [name for name in chosen if name not in CONSTRUCTOR_TYPES]:
            raise ConfigurationError(f"unknown id constructors {unknown_constructors}; known: {sorted(CONSTRUCTOR_TYPES)}", key="constructors")
        self.constructors = {name: CONSTRUCTOR_TYPES[name] for name in chosen}
        self.types = {entity_type for types in self.constructors.values() for entity_type in types}
        if unknown not in ("error", "keep"):
            raise ConfigurationError(f"must be 'error' or 'keep', not {unknown!r}", key="unknown")
        if not re.fullmatch(r"[a-z]\w*", prefix) or prefix.endswith("id"):
            raise ConfigurationError(f"{prefix!r} must be a lower-case word not ending in 'id'", key="prefix")
        self.prefix, self.unknown, self.type_words = prefix, unknown, type_words
        self._placeholder = re.compile(rf"{re.escape(prefix)}(\d+)")

    def anonymize(self, question: Sequence[str], logical_form: str | Sequence[str] | None = None) -> Anonymized:
        """See :class:`Anonymizer`; *logical_form* as a string is split on whitespace."""
        question = list(question)
        placeholders = [mention for mention in self.finder.find(question) if any(entity.type in self.types for entity in mention.candidates)]
        anonymized_question = list(question)
        for number in reversed(range(len(placeholders))):
            mention = placeholders[number]
            types = [entity_type.replace(" ", "_") for entity_type in mention.types if entity_type in self.types] if self.type_words else []
            anonymized_question[mention.start : mention.end] = [*types, f"{self.prefix}{number}"]
        if logical_form is None:
            return Anonymized(anonymized_question, None, placeholders)
        tokens = logical_form.split() if isinstance(logical_form, str) else list(logical_form)
        replacements: list[tuple[int, int, str]] = []
        unmatched = []
        replaced = 0
        for constant in find_constants(tokens):
            if constant.constructor not in self.constructors:
                continue
            number = self._match_name(constant, placeholders)
            if number is None:
                unmatched.append(" ".join(tokens[constant.start : constant.end]))
            else:
                replacements.append((constant.name_start, constant.name_end, f"{self.prefix}{number}"))
                replaced += 1
            if constant.state_index is not None and constant.state != "_":
                state_number = self._match_state(constant.state or "", placeholders)
                if state_number is not None:
                    replacements.append((constant.state_index, constant.state_index + 1, f"{self.prefix}{state_number}"))
        for start, end, placeholder in sorted(replacements, reverse=True):
            tokens[start:end] = [placeholder]
        return Anonymized(anonymized_question, tokens, placeholders, unmatched, replaced)

    def _match_name(self, constant: Constant, placeholders: list[Mention]) -> int | None:
        types = self.constructors[constant.constructor]
        for number, mention in enumerate(placeholders):
            entity = self._reading(mention, types)
            if entity is not None and self.lexicon.spelling(entity) == constant.name:
                return number
        return None

    def _match_state(self, abbreviation: str, placeholders: list[Mention]) -> int | None:
        for number, mention in enumerate(placeholders):
            entity = self._reading(mention, ("state",))
            if entity is not None and (entity.abbreviation or "") == abbreviation:
                return number
        return None

    @staticmethod
    def _reading(mention: Mention, types: Sequence[str]) -> Entity | None:
        """The entity restore gives *mention* under a constructor taking *types*: its first candidate of those types."""
        readings = mention.of_types(types)
        return readings[0] if readings else None

    def restore(self, logical_form: str | Sequence[str], placeholders: Sequence[Mention]) -> Restored:
        """See :class:`Anonymizer` and the module doc."""
        tokens = logical_form.split() if isinstance(logical_form, str) else list(logical_form)
        slots = self._slots(tokens)
        output: list[str] = []
        problems = []
        for index, token in enumerate(tokens):
            match = self._placeholder.fullmatch(token)
            if not match:
                output.append(token)
                continue
            problem, spelled = self._restore_one(token, int(match.group(1)), slots.get(index), placeholders)
            if problem is None:
                output.extend(spelled)
                continue
            if self.unknown == "error":
                raise RestoreError(f"cannot restore {problem} in: {' '.join(tokens)}")
            problems.append(problem)
            output.append(token)
        return Restored(output, problems)

    def _restore_one(self, token: str, number: int, slot: tuple[str, str] | None, placeholders: Sequence[Mention]) -> tuple[str | None, tuple[str, ...]]:
        """``(None, spelling)`` or ``(problem, ())`` for placeholder *token* in *slot* (constructor, "name" or "state")."""
        if number >= len(placeholders):
            return f"{token}: the question has {len(placeholders)} placeholder(s), no {token}", ()
        mention = placeholders[number]
        if slot is None:
            return f"{token} ({mention.surface!r}) outside an id constructor's name or a city's state", ()
        constructor, role = slot
        if role == "state":
            entity = self._state(mention)
            if entity is None:
                return f"{token} ({mention.surface!r}) as a city's state: it names no state ({', '.join(mention.types)})", ()
            return None, (entity.abbreviation,)
        entity = self._name(mention, constructor)
        if entity is None:
            return f"{token} ({mention.surface!r}) under {constructor}: it can be {', '.join(mention.types)}", ()
        return None, self.lexicon.spelling(entity)

    def _name(self, mention: Mention, constructor: str) -> Entity | None:
        """The entity restore puts for *mention* as *constructor*'s name, if any."""
        return self._reading(mention, self.constructors.get(constructor, CONSTRUCTOR_TYPES.get(constructor, ())))

    def _state(self, mention: Mention) -> Entity | None:
        """The state (with its abbreviation) restore puts for *mention* as a city's state, if any."""
        entity = self._reading(mention, ("state",))
        return entity if entity is not None and entity.abbreviation else None

    def placeholder(self, number: int) -> str:
        """See :class:`Anonymizer`."""
        return f"{self.prefix}{number}"

    def arguments(self, placeholders: Sequence[Mention] | None, bound: int) -> dict[str, tuple[tuple[str, ...], ...]]:
        """See :class:`Anonymizer` and the module doc."""
        numbered = list(enumerate(placeholders[:bound])) if placeholders is not None else [(number, None) for number in range(bound)]

        def fitting(fits: Callable[[Mention], Entity | None]) -> tuple[str, ...]:
            return tuple(self.placeholder(number) for number, mention in numbered if mention is None or fits(mention) is not None)

        states = ("_", *fitting(self._state))
        arguments = {}
        for constructor in self.constructors:
            names = fitting(functools.partial(self._name, constructor=constructor))
            arguments[constructor] = (names, states) if constructor == "_cityid" else (names,)
        return arguments

    def unrestored(self, logical_form: str | Sequence[str]) -> list[str]:
        """See :class:`Anonymizer`."""
        tokens = logical_form.split() if isinstance(logical_form, str) else list(logical_form)
        return [tokens[index] for index in sorted(self._slots(tokens)) if self._placeholder.fullmatch(tokens[index])]

    @staticmethod
    def _slots(tokens: list[str]) -> dict[int, tuple[str, str]]:
        """Token position -> (constructor, "name" | "state") for each one-token argument of an id constructor."""
        slots = {}
        for index in range(len(tokens) - 2):
            constructor = tokens[index]
            if constructor.startswith("_") and constructor.endswith("id") and tokens[index + 1] == "(" and tokens[index + 2] != "'":
                slots[index + 2] = (constructor, "name")
                if constructor == "_cityid" and index + 4 < len(tokens) and tokens[index + 3] == ",":
                    slots[index + 4] = (constructor, "state")
        return slots
