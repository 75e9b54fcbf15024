"""The output grammar: the one abstraction every parser in the toolkit is built on.

A grammar turns a gold structure into the symbols a decoder learns to emit (the *oracle*), and
drives decoding through a *state machine*: the state says which symbols are legal next, which
structural features the next decoding step sees, and what structure the finished symbols denote.
Tree codecs and transition systems are grammars; so is a plain token sequence. One decoder and
one beam search therefore serve every parser, and every prediction is well-formed by construction.

States are values: :meth:`State.apply` returns a new state and never changes the old one, so a
beam search can keep and share states freely.
"""

from abc import ABC, abstractmethod
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from toolkit.data.example import Example
from toolkit.errors import DataError
from toolkit.registrable import Registrable


@dataclass(frozen=True)
class AllExcept:
    """Every symbol but *symbols*: what a state allows when the excluded set is the small one."""

    symbols: frozenset[str] = frozenset()

    def __contains__(self, symbol: object) -> bool:
        return symbol not in self.symbols


Allowed = Collection[str] | AllExcept | None  # None: any symbol


class SymbolTable:
    """A decoder's output vocabulary as grammars look it up: each symbol's id, and the ids of labelled symbols by kind.

    ``labelled("PRED")`` maps every ``PRED:<label>`` symbol's label to its id. An ``allowed()`` answer
    whose values vary too much for the model to memoise its mask (AMR's allowed concepts differ
    from word to word) may offer ``symbol_ids(table)``: the allowed symbols' ids, gathered group
    by group instead of testing every vocabulary symbol with ``in``.
    """

    def __init__(self, symbols: Sequence[str]):
        self.ids = {symbol: i for i, symbol in enumerate(symbols)}
        self.kinds: dict[str, dict[str, int]] = {}
        for symbol, i in self.ids.items():
            kind, colon, label = symbol.partition(":")
            if colon and label:
                self.kinds.setdefault(kind, {})[label] = i

    def labelled(self, kind: str) -> Mapping[str, int]:
        return self.kinds.get(kind, {})


class State(ABC):
    """A partial output: the symbols decoded so far, seen through the grammar.

    *stopped* says why the grammar cut a degenerate part of this output (``""``: it never did), for
    the search to count (AMR's states cut a span that repeats itself or makes no progress).
    """

    stopped: str = ""

    @abstractmethod
    def allowed(self) -> Allowed:
        """The symbols that may come next: a collection, :class:`AllExcept`, or ``None`` for any."""

    def features(self) -> Mapping[str, Any]:
        """Structural side information for the next step (tree position, stack/buffer, ...)."""
        return {}

    @abstractmethod
    def apply(self, symbol: str) -> "State":
        """The state after emitting *symbol*; ``self`` is left unchanged."""

    @abstractmethod
    def is_final(self) -> bool:
        """Whether the output is complete; a final state allows no further symbol."""

    @abstractmethod
    def result(self) -> Any:
        """The structure the symbols denote (a logical form, a tree, a graph)."""


@dataclass(frozen=True)
class Derivation:
    """The gold symbols of one example and the features seen before each of them."""

    symbols: list[str]
    features: list[Mapping[str, Any]]


