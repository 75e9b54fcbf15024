"""Entity lexicon, mention finding, and anonymize/restore of GEO Prolog pairs (toolkit/entities)."""

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolkit.entities import (
    Anonymizer,
    Entity,
    EntityLexicon,
    GeoPrologAnonymizer,
    LexiconMentionFinder,
    MentionFinder,
    RestoreError,
    find_constants,
    normalize,
)
from toolkit.errors import ConfigurationError, DataError
from toolkit.params import data_root

GEO_RAW = Path(data_root()) / "geo-raw"

# A hand-written lexicon in the format of geo_entities.json.
RECORDS = [
    {"value": "new york", "abbreviation": "ny", "type": "state"},
    {"value": "new york", "type": "city"},
    {"value": "washington", "abbreviation": "wa", "type": "state"},
    {"value": "washington", "type": "city"},
    {"value": "seattle", "type": "city"},
    {"value": "district of columbia", "abbreviation": "dc", "type": "state"},
    {"value": "mississippi", "abbreviation": "ms", "type": "state"},
    {"value": "mississippi", "type": "river"},
    {"value": "mississippi river", "type": "lowest point"},
    {"value": "oregon", "abbreviation": "or", "type": "state"},
    {"value": "indiana", "abbreviation": "in", "type": "state"},
    {"value": "maine", "abbreviation": "me", "type": "state"},
    {"value": "pennsylvania", "abbreviation": "pa", "type": "state"},
    {"value": "texas", "abbreviation": "tx", "type": "state"},
    {"value": "utah", "abbreviation": "ut", "type": "state"},
    {"value": "north dakota", "abbreviation": "nd", "type": "state"},
    {"value": "salt lake city", "type": "city"},
    {"value": "great salt lake", "type": "lake"},
    {"value": "portland", "type": "city"},
    {"value": "erie", "type": "city"},
    {"value": "erie", "type": "lake"},
    {"value": "springfield", "type": "city"},
    {"value": "austin", "type": "city"},
    {"value": "st. paul", "type": "city"},
    {"value": "high point", "type": "city"},
    {"value": "high point", "type": "highest point"},
    {"value": "bismarck", "type": "city"},
    {"value": "rio grande", "type": "river"},
    {"value": "red", "type": "river"},
    {"value": "mount mckinley", "type": "highest point"},
    {"value": "mckinley", "type": "mountain"},
    {"value": "usa", "abbreviation": "usa", "type": "country"},
    {"value": "us", "abbreviation": "usa", "type": "country"},
    {"value": "10", "type": "road"},
]


