"""Named entities and dates in the AMR grammar: mentions, the NAME and DATE actions, the entity types fitting learns."""

import itertools
import logging
from pathlib import Path
from types import SimpleNamespace

import penman
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.data.example import Example
from toolkit.grammars.grammar import SymbolTable
from transition_systems.amr import AmrTransitionSystem
from transition_systems.amr import mentions as mentions_module
from transition_systems.amr.actions import DATE, NAME
from transition_systems.amr.entity_types import NE_TYPES, entity_type, learn_entity_types
from transition_systems.amr.isomorphism import same_graph
from transition_systems.amr.mentions import Mention, date_parts, find_mentions

HELD_OUT = Path(__file__).parent / "fixtures" / "amr_entities_heldout.txt"


def example(sentence: str, graph: str) -> Example:
    return Example(sentence.split(), penman.decode(graph), {"path": "hand", "line": 1})


MACRON = example(
    "Emmanuel Macron visited France on March 3 , 2019 .",
    '(v / visit-01 :ARG0 (p / person :name (n / name :op1 "Emmanuel" :op2 "Macron")) :ARG1 (c / country :wiki "France" :name (n2 / name :op1 "France"))'
    " :time (d / date-entity :year 2019 :month 3 :day 3))",
)


@pytest.mark.parametrize(
    "sentence, expected",
    [
        ("Emmanuel Macron visited France .", [(0, 2, "PROPER"), (3, 4, "PROPER")]),
        ("In May 2020 he met Angela Merkel .", [(1, 3, "DATE"), (5, 7, "PROPER")]),
        ("On March 3 , 2019 , they met .", [(1, 5, "DATE")]),
        ("he may march on Tuesday", [(4, 5, "DATE")]),  # may and march are verbs here: only capitalised names are dates
        ("The little prince lived on asteroid B-612 .", [(6, 7, "PROPER")]),  # "The" starts the sentence: no name
        ('He said : " Good morning . "', []),  # one capitalised word after an opener is not a name
        ("I saw 3 of them in 1909 .", [(6, 7, "DATE")]),  # a bare day number is no date, a year is
    ],
)
def test_the_rules_find_names_and_dates(sentence, expected):
    assert find_mentions(sentence.split(), "rules") == tuple(Mention(*mention) for mention in expected)
    assert find_mentions(sentence.split(), "none") == ()


@pytest.mark.parametrize(
    "words, parts",
    [
        ("March 3 , 2019", (("year", "2019"), ("month", "3"), ("day", "3"))),
        ("1909", (("year", "1909"),)),
        ("Tuesday", (("weekday", "tuesday"),)),
        ("Monday , April 2 , 2001", (("year", "2001"), ("month", "4"), ("day", "2"), ("weekday", "monday"))),
        ("June 21", (("month", "6"), ("day", "21"))),
        ("3rd of March", (("month", "3"), ("day", "3"))),
        ("the next day", None),
        ("six years ago", None),
        ("21", None),
        ("February 30 , 2019", None),  # no such day: the parser refuses it
    ],
)
def test_date_parts_say_only_what_the_words_give(words, parts):
    assert date_parts(tuple(words.split())) == parts


def replay(system, ex):
    state = system.initial_state(ex)
    for action in system.oracle(ex):
        assert action in state.allowed(), action
        state = state.apply(action)
    return state


def test_name_and_date_make_the_entities_whole_in_one_action_each():
    system = AmrTransitionSystem(mentions="rules")
    system.fit([MACRON])
    actions = system.oracle(MACRON)
    assert actions[:2] == [NAME, "SHIFT"] and actions.count(NAME) == 2 and actions.count(DATE) == 1
    assert "MERGE" not in actions  # NAME and DATE merge their spans themselves
    assert "WIKI" in actions[actions.index(NAME, 1) :]  # France's :wiki, spelled from its name, once its arcs are made
    state = replay(system, MACRON)
    assert same_graph(penman.decode(state.result()), MACRON.target)


