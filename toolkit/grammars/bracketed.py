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

With ``restrict_arities``, :meth:`BracketedGrammar.fit` also learns from the training targets how
many arguments each operator takes (``flight``: 1, ``and``: 1 to 15) and which atoms stand alone,
and decoding keeps to them (:class:`AritiesState`): after ``(`` only an operator, a bracket closes
only at an argument count training showed, an atom that never stood alone is never an argument,
and every open bracket must still be completable, arguments included, within *max_length*.
Rules of the logical language, learned rather than written, as a type system would give them.

With ``copy_atoms`` as well, it learns which atoms training always copied from the question (the
entity placeholders ``ci0``, ``st0``, ...: every target that has one has it in its question) and
allows them only where the question has them.
"""

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

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


class Arities:
    """What the training targets showed of each atom: the argument counts it took as an operator, and 0
    where it stood alone as an argument (``{"flight": [1], "ci0": [0], "and": [1, 2, 3]}``).
    """

    def __init__(self, table: Mapping[str, Iterable[int]]):
        self.table = {atom: frozenset(counts) for atom, counts in table.items()}
        self.leaves = frozenset(atom for atom, counts in self.table.items() if 0 in counts)
        self.fewest = {atom: min(c for c in counts if c) for atom, counts in self.table.items() if any(counts)}
        self.fewest_any = min(self.fewest.values(), default=1)
        # the operators whose fewest arguments fit in a budget of k symbols, for every k that matters
        self.heads_within = [frozenset(h for h, fewest in self.fewest.items() if fewest <= k) for k in range(max(self.fewest.values(), default=0) + 1)]

    @classmethod
    def of(cls, expressions: Iterable[Sequence[str]], open: str, close: str) -> "Arities":
        """Count the arities in token sequences of balanced, operator-first s-expressions."""
        table: dict[str, set[int]] = defaultdict(set)
        for tokens in expressions:
            frames: list[list[Any]] = []  # [operator or None, arguments so far] per open bracket
            for token in tokens:
                if token == open:
                    frames.append([None, 0])
                elif token == close:
                    head, count = frames.pop()
                    table[head].add(count)
                    if frames:
                        frames[-1][1] += 1
                elif frames and frames[-1][0] is None:
                    frames[-1][0] = token
                else:
                    table[token].add(0)
                    if frames:
                        frames[-1][1] += 1
        return cls(table)

    def to_config(self) -> dict[str, list[int]]:
        return {atom: sorted(counts) for atom, counts in sorted(self.table.items())}

    def more_needed(self, head: str, count: int) -> int | None:
        """The fewest arguments *head* still needs after *count* of them (``None``: it took fewer than that)."""
        return min((c - count for c in self.table.get(head, ()) if c >= count), default=None)


def copied_atoms(pairs: Iterable[tuple[set[str], set[str]]], least: int = 2) -> frozenset[str]:
    """From (question words, target atoms) pairs: the atoms that every target having them (at least
    *least* targets) took from its question.
    """
    uses, copies = Counter(), Counter()
    for words, atoms in pairs:
        for atom in atoms:
            uses[atom] += 1
            copies[atom] += atom in words
    return frozenset(atom for atom, count in uses.items() if count >= least and copies[atom] == count)


Frame = tuple[str | None, int]  # an open bracket: its operator (None right after "(") and its arguments so far


@dataclass(frozen=True, eq=False)
class AritiesState(State):
    """A :class:`BracketedState` (operator first) that also keeps to the arities training showed."""

    tokens: tuple[str, ...]
    frames: tuple[Frame, ...]
    max_length: int
    arities: Arities
    open: str = "("
    close: str = ")"
    absent: frozenset[str] = frozenset()  # copied atoms this question does not have
    done: bool = False

    def symbols_to_finish(self, frames: Sequence[Frame]) -> int | None:
        """The fewest symbols that close every bracket of *frames* (``None``: none can). Each frame but the
        last holds an open bracket, which will be one of its arguments.
        """
        total, last = 0, len(frames) - 1
        for i, (head, count) in enumerate(frames):
            if head is None:
                total += 1 + self.arities.fewest_any + 1  # an operator, its arguments, ")"
                continue
            more = self.arities.more_needed(head, count + (i < last))
            if more is None:
                return None
            total += more + 1
        return total

    def fits(self, frames: Sequence[Frame]) -> bool:
        """Whether *frames*, one symbol from now, can still be finished within *max_length*."""
        needed = self.symbols_to_finish(frames)
        return needed is not None and len(self.tokens) + 1 + needed <= self.max_length

    @cached_property
    def answer(self) -> Allowed:
        if self.done:
            return ()
        leaves = self.arities.leaves - self.absent if self.absent else self.arities.leaves
        if not self.frames:
            if self.tokens:
                return (EOS,)
            return leaves | ({self.open} if self.fits(((None, 0),)) else set())
        *outer, (head, count) = self.frames
        if head is None:  # an operator whose fewest arguments still fit
            outside = (self.symbols_to_finish(self.frames) or 0) - (1 + self.arities.fewest_any + 1)
            budget = self.max_length - len(self.tokens) - 1 - 1 - outside  # the operator and ")" aside
            heads = self.arities.heads_within[min(budget, len(self.arities.heads_within) - 1)] if budget >= 0 else frozenset()
            return heads - self.absent if self.absent else heads
        allowed: set[str] = set()
        if count in self.arities.table[head]:
            allowed.add(self.close)
        if self.fits([*outer, (head, count + 1)]):
            allowed |= leaves
        if self.fits([*outer, (head, count), (None, 0)]):
            allowed.add(self.open)
        return frozenset(allowed)

    def allowed(self) -> Allowed:
        return self.answer

    def apply(self, symbol: str) -> "AritiesState":
        frames = self.frames
        if symbol == EOS:
            return AritiesState(self.tokens, frames, self.max_length, self.arities, self.open, self.close, self.absent, done=True)
        if symbol == self.open:
            frames = frames + ((None, 0),)
        elif symbol == self.close:
            frames = frames[:-1]
            if frames:
                frames = frames[:-1] + ((frames[-1][0], frames[-1][1] + 1),)
        elif frames and frames[-1][0] is None:
            frames = frames[:-1] + ((symbol, 0),)
        elif frames:
            frames = frames[:-1] + ((frames[-1][0], frames[-1][1] + 1),)
        return AritiesState(self.tokens + (symbol,), frames, self.max_length, self.arities, self.open, self.close, self.absent)

    def is_final(self) -> bool:
        return self.done

    def result(self) -> str:
        return " ".join(self.tokens)


@Grammar.register("bracketed")
class BracketedGrammar(SequenceGrammar):
    """One balanced s-expression of at most *max_length* tokens, then the end symbol.

    Args:
        restrict_arities: decode only operators with argument counts the training targets showed
            (learned by :meth:`fit`; needs *head_first*).
        arities: that table itself (what training records in the run's config, so an archive
            rebuilds the same grammar); given, it wins over fitting.
        copy_atoms: also allow the atoms training always copied from the question only where the
            question has them (needs *restrict_arities*).
        copied: that list, as training records it.
    """

    state_features = frozenset()

    def __init__(
        self,
        max_length: int = 200,
        open: str = "(",
        close: str = ")",
        head_first: bool = True,
        restrict_arities: bool = False,
        arities: dict[str, list[int]] | None = None,
        copy_atoms: bool = False,
        copied: list[str] | None = None,
    ):
        if max_length < 1:
            raise ConfigurationError(f"must be at least 1, got {max_length}", key="max_length")
        if restrict_arities and not head_first:
            raise ConfigurationError("restrict_arities needs head_first: an operator is the first atom of its brackets", key="restrict_arities")
        super().__init__(max_length)
        self.open, self.close, self.head_first = open, close, head_first
        if copy_atoms and not restrict_arities:
            raise ConfigurationError("copy_atoms needs restrict_arities: the same learned state keeps to both", key="copy_atoms")
        self.restrict_arities, self.copy_atoms = restrict_arities, copy_atoms
        self.arities = Arities(arities) if restrict_arities and arities is not None else None
        self.copied = frozenset(copied) if copy_atoms and copied is not None else None

    def fit(self, examples: Sequence[Example]) -> dict[str, Any]:
        fitted: dict[str, Any] = {}
        targets = [example for example in examples if example.target is not None]
        if self.restrict_arities and self.arities is None:
            self.arities = Arities.of((self.oracle(example)[:-1] for example in targets), self.open, self.close)
            fitted["arities"] = self.arities.to_config()
        if self.copy_atoms and self.copied is None:
            self.copied = copied_atoms((set(example.tokens), set(self.oracle(example))) for example in targets)
            fitted["copied"] = sorted(self.copied)
        return fitted

    def initial_state(self, example: Example) -> State:
        if self.arities is not None:
            absent = self.copied - set(example.tokens) if self.copied else frozenset()
            return AritiesState((), (), self.max_length, self.arities, self.open, self.close, absent)
        return self.derivation_state(example)

    def derivation_state(self, example: Example) -> BracketedState:
        """The brackets alone: a held-out logical form may take an arity training never showed."""
        return BracketedState((), 0, self.max_length, self.open, self.close, self.head_first)
