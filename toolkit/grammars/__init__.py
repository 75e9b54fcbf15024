"""Output grammars: the state machines that decoding runs on (see :mod:`toolkit.grammars.grammar`)."""

from toolkit.grammars.anonymized import AnonymizedGrammar, RestoringState
from toolkit.grammars.bracketed import BracketedGrammar, BracketedState
from toolkit.grammars.grammar import AllExcept, Allowed, Derivation, Grammar, State, SymbolTable
from toolkit.grammars.sequence import SequenceGrammar, SequenceState
from toolkit.grammars.tags import TagGrammar, TagState

__all__ = [
    "AllExcept",
    "Allowed",
    "AnonymizedGrammar",
    "BracketedGrammar",
    "BracketedState",
    "Derivation",
    "Grammar",
    "RestoringState",
    "SequenceGrammar",
    "SequenceState",
    "State",
    "SymbolTable",
    "TagGrammar",
    "TagState",
]