def test_name_and_date_are_allowed_only_at_an_unmerged_mention_start():
    system = AmrTransitionSystem(mentions="rules")
    state = system.initial_state(Example("Emmanuel Macron visited France on March 3 , 2019 .".split()))
    assert NAME in state.allowed() and DATE not in state.allowed()
    assert NAME not in state.apply("MERGE").allowed()  # a span merged by hand is not the mention
    after = state.apply(NAME)
    assert (after.cursor, after.span_end) == (0, 2) and NAME not in after.allowed()  # made once per span
    assert after.labels == ("person", "name", '"Emmanuel"', '"Macron"')
    for action in ("SHIFT", "COPY_SENSE01", "SHIFT", NAME, "SHIFT", "SHIFT"):
        after = after.apply(action)
    assert DATE in after.allowed() and NAME not in after.allowed()
    dated = after.apply(DATE)
    assert dated.labels[-4:] == ("date-entity", "2019", "3", "3") and dated.span_end == 9
    assert dated.stack[-1] == len(dated.labels) - 4  # the date-entity is pushed, its parts are not


def test_training_refines_the_ner_mapping_and_never_replaces_it():
    seen = [("PROPER", (f"B-{number}",), "planet") for number in (612, 325, 326)] + [("PROPER", ("Antoine",), "person"), ("GPE", ("Paris",), "city")]
    seen += [("GPE", (country,), "country") for country in ("France", "Spain")]  # a gazetteer types them: they count for their names only
    seen += [("LOC", ("Earth",), "planet")] * 15  # one name seen often types that name, not its kind
    seen += [("ORG", (name,), "world-region") for name in ("Indies", "Arctic", "Balkans")]  # an ORG is never a world-region
    by_kind, by_name = learn_entity_types(seen)
    assert by_kind == {"PROPER": "planet"} and by_name["Antoine"] == "person" and by_name["Spain"] == "country" and by_name["Earth"] == "planet"
    assert entity_type("PROPER", ["Antoine"], by_kind, by_name) == "person"  # the name's own type first
    assert entity_type("PROPER", ["B-999"], by_kind, by_name) == "planet"  # else its kind's, as training refined it
    assert entity_type("LOC", ["Mars"], by_kind, by_name) == "world-region"  # LOC kept its default: Earth is one name
    assert entity_type("ORG", ["Pixar"], by_kind, by_name) == "company"  # ORG kept its own: one word, no acronym
    assert entity_type("PERSON", ["Ann"], by_kind, by_name) == "person"  # a kind training never saw: the mapping's
    assert entity_type("NORP", ["French"], by_kind, by_name) is None and entity_type("DATE", ["1909"], by_kind, by_name) is None


@pytest.mark.parametrize(
    "kind, name, expected",
    [
        ("GPE", "France", "country"),
        ("LOC", "Haiti", "country"),
        ("GPE", "Iowa", "state"),
        ("GPE", "Geneva", "city"),
        ("LOC", "Europe", "continent"),
        ("ORG", "Stanford University", "university"),
        ("ORG", "University of Vienna", "university"),
        ("ORG", "Oxford University Press", "company"),  # the last cue is the head
        ("ORG", "Ministry of Health", "government-organization"),
        ("ORG", "World Health Organization", "organization"),
        ("ORG", "Toyota", "company"),
        ("ORG", "UNESCO", "organization"),
        ("FAC", "Heathrow Airport", "airport"),
        ("FAC", "Wembley Stadium", "sports-facility"),
        ("LOC", "Mississippi River", "river"),
        ("LOC", "Mount Everest", "mountain"),
        ("PRODUCT", "Model 3", "product"),
        ("PERSON", "Jack London", "person"),  # a person's name keeps its kind's type, whatever words it has
        ("GPE", "Marin County", "county"),
        ("ORG", "The Washington Post", "newspaper"),  # a newspaper's word counts as the name's last word only
        ("ORG", "Post Office Ltd", "company"),
        ("ORG", "European Central Bank", "government-organization"),  # a run of words over its one cue (bank)
        ("ORG", "Deutsche Bank", "company"),
        ("ORG", "Karlsruhe Institute of Technology", "university"),
        ("ORG", "Max Planck Institute", "research-institute"),
        ("ORG", "the Foreign Office", "government-organization"),
        ("PERSON", "Danube", "river"),  # a river's name is nothing else, whatever NER called it
        ("GPE", "Ohio", "state"),
    ],
)
def test_ner_labels_map_to_amr_types_by_gazetteer_cue_and_kind(kind, name, expected):
    assert entity_type(kind, name.split(), {}, {}) == expected
    assert expected in NE_TYPES