class Grammar(Registrable):
    """Registrable base of output grammars; see the module docstring."""

    default_implementation = "sequence"
    default_predictor: ClassVar[str] = "semantic_parser"  # what `toolkit predict` and `load_predictor` use unless told
    result_kind: ClassVar[str] = "text"  # what result() gives, as predictors name it: they refuse a kind they cannot write
    # The keys its states' features() give (``{"stack", "buffer"}``), so a model refuses a decoder that reads
    # others; None: not declared (a plugin's grammar), and not checked. See declared_state_features.
    state_features: ClassVar[frozenset[str] | None] = None
    has_dynamic_oracle: ClassVar[bool] = False  # see dynamic_oracle

    @abstractmethod
    def oracle(self, example: Example) -> list[str]:
        """The gold symbol sequence of *example*, ending in a final state."""

    @classmethod
    def declared_state_features(cls) -> frozenset[str] | None:
        """:attr:`state_features`, if the class that makes the states declared them; else ``None`` (unknown).

        A subclass that makes states of its own (``initial_state``) without declaring their features
        inherits a declaration about other states, so it is not trusted.
        """
        maker = next(klass for klass in cls.__mro__ if "initial_state" in vars(klass))
        declarer = next((klass for klass in cls.__mro__ if "state_features" in vars(klass)), None)
        return cls.state_features if declarer is not None and issubclass(declarer, maker) else None

    @abstractmethod
    def initial_state(self, example: Example) -> State:
        """The state before the first symbol, for the sentence of *example*."""

    def tensor_states(self, examples: Sequence[Example], symbols: Sequence[str], device: Any) -> Any | None:
        """A plugin's own tensor form of *examples*' initial states, on *device* (*symbols*: the model's vocabulary), for a
        search to advance with tensor operations (``allowed_mask()``, ``apply(ids)``, ``finished()``, ``select(rows)``,
        ``with_rows(rows, other)``, ``positions()``, ``rows()``); ``None`` (the default): the search runs on
        :meth:`initial_state`'s Python states, or, for a shipped transition system, on the tensor form the decoding
        layer keeps of its rules (:mod:`toolkit.decoding.tensor_configurations`).
        """
        return None

    def max_actions(self, words: int) -> int | None:
        """The most symbols a derivation of a *words*-word input takes, where the input bounds it (a
        transition system's ``2n``); ``None`` where it does not (a logical form's length is its own).
        Sizes the longest input a search of ``max_steps`` decodes whole.
        """
        return None

    def max_steps(self, example: Example) -> int | None:
        """The most symbols any decode of *example* can take, where the grammar bounds it: a search without
        an explicit ``max_steps`` stops there, so every input gets the steps its own size needs. By default
        :meth:`max_actions` of its words; ``None``: unbounded here (the search's default limit applies).
        """
        return self.max_actions(len(example.tokens))

    def data_report(self, examples: Sequence[Example]) -> dict[str, int]:
        """Counts worth a line in the training log (e.g. trees deeper than a positional encoding reaches)."""
        return {}

    def extra_symbols(self) -> list[str]:
        """Symbols the output vocabulary holds even where no training oracle emits them: what the grammar
        can always write (the ``anonymized`` grammar's id constructors no training query uses). None by default.
        """
        return []

    def input_aliases(self, symbols: Sequence[str]) -> dict[str, str]:
        """For some of the vocabulary's *symbols*, another symbol that makes the same thing the common way: a
        model told to (``alias_inputs``) reads each as itself plus its alias, so what the decoder learns after
        the common symbol serves the rare one (AMR's ``DATE`` makes the ``date-entity`` that
        ``PRED:date-entity`` makes). None by default.
        """
        return {}

    def fit(self, examples: Sequence[Example]) -> dict[str, Any]:
        """Learn from the training *examples* before the vocabulary is built (e.g. labeled-SHIFT words).

        Returns the config entries (under ``grammar``) that rebuild the fitted grammar without the
        data; they go into the run's ``config.json``, so an archive loads without training data.
        """
        return {}

    def skips(self, example: Example) -> bool:
        """Whether training should leave *example* out: the grammar cannot derive it by choice (e.g. a
        non-projective tree for a projective transition system told to skip them); ``data_report`` counts them.
        """
        return False

    def oracle_metrics(self) -> list[dict[str, Any]]:
        """Metrics ``toolkit oracle`` scores the replayed results with, against the targets (e.g. UAS/LAS).

        Given as configs of registered metrics (``{"type": "attachment_scores"}``), so that a grammar
        names its metrics without importing them.
        """
        return []

    def gold(self, example: Example) -> Any:
        """What ``result()`` must equal after replaying the oracle: here the whitespace-normalised target."""
        return " ".join(str(example.target).split())

    def replay(self, example: Example) -> State:
        """The final state reached by feeding the oracle's symbols to the state machine."""
        state = self.derivation_state(example)
        for symbol in self.oracle(example):
            state = state.apply(symbol)
        return state

    def dynamic_oracle(self, example: Example) -> Any:
        """*example*'s dynamic oracle (``start``, a state, and ``optimal(state)``, the least-cost symbols in
        any state reached from it), for training with exploration; ``None`` (the default): the grammar
        has none, and training follows :meth:`oracle`. Transition systems give one where their rules
        allow (:mod:`transition_systems.dynamic_oracle`).
        """
        return None

    def derivation_state(self, example: Example) -> State:
        """The state :meth:`derive` replays gold symbols from: :meth:`initial_state`, unless the grammar
        learns restrictions that should not judge held-out targets (a validation loss is still owed).
        """
        return self.initial_state(example)

    def derive(self, example: Example) -> Derivation:
        """Replay the oracle through the state machine, collecting each step's features.

        The replay also proves the oracle and the state machine agree: a gold symbol the state
        does not allow, or a sequence that does not end in a final state, is reported with the
        example's file and line.
        """
        symbols = self.oracle(example)
        state = self.derivation_state(example)
        features = []
        for step, symbol in enumerate(symbols):
            allowed = state.allowed()
            if state.is_final() or (allowed is not None and symbol not in allowed):
                raise DataError(
                    f"gold symbol {symbol!r} at step {step} is not allowed by {type(self).__name__}",
                    example.meta.get("path"),
                    example.meta.get("line"),
                )
            features.append(state.features())
            state = state.apply(symbol)
        if not state.is_final():
            raise DataError(
                f"gold symbols do not complete a {type(self).__name__} output",
                example.meta.get("path"),
                example.meta.get("line"),
            )
        return Derivation(symbols, features)
