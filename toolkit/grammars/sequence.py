"""The simplest grammar: any sequence of target tokens, closed by an end symbol (plain seq2seq)."""

from collections.abc import Collection
from dataclasses import dataclass

from toolkit.data.example import Example
from toolkit.data.symbols import EOS
from toolkit.grammars.grammar import Grammar, State


@dataclass(frozen=True)
class SequenceState(State):
    """The target tokens so far; final once the end symbol is emitted."""

    tokens: tuple[str, ...]
    max_length: int
    done: bool = False

    def allowed(self) -> Collection[str] | None:
        if self.done:
            return ()
        return (EOS,) if len(self.tokens) >= self.max_length else None

    def apply(self, symbol: str) -> "SequenceState":
        if symbol == EOS:
            return SequenceState(self.tokens, self.max_length, done=True)
        return SequenceState(self.tokens + (symbol,), self.max_length)

    def is_final(self) -> bool:
        return self.done

    def result(self) -> str:
        return " ".join(self.tokens)


@Grammar.register("sequence")
class SequenceGrammar(Grammar):
    """Target strings split on whitespace; decoding stops at the end symbol or *max_length* tokens."""

    state_features = frozenset()

    def __init__(self, max_length: int = 200):
        self.max_length = max_length

    def oracle(self, example: Example) -> list[str]:
        return str(example.target).split() + [EOS]

    def initial_state(self, example: Example) -> SequenceState:
        return SequenceState((), self.max_length)

    def max_steps(self, example: Example) -> int:
        return self.max_length + 1  # the tokens, then the end symbol
