"""Phrase generators (n-gram spans, spaCy dependency edges) and the inclusion adjacency of words and phrases."""

import importlib.util
import sys

import pytest
import torch

from toolkit.errors import ConfigurationError
from toolkit.phrases import NgramPhrases, PhraseGenerator, SpacyDependencyPhrases, hypernode_membership, node_adjacency, pad_memberships, spacy_dependency
from toolkit.phrases.spacy_dependency import DEFAULT_PIPELINE, spacy_pipeline_installed

SENTENCE = "the cat sat on the mat".split()


def test_ngram_spans_of_two_words():
    assert NgramPhrases(2)(SENTENCE) == ((0, 1), (1, 2), (2, 3), (3, 4), (4, 5))


def test_ngram_spans_up_to_three_words_shorter_first():
    assert NgramPhrases(3)("a b c d".split()) == ((0, 1), (1, 2), (2, 3), (0, 1, 2), (1, 2, 3))


def test_ngram_spans_longer_than_the_sentence_do_not_exist():
    assert NgramPhrases(4)(["one"]) == ()
    assert NgramPhrases(4)(["one", "two"]) == ((0, 1),)
    assert len(NgramPhrases(3)(["w"] * 10)) == 9 + 8  # (k - 1) n - k (k - 1) / 2


def test_ngram_max_n_below_two_names_the_key():
    with pytest.raises(ConfigurationError, match=r"^max_n: must be at least 2"):
        PhraseGenerator.from_params({"type": "ngram", "max_n": 1})


def test_batch_membership_from_lengths_matches_the_per_example_hypernodes():
    generator = NgramPhrases(3)
    lengths = [5, 2, 1, 4]
    vectorised = generator.batch_membership(torch.tensor(lengths), 5)
    per_example = hypernode_membership([generator(["w"] * n) for n in lengths], 5)
    for row, n in enumerate(lengths):
        as_sets = lambda membership: {tuple(node.nonzero().flatten().tolist()) for node in membership if node.any()}  # noqa: E731
        assert as_sets(vectorised[row]) == as_sets(per_example[row]) == set(generator(["w"] * n))
    assert torch.equal(vectorised[0], per_example[0])  # the longest sentence: the same order too


def test_generators_normalise_their_output():
    class Messy(PhraseGenerator):
        def generate(self, tokens):
            return [[2, 0], (0, 2), (1,), [1, 1, 2]]

    assert Messy()(["a", "b", "c"]) == ((0, 2), (1, 2))  # sorted, deduplicated, no single words

    class Broken(PhraseGenerator):
        def generate(self, tokens):
            return [(0, 3)]

    with pytest.raises(ValueError, match="for a sentence of 3 tokens"):
        Broken()(["a", "b", "c"])


def test_membership_pads_sentences_with_fewer_hypernodes():
    membership = hypernode_membership([((0, 1), (1, 2)), ((0, 1),), ()], 3)
    assert membership.shape == (3, 2, 3)
    assert membership[0].int().tolist() == [[1, 1, 0], [0, 1, 1]]
    assert membership[1].int().tolist() == [[1, 1, 0], [0, 0, 0]]
    assert not membership[2].any()


def test_per_sentence_memberships_pad_into_a_batch():
    """What the hypernode encoder does: one (m, n) membership per sentence when indexing, padding per batch."""
    generator = NgramPhrases(2)
    sentences = [["one"], ["a", "b", "c"], []]
    padded = pad_memberships([hypernode_membership([generator(s)], len(s))[0] for s in sentences], 4)
    assert torch.equal(padded, hypernode_membership([generator(s) for s in sentences], 4))
    assert padded.shape == (3, 2, 4) and padded[1].int().tolist() == [[1, 1, 0, 0], [0, 1, 1, 0]]


def test_adjacency_by_hand():
    """Words a b c with phrases {a,b}, {b,c}, {a,b,c}: nodes a b c ab bc abc."""
    membership = hypernode_membership([((0, 1), (1, 2), (0, 1, 2))], 3)
    adjacency, valid = node_adjacency(membership, torch.ones(1, 3, dtype=torch.bool))
    expected = [
        # a  b  c  ab bc abc
        [1, 0, 0, 1, 0, 1],  # a: itself and the phrases containing it
        [0, 1, 0, 1, 1, 1],  # b
        [0, 0, 1, 0, 1, 1],  # c
        [1, 1, 0, 1, 0, 1],  # ab: its words, itself, abc around it; not bc (overlap is not inclusion)
        [0, 1, 1, 0, 1, 1],  # bc
        [1, 1, 1, 1, 1, 1],  # abc: every node is inside it
    ]
    assert adjacency[0].int().tolist() == expected
    assert valid.all()
    assert torch.equal(adjacency, adjacency.transpose(1, 2))


