"""Autoregressive decoders, registered under :class:`Decoder`."""

from toolkit.modules.decoders.decoder import Decoder, DecoderCache
from toolkit.modules.decoders.transformer import TransformerDecoder

__all__ = ["Decoder", "DecoderCache", "TransformerDecoder"]