def test_markup_tags_and_determiners_stay_out_of_ner_names(monkeypatch):
    """An NER span that takes in the tags around a word (``<i> BRAF </i>``) or a determiner names the words inside."""
    tokens = ("<i>", "BRAF", "</i>", "and", "the", "<b>", "MEK", "</b>", "<br/>", "The")
    entities = [(0, 3, "PERSON"), (4, 8, "ORG"), (8, 9, "PRODUCT"), (9, 10, "ORG")]

    class Pipeline:
        vocab = None

        def __call__(self, doc):
            return doc

    def doc(vocab, words):
        assert tuple(words) == tokens
        return SimpleNamespace(ents=[SimpleNamespace(start=s, end=e, label_=label) for s, e, label in entities])

    monkeypatch.setattr(mentions_module, "_ner", lambda: (Pipeline(), doc))
    mentions_module._spacy_mentions.cache_clear()
    try:
        assert find_mentions(tokens, "spacy") == (Mention(1, 2, "PERSON"), Mention(6, 7, "ORG"), Mention(9, 10, "ORG"))
    finally:
        mentions_module._spacy_mentions.cache_clear()


@pytest.mark.skipif(not mentions_module.spacy_available(), reason="needs spaCy and an English model")
def test_determiners_stay_out_of_names():
    mentions = find_mentions("The United Nations met the Red Cross in Geneva .".split(), "spacy")
    names = {" ".join("The United Nations met the Red Cross in Geneva .".split()[m.start : m.end]) for m in mentions}
    assert "United Nations" in names and not any(name.lower().startswith("the ") for name in names)


def test_fitting_records_the_types_and_rebuilds_the_grammar():
    # numbers are no names, whatever training saw (spaCy calls B-612 a CARDINAL; "one" and "two" are too)
    assert learn_entity_types([("CARDINAL", ("B-612",), "asteroid")]) == ({}, {})
    assert entity_type("CARDINAL", ["one"], {"CARDINAL": "asteroid"}, {}) is None
    system = AmrTransitionSystem(mentions="rules")
    fitted = system.fit([MACRON])
    assert fitted["mentions"] == "rules" and fitted["entity_names"] == {"Emmanuel Macron": "person", "France": "country"}
    rebuilt = AmrTransitionSystem(**{key: fitted[key] for key in ("mentions", "entity_types", "entity_names")})
    assert rebuilt.oracle(MACRON) == system.oracle(MACRON)  # what the config records rebuilds the grammar


def test_a_type_the_grammar_does_not_give_falls_back_to_entity_and_merge():
    system = AmrTransitionSystem(mentions="rules", entity_types={"PROPER": "city"}, entity_names={})
    actions = system.oracle(MACRON)  # Macron is not a city: ENTITY:person after a MERGE, as without mentions
    assert actions[:2] == ["MERGE", "ENTITY:person"] and actions.count(NAME) == 1  # France still by NAME (a country)
    assert same_graph(penman.decode(replay(system, MACRON).result()), MACRON.target)


def test_a_grammar_fitted_with_spacy_parses_with_the_rules_and_says_so(monkeypatch, caplog):
    monkeypatch.setattr(mentions_module, "_ner", lambda: None)
    with caplog.at_level(logging.WARNING):
        system = AmrTransitionSystem(mentions="spacy")
    assert "spaCy" in caplog.text and 'pip install "parsing-toolkit[spacy]"' in caplog.text
    assert system.initial_state(MACRON).sentence.mentions == find_mentions(MACRON.tokens, "rules")