@pytest.fixture(scope="module")
def lexicon_path(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("lexicon") / "entities.json"
    path.write_text(json.dumps(RECORDS), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def finder(lexicon_path) -> LexiconMentionFinder:
    return MentionFinder.from_params({"type": "lexicon", "lexicon": {"path": str(lexicon_path)}})


@pytest.fixture(scope="module")
def anonymizer(lexicon_path) -> GeoPrologAnonymizer:
    return Anonymizer.from_params({"type": "geo_prolog", "finder": {"type": "lexicon", "lexicon": {"path": str(lexicon_path)}}})


def spans(finder, question: str) -> list[tuple[str, tuple[str, ...]]]:
    """(surface, candidate types) of each mention."""
    return [(mention.surface, mention.types) for mention in finder.find(question.split())]


# ------------------------------------------------------------------ lexicon


def test_names_are_normalized_and_can_name_several_entities(lexicon_path):
    lexicon = EntityLexicon(str(lexicon_path))
    assert normalize("Salt-Lake  City") == normalize("salt lake city") == "salt lake city"
    assert lexicon.lookup("Salt-Lake City") == [Entity("salt lake city", "city")]
    assert lexicon.lookup("Saint Paul") == lexicon.lookup("St. Paul") == [Entity("st. paul", "city")]
    assert {entity.type for entity in lexicon.lookup("MISSISSIPPI")} == {"state", "river"}
    assert lexicon.state("TX") == Entity("texas", "state", "tx")
    assert lexicon.lookup("10") == []  # roads are left out by default
    assert lexicon.spelling(Entity("new york", "state", "ny")) == ("'", "new", "york", "'")
    assert lexicon.spelling(Entity("texas", "state", "tx")) == ("texas",)


def test_gold_forms_add_missing_entities_and_keep_their_spelling(lexicon_path, tmp_path):
    gold = tmp_path / "train.tsv"
    gold.write_text(
        "where is boise ?\t_answer ( A , ( _loc ( B , A ) , _const ( B , _cityid ( boise , _ ) ) ) )\n"
        "what states have cities named salt lake city ?\t_answer ( A , ( _state ( A ) , _const ( B , _cityid ( ' salt _lake _city ' , _ ) ) ) )\n"
        "what is in texas ?\t_answer ( A , _const ( A , _stateid ( texas ) ) )\n",
        encoding="utf-8",
    )
    lexicon = EntityLexicon(str(lexicon_path), gold_forms=[str(gold)])
    assert lexicon.added == [(Entity("boise", "city"), ("boise",))]
    assert lexicon.lookup("Boise") == [Entity("boise", "city")]
    assert lexicon.respelled == [(Entity("salt lake city", "city"), ("'", "salt", "_lake", "_city", "'"))]
    assert lexicon.spelling(Entity("salt lake city", "city")) == ("'", "salt", "_lake", "_city", "'")


def test_bad_lexicon_files_are_data_errors(tmp_path):
    with pytest.raises(DataError, match="not found"):
        EntityLexicon(str(tmp_path / "missing.json"))
    (tmp_path / "bad.json").write_text('[{"value": "texas"}]', encoding="utf-8")
    with pytest.raises(DataError, match="record 0"):
        EntityLexicon(str(tmp_path / "bad.json"))


def test_find_constants_reads_quoted_names_and_city_states():
    tokens = "_const ( B , _cityid ( ' new york ' , ny ) ) , _const ( C , _riverid ( red ) )".split()
    first, second = find_constants(tokens)
    assert (first.constructor, first.name_words, first.state) == ("_cityid", ("new", "york"), "ny")
    assert tokens[first.start : first.end] == "_cityid ( ' new york ' , ny )".split()
    assert (second.constructor, second.name, second.state) == ("_riverid", ("red",), None)


# ------------------------------------------------------------------ mention finding


def test_multiword_names_take_the_longest_match(finder):
    [mention] = finder.find("what is the population of salt lake city ?".split())
    assert (mention.start, mention.end, mention.surface) == (5, 8, "salt lake city")
    assert mention.candidates == (Entity("salt lake city", "city"),)
    assert spans(finder, "how long is the rio grande ?") == [("rio grande", ("river",))]
    assert spans(finder, "where is the great salt lake ?") == [("great salt lake", ("lake",))]


def test_overlapping_candidates_new_york_city(finder):
    [mention] = finder.find("what is the population of new york city ?".split())
    assert (mention.surface, mention.preferred) == ("new york", "city")
    assert [entity.type for entity in mention.candidates] == ["city", "state"]  # both kept, the city first
    [state] = finder.find("how many people live in new york state ?".split())
    assert (state.surface, state.preferred, state.candidates[0].type) == ("new york", "state", "state")


def test_ambiguous_names_keep_every_reading(finder):
    [plain] = finder.find("what rivers flow through mississippi ?".split())
    assert set(plain.types) == {"state", "river"} and plain.preferred is None
    [river] = finder.find("how long is the mississippi river ?".split())  # "mississippi river" is also a low point
    assert (river.surface, river.end, river.preferred) == ("mississippi", 5, "river")
    assert river.types == ("river", "state", "lowest point")
    [state] = finder.find("what is the capital of the state of washington ?".split())
    assert (state.preferred, state.candidates[0]) == ("state", Entity("washington", "state", "wa"))
    city, dc = finder.find("what is the population of washington dc ?".split())
    assert (city.surface, city.preferred, city.candidates[0].type) == ("washington", "city", "city")
    assert (dc.surface, dc.kind, dc.candidates) == ("dc", "abbreviation", (Entity("district of columbia", "state", "dc"),))
    _seattle, washington = finder.find("what is the population of seattle washington ?".split())
    assert (washington.preferred, washington.candidates[0].type) == ("state", "state")


def test_abbreviations_and_the_english_word_trap(finder):
    assert spans(finder, "how many people live in austin tx ?") == [("austin", ("city",)), ("tx", ("state",))]
    assert spans(finder, "what rivers are in utah ?") == [("utah", ("state",))]  # "in" is the preposition
    assert spans(finder, "what city is springfield in ?") == [("springfield", ("city",))]
    assert spans(finder, "is portland or seattle bigger ?") == [("portland", ("city",)), ("seattle", ("city",))]
    assert spans(finder, "how big is portland me ?") == [("portland", ("city",))]  # "me" right after a city: still the word
    assert spans(finder, "how big is portland , me ?") == [("portland", ("city",)), ("me", ("state",))]
    assert spans(finder, "how big is Portland ME ?")[1] == ("ME", ("state",))
    assert spans(finder, "how big is erie pa ?") == [("erie", ("city", "lake")), ("pa", ("state",))]
    assert spans(finder, "which rivers are in OR ?") == [("OR", ("state",))]
    assert spans(finder, "WHICH RIVERS ARE IN OREGON ?") == [("OREGON", ("state",))]  # all capitals: "IN" proves nothing
    assert spans(finder, "what is the capital of T.X. ?") == [("T.X.", ("state",))]


def test_word_like_names_need_capitals(finder):
    assert spans(finder, "what is the high point of texas ?") == [("texas", ("state",))]
    assert spans(finder, "tell us the capital of texas") == [("texas", ("state",))]
    assert spans(finder, "how many people live in High Point ?") == [("High Point", ("city", "highest point"))]
    assert spans(finder, "what is the largest city in the US ?") == [("US", ("country",))]


def test_case_and_punctuation_do_not_matter(finder):
    assert spans(finder, "What is the capital of New-York?") == [("New-York?", ("state", "city"))]
    assert spans(finder, "How big is Saint Paul ?") == [("Saint Paul", ("city",))]
    assert spans(finder, "how big is st. paul ?") == [("st. paul", ("city",))]
    assert spans(finder, "which states border new , york ?") == []  # a name never spans a comma
    assert spans(finder, "HOW LONG IS THE RIO-GRANDE") == [("RIO-GRANDE", ("river",))]


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(
    record=st.sampled_from([record for record in RECORDS if record["type"] not in ("road", "country") and record["value"] != "high point"]),
    style=st.sampled_from(["lower", "upper", "title", "hyphen"]),
    template=st.sampled_from(["what is the size of {} ?", "{} is where ?", "tell me about {}", "is it {} , really"]),
)
def test_every_lexicon_name_is_found_however_written(finder, record, style, template):
    name = record["value"]
    written = {"lower": name, "upper": name.upper(), "title": name.title(), "hyphen": name.replace(" ", "-")}[style]
    mentions = finder.find(template.format(written).split())
    names = [mention for mention in mentions if mention.kind == "name"]
    assert len(names) == 1, mentions
    assert any(entity.value == name and entity.type == record["type"] for entity in names[0].candidates)


# ------------------------------------------------------------------ anonymize and restore


def test_anonymize_replaces_question_mentions_and_their_constants(anonymizer):
    question = "what is the population of seattle washington ?".split()
    gold = "_answer ( A , ( _population ( B , A ) , _const ( B , _cityid ( seattle , wa ) ) ) )"
    result = anonymizer.anonymize(question, gold)
    assert result.question == "what is the population of e0 e1 ?".split()
    assert " ".join(result.logical_form) == "_answer ( A , ( _population ( B , A ) , _const ( B , _cityid ( e0 , e1 ) ) ) )"
    assert anonymizer.restore(result.logical_form, result.placeholders).text == gold
    multi = anonymizer.anonymize("what states border new york ?".split(), "_answer ( A , ( _next_to ( A , B ) , _const ( B , _stateid ( ' new york ' ) ) ) )")
    assert multi.question[-2:] == ["e0", "?"] and "_stateid ( e0 )" in " ".join(multi.logical_form)


def test_type_words_say_what_a_placeholder_can_name(lexicon_path):
    """With type_words the question keeps each mention's readings (context's choice first) before its placeholder; the query is as without."""
    typed = GeoPrologAnonymizer(LexiconMentionFinder(EntityLexicon(str(lexicon_path))), type_words=True)
    plain = GeoPrologAnonymizer(LexiconMentionFinder(EntityLexicon(str(lexicon_path))))
    gold = "_answer ( A , ( _river ( A ) , _traverse ( A , B ) , _const ( B , _stateid ( mississippi ) ) ) )"
    result = typed.anonymize("what rivers flow through mississippi ?".split(), gold)
    assert result.question == "what rivers flow through state river e0 ?".split()
    assert result.logical_form == plain.anonymize("what rivers flow through mississippi ?".split(), gold).logical_form
    assert typed.restore(result.logical_form, result.placeholders).text == gold
    assert typed.anonymize("what is the population of seattle washington ?".split()).question[-6:] == ["city", "e0", "state", "city", "e1", "?"]


def test_restore_reads_the_constructor_to_resolve_ambiguity(anonymizer):
    placeholders = anonymizer.anonymize("what borders mississippi ?".split()).placeholders
    assert anonymizer.restore("_const ( A , _stateid ( e0 ) )", placeholders).text == "_const ( A , _stateid ( mississippi ) )"
    assert anonymizer.restore("_const ( A , _riverid ( e0 ) )", placeholders).text == "_const ( A , _riverid ( mississippi ) )"
    river = anonymizer.anonymize("how long is the mississippi river ?".split()).placeholders
    assert anonymizer.restore("_const ( A , _placeid ( e0 ) )", river).text == "_const ( A , _placeid ( ' mississippi river ' ) )"
    city = anonymizer.anonymize("what is the population of washington dc ?".split()).placeholders
    assert anonymizer.restore("_const ( A , _cityid ( e0 , e1 ) )", city).text == "_const ( A , _cityid ( washington , dc ) )"


def test_an_entity_no_mention_names_is_left_as_its_name(anonymizer):
    gold = "_answer ( A , ( _capital ( A ) , _loc ( A , B ) , _const ( B , _stateid ( texas ) ) ) )"
    result = anonymizer.anonymize("what is the capital of the lone star state ?".split(), gold)
    assert result.placeholders == [] and " ".join(result.logical_form) == gold
    assert result.unmatched == ["_stateid ( texas )"] and result.replaced == 0
    country = anonymizer.anonymize("how many states are in the usa ?".split(), "_answer ( A , _const ( B , _countryid ( usa ) ) )")
    assert "_countryid ( usa )" in " ".join(country.logical_form) and country.question[-2] == "usa"  # not anonymized by default


def test_unseen_entity_round_trips(anonymizer):
    question = "what is the population of bismarck north dakota ?".split()
    gold = "_answer ( A , ( _population ( B , A ) , _const ( B , _cityid ( bismarck , nd ) ) ) )"
    result = anonymizer.anonymize(question, gold)
    assert result.question == "what is the population of e0 e1 ?".split()
    predicted = "_answer ( A , ( _population ( B , A ) , _const ( B , _cityid ( e0 , e1 ) ) ) )"
    assert anonymizer.restore(predicted, anonymizer.anonymize(question).placeholders).text == gold


def test_restore_reports_placeholders_it_cannot_fill(anonymizer, lexicon_path):
    placeholders = anonymizer.anonymize("what rivers are in texas ?".split()).placeholders
    with pytest.raises(RestoreError, match="e3: the question has 1 placeholder"):
        anonymizer.restore("_const ( A , _stateid ( e3 ) )", placeholders)
    with pytest.raises(RestoreError, match=r"under _riverid: it can be state"):
        anonymizer.restore("_const ( A , _riverid ( e0 ) )", placeholders)
    with pytest.raises(RestoreError, match="outside an id constructor"):
        anonymizer.restore("_answer ( e0 , _state ( e0 ) )", placeholders)
    with pytest.raises(RestoreError, match="names no state"):
        anonymizer.restore("_const ( A , _cityid ( e0 , e0 ) )", anonymizer.anonymize("how big is austin ?".split()).placeholders)
    keep = GeoPrologAnonymizer(LexiconMentionFinder(EntityLexicon(str(lexicon_path))), unknown="keep")
    restored = keep.restore("_const ( A , _stateid ( e0 ) ) , _const ( B , _stateid ( e1 ) )", placeholders)
    assert restored.text == "_const ( A , _stateid ( texas ) ) , _const ( B , _stateid ( e1 ) )"
    assert len(restored.problems) == 1 and "e1" in restored.problems[0]


def test_config_errors_name_the_key(lexicon_path):
    finder = {"type": "lexicon", "lexicon": {"path": str(lexicon_path)}}
    with pytest.raises(ConfigurationError, match="unknown"):
        Anonymizer.from_params({"type": "geo_prolog", "finder": finder, "unknown": "ignore"})
    with pytest.raises(ConfigurationError, match="constructors"):
        Anonymizer.from_params({"type": "geo_prolog", "finder": finder, "constructors": ["_townid"]})


STATES = [record for record in RECORDS if record["type"] == "state"]
CITIES = [record for record in RECORDS if record["type"] == "city" and record["value"] != "high point"]


@settings(max_examples=80, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(city=st.sampled_from(CITIES), state=st.sampled_from(STATES), with_state=st.booleans(), comma=st.booleans())
def test_city_state_pairs_round_trip(anonymizer, city, state, with_state, comma):
    lexicon = anonymizer.lexicon
    name = " ".join(lexicon.spelling(Entity(city["value"], "city")))
    question = f"how many people live in {city['value']}" + ((" ," if comma else "") + f" {state['value']}" if with_state else "") + " ?"
    gold = f"_answer ( A , ( _population ( B , A ) , _const ( B , _cityid ( {name} , {state['abbreviation'] if with_state else '_'} ) ) ) )"
    result = anonymizer.anonymize(question.split(), gold)
    assert result.replaced == 1 and not result.unmatched
    assert city["value"].split()[-1] not in result.logical_form
    if with_state:
        assert state["abbreviation"] not in result.logical_form
    assert anonymizer.restore(result.logical_form, anonymizer.anonymize(question.split()).placeholders).text == gold


# ------------------------------------------------------------------ the real data


@pytest.fixture(scope="module")
def geo_anonymizer() -> GeoPrologAnonymizer:
    if not (GEO_RAW / "geo_entities.json").exists():
        pytest.skip(f"raw GEO data not found at {GEO_RAW} (set DATA_ROOT)")
    lexicon = EntityLexicon(str(GEO_RAW / "geo_entities.json"), gold_forms=[str(GEO_RAW / "geo_prolog_train.tsv")])
    return GeoPrologAnonymizer(LexiconMentionFinder(lexicon))


@pytest.mark.parametrize("split", ["train", "test"])
def test_every_gold_logical_form_round_trips(geo_anonymizer, split):
    pairs = [line.split("\t") for line in (GEO_RAW / f"geo_prolog_{split}.tsv").read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(pairs) == {"train": 600, "test": 280}[split]
    replaced = 0
    for question, logical_form in pairs:
        gold = logical_form.split()
        anonymized = geo_anonymizer.anonymize(question.split(), gold)
        placeholders = geo_anonymizer.anonymize(question.split()).placeholders  # what prediction time has: the question only
        assert geo_anonymizer.restore(anonymized.logical_form, placeholders).tokens == gold, question
        replaced += anonymized.replaced
    assert replaced >= {"train": 400, "test": 170}[split]  # the round trip must not pass by replacing nothing


def test_real_lexicon_ambiguity_and_unseen_entities(geo_anonymizer):
    questions = [line.split("\t")[0] for line in (GEO_RAW / "geo_prolog_train.tsv").read_text(encoding="utf-8").splitlines()]
    assert not any(" scottsdale " in f" {question} " for question in questions)
    [mention] = geo_anonymizer.finder.find("what is the population of Scottsdale ?".split())
    assert mention.candidates == (Entity("scottsdale", "city"),)
    readings = {entity.type for entity in geo_anonymizer.lexicon.lookup("washington")}
    assert readings == {"state", "city"}


# ------------------------------------------------------------------ every entity kind: lakes, mountains, places (issue 61 item 3)

# Questions written for these tests from Geobase's schema (geobase.pl's lake/3, mountain/4 and highlow/6 facts, geoquery.pl's
# lakeid/mountainid/placeid), not from GEO's questions: each with a gold query and what the anonymized question reads.
KINDS = [
    (
        "which states is lake tahoe in ?",
        "which states is lake lake e0 in ?",
        "_answer ( A , ( _state ( A ) , _loc ( B , A ) , _const ( B , _lakeid ( tahoe ) ) ) )",
    ),
    (
        "how high is mount rainier ?",
        "how high is highest_point mountain e0 ?",
        "_answer ( A , ( _elevation ( B , A ) , _const ( B , _mountainid ( rainier ) ) ) )",
    ),
    (
        "how high is mount rainier ?",
        "how high is highest_point mountain e0 ?",
        "_answer ( A , ( _elevation ( B , A ) , _const ( B , _placeid ( ' mount rainier ' ) ) ) )",
    ),
    (
        "how tall is Mt. Whitney ?",
        "how tall is highest_point mountain e0 ?",
        "_answer ( A , ( _elevation ( B , A ) , _const ( B , _mountainid ( whitney ) ) ) )",
    ),
    (
        "which states touch lake erie ?",
        "which states touch lowest_point lake e0 ?",
        "_answer ( A , ( _state ( A ) , _loc ( B , A ) , _const ( B , _lakeid ( erie ) ) ) )",
    ),
    ("where is the salton sea ?", "where is the lake e0 ?", "_answer ( A , ( _loc ( B , A ) , _const ( B , _lakeid ( ' salton sea ' ) ) ) )"),
    (
        "what is the elevation of death valley ?",
        "what is the elevation of lowest_point e0 ?",
        "_answer ( A , ( _elevation ( B , A ) , _const ( B , _placeid ( ' death valley ' ) ) ) )",
    ),
]


@pytest.fixture(scope="module")
def kinds_anonymizer() -> GeoPrologAnonymizer:
    """The real lexicon, its names that start with lake or mount read as the lake or mountain too, with type words."""
    if not (GEO_RAW / "geo_entities.json").exists():
        pytest.skip(f"raw GEO data not found at {GEO_RAW} (set DATA_ROOT)")
    finder = MentionFinder.from_params({"type": "lexicon", "lexicon": {"path": str(GEO_RAW / "geo_entities.json")}, "prefixed_names": True})
    return GeoPrologAnonymizer(finder, type_words=True)


@pytest.mark.parametrize(("question", "anonymized", "gold"), KINDS)
def test_lakes_mountains_and_places_anonymize_and_restore(kinds_anonymizer, question, anonymized, gold):
    """The type words name the kind; the constant becomes the placeholder under its own constructor and comes back from the question alone."""
    result = kinds_anonymizer.anonymize(question.split(), gold)
    assert " ".join(result.question) == anonymized
    assert result.replaced == 1 and not result.unmatched
    constructor = next(token for token in gold.split() if token.endswith("id"))
    assert f"{constructor} ( e0 )" in " ".join(result.logical_form)
    assert kinds_anonymizer.restore(result.logical_form, kinds_anonymizer.anonymize(question.split()).placeholders).text == gold


def test_a_name_reads_as_every_kind_it_can_be_and_no_other(kinds_anonymizer, lexicon_path):
    erie = kinds_anonymizer.anonymize("which states touch lake erie ?".split()).placeholders
    assert kinds_anonymizer.restore("_const ( B , _placeid ( e0 ) )", erie).text == "_const ( B , _placeid ( ' lake erie ' ) )"
    with pytest.raises(RestoreError, match="under _cityid"):  # erie the city is no reading of "lake erie"
        kinds_anonymizer.restore("_const ( B , _cityid ( e0 , _ ) )", erie)
    tahoe = kinds_anonymizer.anonymize("which states is lake tahoe in ?".split()).placeholders
    with pytest.raises(RestoreError, match="under _placeid"):  # geoquery.pl's placeid is a high or low point, never a lake
        kinds_anonymizer.restore("_const ( B , _placeid ( e0 ) )", tahoe)
    mckinley = GeoPrologAnonymizer(LexiconMentionFinder(EntityLexicon(str(lexicon_path)))).anonymize("how high is mount mckinley ?".split())
    with pytest.raises(RestoreError, match="under _mountainid"):  # without prefixed_names, as before: only the high point
        kinds_anonymizer.restore("_const ( B , _mountainid ( e0 ) )", mckinley.placeholders)


def test_arguments_say_what_restore_fills(anonymizer):
    texas = anonymizer.anonymize("what rivers are in texas ?".split()).placeholders
    assert anonymizer.arguments(texas, 6) == {
        "_stateid": (("e0",),),
        "_cityid": ((), ("_", "e0")),
        "_riverid": ((),),
        "_placeid": ((),),
        "_mountainid": ((),),
        "_lakeid": ((),),
    }
    seattle = anonymizer.anonymize("what is the population of seattle washington ?".split()).placeholders
    assert anonymizer.arguments(seattle, 6)["_cityid"] == (("e0", "e1"), ("_", "e1"))
    assert anonymizer.arguments(seattle, 1)["_cityid"] == (("e0",), ("_",))  # none numbered from the bound on
    assert anonymizer.arguments(None, 2)["_lakeid"] == (("e0", "e1"),)


NAMES = [record["value"] for record in RECORDS if record["type"] not in ("road", "country")]


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(names=st.lists(st.sampled_from(NAMES), min_size=0, max_size=3), words=st.sampled_from(["", "lake", "mount", "river", "city", "state of"]))
def test_every_argument_offered_restores_and_no_other(anonymizer, names, words):
    """The contract the constrained grammar relies on: a token arguments() offers restores there, and a placeholder it leaves out does not."""
    question = f"what about {' and '.join(f'{words} {name}' for name in names)} ?".split()
    placeholders = anonymizer.anonymize(question).placeholders
    offered = anonymizer.arguments(placeholders, 6)
    keep = GeoPrologAnonymizer(anonymizer.finder, unknown="keep")
    for constructor, arguments in anonymizer.arguments(None, 6).items():
        for argument, tokens in enumerate(arguments):
            for token in tokens:
                values = ["somewhere", "_"][: len(arguments)]  # the other argument restores as it is
                values[argument] = token
                problems = keep.restore(f"_const ( A , {constructor} ( {' , '.join(values)} ) )", placeholders).problems
                assert bool(problems) == (token not in offered[constructor][argument]), (constructor, argument, token, problems)
