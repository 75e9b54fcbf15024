"""Numbers as AMR writes them: ``20,000`` -> ``20000``, ``twelve`` -> ``12``, ``3 million`` -> ``3000000``, ``March`` -> ``3``.

The aligner matches numeric constants with :func:`number_value`, and ``COPY_NUMBER`` makes the
value of the span's words, so a parser can write a number training never saw (in news text most
quantities, dates and money amounts are such numbers).
"""

import re
from collections.abc import Sequence
from decimal import Decimal, InvalidOperation

CARDINALS = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty".split()
NUMBER_WORDS = {word: str(value) for value, word in enumerate(CARDINALS)}
NUMBER_WORDS.update({"thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70", "eighty": "80", "ninety": "90"})
NUMBER_WORDS.update({"hundred": "100", "thousand": "1000", "million": "1000000", "billion": "1000000000", "trillion": "1000000000000"})
NUMBER_WORDS.update({"once": "1", "twice": "2", "half": "0.5", "single": "1", "dozen": "12"})
NUMBER_WORDS.update({"first": "1", "second": "2", "third": "3", "fourth": "4", "fifth": "5", "sixth": "6", "seventh": "7", "eighth": "8", "ninth": "9"})
NUMBER_WORDS.update({"tenth": "10"})
MONTHS = {
    name: str(number)
    for number, name in enumerate(
        ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"], start=1
    )
}
MULTIPLIERS = {"hundred": 100, "thousand": 1000, "million": 10**6, "billion": 10**9, "trillion": 10**12}
DIGITS = re.compile(r"[+-]?(\d{1,3}(,\d{3})+|\d+)(\.\d+)?")
ORDINAL = re.compile(r"(\d+)(st|nd|rd|th)")


def number_value(words: Sequence[str]) -> str | None:
    """The number one word (digits, a number word, an ordinal, a month) or a number and a multiplier (``3 million``) stand for."""
    words = [word.lower() for word in words]
    if len(words) == 2 and words[1] in MULTIPLIERS and (first := _decimal(words[0])) is not None:
        return _format(first * MULTIPLIERS[words[1]])
    if len(words) != 1:
        return None
    word = words[0]
    if word in NUMBER_WORDS or word in MONTHS:
        return NUMBER_WORDS.get(word) or MONTHS[word]
    if ordinal := ORDINAL.fullmatch(word):
        return ordinal[1]
    value = _decimal(word)
    return None if value is None else _format(value)


def _decimal(word: str) -> Decimal | None:
    if word in NUMBER_WORDS and word not in MULTIPLIERS:
        return Decimal(NUMBER_WORDS[word])
    if not DIGITS.fullmatch(word):
        return None
    try:
        return Decimal(word.replace(",", ""))
    except InvalidOperation:  # pragma: no cover - the pattern admits only numbers
        return None


def _format(value: Decimal) -> str:
    """``3000000``, ``0.5``: integers without a point, other numbers without trailing zeros or an exponent."""
    if value == value.to_integral_value():
        return str(int(value))
    return format(value.normalize(), "f")
