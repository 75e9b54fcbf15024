"""Bracketed expressions: token sequences that always form one balanced s-expression.

The logical forms of GEO, ATIS and JOBS are s-expressions (``( lambda $0 e ( state:t $0 ) )``).
A plain sequence decoder can emit ``)`` too often or too rarely; this grammar rules that out, so
every prediction parses. It constrains only brackets, not arities: that is the tree codecs' job.

At each step:

- before anything: any atom or an opening bracket (one atom alone is a whole expression);
- right after an opening bracket, with *head_first*: an atom (the operator), never a bracket;
- inside brackets: an atom, an opening bracket or a closing one, as long as every open bracket
  can still be closed within *max_length* symbols;
- once the outermost expression is closed: only the end symbol.
"""

from dataclasses import dataclass

from toolkit.data.example import Example
from toolkit.data.symbols import EOS
from toolkit.errors import ConfigurationError
from toolkit.grammars.grammar import AllExcept, Allowed, Grammar, State
from toolkit.grammars.sequence import SequenceGrammar


@dataclass(frozen=True)
class BracketedState(State):
    tokens: tuple[str, ...]
    depth: int
    max_length: int
    open: str = "("
    close: str = ")"
    head_first: bool = True
    done: bool = False

    def allowed(self) -> Allowed:
        if self.done:
            return ()
        if self.tokens and self.depth == 0:
            return (EOS,)
        remaining = self.max_length - len(self.tokens)  # symbols left before the end symbol
        after_open = bool(self.tokens) and self.tokens[-1] == self.open
        if after_open and self.head_first:
            return AllExcept(frozenset({self.open, self.close, EOS}))
        if remaining <= self.depth:
            return (self.close,)
        excluded = {EOS}
        if not self.tokens or after_open:
            excluded.add(self.close)  # nothing to close, or empty brackets
        if remaining < self.depth + 3:  # "(", its head and its ")" no longer fit
            excluded.add(self.open)
        return AllExcept(frozenset(excluded))

    def apply(self, symbol: str) -> "BracketedState":
        if symbol == EOS:
            return BracketedState(self.tokens, self.depth, self.max_length, self.open, self.close, self.head_first, done=True)
        depth = self.depth + (symbol == self.open) - (symbol == self.close)
        return BracketedState(self.tokens + (symbol,), depth, self.max_length, self.open, self.close, self.head_first)

    def is_final(self) -> bool:
        return self.done

    def result(self) -> str:
        return " ".join(self.tokens)


@Grammar.register("bracketed")
class BracketedGrammar(SequenceGrammar):
    """One balanced s-expression of at most *max_length* tokens, then the end symbol."""

    def __init__(self, max_length: int = 200, open: str = "(", close: str = ")", head_first: bool = True):
        if max_length < 1:
            raise ConfigurationError(f"must be at least 1, got {max_length}", key="max_length")
        super().__init__(max_length)
        self.open, self.close, self.head_first = open, close, head_first

    def initial_state(self, example: Example) -> BracketedState:
        return BracketedState((), 0, self.max_length, self.open, self.close, self.head_first)
