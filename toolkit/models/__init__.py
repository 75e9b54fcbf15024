"""Models, registered under :class:`Model`."""

from toolkit.models.encoder_decoder import EncoderDecoder
from toolkit.models.model import Model
from toolkit.models.tagger import Tagger, TagGrammar

__all__ = ["EncoderDecoder", "Model", "TagGrammar", "Tagger"]
