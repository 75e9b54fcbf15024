"""Token embedders: a sentence's words in, one vector per word out, registered under :class:`TokenEmbedder`.

``pretrained_transformer`` needs the ``transformers`` extra, imported only when one is built.
"""

from toolkit.modules.token_embedders.characters import CharacterEmbedder
from toolkit.modules.token_embedders.pretrained_transformer import PretrainedTransformerEmbedder
from toolkit.modules.token_embedders.scalar_mix import ScalarMix
from toolkit.modules.token_embedders.token_embedder import TokenEmbedder

__all__ = ["CharacterEmbedder", "PretrainedTransformerEmbedder", "ScalarMix", "TokenEmbedder"]
