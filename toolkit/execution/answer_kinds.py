"""What kind of answer a question asks for, read off its words, and whether an answer is of that kind.

A query that answers is not yet a reading of the question: "how many rivers are in texas?" is not
answered by a river, nor "what is the capital of texas?" by a population. Execution-guided decoding
(:meth:`toolkit.decoding.BeamSearch.guide`) passes over a hypothesis whose answer is not of the kind
the question asks for, as it passes over one that fails to run; where none is left, the predictor
says why it cannot answer instead of guessing (``answer_error``). The kinds of an answer are the
executor's (:attr:`~toolkit.execution.Denotation.kinds`: Geobase's answers are typed terms).

:class:`AnswerKinds` is the registered base; ``"geo_english"`` (:class:`GeoEnglish`) reads English
questions about Geobase. Its rules were written from English question words and Geobase's kinds of
answer, not from any data set's questions; the first that applies decides:

=============================================  =================================================
the question                                   asks for
=============================================  =================================================
"how many ...", "how much ...", "count ..."    a number
"how high / tall / long / big / large / ..."   a number (``HOW_ADJECTIVES``)
"who ...", "whom ..."                          a person: Geobase holds none
"when ...", "why ..."                          a date or time, a reason: Geobase holds neither
"where ..."                                    a place: a state, city, country, river, lake,
                                               mountain or point, never a number or a name
"what / which ... NOUN", "name / list / give   the kind of the first noun of the question's head
me / show me / tell me about ... NOUN"         (below), after words that only qualify it ("is",
                                               "the", "all", "major", superlatives, "50", a
                                               name's possessive: "what is texas's capital");
                                               of nouns side by side, the last ("state capital":
                                               a city); "name of" is passed over, "number of" is
                                               a number. The scan stops at any other word
                                               ("of", "in", a verb, a name): then nothing is
                                               expected
anything else                                  nothing: every answer fits
=============================================  =================================================

The nouns (``NOUNS``): state; city, town, capital (a city); river; lake; mountain, peak (a mountain or
a point); point (a point or a mountain); country, nation; abbreviation, code (a name); population,
area, size, length, elevation, height, density, number, total, people, inhabitants... (a number);
and nouns of what Geobase does not hold: president, governor, mayor (a person), year, date, time (a
date or time), weather, temperature, climate (the weather), language, currency, and the places and
things a country holds besides Geobase's kinds (buildings, bridges, roads, airports, parks, forests,
islands, counties, universities, museums, teams...). A question that asks for what Geobase does not
hold fits no answer at all ("who is the president?"), "how many" of them included ("how many
national parks are in utah?").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from toolkit.execution.executor import Denotation
from toolkit.registrable import Registrable

PLACES = frozenset({"state", "city", "country", "river", "lake", "mountain", "place"})


@dataclass(frozen=True)
class Expected:
    """The answer kinds a question's answer may have (``kinds``; none: it asks for what Geobase does not hold),
    and what it asks for in words (``wanted``: "a number", "a person").
    """

    kinds: frozenset[str]
    wanted: str

    def problem(self, denotation: Denotation) -> str | None:
        """Why *denotation* is not an answer to the question (plain words), or ``None`` where it may be one.

        No answer is one where the question asks for what Geobase does not hold, not even an empty one;
        otherwise an answer of a kind not in ``kinds`` is not, and an empty answer, or one whose kinds
        the executor does not give, may be.
        """
        if not self.kinds:
            return f"the question asks for {self.wanted}, and Geobase holds nothing of that kind"
        if not denotation.kinds or set(denotation.kinds) <= self.kinds:
            return None
        return f"the question asks for {self.wanted}, and no reading of it gives one"


class AnswerKinds(Registrable):
    """What kind of answer a question asks for (see the module doc); ``None``: it cannot tell, and any answer fits."""

    default_implementation: ClassVar[str | None] = "geo_english"

    def expected(self, question: str) -> Expected | None:
        raise NotImplementedError

    def problem(self, question: str, denotation: Denotation) -> str | None:
        """Why *denotation* does not answer *question* (its kind is not the one asked for), or ``None``."""
        expected = self.expected(question)
        return None if expected is None else expected.problem(denotation)


NUMBER = Expected(frozenset({"number"}), "a number")
HIGHEST = Expected(frozenset({"number", "place", "mountain"}), "a height or the point at that height")  # "the highest elevation in ..."
HEIGHTS = frozenset({"elevation", "elevations", "height", "heights", "altitude", "altitudes"})
PLACE = Expected(PLACES, "a place")
PERSON = Expected(frozenset(), "a person")
TIME = Expected(frozenset(), "a date or time")
REASON = Expected(frozenset(), "a reason")
WEATHER = Expected(frozenset(), "the weather")


def _nouns() -> dict[str, Expected]:
    kinds = [
        (("state", "states"), Expected(frozenset({"state"}), "a state")),
        (("city", "cities", "town", "towns", "capital", "capitals", "capitol", "capitols"), Expected(frozenset({"city"}), "a city")),
        (("river", "rivers"), Expected(frozenset({"river"}), "a river")),
        (("lake", "lakes"), Expected(frozenset({"lake"}), "a lake")),
        (("mountain", "mountains", "peak", "peaks"), Expected(frozenset({"mountain", "place"}), "a mountain")),
        (("point", "points"), Expected(frozenset({"place", "mountain"}), "a high or low point")),
        (("country", "countries", "nation", "nations"), Expected(frozenset({"country"}), "a country")),
        (("abbreviation", "abbreviations", "abbrev", "code", "codes"), Expected(frozenset({"name"}), "an abbreviation")),
        (
            (
                "population", "populations", "area", "areas", "size", "sizes", "length", "lengths", "elevation", "elevations",
                "density", "densities", "number", "numbers", "count", "total",
                "sum", "people", "inhabitants", "residents", "citizens", "square", "miles", "kilometers", "km", "feet", "meters",
            ),
            NUMBER,
        ),
        (("elevation", "elevations", "height", "heights", "altitude", "altitudes"), NUMBER),
        (("president", "presidents", "governor", "governors", "mayor", "mayors", "senator", "senators", "leader", "leaders"), PERSON),
        (("year", "years", "date", "dates", "time", "century"), TIME),
        (("weather", "temperature", "temperatures", "climate", "rainfall"), WEATHER),
        (("language", "languages"), Expected(frozenset(), "a language")),
        (("currency",), Expected(frozenset(), "a currency")),
        (  # what a country holds besides Geobase's kinds: the places people build, run or visit, and the land's other features
            (
                "building", "buildings", "skyscraper", "skyscrapers", "tower", "towers", "bridge", "bridges", "dam", "dams",
                "road", "roads", "highway", "highways", "interstate", "interstates", "street", "streets", "railroad", "railroads",
                "airport", "airports", "port", "ports", "park", "parks", "forest", "forests", "desert", "deserts", "island", "islands",
                "beach", "beaches", "volcano", "volcanoes", "canyon", "canyons", "waterfall", "waterfalls", "glacier", "glaciers",
                "ocean", "oceans", "sea", "seas", "bay", "bays", "county", "counties", "university", "universities", "college",
                "colleges", "school", "schools", "museum", "museums", "stadium", "stadiums", "hospital", "hospitals", "restaurant",
                "restaurants", "company", "companies", "team", "teams", "sport", "sports", "zoo", "zoos", "monument", "monuments",
            ),
            Expected(frozenset(), "a kind of place or thing that Geobase does not hold"),
        ),
    ]  # fmt: skip
    return {word: expected for words, expected in kinds for word in words}


@AnswerKinds.register("geo_english")
class GeoEnglish(AnswerKinds):
    """English questions about Geobase: the rules of the module doc. Registered as ``"geo_english"``."""

    NOUNS: ClassVar[dict[str, Expected]] = _nouns()
    HOW_ADJECTIVES: ClassVar[frozenset[str]] = frozenset(
        "high tall long big large deep wide far small short low populous populated dense densely crowded extensive vast huge".split()
    )
    # Words that only qualify the head noun, between the question word and it.
    QUALIFIERS: ClassVar[frozenset[str]] = frozenset(
        """is are was were be 's does do did the a an all some any each every one ones other different same
        major main big bigger large larger small smaller long longer short shorter high higher low lower tall taller
        great greater most least more less fewest many few combined entire whole neighboring neighbouring bordering
        adjacent adjoining surrounding nearby populous populated dense american us usa u s continental average mean
        typical annual yearly current official postal exact approximate estimated overall national public famous
        historic professional international local""".split()
    )
    NUMERALS: ClassVar[frozenset[str]] = frozenset("first second third two three four five ten fifty".split())
    WH: ClassVar[frozenset[str]] = frozenset({"what", "which", "where", "how", "who", "whom", "when", "why"})
    IMPERATIVES: ClassVar[frozenset[str]] = frozenset({"name", "list", "give", "show", "tell", "find", "return", "enumerate"})
    POLITE: ClassVar[frozenset[str]] = frozenset({"please", "can", "could", "would", "will", "you", "i", "want", "to", "know", "like"})

    def expected(self, question: str) -> Expected | None:
        words = self.words(question)
        start = 0
        while start < len(words) and words[start] in self.POLITE:
            start += 1
        if start < len(words) and words[start] == "count":
            return NUMBER
        if start < len(words) and words[start] in self.IMPERATIVES:
            after = start + 1
            while after < len(words) and words[after] in ("me", "us", "about"):
                after += 1
            if not (after < len(words) and words[after] in self.WH):  # "tell me what ..." asks what the "what" asks
                return self.head(words, after, determiner=False)
        return next((self.asked(words, i) for i, word in enumerate(words) if word in self.WH), None)

    def asked(self, words: list[str], i: int) -> Expected | None:
        """What the question word at *i* asks for."""
        word, following = words[i], words[i + 1] if i + 1 < len(words) else ""
        if word == "how":
            if following in ("many", "much"):  # a number, unless of what Geobase does not hold ("how many national parks")
                counted = self.head(words, i + 2, determiner=False)
                return counted if counted is not None and not counted.kinds else NUMBER
            return NUMBER if following in self.HOW_ADJECTIVES else None
        if word in ("who", "whom"):
            return PERSON
        if word == "when":
            return TIME
        if word == "why":
            return REASON
        if word == "where":
            return PLACE
        return self.head(words, i + 1, determiner=True)

    def head(self, words: list[str], start: int, determiner: bool) -> Expected | None:
        """The kind of the head noun from *start* (see the module doc); *determiner*: right after "what"/"which",
        whose possessive noun is what is asked ("which state's capital is austin?": a state).
        """
        i, superlative = start, False
        while i < len(words):
            word, following = words[i], words[i + 1] if i + 1 < len(words) else ""
            if word in self.NOUNS or (word, following) == ("united", "states"):
                possessive = following == "'s" or (self.plural(word) and following in self.NOUNS)  # "what states capital is dover"
                if possessive and not (determiner and i == start):
                    i += 2  # a possessor: "the mississippi river's length"
                    continue
                if possessive:
                    return self.NOUNS[word]
                if superlative and word in HEIGHTS:
                    return HIGHEST
                return self.compound(words, i)
            if following == "'s" or (word in ("name", "names", "kind", "kinds", "type", "types") and following == "of"):
                i += 2  # a name's possessive ("what is texas's capital"), or "the name of"
            elif re.fullmatch(r"\w{2,}(est|most)", word) or word in ("most", "least"):
                i, superlative = i + 1, True
            elif word in self.QUALIFIERS or word in self.NUMERALS or word.isdigit():
                i += 1
            else:
                return None
        return None

    def compound(self, words: list[str], i: int) -> Expected:
        """The last of the nouns side by side from *i* ("state capital": a city)."""
        found = self.NOUNS.get(words[i], Expected(frozenset({"country"}), "a country"))
        i += 2 if words[i] == "united" else 1
        while i < len(words) and words[i] in self.NOUNS:
            found = self.NOUNS[words[i]]
            i += 1
        return found

    def plural(self, word: str) -> bool:
        """Whether *word* is the plural of a noun of ``NOUNS`` ("states", "cities")."""
        return word.endswith("s") and (word[:-1] in self.NOUNS or word[:-3] + "y" in self.NOUNS)

    @staticmethod
    def words(question: str) -> list[str]:
        """*question* as lower-case words, contractions spelled out ("what's": "what is") and possessives apart ("texas 's")."""
        text = question.lower().replace("\u2019", "'")
        text = re.sub(r"\b(what|where|who|how|which|that|there|it)'?s\b", r"\1 is", text)
        text = re.sub(r"(\w)'s\b", r"\1 's", text)
        text = re.sub(r"(\w)s'(?=\s|$|[?.!,])", r"\1s 's", text)
        return re.findall(r"'s|[a-z0-9]+", text)
