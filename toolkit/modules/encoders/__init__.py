"""Sentence encoders, registered under :class:`Seq2SeqEncoder`."""

from toolkit.modules.encoders.encoder import Seq2SeqEncoder
from toolkit.modules.encoders.hypernode_transformer import HypernodeTransformerEncoder
from toolkit.modules.encoders.phrase_transformer import PhraseTransformerEncoder
from toolkit.modules.encoders.transformer import TransformerEncoder

__all__ = ["HypernodeTransformerEncoder", "PhraseTransformerEncoder", "Seq2SeqEncoder", "TransformerEncoder"]
