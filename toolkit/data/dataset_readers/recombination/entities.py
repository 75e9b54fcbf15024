"""ABSENTITIES (``abs_entities``): swap one entity of an example for another entity of the same type.

**Dong & Lapata's data** (no anonymizer). An *entity* is an LF constant outside head position
whose mention is found exactly once in the question: a typed constant ``word:type`` (ATIS
``afternoon:pd``, ``first:cl``, ``breakfast:me``; the mention is its ``_``-separated words,
matched against the stemmed question by :func:`mentions`), and, with ``swap_placeholders``, a
placeholder (``s0``: its own mention, type ``s``). A new example replaces one entity of an
example, in question and LF, by another entity of the same type seen anywhere in the training
set. Swapping placeholders cannot add content (``s0`` for ``s0`` is the same example); it only
produces numberings the anonymizer never does (a lone ``s1``), so it is off by default.

**Raw data** (a base reader with an anonymizer, GEO's raw Prolog). An entity is a mention whose
placeholder the query puts under an id constructor (``_stateid ( e0 )``); it is swapped for an
entity of Geobase's lexicon that every place it has in the query allows (a state for
``_stateid`` and for a city's state), in the question (its name, as a user writes it) and in the
query (as the data spells it), so entities no training question names appear. The parser sees
placeholders, not names: the two examples differ for it only where the new name can be other
things than the old one, and the anonymizer's type words say so (``state river e0`` for
*mississippi*, ``city state e0`` for *new york*). So a swap is drawn per *reading* of a name
(the types the lexicon gives it), one entity at random among those that read alike (the next,
up to three, where the reader drops it), and swaps that change nothing the parser sees are left
to the reader to drop as repeats.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from toolkit.data.dataset_readers.recombination.abstraction import abstract, entity_slots, realize
from toolkit.data.dataset_readers.recombination.strategy import (
    PLACEHOLDER,
    Candidate,
    EnumeratedStrategy,
    Question,
    RecombinationStrategy,
    replace_span,
    source_of,
    unique,
)
from toolkit.data.example import Example
from toolkit.entities.anonymizer import Anonymizer
from toolkit.entities.lexicon import Entity as LexiconEntity
from toolkit.entities.lexicon import EntityLexicon, normalize
from toolkit.entities.mentions import Mention
from toolkit.errors import ConfigurationError
from tree_codecs.editing import leaf_labels, replace_leaves
from tree_codecs.tree import Tree, parse_lisp, to_lisp


@dataclass(frozen=True)
class Entity:
    """An LF constant and the question tokens that mention it; entities swap within a *type*."""

    constant: str
    mention: Question
    type: str


def stem_matches(token: str, word: str) -> bool:
    """Whether the stemmed question *token* can be *word*: a stand-in for the Porter stemmer the data used.

    >>> [stem_matches(t, w) for t, w in [("morn", "morning"), ("earli", "early"), ("first", "first"), ("a", "am")]]
    [True, True, True, False]
    """
    return token == word or (word.endswith("y") and token == word[:-1] + "i") or (len(token) >= 4 and word.startswith(token))


def entity_type(constant: str, swap_placeholders: bool) -> str | None:
    """``pd`` for ``afternoon:pd``, ``s`` for the placeholder ``s0`` (if swapped), else ``None``."""
    word, colon, kind = constant.rpartition(":")
    if colon and word and kind:
        return kind
    match = PLACEHOLDER.fullmatch(constant)
    return match.group(1) if match and swap_placeholders else None


def mentions(question: Question, entity_constant: str) -> list[int]:
    """Start positions of the mentions of a constant in *question* (its ``_``-separated words, stemmed)."""
    word = entity_constant.rpartition(":")[0] or entity_constant
    words = word.split("_")
    return [start for start in range(len(question) - len(words) + 1) if all(stem_matches(question[start + offset], part) for offset, part in enumerate(words))]


def entities_of(question: Question, tree: Tree, swap_placeholders: bool) -> list[Entity]:
    """The entities of one example: constants of a known type whose mention occurs exactly once."""
    found = []
    for constant in sorted(leaf_labels(tree)):
        kind = entity_type(constant, swap_placeholders)
        if kind is None:
            continue
        starts = mentions(question, constant)
        if len(starts) == 1:
            length = len((constant.rpartition(":")[0] or constant).split("_"))
            found.append(Entity(constant, question[starts[0] : starts[0] + length], kind))
    return found


@RecombinationStrategy.register("abs_entities")
class AbsEntities(EnumeratedStrategy):
    """ABSENTITIES: swap one entity of an example for another entity of the same type (see the module docstring)."""

    def __init__(self, ratio: float = 0.5, swap_placeholders: bool = False) -> None:
        super().__init__(ratio)
        self.swap_placeholders = swap_placeholders

    def draws(self, examples: Sequence[Example], count: int, rng: random.Random, anonymizer: Anonymizer | None) -> Iterator[Candidate]:
        if anonymizer is None:
            return super().draws(examples, count, rng, anonymizer)
        return raw_swaps(unique(examples), rng, anonymizer)

    def candidates(self, examples: Sequence[Example], anonymizer: Anonymizer | None = None) -> Iterator[Candidate]:
        """Every swap on Dong & Lapata's data (raw data is drawn by :func:`raw_swaps`)."""
        parsed = [(tuple(example.tokens), parse_lisp(str(example.target)), example) for example in examples]
        by_type: dict[str, set[Entity]] = defaultdict(set)
        found = []
        for question, tree, _ in parsed:
            entities = entities_of(question, tree, self.swap_placeholders)
            found.append(entities)
            for entity in entities:
                by_type[entity.type].add(entity)
        lexicon = {kind: sorted(entities, key=lambda e: (e.constant, e.mention)) for kind, entities in by_type.items()}
        for (question, tree, example), entities in zip(parsed, found):
            constants = leaf_labels(tree)
            for entity in entities:
                rest = replace_span(question, entity.mention, ())
                for other in lexicon[entity.type]:
                    if other.constant in constants or set(other.mention) & set(rest or ()):
                        continue  # it would merge with an entity already there
                    new_question = replace_span(question, entity.mention, other.mention)
                    if new_question is not None:
                        yield Candidate(new_question, to_lisp(replace_leaves(tree, entity.constant, other.constant)), (source_of(example),))


