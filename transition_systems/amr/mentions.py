"""Named-entity and date mentions of a sentence: what the ``NAME`` and ``DATE`` actions make whole.

A mention is a token span with a kind: spaCy's named-entity label (``PERSON``, ``GPE``, ``DATE``,
...) where spaCy and an English model are installed (``mentions: "spacy"``), else the rules'
(``mentions: "rules"``): a run of capitalised words is a ``PROPER`` name (at the sentence's start
only when two or more, and not after a function word: ``Emmanuel Macron visited``), and a run of
month and weekday names, day numbers and years is a ``DATE``. Mentions are found once per sentence
(cached by its tokens), so the oracle in training and the parser read the same ones.

A date mention becomes a ``date-entity`` only where a date parser (``python-dateutil``) reads it
and it names a year, a month or a weekday: ``March 3, 2019`` -> ``:year 2019 :month 3 :day 3``;
``the next day`` and ``six years ago`` (spaCy's ``DATE`` too) stay words.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from datetime import datetime
from functools import lru_cache
from typing import NamedTuple

from toolkit.data.tokenization import MARKUP_TAG, spacy_english

logger = logging.getLogger(__name__)

MENTION_SOURCES = ("spacy", "rules", "none")
DATE = "DATE"
PROPER = "PROPER"  # the rules' one kind of name
MAX_MENTION_WORDS = 8  # a longer mention is left to the words (it is rarely one name)
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december")
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTH_WORDS = {*MONTHS, *(month[:3] for month in MONTHS), "sept"}
_YEAR = re.compile(r"^(1[0-9]|20)[0-9]{2}$")
_DAY = re.compile(r"^([1-9]|[12][0-9]|3[01])(st|nd|rd|th)?$")
DETERMINERS = frozenset({"the", "a", "an"})  # never part of a name, though NER spans often start with one
_OPENERS = frozenset(". ! ? : ( \" `` '".split())
_FUNCTION_WORDS = frozenset(
    "a an the this that these those i it he she we they you my his her our their in on at of for to from by with and but or if when".split()
)


class Mention(NamedTuple):
    start: int
    end: int
    kind: str


def find_mentions(tokens: Sequence[str], source: str) -> tuple[Mention, ...]:
    """The mentions of the sentence *tokens* by *source* (``spacy``, ``rules`` or ``none``), left to right."""
    if source == "none" or not tokens:
        return ()
    return _spacy_mentions(tuple(tokens)) if source == "spacy" and spacy_available() else _rule_mentions(tuple(tokens))


def spacy_available() -> bool:
    return _ner() is not None


def _ner():  # type: ignore[no-untyped-def]
    """SpaCy's English pipeline with its named-entity recogniser, and its ``Doc``; ``None`` (logged once) without."""
    return spacy_english(("parser", "lemmatizer"), "named entities and dates are found by rules")


@lru_cache(maxsize=65536)
def _spacy_mentions(tokens: tuple[str, ...]) -> tuple[Mention, ...]:
    nlp, doc_type = _ner()
    doc = nlp(doc_type(nlp.vocab, words=list(tokens)))
    mentions = []
    for entity in doc.ents:
        start, end = entity.start, entity.end
        while start < end - 1 and (tokens[start].lower() in DETERMINERS or is_markup(tokens[start])):  # "The United Nations", "<i> BRAF </i>"
            start += 1
        while end > start + 1 and is_markup(tokens[end - 1]):
            end -= 1
        if end - start <= MAX_MENTION_WORDS and not is_markup(tokens[start]):
            mentions.append(Mention(start, end, entity.label_))
    return tuple(mentions)


def is_markup(token: str) -> bool:
    """Whether *token* is a markup tag (``<i>``, ``</sup>``): never a word of a name, though NER spans take them in."""
    return MARKUP_TAG.fullmatch(token) is not None


@lru_cache(maxsize=65536)
def _rule_mentions(tokens: tuple[str, ...]) -> tuple[Mention, ...]:
    """Runs of date words (with a month, weekday or year among them) and runs of capitalised words."""
    mentions, i, n = [], 0, len(tokens)
    while i < n:
        end = i
        while end < n and (_is_date_word(tokens[end]) or (end > i and tokens[end] in (",", "of") and end + 1 < n and _is_date_word(tokens[end + 1]))):
            end += 1
        if end > i and any(_names_a_date(token) for token in tokens[i:end]):
            mentions.append(Mention(i, end, DATE))
            i = end
            continue
        end = i
        while end < n and _is_capitalised(tokens[end]):
            end += 1
        at_start = i == 0 or tokens[i - 1] in _OPENERS  # where any word is capitalised
        if end > i and (not at_start or (end - i >= 2 and tokens[i].lower() not in _FUNCTION_WORDS)) and end - i <= MAX_MENTION_WORDS:
            mentions.append(Mention(i, end, PROPER))
        i = max(end, i + 1)
    return tuple(mentions)


def _is_capitalised(token: str) -> bool:
    return token[:1].isupper() and any(c.isalpha() for c in token) and token.lower() not in _MONTH_WORDS | set(WEEKDAYS) and token != "I"


def _is_date_word(token: str) -> bool:
    return _names_a_date(token) or bool(_DAY.match(token))


def _names_a_date(token: str) -> bool:
    """A year, or a month's or weekday's name, capitalised (``may`` and ``march`` are verbs too)."""
    lowered = token.lower().rstrip(".")
    return bool(_YEAR.match(token)) or (token[:1].isupper() and (lowered in _MONTH_WORDS or lowered in WEEKDAYS))


@lru_cache(maxsize=4096)
def date_parts(words: Sequence[str]) -> tuple[tuple[str, str], ...] | None:
    """The ``date-entity`` roles and values of a date written in *words* (``:year``, ``:month``, ``:day``,
    ``:weekday``), or ``None`` where it names no year, month or weekday or the date parser cannot read it.

    The parser fills what the text leaves out from a default date, so it reads the text against two
    defaults that differ in every field: a field the two readings share is one the text gave.
    """
    from dateutil import parser

    lowered = [word.lower().rstrip(".") for word in words]
    weekday = next((word for word in lowered if word in WEEKDAYS), None)
    if not any(_names_a_date(word) for word in words):
        return None
    text = " ".join(word for word in words if word.lower() not in WEEKDAYS)
    parts: list[tuple[str, str]] = []
    if text.strip(" ,"):
        try:
            first, second = (parser.parse(text, default=datetime(year, month, month)) for year, month in ((1004, 1), (1008, 2)))
        except (ValueError, OverflowError):  # dateutil's ParserError is a ValueError
            return None
        parts = [(role, str(getattr(first, role))) for role in ("year", "month", "day") if getattr(first, role) == getattr(second, role)]
        if parts and not any(role in ("year", "month") for role, _ in parts):
            parts = []  # a bare day number is no date
    if weekday is not None:
        parts.append(("weekday", weekday))
    return tuple(parts) or None
