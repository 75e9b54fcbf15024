"""Finding entity mentions in a tokenized question with a lexicon.

:class:`MentionFinder` is the registered base; ``"lexicon"`` (:class:`LexiconMentionFinder`) is the
implementation. Its rules, in order:

1. **Names.** Every token span whose text, normalized (:func:`~toolkit.entities.lexicon.normalize`:
   case, hyphens, dots, ``saint``/``st``), is a lexicon name is a candidate; a span never contains a
   punctuation-only token (``,``, ``?``). Candidates are taken longest first (leftmost among equals)
   and a candidate overlapping one already taken is dropped: ``new york city`` gives ``new york``,
   ``salt lake city`` the city, not ``salt`` or ``lake``. A name that ends in a type word
   (``river``, ``lake``, ``city``, ``mountain``) and whose head is a name too is a mention of the head,
   with the head's entities first and the whole name's after: ``mississippi river`` (a low point in
   the lexicon) is the mention ``mississippi`` (river, state, then the low point ``mississippi river``),
   so the type word stays in the question for the parser to see. With ``prefixed_names``, a name
   that starts with ``lake`` or ``mount`` (``mt``) whose other words name a lake or a mountain is a
   mention of both, the whole name's entities first: ``lake erie`` is the low point of Michigan
   and the lake ``erie``, ``mount rainier`` the high point of Washington and the mountain ``rainier``
   (Geobase names its lakes and mountains without the word), so every kind the name can mean is a
   constructor the parser may choose (``_placeid``, ``_lakeid``, ``_mountainid``).
2. **Word-like names** (``word_names``: ``high point``, ``us``, ``country``, ``american``...) are
   English words far more often than names ("the high point of texas"): they are taken only where
   written capitalized in a question that is not all capitals, and not as its first word
   (``High Point``, ``US``).
3. **Abbreviations.** A single token that is a state abbreviation (``tx``, ``T.X.``) is a mention of
   that state, unless it is also an English word (``word_abbreviations``: in me or ok hi oh la pa de
   co ma al id ne). Such a word is taken as an abbreviation only (a) when written in capitals in a
   question that is not all capitals (``Portland, ME``), or (b) right after a city mention and a
   comma (``portland , me``), or (c), for the ones that are not function words (``function_words``:
   in me or ok hi oh), right after a city mention (``erie pa``, ``boston ma``). ``springfield in ?``
   stays the preposition.
4. **Ambiguity** is kept: a mention lists every entity its name denotes (``mississippi``: state and
   river). Context words only order them, the preferred type first, and set ``preferred``:
   a following ``river``/``city``/``state``/``lake``/``mountain``/``peak``, a preceding
   ``state of``/``city of``/``lake``/``river``, a following ``dc`` (``washington dc``: the city), and a
   state-or-city name right after a city (``seattle washington``: the state).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from toolkit.entities.lexicon import Entity, EntityLexicon, normalize
from toolkit.registrable import Registrable

WORD_ABBREVIATIONS = ("in", "me", "or", "ok", "hi", "oh", "la", "pa", "de", "co", "ma", "al", "id", "ne")
FUNCTION_WORDS = ("in", "me", "or", "ok", "hi", "oh")
WORD_NAMES = ("high point", "us", "country", "american", "america")
# A context word right after a name -> the type it asks for; right before it, as "X of NAME".
_TYPE_AFTER = {"river": "river", "city": "city", "state": "state", "lake": "lake", "mountain": "mountain", "peak": "mountain", "dc": "city"}
_TYPE_WORDS = ("river", "lake", "city", "mountain")
_TYPE_BEFORE = {"lake": "lake", "river": "river", "mount": "mountain"}
_TYPE_PREFIXES = {"lake": "lake", "mount": "mountain", "mt": "mountain"}  # rule 1's prefixed_names
_TYPE_BEFORE_OF = {"state": "state", "city": "city", "river": "river", "lake": "lake"}


@dataclass(frozen=True)
class Mention:
    """An entity mention: tokens ``start:end`` of the question, their text, and the entities they may denote.

    ``candidates`` are ordered, the one the context prefers first; ``preferred`` is that type
    (``None`` where no context word decides); ``kind`` is ``"name"`` or ``"abbreviation"``.
    """

    start: int
    end: int
    surface: str
    candidates: tuple[Entity, ...]
    kind: str = "name"
    preferred: str | None = None

    @property
    def types(self) -> tuple[str, ...]:
        """The candidates' types, in order, each once."""
        return tuple(dict.fromkeys(entity.type for entity in self.candidates))

    def of_types(self, types: Sequence[str]) -> list[Entity]:
        """The candidates whose type is one of *types*, in order."""
        return [entity for entity in self.candidates if entity.type in types]


class MentionFinder(Registrable):
    """Finds entity mentions in a tokenized question; ``find`` returns them left to right, never overlapping."""

    default_implementation = "lexicon"

    def find(self, tokens: Sequence[str]) -> list[Mention]:
        """The mentions in *tokens*, left to right."""
        raise NotImplementedError


