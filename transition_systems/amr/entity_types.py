"""Which AMR entity type a named-entity mention's ``NAME`` makes: learned from training graphs.

``AmrTransitionSystem.fit`` counts, for each mention whose span is the span of a gold entity's
name, the entity's type: per name (``B-612`` -> ``planet``) and per kind of mention (``PERSON`` ->
``person``; countries' names, which a list types, count for their names only). A mention then takes its
name's type, else a country's where the name is one (``France``; spaCy says only ``GPE``), else its
kind's, else :data:`~transition_systems.amr.mentions.DEFAULT_ENTITY_TYPES`.
Only the kinds of names make one (those of ``DEFAULT_ENTITY_TYPES``): not ``DATE``, nor ``NORP`` (which
``DEMONYM`` makes), nor numbers (``CARDINAL``: spaCy calls ``B-612`` one).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

from transition_systems.amr.lexicon import DEMONYMS
from transition_systems.amr.mentions import DEFAULT_ENTITY_TYPES

COUNTRIES = frozenset(name for kind, name in DEMONYMS.values() if kind == "country")
PLACE_KINDS = frozenset({"GPE", "LOC", "PROPER"})  # kinds of mention a country's name may come as


def entity_type(kind: str, words: Sequence[str], by_kind: dict[str, str], by_name: dict[str, str]) -> str | None:
    """The type of the entity a *kind* mention of *words* names (see the module docstring); ``None``: no NAME."""
    if kind not in DEFAULT_ENTITY_TYPES:  # a date, a number (CARDINAL, MONEY, ...) or an adjective of place (NORP) is no name
        return None
    name = " ".join(words)
    if name in by_name:
        return by_name[name]
    if name in COUNTRIES and kind in PLACE_KINDS:
        return "country"
    return by_kind.get(kind) or DEFAULT_ENTITY_TYPES.get(kind)


def learn_entity_types(seen: Iterable[tuple[str, Sequence[str], str]]) -> tuple[dict[str, str], dict[str, str]]:
    """The most frequent type per kind and per name among *seen* ``(kind, words, type)`` (ties: the first seen).
    A country's name counts for its name only: the country list types it, and a kind's type is for the others
    (spaCy's ``GPE`` is a country's and a city's label alike; learned from countries, it would make every city one).
    """
    kinds: dict[str, Counter[str]] = defaultdict(Counter)
    names: dict[str, Counter[str]] = defaultdict(Counter)
    for kind, words, type_ in seen:
        if kind not in DEFAULT_ENTITY_TYPES:
            continue
        name = " ".join(words)
        names[name][type_] += 1
        if not (name in COUNTRIES and type_ == "country"):
            kinds[kind][type_] += 1
    most = {kind: counts.most_common(1)[0][0] for kind, counts in sorted(kinds.items())}
    return most, {name: counts.most_common(1)[0][0] for name, counts in sorted(names.items())}
