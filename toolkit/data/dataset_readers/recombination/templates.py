"""Schema templates (``geo_templates``): questions and Prolog queries written from Geobase's schema, filled with its entities.

The training questions use a few words for each predicate, and never some of Geobase's entity
kinds (no training query has a lake). A templates file (by default ``toolkit/data/geo_templates.txt``,
written from the schema and from English, never from test questions: its header says how) gives
each query shape several wordings. A template is a group of lines, groups apart by blank lines::

    what is the area of {state} ?
    how many square kilometers does {state} cover ?
    => _answer ( A , ( _area ( B , A ) , _const ( B , _stateid ( {state} ) ) ) )

Every line but the last is a wording; the last, after ``=>``, the query in the data's tokens.
A *slot* ``{TYPE}`` or ``{TYPEn}`` (a second entity of a type: ``{state2}``) is one entity of
Geobase's lexicon of that type, the same in the wordings and the query: ``state``, ``city``,
``river``, ``lake``, ``mountain``, or ``place`` (a highest or lowest point). In the question it is
the entity's name as a user writes it; in the query, the name as the data spells it
(``' new york '``). ``{state.abbr}`` writes the state's postal abbreviation in capitals in the
question (``TX``). Every wording names each slot of its query once, and no other; a line starting
with ``#`` is a comment.

Draws go round the templates, each once a round in an order drawn anew, so that every template
is drawn as often; a draw takes one of its wordings and its entities at random (no name twice),
and drops the final ``?`` with probability ``no_question_mark``, since people type questions
without it. The reader anonymizes each draw as it does a line of the training file, drops repeats of what
the parser already has, and the ``check`` drops queries that do not execute or answer nothing
(``springfield`` is in several states; a river through two random states rarely exists).
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from toolkit.data.dataset_readers.recombination.strategy import PROLOG, Candidate, Question, RecombinationStrategy
from toolkit.data.example import Example
from toolkit.entities.anonymizer import Anonymizer
from toolkit.entities.lexicon import Entity, EntityLexicon
from toolkit.errors import ConfigurationError, DataError

TEMPLATES = Path(__file__).resolve().parents[2] / "geo_templates.txt"  # toolkit/data/geo_templates.txt
SLOT = re.compile(r"\{([a-z]+?)(\d*)(\.abbr)?\}")
QUERY = "=>"
# A slot's type -> the lexicon types its entities are drawn from.
SLOT_TYPES: dict[str, tuple[str, ...]] = {
    "state": ("state",),
    "city": ("city",),
    "river": ("river",),
    "lake": ("lake",),
    "mountain": ("mountain",),
    "place": ("highest point", "lowest point"),
}


@dataclass(frozen=True)
class Template:
    """Wordings of one question and its query, with slots; *line* is where the group starts in its file."""

    wordings: tuple[str, ...]
    query: str
    line: int

    @property
    def slots(self) -> list[str]:
        """The query's slot names (``state``, ``state2``), in order."""
        return list(dict.fromkeys(name for name, _ in slots_of(self.query)))

    def question(self, wording: str, entities: dict[str, Entity]) -> Question:
        """*wording* with each slot written as a user writes the entity."""
        words: list[str] = []
        for token in wording.split():
            match = SLOT.fullmatch(token)
            if match is None:
                words.append(token)
                continue
            entity = entities[match.group(1) + match.group(2)]
            words += [str(entity.abbreviation).upper()] if match.group(3) else entity.value.split()
        return tuple(words)

    def target(self, entities: dict[str, Entity], lexicon: EntityLexicon) -> str:
        """The query with each slot spelled as the data spells the entity."""
        return SLOT.sub(lambda match: " ".join(lexicon.spelling(entities[match.group(1) + match.group(2)])), self.query)


def slots_of(text: str) -> list[tuple[str, bool]]:
    """The slots of a wording or query: (name, written as an abbreviation)."""
    return [(match.group(1) + match.group(2), bool(match.group(3))) for match in SLOT.finditer(text)]


