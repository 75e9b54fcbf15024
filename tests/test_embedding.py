"""Using archives from Python: ``toolkit.load_predictor`` and the spaCy ``toolkit_parser`` component, on real archives."""

from types import SimpleNamespace

import penman
import pytest

from predictors import AmrPredictor, DependencyPredictor, Predictor
from toolkit import load_predictor
from toolkit.errors import ConfigurationError
from toolkit.grammars.bracketed import BracketedGrammar
from toolkit.grammars.sequence import SequenceGrammar
from toolkit.grammars.tags import TagGrammar
from transition_systems.amr.system import AmrTransitionSystem
from transition_systems.arc_standard import ArcStandard
from tree_codecs.lcrs_dfs import LcrsDfsCodec

SENTENCES = ["The cat sat on the mat .", "It purred ."]


def test_load_predictor_picks_the_predictor_the_grammar_names(dependency_archive, amr_archive):
    parser = load_predictor(dependency_archive, device="cpu")
    assert isinstance(parser, DependencyPredictor) and isinstance(load_predictor(amr_archive), AmrPredictor)
    outputs = parser.predict_batch(SENTENCES + [""])
    assert [output.get("tokens") for output in outputs[:2]] == [sentence.split() for sentence in SENTENCES]
    assert all(len(output["heads"]) == len(output["tokens"]) == len(output["deprels"]) for output in outputs[:2])
    assert outputs[2] == {"error": "empty input line", "input": ""}  # at its place: nothing is dropped
    assert parser.predict(SENTENCES[1]) == outputs[1]
    with pytest.raises(
        ConfigurationError,
        match="the amr predictor writes AMR graphs, and this archive's grammar .ArcStandard. predicts dependency trees: use the dependency predictor",
    ):
        load_predictor(dependency_archive, "amr")


GRAMMARS = {
    "sequence": SequenceGrammar,
    "bracketed": BracketedGrammar,
    "lcrs_dfs": LcrsDfsCodec,
    "tags": TagGrammar,
    "arc_standard": ArcStandard,
    "amr": AmrTransitionSystem,
}


@pytest.mark.parametrize("predictor", ["semantic_parser", "tagger", "dependency", "amr"])
@pytest.mark.parametrize("grammar", GRAMMARS)
def test_a_predictor_refuses_every_grammar_whose_results_it_cannot_write(predictor, grammar):
    """The semantic parser wrote a dependency tree's repr as a logical form, and the tagger a PENMAN
    string's characters as tags; each built-in predictor now takes only its own kind of result.
    """
    archive = SimpleNamespace(model=SimpleNamespace(grammar=GRAMMARS[grammar]()), dataset_reader=None)
    default = GRAMMARS[grammar].default_predictor
    if predictor == default:
        assert Predictor.by_name(predictor).writes == GRAMMARS[grammar].result_kind
        return
    with pytest.raises(ConfigurationError, match=f"^the {predictor} predictor writes .*: use the {default} predictor"):
        Predictor.by_name(predictor)(archive)


def test_load_predictor_with_a_beam_decodes_the_same_trees_in_batch_and_alone(dependency_archive):
    parser = load_predictor(dependency_archive, beam_size=3)
    assert parser.predict_batch(SENTENCES) == [parser.predict(sentence) for sentence in SENTENCES]


spacy = pytest.importorskip("spacy", reason="the spaCy component needs the spaCy extra: pip install -e .[spacy]")


