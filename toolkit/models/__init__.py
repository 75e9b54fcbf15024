"""Models, registered under :class:`Model`."""

from toolkit.models.encoder_decoder import EncoderDecoder
from toolkit.models.model import Model

__all__ = ["EncoderDecoder", "Model"]
