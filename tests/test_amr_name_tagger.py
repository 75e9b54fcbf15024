"""The name tagger learned from a domain's training graphs: tags, mentions, types, and what a grammar records of it."""

import penman
import pytest

from toolkit.data.example import Example
from transition_systems.amr import AmrTransitionSystem
from transition_systems.amr.entity_types import TYPED, entity_type
from transition_systems.amr.mentions import Mention
from transition_systems.amr.name_tagger import NameTagger, merged, shape, spans_of, tags_of

DRUGS = ["selumetinib", "trametinib", "imatinib", "gefitinib", "erlotinib", "sorafenib"]
CELLS = ["HCT116", "SW480", "A549", "H1299", "MCF7", "HT29"]


def sentences():
    """Drugs (-inib) and cell lines (capitals and digits) in a few frames, and plain words."""
    made = []
    for drug, cells in zip(DRUGS, CELLS):
        made.append((["we", "treated", cells, "cells", "with", drug, "."], {(2, 3): "cell-line", (5, 6): "small-molecule"}))
        made.append(([drug, "inhibits", "growth", "of", cells, "cells", "."], {(0, 1): "small-molecule", (4, 5): "cell-line"}))
        made.append((["the", "cells", "grew", "well", "."], {}))
    return made


def test_shapes_and_tags_round_trip():
    assert shape("HCT116") == "XXdd" and shape("selumetinib") == "xx" and shape("B-Raf") == "X-Xxx"
    tags = tags_of(6, {(0, 2): "protein", (4, 5): "gene"})
    assert tags == ["B-protein", "I-protein", "O", "O", "B-gene", "O"]
    assert spans_of(tags) == {(0, 2): "protein", (4, 5): "gene"}


def test_a_tagger_learns_names_it_never_saw_from_their_spelling_and_context():
    tagger = NameTagger.train(sentences())
    tokens = ["we", "treated", "LoVo2", "cells", "with", "dasatinib", "."]  # neither name was in training
    assert tagger.mentions(tokens) == (Mention(2, 3, f"{TYPED}cell-line"), Mention(5, 6, f"{TYPED}small-molecule"))
    assert tagger.mentions(["the", "cells", "grew", "well", "."]) == ()
    again = NameTagger(tagger.weights)  # as an archive's config rebuilds it
    assert again.tag(tokens) == tagger.tag(tokens)


def test_learned_mentions_come_first_and_others_fill_in():
    learned = (Mention(2, 3, f"{TYPED}disease"),)
    ner = (Mention(0, 1, "DATE"), Mention(2, 4, "ORG"), Mention(5, 6, "PERSON"))
    assert merged(learned, ner) == (Mention(0, 1, "DATE"), Mention(2, 3, f"{TYPED}disease"), Mention(5, 6, "PERSON"))


def test_a_typed_mention_names_its_type_unless_training_or_a_rule_types_the_name():
    assert entity_type(f"{TYPED}disease", ["CRC"], {}, {}) == "disease"
    assert entity_type(f"{TYPED}disease", ["CRC"], {}, {"CRC": "cell-line"}) == "cell-line"
    assert entity_type(f"{TYPED}nucleic-acid", ["Arizona"], {}, {}) == "state"  # the gazetteer over a tagger's guess
    assert entity_type(f"{TYPED}protein", ["Mayo", "Clinic"], {}, {}) == "hospital"  # a cue word likewise


def test_a_tagger_trained_without_words_learns_only_from_spelling_and_context():
    """Word dropout hides the word itself from that share of the training steps: at 1, no weight is the word's."""
    blind = NameTagger.train(sentences(), word_dropout=1.0)
    seeing = NameTagger.train(sentences(), word_dropout=0.0)
    assert not any(feature.startswith(("w=", "t+w=")) for feature in blind.weights)
    assert any(feature.startswith("w=") for feature in seeing.weights)
    assert blind.mentions(["we", "treated", "LoVo2", "cells", "with", "dasatinib", "."])  # spelling and neighbours still find names


def graph_example(tokens, graph):
    return Example(tokens, penman.decode(graph), {"lemmas": [token.lower() for token in tokens]})


def test_a_grammar_that_learns_names_records_its_tagger_and_parses_with_it():
    examples = []
    for drug, cells in zip(DRUGS, CELLS):
        tokens = ["we", "treated", cells, "cells", "with", drug, "."]
        graph = (
            f'(t / treat-01 :ARG0 (w / we) :ARG1 (c / cell-line :name (n / name :op1 "{cells}")) :ARG2 (s / small-molecule :name (n2 / name :op1 "{drug}")))'
        )
        examples.append(graph_example(tokens, graph))
    grammar = AmrTransitionSystem(mentions="none", learn_names=True, restrict_pred_labels=False)
    fitted = grammar.fit(examples)
    assert fitted["name_tagger"] and fitted["entity_names"]["selumetinib"] == "small-molecule"
    rebuilt = AmrTransitionSystem(mentions="none", name_tagger=fitted["name_tagger"], entity_names=fitted["entity_names"])
    sentence = rebuilt.initial_state(Example(["we", "treated", "LoVo2", "cells", "with", "dasatinib", "."])).sentence
    assert [(m.start, m.end) for m in sentence.mentions] == [(2, 3), (5, 6)]
    assert [rebuilt.entity_type(m.kind, sentence.tokens[m.start : m.end]) for m in sentence.mentions] == ["cell-line", "small-molecule"]


@pytest.mark.parametrize("learn", [False, True])
def test_without_learn_names_nothing_changes(learn):
    grammar = AmrTransitionSystem(mentions="none", learn_names=learn, restrict_pred_labels=False)
    assert ("name_tagger" in grammar.fit([])) == learn
