"""Output grammars: the state machines that decoding runs on (see :mod:`toolkit.grammars.grammar`)."""

from toolkit.grammars.grammar import Derivation, Grammar, State
from toolkit.grammars.sequence import SequenceGrammar, SequenceState

__all__ = ["Derivation", "Grammar", "SequenceGrammar", "SequenceState", "State"]
