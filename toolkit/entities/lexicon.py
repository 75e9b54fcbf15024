"""An entity lexicon: every known name, normalized, with the entities it can denote.

The lexicon file is a JSON list of ``{"value", "type", "abbreviation"?}`` records (GEO's
``geo_entities.json``: states, cities, rivers, lakes, mountains, high and low points, roads,
the country). Names are indexed by :func:`normalize_words`, so ``"Salt Lake City"``,
``"salt-lake city"`` and ``"salt lake city"`` are one key, and ``"St. Paul"`` and ``"saint paul"``
another. A name may denote several entities (``mississippi``: the state and the river).

The lexicon also knows how a Prolog logical form spells an entity (:meth:`EntityLexicon.spelling`):
one word bare (``texas``), several quoted (``' new york '``). Given training logical forms
(``gold_forms``), it checks every entity constant in them against the file: an entity that the
file lacks is added (and listed in :attr:`EntityLexicon.added`), and an entity the file has but the
data spells differently (``' salt _lake _city '``) keeps the data's spelling (listed in
:attr:`EntityLexicon.respelled`), so that a restored logical form is the gold one token for token.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from toolkit.errors import DataError
from toolkit.from_params import FromParams

# Prolog id constructors -> the lexicon types they may take as their name argument. Geobase's
# geoquery.pl knows a placeid only as a state's high or low point (``highlow/6``): a mountain or a
# lake is a ``_mountainid``/``_lakeid``, and under ``_placeid`` it would name nothing.
CONSTRUCTOR_TYPES: dict[str, tuple[str, ...]] = {
    "_stateid": ("state",),
    "_cityid": ("city",),
    "_riverid": ("river",),
    "_placeid": ("highest point", "lowest point"),
    "_mountainid": ("mountain",),
    "_lakeid": ("lake",),
    "_countryid": ("country",),
}
# The type a constant's constructor most likely means, for an entity the lexicon lacks.
_PRIMARY_TYPE = {constructor: types[0] for constructor, types in CONSTRUCTOR_TYPES.items()}
# Words written two ways inside a multiword name (never as its last word: "mt" alone is Montana).
_ALIASES = {"saint": "st", "mt": "mount", "ft": "fort"}
_PUNCTUATION = re.compile(r"[^\w\s]")


def normalize_words(text: str) -> tuple[str, ...]:
    """The words of *text* as the lexicon keys them: lower case, hyphens and underscores split, other punctuation dropped.

    A leading ``saint``/``mt``/``ft`` is written ``st``/``mount``/``fort`` when more words follow.

    >>> normalize_words("Salt-Lake  City")
    ('salt', 'lake', 'city')
    >>> normalize_words("Saint Paul"), normalize_words("st. paul")
    (('st', 'paul'), ('st', 'paul'))
    """
    words = [word for word in _PUNCTUATION.sub("", text.lower().replace("-", " ").replace("_", " ")).split() if word]
    return tuple(_ALIASES.get(word, word) if index < len(words) - 1 else word for index, word in enumerate(words))


def normalize(text: str) -> str:
    """:func:`normalize_words` joined by single spaces (``""`` for punctuation only)."""
    return " ".join(normalize_words(text))


@dataclass(frozen=True)
class Entity:
    """One lexicon record: its name as the file writes it, its type, and a state's abbreviation."""

    value: str
    type: str
    abbreviation: str | None = None

    @property
    def key(self) -> str:
        """The normalized name."""
        return normalize(self.value)


