"""Output grammars: the state machines that decoding runs on (see :mod:`toolkit.grammars.grammar`)."""

from toolkit.grammars.bracketed import BracketedGrammar, BracketedState
from toolkit.grammars.grammar import AllExcept, Allowed, Derivation, Grammar, State, SymbolTable
from toolkit.grammars.sequence import SequenceGrammar, SequenceState
from toolkit.grammars.tags import TagGrammar, TagState

__all__ = [
    "AllExcept",
    "Allowed",
    "BracketedGrammar",
    "BracketedState",
    "Derivation",
    "Grammar",
    "SequenceGrammar",
    "SequenceState",
    "State",
    "SymbolTable",
    "TagGrammar",
    "TagState",
]
