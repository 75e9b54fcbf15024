"""Autoregressive decoders, registered under :class:`Decoder`."""

from toolkit.modules.decoders.decoder import Decoder, DecoderCache
from toolkit.modules.decoders.stack_transformer import StackTransformerDecoder
from toolkit.modules.decoders.state_mlp import StateMlpDecoder
from toolkit.modules.decoders.transformer import TransformerDecoder

__all__ = ["Decoder", "DecoderCache", "StackTransformerDecoder", "StateMlpDecoder", "TransformerDecoder"]
