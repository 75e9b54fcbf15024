"""Token embedders: a sentence's words in, one vector per word out, registered under :class:`TokenEmbedder`.

``pretrained_transformer`` needs the ``transformers`` extra, and ``spacy_vectors`` (and ``upos`` on raw
text) spaCy and a pipeline; each is imported only when such an embedder is built.
"""

from toolkit.modules.token_embedders.characters import CharacterEmbedder
from toolkit.modules.token_embedders.hashed_features import HashedFeaturesEmbedder
from toolkit.modules.token_embedders.pretrained_transformer import PretrainedTransformerEmbedder
from toolkit.modules.token_embedders.scalar_mix import ScalarMix
from toolkit.modules.token_embedders.spacy_vectors import SpacyVectorsEmbedder
from toolkit.modules.token_embedders.token_embedder import TokenEmbedder
from toolkit.modules.token_embedders.upos import UposEmbedder
from toolkit.modules.token_embedders.word_embedders import WordEmbedders

__all__ = [
    "CharacterEmbedder",
    "HashedFeaturesEmbedder",
    "PretrainedTransformerEmbedder",
    "ScalarMix",
    "SpacyVectorsEmbedder",
    "TokenEmbedder",
    "UposEmbedder",
    "WordEmbedders",
]