class EntityLexicon(FromParams):
    """Names to entities, read from a JSON lexicon file, optionally checked against gold logical forms.

    Args:
        path: the JSON list of ``{"value", "type", "abbreviation"?}`` records.
        gold_forms: ``question<TAB>prolog logical form`` files (the training data) whose entity
            constants are checked against the file: missing ones are added, differently spelled ones
            keep the data's spelling.
        exclude_types: types left out of the index (GEO's roads are numbers: "5", "10").
    """

    def __init__(self, path: str, gold_forms: list[str] | None = None, exclude_types: list[str] | None = None):
        self.path = path
        try:
            records = json.loads(Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise DataError("entity lexicon not found", path=path) from None
        except ValueError as error:
            raise DataError(f"entity lexicon is not JSON: {error}", path=path) from None
        if not isinstance(records, list):
            raise DataError("entity lexicon must be a JSON list of records", path=path)
        excluded = set(["road"] if exclude_types is None else exclude_types)
        self._names: dict[str, list[Entity]] = {}
        self._abbreviations: dict[str, list[Entity]] = {}
        self._spellings: dict[Entity, tuple[str, ...]] = {}
        self.added: list[tuple[Entity, tuple[str, ...]]] = []  # entities of the gold forms the file lacks, with their spelling
        self.respelled: list[tuple[Entity, tuple[str, ...]]] = []  # entities the gold forms spell otherwise than spelling() would
        for number, record in enumerate(records):
            if not isinstance(record, dict) or not isinstance(record.get("value"), str) or not isinstance(record.get("type"), str):
                raise DataError(f"record {number} needs a string 'value' and 'type', found {record!r}", path=path)
            if record["type"] not in excluded:
                self.add(Entity(record["value"], record["type"], record.get("abbreviation")))
        for forms in gold_forms or []:
            self.absorb(_logical_forms(forms))

    def add(self, entity: Entity) -> None:
        """Index *entity* under its normalized name and, for a state, its abbreviation."""
        entities = self._names.setdefault(entity.key, [])
        if entity not in entities:
            entities.append(entity)
        if entity.abbreviation and entity.type == "state":
            found = self._abbreviations.setdefault(entity.abbreviation.lower(), [])
            if entity not in found:
                found.append(entity)

    def lookup(self, name: str) -> list[Entity]:
        """The entities named *name* (any case or punctuation), in file order; ``[]`` if none."""
        return list(self._names.get(normalize(name), []))

    def states_abbreviated(self, abbreviation: str) -> list[Entity]:
        """The states whose abbreviation is *abbreviation* (any case, ``"T.X."`` too)."""
        return list(self._abbreviations.get(normalize(abbreviation).replace(" ", ""), []))

    def state(self, abbreviation: str) -> Entity | None:
        """The state abbreviated *abbreviation*, or ``None``."""
        found = self.states_abbreviated(abbreviation)
        return found[0] if found else None

    @property
    def max_words(self) -> int:
        """The most words in one name."""
        return max((len(key.split()) for key in self._names), default=0)

    def names(self) -> Iterator[str]:
        """Every normalized name."""
        return iter(self._names)

    def entities(self) -> Iterator[Entity]:
        """Every entity once."""
        seen: set[Entity] = set()
        for entities in self._names.values():
            for entity in entities:
                if entity not in seen:
                    seen.add(entity)
                    yield entity

    def spelling(self, entity: Entity) -> tuple[str, ...]:
        """The tokens that name *entity* in a Prolog logical form: ``("texas",)``, ``("'", "new", "york", "'")``."""
        if entity in self._spellings:
            return self._spellings[entity]
        words = tuple(entity.value.split())
        return words if len(words) == 1 else ("'", *words, "'")

    def absorb(self, logical_forms: Iterable[str | list[str]]) -> None:
        """Check the entity constants of *logical_forms* against the lexicon (see the class doc)."""
        for form in logical_forms:
            for constant in find_constants(form.split() if isinstance(form, str) else form):
                types = CONSTRUCTOR_TYPES.get(constant.constructor, ())
                matches = [entity for entity in self._names.get(normalize(" ".join(constant.name)), []) if entity.type in types]
                if not matches:
                    entity = Entity(" ".join(word.lstrip("_") for word in constant.name_words), _PRIMARY_TYPE.get(constant.constructor, "unknown"))
                    self.add(entity)
                    self._spellings[entity] = constant.name
                    self.added.append((entity, constant.name))
                    continue
                if not any(self.spelling(entity) == constant.name for entity in matches):
                    self._spellings[matches[0]] = constant.name
                    self.respelled.append((matches[0], constant.name))


@dataclass(frozen=True)
class Constant:
    """An entity constant in a Prolog logical form: ``_cityid ( ' new york ' , _ )``.

    ``start``/``end`` delimit the whole constant (constructor to closing bracket); ``name_start`` and
    ``name_end`` its name argument (quotes included); ``state_index`` the position of a city's state
    argument (``_`` or an abbreviation), ``None`` for other constructors.
    """

    constructor: str
    start: int
    end: int
    name_start: int
    name_end: int
    name: tuple[str, ...]
    state_index: int | None = None
    state: str | None = None

    @property
    def name_words(self) -> tuple[str, ...]:
        """The name without its quotes."""
        return self.name[1:-1] if len(self.name) > 1 and self.name[0] == "'" else self.name


def find_constants(tokens: list[str]) -> list[Constant]:
    """Every ``_xid ( NAME )`` / ``_cityid ( NAME , STATE )`` in a tokenized Prolog logical form, left to right.

    NAME is one token or a quoted group ``' w1 w2 '``. A constructor not followed by that shape is skipped.
    """
    constants = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if not (token.startswith("_") and token.endswith("id") and index + 2 < len(tokens) and tokens[index + 1] == "("):
            index += 1
            continue
        name_start = index + 2
        if tokens[name_start] == "'":
            try:
                name_end = tokens.index("'", name_start + 1) + 1
            except ValueError:
                index += 1
                continue
        else:
            name_end = name_start + 1
        state_index = state = None
        end = name_end
        if name_end + 2 < len(tokens) and tokens[name_end] == "," and token == "_cityid":
            state_index, state = name_end + 1, tokens[name_end + 1]
            end = name_end + 2
        if end >= len(tokens) or tokens[end] != ")":
            index += 1
            continue
        constants.append(Constant(token, index, end + 1, name_start, name_end, tuple(tokens[name_start:name_end]), state_index, state))
        index = end + 1
    return constants


def _logical_forms(path: str) -> Iterator[str]:
    """The logical forms of a ``question<TAB>logical form`` file."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise DataError("gold logical forms not found", path=path) from None
    for number, line in enumerate(lines, 1):
        if line.strip():
            if "\t" not in line:
                raise DataError("expected 'question<TAB>logical form'", path=path, line=number)
            yield line.split("\t")[1]