@MentionFinder.register("lexicon")
class LexiconMentionFinder(MentionFinder):
    """Longest-match lexicon lookup with abbreviation and context rules (see the module doc).

    Args:
        lexicon: the entity lexicon (its file is named in the config: ``lexicon: {path: ...}``).
        word_names: names taken only where capitalized (rule 2).
        word_abbreviations: state abbreviations that are also English words (rule 3).
        function_words: those of *word_abbreviations* not taken right after a bare city name.
        prefixed_names: a name starting with ``lake``/``mount`` also names the lake or mountain its
            other words name (rule 1); off by default, as the finder was before it.
    """

    def __init__(
        self,
        lexicon: EntityLexicon,
        word_names: list[str] | None = None,
        word_abbreviations: list[str] | None = None,
        function_words: list[str] | None = None,
        prefixed_names: bool = False,
    ):
        self.lexicon, self.prefixed_names = lexicon, prefixed_names
        self.word_names = {normalize(name) for name in (WORD_NAMES if word_names is None else word_names)}
        self.word_abbreviations = set(WORD_ABBREVIATIONS if word_abbreviations is None else word_abbreviations)
        self.function_words = set(FUNCTION_WORDS if function_words is None else function_words)
        self._max_words = max(lexicon.max_words, 1)

    def find(self, tokens: Sequence[str]) -> list[Mention]:
        """The mentions in *tokens*, left to right (see the module doc for the rules)."""
        tokens = list(tokens)
        words = [normalize(token) for token in tokens]
        shouting = all(token.isupper() for token in tokens if any(character.isalpha() for character in token))
        spans = []
        for start in range(len(tokens)):
            if not words[start]:
                continue
            for end in range(start + 1, min(len(tokens), start + self._max_words) + 1):
                if not words[end - 1]:
                    break
                key = normalize(" ".join(tokens[start:end]))
                if key in self.word_names and (shouting or start == 0 or not all(token[:1].isupper() for token in tokens[start:end])):
                    continue
                if self.lexicon.lookup(key):
                    spans.append((start, end))
        taken: list[tuple[int, int]] = []
        for start, end in sorted(spans, key=lambda span: (span[0] - span[1], span[0])):
            if all(end <= other_start or start >= other_end for other_start, other_end in taken):
                taken.append((start, end))
        taken.sort()
        mentions = [self._name_mention(tokens, words, start, end) for start, end in taken]
        mentions = self._add_abbreviations(tokens, words, mentions, shouting)
        return [self._prefer(tokens, words, mentions, index) for index in range(len(mentions))]

    def _name_mention(self, tokens: list[str], words: list[str], start: int, end: int) -> Mention:
        """The mention of the name at ``start:end``; a name ending in a type word whose head is a name too is split (rule 1)."""
        entities = self.lexicon.lookup(" ".join(tokens[start:end]))
        if end - start >= 2 and words[end - 1] in _TYPE_WORDS:
            head = self.lexicon.lookup(" ".join(tokens[start : end - 1]))
            if head:
                return Mention(start, end - 1, " ".join(tokens[start : end - 1]), tuple(head + [entity for entity in entities if entity not in head]))
        if self.prefixed_names and end - start >= 2 and words[start] in _TYPE_PREFIXES:
            kind = _TYPE_PREFIXES[words[start]]
            named = [entity for entity in self.lexicon.lookup(" ".join(tokens[start + 1 : end])) if entity.type == kind]
            entities += [entity for entity in named if entity not in entities]
        return Mention(start, end, " ".join(tokens[start:end]), tuple(entities))

    def _add_abbreviations(self, tokens: list[str], words: list[str], mentions: list[Mention], shouting: bool) -> list[Mention]:
        covered = {index for mention in mentions for index in range(mention.start, mention.end)}
        city_ends = {mention.end: mention for mention in mentions if "city" in mention.types}
        found = list(mentions)
        for index, token in enumerate(tokens):
            abbreviation = words[index].replace(" ", "")
            if index in covered or not abbreviation or " " in words[index]:
                continue
            states = self.lexicon.states_abbreviated(abbreviation)
            if not states:
                continue
            if abbreviation in self.word_abbreviations:
                upper = not shouting and sum(character.isupper() for character in token) >= 2 and token.upper() == token
                after_comma = index >= 2 and tokens[index - 1] == "," and index - 1 in city_ends
                after_city = index in city_ends and abbreviation not in self.function_words
                if not (upper or after_comma or after_city):
                    continue
            found.append(Mention(index, index + 1, token, tuple(states), "abbreviation", "state"))
        return sorted(found, key=lambda mention: mention.start)

    def _prefer(self, tokens: list[str], words: list[str], mentions: list[Mention], index: int) -> Mention:
        mention = mentions[index]
        if mention.preferred is not None:
            return mention
        after = words[mention.end] if mention.end < len(words) else ""
        before = words[mention.start - 1] if mention.start >= 1 else ""
        before_of = words[mention.start - 2] if mention.start >= 2 and before == "of" else ""
        wanted = _TYPE_AFTER.get(after) or _TYPE_BEFORE.get(before) or _TYPE_BEFORE_OF.get(before_of)
        if index >= 1:
            previous = mentions[index - 1]
            adjacent = previous.end == mention.start or (previous.end + 1 == mention.start and tokens[previous.end] == ",")
            if adjacent and "city" in previous.types and "state" in mention.types and after not in _TYPE_AFTER:
                wanted = "state"  # "seattle washington", "springfield , missouri"
        if wanted is None or wanted not in mention.types:
            return mention
        ordered = tuple(sorted(mention.candidates, key=lambda entity: entity.type != wanted))
        return Mention(mention.start, mention.end, mention.surface, ordered, mention.kind, wanted)
