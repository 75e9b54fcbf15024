"""What one parse reads of its sentence: tokens, lemmas and mentions, and what a span of them spells."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from transition_systems.amr.actions import PARTICLES
from transition_systems.amr.lexicon import demonym
from transition_systems.amr.mentions import DATE, Mention, date_parts
from transition_systems.amr.morphology import degree
from transition_systems.amr.numbers import number_value


@dataclass(frozen=True)
class Sentence:
    """The tokens, lemmas and mentions one parse reads (shared by all its states)."""

    tokens: tuple[str, ...]
    lemmas: tuple[str, ...]
    mentions: tuple[Mention, ...] = ()  # named entities and dates (:func:`~transition_systems.amr.mentions.find_mentions`)
    spans: dict = field(default_factory=dict, compare=False, hash=False, repr=False)  # AmrState._span_options, per grammar and span

    def key(self, start: int, end: int) -> str:
        """The lemma of a span: what PRED labels are looked up by and COPY_LEMMA copies."""
        return "-".join(self.lemmas[start:end]).lower() or "thing"

    def word(self, start: int, end: int) -> str:
        """The words of a span as written, lowercased: what COPY_WORD copies where the lemmatizer changed them."""
        return "-".join(self.tokens[start:end]).lower()

    def degree(self, start: int, end: int) -> str | None:
        """``more`` / ``most`` where the span is one comparative / superlative word (:func:`~transition_systems.amr.morphology.degree`)."""
        return degree(self.tokens[start].lower(), self.lemmas[start].lower()) if end - start == 1 else None

    def demonym(self, start: int, end: int) -> tuple[str, str] | None:
        """The entity type and name an adjective of place stands for (``Turkish``, ``Americans``), if the span is one."""
        return demonym(self.tokens[start]) if end - start == 1 else None

    def number(self, start: int, end: int) -> str | None:
        """The number the span's words stand for, if they do: what COPY_NUMBER makes (``20,000`` -> ``20000``)."""
        return number_value(self.tokens[start:end])

    def mention(self, start: int) -> Mention | None:
        """The mention that starts at token *start*, if one does."""
        return self._mention_at.get(start)

    def date(self, mention: Mention) -> tuple[tuple[str, str], ...] | None:
        """The ``date-entity`` roles and values *mention* spells, if it is a date that reads as one."""
        return date_parts(self.tokens[mention.start : mention.end]) if mention.kind == DATE else None

    @cached_property
    def _mention_at(self) -> dict[int, Mention]:
        return {mention.start: mention for mention in reversed(self.mentions)}  # the first of two at one token wins

    @cached_property
    def particles(self) -> frozenset[str]:
        """The particles among the sentence's words: those a phrasal verb's copy may add."""
        return PARTICLES.intersection(token.lower() for token in self.tokens)
