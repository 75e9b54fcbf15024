"""ABSENTITIES (``abs_entities``): swap one entity of an example for another entity of the same type.

An *entity* is an LF constant outside head position whose mention is found exactly once in the
question: a typed constant ``word:type`` (ATIS ``afternoon:pd``, ``first:cl``, ``breakfast:me``;
the mention is its ``_``-separated words, matched against the stemmed question by
:func:`mentions`), and, with ``swap_placeholders``, a placeholder (``s0``: its own mention, type
``s``). A new example replaces one entity of an example, in question and LF, by another entity
of the same type seen anywhere in the training set. Swapping placeholders cannot add content
(``s0`` for ``s0`` is the same example); it only produces numberings the anonymizer never does
(a lone ``s1``), so it is off by default.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from toolkit.data.dataset_readers.recombination.strategy import (
    PLACEHOLDER,
    Candidate,
    EnumeratedStrategy,
    Question,
    RecombinationStrategy,
    replace_span,
    source_of,
)
from toolkit.data.example import Example
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

    def candidates(self, examples: Sequence[Example]) -> Iterator[Candidate]:
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