def test_adjacency_of_padding_is_only_a_self_loop():
    """A sentence of 2 words in a batch of 3-word ones: its padding word and padding phrase attend to
    themselves only, and no real node attends to them.
    """
    membership = hypernode_membership([((0, 1), (1, 2)), ((0, 1),)], 3)
    word_mask = torch.tensor([[True, True, True], [True, True, False]])
    adjacency, valid = node_adjacency(membership, word_mask)
    assert valid[1].tolist() == [True, True, False, True, False]
    expected = [
        # a  b  pad ab pad
        [1, 0, 0, 1, 0],
        [0, 1, 0, 1, 0],
        [0, 0, 1, 0, 0],
        [1, 1, 0, 1, 0],
        [0, 0, 0, 0, 1],
    ]
    assert adjacency[1].int().tolist() == expected


def test_dependency_edges_as_hypernodes_overlap_without_inclusion():
    """Edges (head, dependent) share words but never contain each other: phrases are linked only through words."""
    membership = hypernode_membership([((0, 1), (1, 2))], 3)
    adjacency, _ = node_adjacency(membership, torch.ones(1, 3, dtype=torch.bool))
    assert not adjacency[0, 3, 4] and adjacency[0, 3, 1] and adjacency[0, 4, 1]


def test_missing_spacy_says_so_and_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "spacy", None)  # `import spacy` now fails, as without the extra
    with pytest.raises(ConfigurationError, match=r"spaCy is not installed: pip install \"parsing-toolkit\[spacy\]\""):
        PhraseGenerator.from_params({"type": "spacy_dependency"})


@pytest.mark.skipif(not importlib.util.find_spec("spacy"), reason='spaCy is not installed (pip install -e ".[spacy]")')
def test_missing_spacy_pipeline_says_so_and_how_to_install(monkeypatch):
    with pytest.raises(ConfigurationError, match=r"pipeline 'no_such_pipeline' is not installed: .*spacy download no_such_pipeline"):
        SpacyDependencyPhrases(pipeline="no_such_pipeline")
    monkeypatch.setattr(spacy_dependency, "_importable", lambda name: name == "spacy")  # the default pipeline missing
    with pytest.raises(ConfigurationError, match=rf"pipeline '{DEFAULT_PIPELINE}' is not installed: pip install \"parsing-toolkit\[spacy\]\""):
        SpacyDependencyPhrases()


@pytest.mark.skipif(not spacy_pipeline_installed(), reason=f'spaCy or its pipeline {DEFAULT_PIPELINE} is not installed (pip install -e ".[spacy]")')
def test_spacy_dependency_edges_of_a_hand_checked_sentence():
    generator = PhraseGenerator.from_params({"type": "spacy_dependency"})
    tokens = "The quick brown fox jumps over the lazy dog .".split()
    # det(fox, The) amod(fox, quick) amod(fox, brown) nsubj(jumps, fox) prep(jumps, over)
    # det(dog, the) amod(dog, lazy) pobj(over, dog) punct(jumps, .); "jumps" is the root
    expected = {(0, 3), (1, 3), (2, 3), (3, 4), (4, 5), (6, 8), (7, 8), (5, 8), (4, 9)}
    hypernodes = generator(tokens)
    assert set(hypernodes) == expected and len(hypernodes) == len(tokens) - 1


@pytest.mark.skipif(not spacy_pipeline_installed(), reason=f'spaCy or its pipeline {DEFAULT_PIPELINE} is not installed (pip install -e ".[spacy]")')
def test_spacy_parses_the_given_tokens_without_retokenising():
    generator = SpacyDependencyPhrases()
    tokens = ["I", "don't", "like", "New-York-style", "pizza", "!"]  # spaCy's tokenizer would split two of them
    hypernodes = generator(tokens)
    assert all(0 <= i < len(tokens) for node in hypernodes for i in node)
    assert len(hypernodes) == len(tokens) - 1  # one sentence: every token but the root has a head
    assert generator(tokens) == hypernodes and tuple(tokens) in generator.cache  # parsed once
