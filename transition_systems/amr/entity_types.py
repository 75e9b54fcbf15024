"""Which AMR entity type a named-entity mention's ``NAME`` makes: a mapping from NER labels to AMR's types, refined by training.

AMR types a name by what it names, from a fixed inventory (:data:`NE_TYPES`, the AMR guidelines'
list: ``company``, ``university``, ``city``, ``airport``, ``spaceship``, ...); NER labels name
coarser kinds (spaCy's ``ORG`` is a company, a university and a ministry alike). A mention's type is,
first to last:

1. the type training gave this very name (``B-612`` -> ``planet`` in The Little Prince);
2. a gazetteer's: countries (``France``; spaCy says only ``GPE``), U.S. states, continents;
3. the type a word of the name says (:data:`CUES`, after the guidelines: ``Stanford University`` ->
   ``university``, ``Heathrow Airport`` -> ``airport``, ``Ministry of Health`` ->
   ``government-organization``, ``Mississippi River`` -> ``river``), its last word
   (:data:`HEAD_CUES`: ``The Washington Post`` -> ``newspaper``) or a run of its words
   (:data:`PHRASE_CUES`: ``European Central Bank`` -> ``government-organization``, not a bank's
   ``company``); a river of :data:`RIVERS` whatever NER called it;
4. the kind's type (:data:`KINDS`): its default, or what training refined it to. Training refines a
   kind only to a type the kind can name (``ORG`` may become ``company``, never ``world-region``),
   and only where at least :data:`MIN_NAMES` different names of the kind, none typed by 1-3, agree
   on it in a majority: one name seen often (``Earth``, 15 times a ``LOC`` in The Little Prince) types
   that name, not its kind. An ``ORG`` of one word that no rule types is a ``company`` (AMR's
   commonest type for them: ``Toyota``, ``Siemens``), an acronym (``UNESCO``) an ``organization``.

Only the kinds of names make one (:data:`KINDS`): not ``DATE``, nor ``NORP`` (which ``DEMONYM``
makes), nor numbers (``CARDINAL``: spaCy calls ``B-612`` one).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

from transition_systems.amr.lexicon import DEMONYMS
from transition_systems.amr.mentions import PROPER

MIN_NAMES = 3  # different names of a kind that must agree before training changes the kind's type
TYPED = "TYPE:"  # the kind of a mention that says its AMR type itself (``TYPE:enzyme``: the learned name tagger's)

_ORGANIZATIONS = (
    "organization company government-organization military criminal-organization political-party market-sector school university research-institute team league"
)
_PLACES = "city city-district county state province territory country local-region country-region world-region continent"
_NATURE = "ocean sea lake river gulf bay strait canal peninsula mountain volcano valley canyon island desert forest moon planet star constellation"
_FACILITIES = (
    "facility airport station port tunnel bridge road railway-line building theater museum palace castle hotel worship-place market "
    "sports-facility park zoo amusement-park hospital tower prison"
)
_THINGS = "product vehicle ship aircraft aircraft-type spaceship car-make work-of-art picture music show broadcast-program publication book newspaper magazine journal"
_OTHERS = "person family animal language nationality ethnic-group regional-group religious-group political-movement event incident natural-disaster war conference game festival award law treaty"
_BIO = "molecular-physical-entity small-molecule protein protein-family amino-acid enzyme nucleic-acid pathway gene dna-sequence cell cell-line species taxon disease"
NE_TYPES = frozenset(" ".join((_ORGANIZATIONS, _PLACES, _NATURE, _FACILITIES, _THINGS, _OTHERS, _BIO, "location thing")).split())

# per kind of mention: its type where nothing else says, and the types training may refine the kind to
KINDS: dict[str, tuple[str, frozenset[str]]] = {
    kind: (default, frozenset(types.split()))
    for kind, default, types in (
        ("PERSON", "person", "person family animal"),
        ("ORG", "organization", _ORGANIZATIONS),
        ("GPE", "city", _PLACES),
        ("LOC", "world-region", f"location {_PLACES} {_NATURE}"),
        ("FAC", "facility", _FACILITIES),
        ("PRODUCT", "product", _THINGS),
        ("EVENT", "event", "event incident natural-disaster war conference game festival"),
        ("WORK_OF_ART", "work-of-art", "work-of-art picture music show broadcast-program publication book newspaper magazine journal"),
        ("LANGUAGE", "language", "language"),
        ("LAW", "law", "law treaty"),
        (PROPER, "person", " ".join(sorted(NE_TYPES))),  # the rules' capitalised words: any name
    )
}

# a word of the name that says its type (lowercased; the AMR guidelines' types, and the words news writes for them)
CUES: dict[str, str] = {
    word: type_
    for type_, words in {
        "university": "university college",
        "school": "school academy",
        "research-institute": "institute institution laboratory laboratories lab labs observatory",
        "company": "company corporation corp inc ltd llc plc gmbh ag airlines airways motors press bank group holdings",
        "political-party": "party",
        "government-organization": "ministry department agency commission parliament congress senate government administration bureau court police",
        "military": "army navy military",
        "organization": "organization organisation association union federation foundation society committee council movement fund alliance nations",
        "team": "fc",
        "league": "league",
        "airport": "airport",
        "station": "station",
        "port": "port harbor harbour",
        "tunnel": "tunnel",
        "bridge": "bridge",
        "road": "road street avenue highway boulevard",
        "museum": "museum gallery",
        "hospital": "hospital clinic",
        "hotel": "hotel",
        "palace": "palace",
        "castle": "castle",
        "sports-facility": "stadium arena",
        "park": "park",
        "worship-place": "church cathedral mosque temple synagogue abbey",
        "tower": "tower",
        "theater": "theater theatre",
        "zoo": "zoo",
        "prison": "prison",
        "river": "river",
        "lake": "lake",
        "sea": "sea",
        "ocean": "ocean",
        "mountain": "mountain mountains mount mt",
        "island": "island islands",
        "desert": "desert",
        "valley": "valley",
        "bay": "bay",
        "gulf": "gulf",
        "canal": "canal",
        "peninsula": "peninsula",
        "forest": "forest",
        "volcano": "volcano",
        "strait": "strait",
        "county": "county",
        "province": "province",
        "city-district": "district",
        "war": "war",
        "festival": "festival",
        "conference": "conference summit",
        "game": "olympics games cup championship championships",
        "spaceship": "spacecraft",
    }.items()
    for word in words.split()
}
# words that say a name's type only as its last word (``The Washington Post``, ``the Foreign Office``; not ``Post Office Ltd``)
HEAD_CUES: dict[str, str] = {
    **{word: "newspaper" for word in "times post herald tribune gazette chronicle telegraph observer guardian inquirer courier".split()},
    **{word: "government-organization" for word in "office service authority reserve treasury".split()},
}
# runs of words that say a type over any single cue in them (a central bank is no company, an institute of technology a university)
PHRASE_CUES: dict[tuple[str, ...], str] = {
    ("central", "bank"): "government-organization",
    ("institute", "of", "technology"): "university",
    ("technical", "university"): "university",
    ("polytechnic",): "university",
}
CUE_OVER_KIND = frozenset({"PERSON"})  # kinds a cue does not override: ``Jack London`` stays a person

_MORE_COUNTRIES = """
Andorra|Angola|Bahamas|Bahrain|Barbados|Belize|Benin|Bhutan|Botswana|Brunei|Burkina Faso|Burundi|Cameroon|Cape Verde|
Chad|Congo|Costa Rica|Cyprus|Djibouti|Dominica|Dominican Republic|East Timor|El Salvador|Eritrea|Eswatini|Fiji|Gabon|
Gambia|Grenada|Guatemala|Guinea|Guyana|Haiti|Honduras|Ivory Coast|Kiribati|Kosovo|Kyrgyzstan|Laos|Lesotho|Liberia|
Liechtenstein|Luxembourg|Madagascar|Malawi|Maldives|Mali|Malta|Mauritania|Mauritius|Moldova|Monaco|Mongolia|Montenegro|
Mozambique|Myanmar|Namibia|Nauru|New Zealand|Nicaragua|Niger|North Korea|North Macedonia|Oman|Palau|Panama|
Papua New Guinea|Paraguay|Samoa|San Marino|Seychelles|Sierra Leone|South Africa|South Korea|South Sudan|Sri Lanka|
Suriname|Tajikistan|Tanzania|Togo|Tonga|Trinidad and Tobago|Turkmenistan|Tuvalu|United Arab Emirates|United Kingdom|
United States|Uruguay|Vanuatu|Vatican City|Zambia|America|UK|U.K.|US|U.S.|USA|U.S.A.
"""
_STATES = """
Alabama|Alaska|Arizona|Arkansas|California|Colorado|Connecticut|Delaware|Florida|Hawaii|Idaho|Illinois|Indiana|Iowa|
Kansas|Kentucky|Louisiana|Maine|Maryland|Massachusetts|Michigan|Minnesota|Mississippi|Missouri|Montana|Nebraska|Nevada|
New Hampshire|New Jersey|New Mexico|North Carolina|North Dakota|Ohio|Oklahoma|Oregon|Pennsylvania|Rhode Island|
South Carolina|South Dakota|Tennessee|Texas|Utah|Vermont|Virginia|West Virginia|Wisconsin|Wyoming
"""
COUNTRIES = frozenset(name for kind, name in DEMONYMS.values() if kind == "country") | frozenset(n.strip() for n in _MORE_COUNTRIES.split("|"))
GAZETTEER: dict[str, str] = {
    **{name.strip(): "state" for name in _STATES.split("|")},
    **{name: "country" for name in COUNTRIES},
    **{name: "continent" for name in ("Africa", "Antarctica", "Asia", "Australia", "Europe", "North America", "South America", "Oceania")},
}
GAZETTEER["Australia"] = "country"  # the country, in nearly every sentence that names it
# rivers whose name is no person's, country's or company's: news NER reads them as any kind (``the Danube`` a PERSON)
RIVERS = frozenset(
    "Danube Rhine Thames Seine Ganges Mekong Volga Tigris Euphrates Zambezi Yangtze Rhone Elbe Loire Indus Orinoco Limpopo "
    "Dnieper Oder Vistula Tagus Ebro Brahmaputra Irrawaddy Yenisei Nile Potomac".split()
)
PLACE_KINDS = frozenset({"GPE", "LOC", PROPER})  # kinds of mention a gazetteer's place may come as (spaCy calls some countries LOC)


def entity_type(kind: str, words: Sequence[str], by_kind: dict[str, str], by_name: dict[str, str]) -> str | None:
    """The type of the entity a *kind* mention of *words* names (see the module docstring); ``None``: no NAME."""
    if kind.startswith(TYPED):  # a tagger learned from the domain's graphs read it: the name's training type and the rules come first
        return by_name.get(" ".join(words)) or rule_type(PROPER, words) or kind[len(TYPED) :]
    if kind not in KINDS:  # a date, a number (CARDINAL, MONEY, ...) or an adjective of place (NORP) is no name
        return None
    name = " ".join(words)
    if name in by_name:
        return by_name[name]
    refined = by_kind.get(kind)
    if refined not in KINDS[kind][1]:  # a type the kind cannot name (an archive fitted before the mapping): the mapping's
        refined = None
    return rule_type(kind, words) or refined or kind_default(kind, words)


def rule_type(kind: str, words: Sequence[str]) -> str | None:
    """The type a gazetteer or a cue word gives a *kind* mention of *words*, if one does."""
    name = " ".join(words)
    if name in RIVERS:  # whatever the kind: the name is nothing else
        return "river"
    if name in GAZETTEER and kind in PLACE_KINDS:
        return GAZETTEER[name]
    if kind in CUE_OVER_KIND:
        return None
    lowered = [word.lower().rstrip(".") for word in words]
    for phrase, type_ in PHRASE_CUES.items():
        if any(tuple(lowered[i : i + len(phrase)]) == phrase for i in range(len(lowered) - len(phrase) + 1)):
            return type_
    if len(lowered) > 1 and lowered[-1] in HEAD_CUES:
        return HEAD_CUES[lowered[-1]]
    if len(lowered) > 1 and lowered[0] in ("mount", "mt", "lake"):  # Mount Everest, Lake Victoria: the type comes first
        return CUES[lowered[0]]
    cued = [CUES[word] for word in lowered[1:] if word in CUES] or [CUES[word] for word in lowered[:1] if word in CUES and len(lowered) > 1]
    return cued[-1] if cued else None  # the last cue is the head: Oxford University Press is a company


def kind_default(kind: str, words: Sequence[str]) -> str:
    """A kind's type where no rule and no training says more: an ``ORG`` of one word is a company unless an acronym."""
    default = KINDS[kind][0]
    if kind == "ORG" and len(words) == 1 and not (words[0].isupper() and len(words[0]) > 1):
        return "company"
    return default


def learn_entity_types(seen: Iterable[tuple[str, Sequence[str], str]]) -> tuple[dict[str, str], dict[str, str]]:
    """From *seen* ``(kind, words, type)``: the most frequent type per name (ties: the first seen), and per kind the
    types training refines (see the module docstring): only kinds whose names, untyped by a rule, agree on a type the
    kind can name, at least :data:`MIN_NAMES` different names and a majority of them.
    """
    names: dict[str, Counter[str]] = defaultdict(Counter)
    kind_names: dict[str, dict[str, str]] = defaultdict(dict)  # kind -> name -> its first type
    for kind, words, type_ in seen:
        if kind not in KINDS and not kind.startswith(TYPED):
            continue
        name = " ".join(words)
        names[name][type_] += 1
        if kind in KINDS and rule_type(kind, words) is None:
            kind_names[kind].setdefault(name, type_)
    refined = {}
    for kind, typed in sorted(kind_names.items()):
        type_, count = Counter(typed.values()).most_common(1)[0]
        if type_ in KINDS[kind][1] and count >= MIN_NAMES and 2 * count > len(typed):
            refined[kind] = type_
    return refined, {name: counts.most_common(1)[0][0] for name, counts in sorted(names.items())}
