"""Sentence encoders, registered under :class:`Seq2SeqEncoder`."""

from toolkit.modules.encoders.encoder import Seq2SeqEncoder
from toolkit.modules.encoders.phrase_transformer import PhraseTransformerEncoder
from toolkit.modules.encoders.transformer import TransformerEncoder

__all__ = ["PhraseTransformerEncoder", "Seq2SeqEncoder", "TransformerEncoder"]