def test_spacy_component_sets_heads_and_relations_per_sentence(dependency_archive):
    from spacy import displacy

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("toolkit_parser", config={"archive": str(dependency_archive)})  # found through the spacy_factories entry point
    doc = nlp("The cat sat on the mat. It  purred.")
    assert [sentence.text for sentence in doc.sents] == ["The cat sat on the mat.", "It  purred."]
    expected = load_predictor(dependency_archive).predict_tokens([["The", "cat", "sat", "on", "the", "mat", "."], ["It", "purred", "."]])
    for sentence, tree in zip(doc.sents, expected):
        words = [token for token in sentence if not token.is_space]
        for token, head, relation in zip(words, tree.heads, tree.deprels):
            if head == 0:
                assert token.head == token and token.dep_ == "ROOT"
            else:
                assert token.head == words[head - 1] and token.dep_ == relation
    space = next(token for token in doc if token.is_space)
    assert space.head == doc[space.i - 1] and space.dep_ == "dep"
    svg = displacy.render(doc, style="dep")
    assert svg.startswith("<svg") and all(f">{word}<" in svg for word in ("The", "cat", "sat", "It"))  # punctuation merges into words


def test_spacy_component_writes_relations_whose_hash_does_not_fit_an_int64(dependency_archive, monkeypatch):
    """``obl:npmod`` and ``list`` hash above 2**63: writing them overflowed, so a parse using them crashed the pipeline."""
    from toolkit.data.dependency_tree import DependencyTree

    nlp = spacy.blank("en")
    component = nlp.add_pipe("toolkit_parser", config={"archive": str(dependency_archive)})
    assert all(nlp.vocab.strings.add(label) >= 2**63 for label in ("obl:npmod", "list"))
    monkeypatch.setattr(component.predictor, "predict_tokens", lambda sentences: [DependencyTree((0, 1, 1), ("root", "obl:npmod", "list"))])
    doc = nlp("Hello A. B.")
    assert [(token.head.i, token.dep_) for token in doc] == [(0, "ROOT"), (0, "obl:npmod"), (0, "list")]


def test_spacy_component_parses_a_sentence_longer_than_the_model_in_pieces(dependency_archive, monkeypatch):
    """Words past the model's limit were left unattached (``dep`` to themselves); now each piece has its parse and root."""
    nlp = spacy.blank("en")
    component = nlp.add_pipe("toolkit_parser", config={"archive": str(dependency_archive)})
    monkeypatch.setattr(component.predictor, "max_words", 3)
    doc = nlp("Dogs bark and cats sleep all day")
    pieces = [["Dogs", "bark", "and"], ["cats", "sleep", "all"], ["day"]]
    expected = component.predictor.predict_tokens(pieces)
    for start, tree in zip((0, 3, 6), expected):
        for position, (head, relation) in enumerate(zip(tree.heads, tree.deprels)):
            token = doc[start + position]
            assert token.head.i == (token.i if head == 0 else start + head - 1)
            assert token.dep_ == ("ROOT" if head == 0 else relation)
    assert sum(token.dep_ == "ROOT" for token in doc) == 3


def test_spacy_component_parses_a_doc_without_sentences_as_one_and_pipe_agrees(dependency_archive):
    nlp = spacy.blank("en")
    nlp.add_pipe("toolkit_parser", config={"archive": str(dependency_archive), "batch_size": 2})
    texts = ["The cat sat on the mat.", "It purred.", "Dogs bark."]
    piped = [[(token.head.i, token.dep_) for token in doc] for doc in nlp.pipe(texts)]
    assert piped == [[(token.head.i, token.dep_) for token in nlp(text)] for text in texts]
    assert all(sum(dep == "ROOT" for _, dep in doc) == 1 for doc in piped)


def test_spacy_component_writes_amr_graphs(amr_archive):
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("toolkit_parser", config={"archive": str(amr_archive)})
    doc = nlp("The little prince smiled. He left.")
    graphs = [sentence._.amr for sentence in doc.sents]
    assert len(graphs) == 2 and doc._.amr == "\n\n".join(graphs)
    assert all(penman.decode(graph).top for graph in graphs)


def test_spacy_component_errors_are_one_clear_message(tmp_path, dependency_archive):
    nlp = spacy.blank("en")
    with pytest.raises(ConfigurationError, match="needs an archive"):
        nlp.add_pipe("toolkit_parser")
    with pytest.raises(Exception, match="archive not found"):
        nlp.add_pipe("toolkit_parser", name="missing", config={"archive": str(tmp_path / "nothing.tar.gz")})
