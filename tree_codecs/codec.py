"""Tree codecs: output grammars that decode a tree one arity-annotated node at a time.

A codec parses a gold logical form into a :class:`Tree`, lists its nodes as symbols
(``label/arity``) in its traversal order, and tracks a partial tree while decoding. Arities make
the symbols self-delimiting, so there are no brackets and no end symbol: the state is final
exactly when every child slot is filled. Each step's features carry the branch path of the next
node, for Shiv & Quirk's tree positional encodings. Implementations choose only the layout the
paths are read in (n-ary or LCRS binary) and the traversal order.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, NoReturn

from toolkit.data.example import Example
from toolkit.errors import ConfigurationError, DataError
from toolkit.grammars.grammar import Grammar, State
from tree_codecs.arity import split_symbol
from tree_codecs.frontier import Frontier, Order
from tree_codecs.paths import Layout
from tree_codecs.prolog import parse_prolog, to_prolog
from tree_codecs.traversal import Visit, rebuild, traverse
from tree_codecs.tree import Tree, parse_lisp, to_lisp

Format = Literal["lisp", "prolog"]
FORMATS: dict[str, tuple[Callable[[str], Tree], Callable[[Tree], str]]] = {
    "lisp": (parse_lisp, to_lisp),
    "prolog": (parse_prolog, to_prolog),
}


@dataclass(frozen=True)
class ArityAtMost:
    """Every arity-annotated symbol with at most *limit* children; anything else is excluded.

    A bound rather than a list: the allowed set depends only on how many nodes are left, so a
    model can precompute each vocabulary symbol's arity once and compare (see :meth:`TreeCodec.arity`).
    """

    limit: int

    def __contains__(self, symbol: object) -> bool:
        if not isinstance(symbol, str):
            return False
        try:
            return split_symbol(symbol)[1] <= self.limit
        except ValueError:
            return False


class TreeCodec(Grammar):
    """Abstract base: parse, list and track trees in one layout and traversal order.

    *max_nodes* bounds a decoded tree's size; *format* is the logical forms' notation;
    *max_depth* is the deepest path the positional encoding distinguishes (the paper's k):
    deeper trees are still encoded, with full paths, and :meth:`too_deep` reports them.
    """

    state_features = frozenset({"path", "degree"})

    layout: ClassVar[Layout]
    order: ClassVar[Order]

    def __init__(self, max_nodes: int = 200, format: Format = "lisp", max_depth: int = 32):
        if max_nodes < 1:
            raise ConfigurationError(f"must be at least 1, got {max_nodes}", key="max_nodes")
        if format not in FORMATS:
            raise ConfigurationError(f"must be one of {', '.join(FORMATS)}, got {format!r}", key="format")
        self.max_nodes, self.format, self.max_depth = max_nodes, format, max_depth
        self.parse_text, self.print_tree = FORMATS[format]

    @property
    def degree(self) -> int:
        """The branching factor of the tree the paths are read in."""
        return 2

    @property
    def max_arity(self) -> int | None:
        """The most children a node may have, if the layout bounds it."""
        return None

    @staticmethod
    def arity(symbol: str) -> int | None:
        """The arity of a vocabulary symbol, or ``None`` for a non-node symbol (padding, unknown)."""
        try:
            return split_symbol(symbol)[1]
        except ValueError:
            return None

    def parse(self, example: Example) -> Tree:
        """The gold tree of *example*; a malformed target is a :class:`DataError` naming file and line."""
        if not isinstance(example.target, str):
            self._refuse(example, f"expected a logical-form string as target, got {example.target!r}")
        try:
            return self.parse_text(example.target)
        except ValueError as error:
            self._refuse(example, f"{self.format} logical form: {error}")

    def visits(self, tree: Tree) -> list[Visit]:
        """The nodes of *tree* in this codec's order, with their paths."""
        return traverse(tree, self.layout, self.order)

    def oracle(self, example: Example) -> list[str]:
        tree = self.parse(example)
        if tree.size > self.max_nodes:
            self._refuse(example, f"the tree has {tree.size} nodes, more than grammar.max_nodes = {self.max_nodes}")
        if self.max_arity is not None and tree.max_degree > self.max_arity:
            self._refuse(example, f"a node has {tree.max_degree} children, more than grammar.max_degree = {self.max_arity}")
        return [visit.symbol for visit in self.visits(tree)]

    def initial_state(self, example: Example) -> TreeState:
        return TreeState(self, Frontier(self.layout, self.order), ())

    def data_report(self, examples: Sequence[Example]) -> dict[str, int]:
        """How many trees have paths longer than *max_depth*: the encoding forgets their oldest branches."""
        return {f"trees_deeper_than_max_depth_{self.max_depth}": sum(self.too_deep(example) for example in examples)}

    def too_deep(self, example: Example) -> bool:
        """Whether some node's path is longer than *max_depth*, so the encoding truncates it."""
        return max(len(visit.path) for visit in self.visits(self.parse(example))) > self.max_depth

    @staticmethod
    def _refuse(example: Example, why: str) -> NoReturn:
        raise DataError(why, example.meta.get("path"), example.meta.get("line")) from None


@dataclass(frozen=True)
class TreeState(State):
    """A partial tree: the symbols emitted so far and the slots still open."""

    codec: TreeCodec
    frontier: Frontier
    symbols: tuple[str, ...]

    def allowed(self) -> ArityAtMost | tuple[()]:
        """The symbols that keep the tree completable within ``max_nodes`` (and ``max_degree``).

        A node of arity a leaves ``open - 1 + a`` slots to fill, each with at least one node, so
        ``len(symbols) + 1 + open - 1 + a <= max_nodes``; a leaf always fits.
        """
        if self.frontier.complete:
            return ()
        limit = self.codec.max_nodes - len(self.symbols) - self.frontier.open
        if self.codec.max_arity is not None:
            limit = min(limit, self.codec.max_arity)
        return ArityAtMost(limit)

    def features(self) -> Mapping[str, Any]:
        """The next node's branch path (``()`` once complete) and the layout's branching factor."""
        path = () if self.frontier.complete else self.frontier.next_path
        return {"path": path, "degree": self.codec.degree}

    def apply(self, symbol: str) -> TreeState:
        if symbol not in self.allowed():
            raise ValueError(f"{symbol!r} is not allowed here: {self.allowed()!r}")
        arity = split_symbol(symbol)[1]
        return TreeState(self.codec, self.frontier.fill(arity), self.symbols + (symbol,))

    def is_final(self) -> bool:
        return self.frontier.complete

    def tree(self) -> Tree:
        """The finished tree; ``ValueError`` while slots are open."""
        if not self.frontier.complete:
            raise ValueError(f"the tree is not complete: {self.frontier.open} child slots are open")
        return rebuild(map(split_symbol, self.symbols), self.codec.layout, self.codec.order)

    def result(self) -> str:
        """The finished tree in the codec's notation, comparable to the gold logical form."""
        return self.codec.print_tree(self.tree())
