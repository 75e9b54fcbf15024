"""Phrase generators and the hypernode adjacency of "attention over phrases".

A phrase generator lists the hypernodes of a tokenised sentence: tuples of token indices that an
encoder treats as extra nodes beside the words. Importing this package registers the built-in
generators (``"ngram"``, ``"spacy_dependency"``).
"""

from toolkit.phrases.adjacency import hypernode_membership, node_adjacency, pad_memberships
from toolkit.phrases.ngram import NgramPhrases
from toolkit.phrases.phrase_generator import Hypernode, PhraseGenerator
from toolkit.phrases.spacy_dependency import SpacyDependencyPhrases

__all__ = ["Hypernode", "NgramPhrases", "PhraseGenerator", "SpacyDependencyPhrases", "hypernode_membership", "node_adjacency", "pad_memberships"]
