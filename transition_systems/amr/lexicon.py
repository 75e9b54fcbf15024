"""What words evoke which AMR concepts: USC/ISI's public AMR dictionaries, and cue words for abstract concepts.

The dictionaries are data read from a configured folder (the grammar's ``dictionaries``; with
``../shared/data`` that is ``DATA_ROOT/amr-dictionaries``), found by name, any version:

- ``verbalization-list-*.txt``: ``VERBALIZE teacher TO person :ARG0-of teach-01``: a word that
  stands for one or more concepts (all of ``VERBALIZE``, ``MAYBE-VERBALIZE`` and
  ``DO-NOT-VERBALIZE`` lines: the last says how AMR does *not* annotate the word, which still ties
  the word to its concepts when an annotator did);
- ``morph-verbalization-*.txt``: ``::DERIV-VERB "conquer" ::DERIV-NOUN "conquest"
  ::DERIV-NOUN-ACTOR "conqueror"``: nouns and actor nouns that AMR writes as their verb's frame;

- ``have-rel-role-91-roles-*.txt`` / ``have-org-role-91-roles-*.txt``: ``USE-HAVE-REL-ROLE-91-ARG2
  friend``: the role words a ``have-rel-role-91`` / ``have-org-role-91`` takes as ``:ARG2``;
- ``propbank-amr-frames-*.txt``: ``describe-01  ARG0: describer ...``: the PropBank frames AMR uses;
  each verb's first sense is what a nominalization no list gives is copied as
  (:func:`derived_frame`: *supplementation* -> ``supplement-01``, *signaling* -> ``signal-07``).

A word's *frame* (what the ``COPY_FRAME`` action makes) is its ``VERBALIZE`` line's frame
(``afraid`` -> ``fear-01``), else the role frame it is a role word of (``father`` ->
``have-rel-role-91``), else its derivation's verb with sense 01 (``digestion`` -> ``digest-01``).

A file whose lines are not in its format (a web page saved under a dictionary's name, say) is
reported in one warning, naming the file and line, and not used. No folder, or an empty one,
gives an empty lexicon: the aligner then uses its own rules alone.

The cue words (:data:`CUES`) are the usual English realisations of AMR's abstract and modal
concepts, as AMR's guidelines annotate them (``because`` -> ``cause-01``, ``can`` ->
``possible-01``, ``but`` -> ``contrast-01``). The adjectives of place (:data:`DEMONYMS`: about a
hundred countries and three continents) give the entity AMR writes for them (``Turkish`` ->
``(country :name (name :op1 "Turkey"))``), which no word of the sentence spells. Both are built in:
parsing uses them, so they cannot depend on a folder of dictionaries.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

logger = logging.getLogger(__name__)

_WORD = r"[^\s\"]+"
FORMATS = {
    "verbalization-list": re.compile(rf"^(?:MAYBE-|DO-NOT-)?VERBALIZE ({_WORD}) TO (.+)$"),
    "morph-verbalization": re.compile(r'^(?:::DERIV-[A-Z-]+ "[^"]+"\s*)+$'),
    "have-rel-role-91-roles": re.compile(rf"^(?:MAYBE-)?USE-HAVE-REL-ROLE-91-ARG2 ({_WORD})(?:\s+:standard ({_WORD}))?"),
    "have-org-role-91-roles": re.compile(rf"^(?:MAYBE-)?USE-HAVE-ORG-ROLE-91-ARG2 ({_WORD})(?:\s+:standard ({_WORD}))?"),
    "propbank-amr-frames": re.compile(r"^([a-z][a-z-]*)-(\d\d+)(?:\s|$)"),  # a frame's arguments may be missing; rare senses have 3 digits
}
# a nominalization's ending, and what its verb ends in instead, longest first: supplement-ation, phosphoryl-ation/-ate,
# inhibit-ion, secret-ion/-e, treat-ment, signal-ing
NOMINAL_ENDINGS = (
    ("isation", "ise"), ("ization", "ize"), ("ation", "ate"), ("ation", ""), ("ation", "e"), ("ition", "ite"), ("ion", "e"), ("ion", ""),
    ("ment", ""), ("ance", "e"), ("ance", ""), ("ence", "e"), ("ence", ""), ("ing", "e"), ("ing", ""), ("al", "e"), ("al", ""),
)  # fmt: skip
DERIVATION = re.compile(r'::DERIV-([A-Z-]+) "([^"]+)"')

CUES: dict[str, frozenset[str]] = {
    concept: frozenset(words.split())
    for concept, words in {
        "cause-01": "because since so why therefore thus hence reason cause due consequently as for",
        "possible-01": "can could ca may might able unable possible possibly impossible maybe perhaps capable",
        "obligate-01": "must have has had need needs should ought necessary got",
        "recommend-01": "should ought recommend advise better",
        "permit-01": "may let allow allowed permit",
        "likely-01": "likely probably probable",
        "contrast-01": "but yet however although though while whereas still nevertheless instead",
        "have-concession-91": "although though despite even yet still nevertheless however anyway",
        "have-condition-91": "if unless provided whenever otherwise",
        "and": "and , ; also both plus then as well",
        "or": "or nor either neither whether",
        "amr-unknown": "what who whom whose which where when why how whether if",
        "thing": "what something anything everything nothing thing things which that",
        "person": "who whom someone somebody anyone anybody everyone everybody nobody one people those",
        "somebody": "someone somebody anybody anyone nobody one",
        "truth-value": "whether if",
        "include-91": "of among including include includes out",
        "be-located-at-91": "here there where in at on is are was were be located",
        "age-01": "old age aged young",
        "before": "until till before ago earlier previously",
        "after": "after later since afterwards then",
        "resemble-01": "like as similar alike resemble",
        "instead-of-91": "instead rather",
        "have-purpose-91": "for to so purpose",
        "rate-entity-91": "per a an every each",
        "say-01": "say says said tell told add added answer answered reply replied ask asked cry cried exclaim "
        "exclaimed shout shouted continue continued murmur murmured whisper whispered declare declared",
        "dollar": "$ dollars",
        "percentage-entity": "% percent",
        "euro": "€ euros",
        "pound": "£ pounds",
        "mean-01": "mean means meant",
        "figure": "fig fig. figs figs. figure figures",  # scientific prose's abbreviations: *Fig. 3*, *e.g.*, *vs.*
        "exemplify-01": "e.g. eg",
        "versus": "vs vs. versus",
        "approximately": "approx approx. ~ about around roughly nearly",
        "et-cetera": "etc etc.",
        "again": "again more once",
        "have-frequency-91": "times time often frequently once twice",
        "relative-position": "from away ahead behind near far beside above below inside outside opposite",
        "have-polarity-91": "whether if",
        "same-01": "same",
        "other": "else other another",
        "multi-sentence": ". ; : ! ?",
        "-": "not n't no never none nothing nobody nowhere neither nor without cannot non",
    }.items()
}
# The frame a cue word stands for when it cues only one concept and that is a frame (``old`` -> ``age-01``, ``must`` -> ``obligate-01``):
# frames the dictionaries do not give, which ``COPY_FRAME`` makes too.
CUE_FRAMES: dict[str, str] = {
    word: next(iter(concepts))
    for word in sorted({word for words in CUES.values() for word in words})
    if len(concepts := {concept for concept, words in CUES.items() if word in words}) == 1 and re.search(r"-\d\d$", next(iter(concepts)))
}
# Punctuation that stands for a concept when no word does: a quotation for ``say-01``, a question mark for ``amr-unknown``.
PUNCTUATION = {"say-01": (":", '"'), "amr-unknown": ("?",)}
# Adjectives of place, which AMR writes as the place's entity: ``Turkish`` -> ``(country :name (name :op1 "Turkey"))``.
# ``DEMONYM`` makes them; the name is one no word of the sentence spells, so ``ENTITY`` cannot.
_COUNTRIES = """
afghan Afghanistan|albanian Albania|algerian Algeria|american United States|argentine Argentina|argentinian Argentina|
armenian Armenia|australian Australia|austrian Austria|azerbaijani Azerbaijan|bangladeshi Bangladesh|belarusian Belarus|
belgian Belgium|bolivian Bolivia|bosnian Bosnia|brazilian Brazil|british Britain|bulgarian Bulgaria|cambodian Cambodia|
canadian Canada|chilean Chile|chinese China|colombian Colombia|croatian Croatia|cuban Cuba|czech Czech Republic|
danish Denmark|dutch Netherlands|ecuadorian Ecuador|egyptian Egypt|english England|estonian Estonia|ethiopian Ethiopia|
filipino Philippines|finnish Finland|french France|georgian Georgia|german Germany|ghanaian Ghana|greek Greece|
hungarian Hungary|icelandic Iceland|indian India|indonesian Indonesia|iranian Iran|iraqi Iraq|irish Ireland|
israeli Israel|italian Italy|jamaican Jamaica|japanese Japan|jordanian Jordan|kazakh Kazakhstan|kenyan Kenya|
kuwaiti Kuwait|latvian Latvia|lebanese Lebanon|libyan Libya|lithuanian Lithuania|malaysian Malaysia|mexican Mexico|
moroccan Morocco|nepalese Nepal|nigerian Nigeria|norwegian Norway|pakistani Pakistan|palestinian Palestine|
peruvian Peru|polish Poland|portuguese Portugal|qatari Qatar|romanian Romania|russian Russia|rwandan Rwanda|
saudi Saudi Arabia|scottish Scotland|senegalese Senegal|serbian Serbia|singaporean Singapore|slovak Slovakia|
slovenian Slovenia|somali Somalia|spanish Spain|sudanese Sudan|swedish Sweden|swiss Switzerland|syrian Syria|
taiwanese Taiwan|thai Thailand|tibetan Tibet|tunisian Tunisia|turkish Turkey|ugandan Uganda|ukrainian Ukraine|
uzbek Uzbekistan|venezuelan Venezuela|vietnamese Vietnam|welsh Wales|yemeni Yemen|zimbabwean Zimbabwe
"""
DEMONYMS: dict[str, tuple[str, str]] = {
    **{word: ("country", name) for word, _, name in (entry.strip().partition(" ") for entry in _COUNTRIES.split("|"))},
    **{word: ("continent", name) for word, name in (("african", "Africa"), ("asian", "Asia"), ("european", "Europe"))},
}


def demonym(word: str) -> tuple[str, str] | None:
    """The entity type and name an adjective of place stands for (``Turkish``, ``Americans``), if *word* is one."""
    word = word.lower()
    return DEMONYMS.get(word) or DEMONYMS.get(word.removesuffix("s"))


@dataclass(frozen=True)
class Lexicon:
    """Word -> concept knowledge the aligner reads; empty without dictionaries (see the module docstring)."""

    concepts: Mapping[str, frozenset[str]] = field(default_factory=dict)  # word -> concepts it verbalizes (no senses)
    verbs: Mapping[str, frozenset[str]] = field(default_factory=dict)  # noun / actor noun -> its verbs
    role_words: frozenset[str] = frozenset()  # words a have-rel-role-91 / have-org-role-91 takes as :ARG2
    heads: frozenset[str] = frozenset()  # concepts a verbalization puts over a frame: person, thing, ship (``:ARG0-of``)
    frames: Mapping[str, str] = field(default_factory=lambda: dict(CUE_FRAMES))  # word -> the frame AMR writes it as: digestion -> digest-01
    verb_frames: Mapping[str, str] = field(default_factory=dict)  # PropBank's verbs: lemma -> its first frame (signal -> signal-07)
    propbank_frames: frozenset[str] = frozenset()  # every frame AMR uses with a two-digit sense (signal-07, give-up-07, possible-01)
    digest: str = ""  # SHA-256 of the files used, for the record

    def evokes(self, word: str, base: str) -> bool:
        """Whether *word* (a lowercased token or lemma) stands for the concept *base* (no sense) by the dictionaries."""
        return base in self.evoked(word)

    def evoked(self, word: str) -> frozenset[str]:
        """The concepts (no senses) the dictionaries tie *word* to: what it verbalizes, and the verbs it derives from."""
        return self.concepts.get(word, frozenset()) | self.verbs.get(word, frozenset())

    @classmethod
    def load(cls, folder: str | Path | None) -> Lexicon:
        """The dictionaries in *folder*, read once per folder; each damaged file is reported once and left out."""
        return _load(None if folder is None else str(folder))


_SENSE = re.compile(r"-\d\d$")


@lru_cache(maxsize=8)
def _load(folder: str | None) -> Lexicon:
    if folder is None:
        return Lexicon()
    if not Path(folder).is_dir():
        logger.warning("AMR dictionaries: no folder %s; aligning without them", folder)
        return Lexicon()
    concepts: dict[str, set[str]] = {}
    verbs: dict[str, set[str]] = {}
    roles: set[str] = set()
    heads: set[str] = set()
    verb_frames: dict[str, str] = {}
    propbank_frames: set[str] = set()
    verbalized: dict[str, str] = {}
    role_frames: dict[str, str] = {}
    digest = hashlib.sha256()
    for kind, pattern in FORMATS.items():
        for path in sorted(Path(folder).glob(f"{kind}-*.txt")):
            lines = _read(path, pattern)
            if lines is None:
                continue
            digest.update(path.read_bytes())
            for match in lines:
                if kind == "verbalization-list":
                    parts = match[2].split("#")[0].split()
                    evoked = [_SENSE.sub("", part) for part in parts if not part.startswith(":") and part != "-"]
                    concepts.setdefault(match[1].lower(), set()).update(evoked)
                    if len(parts) > 1 and re.fullmatch(r":ARG\d-of", parts[1]):
                        heads.add(evoked[0])
                    frame = next((part for part in parts if _SENSE.search(part)), None)
                    if match[0].startswith("VERBALIZE") and frame and match[1].lower() not in verbalized:
                        verbalized[match[1].lower()] = frame
                elif kind == "morph-verbalization":
                    _add_derivations(verbs, DERIVATION.findall(match[0]))
                elif kind == "propbank-amr-frames" and len(match[2]) == 2:  # copies make two-digit senses only
                    verb_frames[match[1]] = min(verb_frames.get(match[1], f"{match[1]}-{match[2]}"), f"{match[1]}-{match[2]}")
                    propbank_frames.add(f"{match[1]}-{match[2]}")
                else:
                    roles.update(word.lower() for word in match.groups() if word)
                    role_frames.setdefault(match[1].lower(), kind.removesuffix("-roles"))
    # a word's frame: a VERBALIZE line's (with its sense), else the role frame whose :ARG2 it is
    # (father -> have-rel-role-91, not the verb "to father"), else its only derivation's verb with sense 01, else its cue's
    frames = dict(CUE_FRAMES)
    frames.update({word: f"{next(iter(verb))}-01" for word, verb in sorted(verbs.items()) if len(verb) == 1})
    frames.update(role_frames)
    frames.update(verbalized)
    frozen = {word: frozenset(evoked) for word, evoked in concepts.items()}
    derivations = {word: frozenset(v) for word, v in verbs.items()}
    return Lexicon(frozen, derivations, frozenset(roles), frozenset(heads), frames, verb_frames, frozenset(propbank_frames), digest.hexdigest())


def derived_frame(word: str, verb_frames: Mapping[str, str]) -> str | None:
    """The frame of the verb *word* is a nominalization of (:data:`NOMINAL_ENDINGS`), where *verb_frames* (PropBank's
    first frame of each verb) has one and *word* is no verb itself: *supplementation* -> ``supplement-01``.
    """
    if word in verb_frames:
        return None
    for ending, verb_ending in NOMINAL_ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= 3 and (frame := verb_frames.get(word[: -len(ending)] + verb_ending)):
            return frame
    return None


def _read(path: Path, pattern: re.Pattern[str]) -> list[re.Match[str]] | None:
    """The matches of *path*'s data lines, or ``None`` (with a warning naming the line) if one is not in the format."""
    matches = []
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        logger.warning("AMR dictionaries: cannot read %s (%s); not used", path, error)
        return None
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        match = pattern.match(line)
        if match is None:
            logger.warning("AMR dictionaries: %s:%d is not in the file's format (%.40r); the file is not used", path, number, line)
            return None
        matches.append(match)
    return matches


def _add_derivations(verbs: dict[str, set[str]], pairs: Iterable[tuple[str, str]]) -> None:
    """One morph-verbalization line: each noun and actor noun maps to the line's verb."""
    pairs = list(pairs)
    for verb in (word for kind, word in pairs if kind == "VERB"):
        for kind, word in pairs:
            if kind != "VERB":
                verbs.setdefault(word.lower(), set()).add(verb.lower())