def test_spacy_mentions_are_typed_by_their_labels():
    pytest.importorskip("spacy")
    if not mentions_module.spacy_available():
        pytest.skip("no spaCy English model")
    system = AmrTransitionSystem(mentions="spacy")
    kinds = [mention.kind for mention in system.initial_state(MACRON).sentence.mentions]
    assert kinds == ["PERSON", "GPE", "DATE"]
    assert same_graph(penman.decode(replay(system, MACRON).result()), MACRON.target)


def test_the_held_out_set_is_rebuilt_with_names_and_dates():
    """The oracle, fitted on nothing, on the hand-annotated held-out sentences: NAME and DATE make most entities."""
    reader_graphs = penman.load(str(HELD_OUT))
    examples = [Example(graph.metadata["snt"].split(), graph, {"path": str(HELD_OUT), "line": 1}) for graph in reader_graphs]
    system = AmrTransitionSystem(mentions="rules")
    used = [action for ex in examples for action in system.oracle(ex) if action in (NAME, DATE) or action.startswith("ENTITY:")]
    assert used.count(DATE) == 15  # every date of the set: each is spelled in its words
    # 30 names: people (not alone at a sentence's start: "John met Mary"), countries (the gazetteer: the United
    # States too) by NAME; cities, companies and a gene need spaCy's labels (the rules' PROPER names a person),
    # as a tower needs a NER span, and are made by MERGE and ENTITY:<type>
    assert used.count(NAME) == 16 and len(used) - used.count(NAME) - used.count(DATE) == 14
    for ex in examples:
        assert same_graph(penman.decode(replay(system, ex).result()), ex.target), ex.tokens


words = st.sampled_from(["Paris", "March", "3", ",", "2019", "the", "he", "May", "Tuesday", "saw", "Anna", "B-612", ".", "21st", "of"])


@settings(max_examples=200, deadline=None)
@given(st.lists(words, min_size=1, max_size=12))
def test_mentions_are_disjoint_and_every_name_or_date_action_keeps_the_state_sound(tokens):
    found = find_mentions(tokens, "rules")
    assert all(0 <= a.start < a.end <= b.start < b.end <= len(tokens) for a, b in itertools.pairwise(found))
    assert all(0 <= m.start < m.end <= len(tokens) for m in found)
    system = AmrTransitionSystem(mentions="rules")
    state = system.initial_state(Example(tokens))
    while state.cursor < len(tokens):
        for action in (NAME, DATE):
            if action in state.allowed():
                before, edges = len(state.labels), len(state.edges)
                state = state.apply(action)
                assert state.stack[-1] == before and len(state.edges) - edges == len(state.labels) - before - 1  # a tree below the new node
                assert state.span_end > state.cursor and state.components()[before:] == (before,) * (len(state.labels) - before)
        state = state.apply("SHIFT") if "SHIFT" in state.allowed() else state.apply("COPY_LEMMA")


def test_a_grammar_that_takes_mentions_parses_each_whole_and_still_trains_on_any_gold():
    system = AmrTransitionSystem(mentions="rules", take_mentions=True)
    system.fit([MACRON])
    start, symbols = system.initial_state(MACRON), SymbolTable(["SHIFT", "MERGE", "COPY_LEMMA", "ENTITY:person", NAME, DATE])
    assert set(start.allowed().symbol_ids(symbols)) == {symbols.ids[NAME]}  # the parse must take the mention
    free = AmrTransitionSystem(mentions="rules", take_mentions=True, entity_types={"PROPER": "city"}, entity_names={})
    assert free.oracle(MACRON)[:2] == ["MERGE", "ENTITY:person"]  # the oracle is not bound by it: MERGE at a mention
    assert free.derive(MACRON).symbols == free.oracle(MACRON)  # and training replays it from the free state
    assert free.derivation_state(MACRON).allowed().merge and not free.initial_state(MACRON).allowed().merge


def test_a_recorded_type_the_kind_cannot_name_is_not_used():
    """An archive fitted before the mapping recorded ORG -> world-region (The Little Prince's one ORG, "Indies")."""
    assert entity_type("ORG", ["Microsoft"], {"ORG": "world-region"}, {}) == "company"
    assert entity_type("ORG", ["Pixar"], {"ORG": "university"}, {}) == "university"  # one it can: training refined it
