"""The word an English derived word comes from: what ``COPY_STEM`` copies.

AMR writes a manner adverb as its adjective (``crossly`` -> ``cross``, ``fairly`` -> ``fair-04``),
a participle or an ``-able``/``-ive``/``-some`` adjective as its verb's frame (``exhausted`` ->
``exhaust-01``, ``valuable`` -> ``value-02``, ``tiresome`` -> ``tire-03``), a quality noun as its
adjective (``seriousness`` -> ``serious-01``, ``patience`` -> ``patient-01``), an agent noun as
its verb (``painter`` -> ``paint-02``, ``error`` -> ``err-01``), an ``-ing`` word the lemmatizer kept
(``boiling`` -> ``boil-01``) and a noun in the singular even where the lemmatizer left
it plural (``boas`` -> ``boa``). A copy of that base, bare or with a sense, reaches concepts that
training never saw, which ``PRED`` cannot make.

The rules are spelling rules (:data:`SUFFIXES`) and need no word list, so a parser applies them
to any word. Where a verb's ``e`` went with the suffix it is restored as Porter's stemmer does
(step 1b: after ``at``, ``bl``, ``iz``, and a single consonant closing a one-syllable stem; here
also after ``c``, ``v``, ``u``, ``ns`` and a vowel with ``s``: ``danced``, ``moved``,
``continued``, ``sensible``, ``pleased``), and a doubled final consonant is undoubled
(``stopped``, ``bigger``). A wrong guess costs nothing: the oracle uses ``COPY_STEM`` only where it
gives the gold concept, so the model learns where to trust it.

A word with a negative prefix has its own copy, ``COPY_POSITIVE``: AMR writes ``impossible`` as
``possible-01 :polarity -`` and ``unfortunately`` as ``fortunate :polarity -``, so
:func:`positive_base` takes the prefix off (and the ``-ly`` of an adverb), or the suffix ``-less``
(``carelessly`` -> ``care-04``). It is a second copy,
not a suffix rule of ``COPY_STEM``, since the same spelling is often no prefix at all
(``discussed`` is ``discuss``, not ``cuss``); the oracle takes whichever gives the gold concept.
"""

from __future__ import annotations

import re
from functools import lru_cache

_VOWELS = "aeiou"
_SHORT_CLOSED = re.compile(r"^[^aeiou]*[aeiou][^aeiouwxy]$")  # one syllable ending vowel + consonant: "hop", "lik", "tir"
_E_AFTER = ("at", "bl", "iz", "us", "as", "is", "os", "ns", "c", "v", "u")
_RESTORE_E = "+e"
_RESTORE_E_ONLY = "+e, no undoubling"  # an agent noun's verb keeps its double letters: error -> err, mirror is no verb

NEGATIVE_PREFIXES = ("un", "in", "im", "il", "ir", "dis", "non")
NEGATIVE_SUFFIXES = ("lessly", "lessness", "less")  # careless(ly): care-04 :polarity -
SUFFIXES: tuple[tuple[str, str], ...] = (  # suffix -> what replaces it; longest first, the first that fits wins
    ("ically", "ic"),
    ("iness", "y"),
    ("ably", "able"),
    ("ibly", "ible"),
    ("ness", ""),
    ("ence", "ent"),
    ("ance", "ant"),
    ("able", _RESTORE_E),
    ("ible", _RESTORE_E),
    ("some", ""),
    ("ily", "y"),
    ("ied", "y"),
    ("ier", "y"),
    ("ive", ""),
    ("ly", ""),
    ("ing", _RESTORE_E),  # a participle the lemmatizer kept as an adjective or noun: boiling -> boil-01, making -> make
    ("ed", _RESTORE_E),
    ("er", _RESTORE_E),
    ("or", _RESTORE_E_ONLY),  # agent and result nouns: actor -> act, creator -> create, error -> err, survivor -> survive
    ("s", ""),  # a plural the lemmatizer missed; not after s, u or i (glass, thus, this)
)


@lru_cache(maxsize=65536)
def derived_base(word: str) -> str | None:
    """The base of *word* (a lowercased lemma), or ``None`` when no suffix fits or the base would be under 3 letters."""
    if not word.isalpha():
        return None
    for suffix, replacement in SUFFIXES:
        if word.endswith(suffix) and not (suffix == "s" and word.endswith(("ss", "us", "is"))):
            stem = word[: -len(suffix)]
            base = _restore_e(stem, undouble=replacement == _RESTORE_E) if replacement.startswith(_RESTORE_E) else stem + replacement
            return base if len(stem) >= 3 else None
    return None


def _restore_e(stem: str, undouble: bool = True) -> str:
    """A verb whose ``e`` or doubled consonant the suffix took: ``isolat`` -> ``isolate``, ``stopp`` -> ``stop``, ``exhaust`` stays."""
    if undouble and len(stem) >= 2 and stem[-1] == stem[-2] and stem[-1] not in _VOWELS + "lsz":
        return stem[:-1]
    if stem.endswith(_E_AFTER) or _SHORT_CLOSED.match(stem):
        return stem + "e"
    return stem


IRREGULAR_DEGREES = {"better": "more", "worse": "more", "further": "more", "farther": "more", "best": "most", "worst": "most", "furthest": "most"}


def degree(word: str, lemma: str) -> str | None:
    """``more`` for a comparative, ``most`` for a superlative, from the word (lowercased) and its lemma.

    AMR writes ``bigger`` as ``big`` with ``:degree more`` (or ``have-degree-91 ... :ARG3 more``),
    so a comparative also allows ``PRED:more``, whatever lemma training saw ``more`` with. The
    word must be its lemma with ``-er``/``-est`` (``larger``, ``bigger``, ``happier``); a word the
    lemmatizer left alone (``teacher``) is not one.
    """
    if word in IRREGULAR_DEGREES:
        return IRREGULAR_DEGREES[word]
    if word == lemma:
        return None
    for suffix, concept in (("er", "more"), ("est", "most")):
        stem = word.removesuffix(suffix)
        if stem != word and lemma in (stem, stem + "e", stem[:-1] if stem[-2:-1] == stem[-1:] else None, stem[:-1] + "y" if stem.endswith("i") else None):
            return concept
    return None


def negated_stem(word: str) -> str | None:
    """*word* without a negative prefix (``unhappy`` -> ``happy``; at least 4 letters remain) or suffix
    (``carelessly`` -> ``care``, ``useless`` -> ``use``; at least 3 remain); else ``None``.
    """
    prefixed = (word[len(prefix) :] for prefix in NEGATIVE_PREFIXES if word.startswith(prefix) and len(word) > len(prefix) + 3)
    suffixed = (word[: -len(suffix)] for suffix in NEGATIVE_SUFFIXES if word.endswith(suffix) and len(word) >= len(suffix) + 3)
    return next(prefixed, None) or next(suffixed, None)


@lru_cache(maxsize=65536)
def positive_base(word: str) -> str | None:
    """What a negated word (a lowercased lemma) negates: ``impossible`` -> ``possible``, ``unfortunately`` -> ``fortunate``,
    ``carelessly`` -> ``care``.
    """
    rest = negated_stem(word) if word.isalpha() else None
    if rest is None:
        return None
    return derived_base(rest) if rest.endswith("ly") else rest
