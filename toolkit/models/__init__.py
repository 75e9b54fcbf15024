"""Models, registered under :class:`Model`."""

from toolkit.grammars.tags import TagGrammar
from toolkit.models.encoder_decoder import EncoderDecoder
from toolkit.models.model import Model
from toolkit.models.tagger import Tagger

__all__ = ["EncoderDecoder", "Model", "TagGrammar", "Tagger"]