TRIES = 3  # entities drawn per swap, in turn: once one is kept, the others repeat it for the parser


def readings(lexicon: EntityLexicon, name: str) -> tuple[str, ...]:
    """The types the lexicon gives *name*: what the anonymizer's type words can say about a mention of it."""
    return tuple(sorted({entity.type for entity in lexicon.lookup(name)}))


def raw_swaps(examples: Sequence[Example], rng: random.Random, anonymizer: Anonymizer) -> Iterator[Candidate]:
    """Entity swaps on raw examples, one per (example, entity, reading of the new name), in *rng*'s order."""
    lexicon = getattr(anonymizer, "lexicon", None)
    if not isinstance(lexicon, EntityLexicon):
        raise ConfigurationError("abs_entities on raw data needs an anonymizer with a lexicon (geo_prolog)", key="base_reader.anonymizer")
    by_reading: dict[tuple[str, ...], list[LexiconEntity]] = defaultdict(list)
    for entity in sorted(lexicon.entities(), key=lambda e: (e.type, e.value)):
        by_reading[readings(lexicon, entity.value)].append(entity)
    swaps = []
    abstracted = [(example, abstract(example, anonymizer)) for example in examples]
    for index, (_, form) in enumerate(abstracted):
        if form is None:
            continue
        for placeholder, types in sorted(entity_slots(form.tree).items()):
            if placeholder not in dict(form.mentions) or not types:
                continue
            old = tuple(sorted(form.mention(placeholder).types))
            swaps += [(index, placeholder, reading) for reading in sorted(by_reading) if reading != old and set(reading) & types]
    rng.shuffle(swaps)
    for index, placeholder, reading in swaps:
        example, form = abstracted[index]
        assert form is not None
        types = entity_slots(form.tree)[placeholder]
        taken = {normalize(mention.surface) for _, mention in form.mentions}
        choices = [entity for entity in by_reading[reading] if entity.type in types and entity.key not in taken]
        for entity in rng.sample(choices, min(TRIES, len(choices))):  # the next where the reader drops one (a misread)
            mentions = dict(form.mentions)
            mentions[placeholder] = Mention(0, 0, entity.value, (entity,))
            realized = realize(form.question, form.tree, mentions, anonymizer)
            if realized is not None:
                yield Candidate(realized[0], realized[1], (source_of(example),))