def read_templates(path: str | Path) -> list[Template]:
    """The templates of *path* (see the module docstring); a malformed group is a :class:`DataError` naming its line."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise DataError("templates file not found", path=str(path)) from None
    templates, group, start = [], [], 0
    for number, line in enumerate([*lines, ""], start=1):
        text = line.strip()
        if text.startswith("#"):
            continue
        if text:
            start = start or number
            group.append((number, text))
            continue
        if group:
            templates.append(_template(group, start, str(path)))
        group, start = [], 0
    if not templates:
        raise DataError("no templates", path=str(path))
    return templates


def _template(group: list[tuple[int, str]], start: int, path: str) -> Template:
    queries = [(number, text) for number, text in group if text.startswith(QUERY)]
    if len(queries) != 1 or group[-1][1] != queries[0][1]:
        raise DataError(f"a template is its wordings, then one '{QUERY} query' line last; found {len(queries)} query lines", path=path, line=start)
    number, query = queries[0][0], queries[0][1][len(QUERY) :].strip()
    if any(abbreviated for _, abbreviated in slots_of(query)):
        raise DataError("a query spells entities by name: '.abbr' belongs in the wordings", path=path, line=number)
    names = [name for name, _ in slots_of(query)]
    for line, text in group:
        for token in text.split():
            if "{" in token or "}" in token:
                match = SLOT.fullmatch(token)
                if match is None:
                    raise DataError(f"{token!r} is no slot: write {{TYPE}}, {{TYPEn}} or {{state.abbr}} as a token of its own", path=path, line=line)
                if match.group(1) not in SLOT_TYPES:
                    raise DataError(f"unknown slot type {match.group(1)!r}; known: {', '.join(SLOT_TYPES)}", path=path, line=line)
                if match.group(3) and match.group(1) != "state":
                    raise DataError(f"only a state has an abbreviation, not {token}", path=path, line=line)
    try:
        PROLOG.parse(SLOT.sub("x", query))
    except ValueError as error:
        raise DataError(f"the query is no Prolog term: {error}", path=path, line=number) from None
    if not query.startswith("_answer ("):
        raise DataError("the query must be _answer ( A , ... ) as the data writes it", path=path, line=number)
    wordings = []
    for line, text in group[:-1]:
        named = [name for name, _ in slots_of(text)]
        if sorted(named) != sorted(set(names)):
            raise DataError(f"the wording names slots {sorted(named)}, its query {sorted(set(names))}: each once", path=path, line=line)
        wordings.append(text)
    if not wordings:
        raise DataError("a template needs at least one wording before its query", path=path, line=start)
    return Template(tuple(wordings), query, start)


@RecombinationStrategy.register("geo_templates")
class GeoTemplates(RecombinationStrategy):
    """Questions and queries from a templates file, filled with Geobase's entities (see the module docstring).

    Args:
        ratio: new examples per original.
        path: the templates file; by default the toolkit's ``geo_templates.txt``.
        no_question_mark: the probability of dropping a wording's final ``?``.
    """

    def __init__(self, ratio: float = 0.5, path: str | None = None, no_question_mark: float = 0.3) -> None:
        super().__init__(ratio)
        if not 0 <= no_question_mark <= 1:
            raise ConfigurationError(f"no_question_mark: must be a probability in [0, 1], got {no_question_mark}")
        self.path = Path(path) if path is not None else TEMPLATES
        self.no_question_mark = no_question_mark
        self._templates: list[Template] | None = None

    @property
    def templates(self) -> list[Template]:
        """The file's templates, read on first use (a strategy of ratio 0 never reads it)."""
        if self._templates is None:
            self._templates = read_templates(self.path)
        return self._templates

    def draws(self, examples: Sequence[Example], count: int, rng: random.Random, anonymizer: Anonymizer | None) -> Iterator[Candidate]:
        lexicon = getattr(anonymizer, "lexicon", None)
        if not isinstance(lexicon, EntityLexicon):
            raise ConfigurationError("geo_templates needs a base reader with an anonymizer whose lexicon names Geobase's entities (geo_prolog)")
        entities = sorted(lexicon.entities(), key=lambda entity: (entity.type, entity.value))
        pools = {kind: [entity for entity in entities if entity.type in types] for kind, types in SLOT_TYPES.items()}
        limit = 20 * count  # many draws are repeats (what the parser sees) or answer nothing
        for drawn in range(limit):
            if drawn % len(self.templates) == 0:
                order = rng.sample(self.templates, len(self.templates))  # a round: every template once
            template = order[drawn % len(self.templates)]
            wording = rng.choice(template.wordings)
            chosen: dict[str, Entity] = {}
            for name in template.slots:
                taken = {entity.key for entity in chosen.values()}
                chosen[name] = rng.choice([entity for entity in pools[name.rstrip("0123456789")] if entity.key not in taken])
            question = template.question(wording, chosen)
            if question[-1:] == ("?",) and rng.random() < self.no_question_mark:
                question = question[:-1]
            yield Candidate(question, template.target(chosen, lexicon), (f"{self.path.name}:{template.line}",))
