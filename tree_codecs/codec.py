"""Tree codecs: output grammars that decode a tree one arity-annotated node at a time.

A codec parses a gold logical form into a :class:`Tree`, lists its nodes as symbols
(``label/arity``) in its traversal order, and tracks a partial tree while decoding. Arities make
the symbols self-delimiting, so there are no brackets and no end symbol: the state is final
exactly when every child slot is filled. Each step's features carry the branch path of the next
node, for Shiv & Quirk's tree positional encodings.

:class:`TreeCodec`'s hooks, for a codec of one's own (docs/tree_codec_guide.md has a worked
example, a post-order codec):

- a top-down codec sets only the class attributes ``layout`` (:class:`Layout`: the tree paths are
  read in) and ``order`` (:class:`Order`: depth-first or breadth-first); ``degree`` and
  ``max_arity`` say how wide a node may be where the layout bounds it (``nary_dfs``);
- a codec in another order overrides ``visits`` (the gold nodes in decoding order, which the
  oracle lists) and ``initial_state`` (a :class:`~toolkit.grammars.grammar.State` of its own that
  rebuilds the tree), and declares its states' ``state_features``;
- everything else is shared: ``parse`` (the logical form in ``format``, a :class:`DataError` naming
  file and line if it is malformed), the ``max_nodes`` and ``max_arity`` checks of ``oracle``,
  ``refuse`` for a data error of one's own, ``print_tree`` for results, and ``fit`` (from
  :class:`~toolkit.grammars.grammar.Grammar`) to learn a setting from the training trees.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, NoReturn

from toolkit.data.example import Example
from toolkit.errors import ConfigurationError, DataError
from toolkit.grammars.grammar import Grammar, State
from toolkit.upgrades import warn_deprecated
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

    Args:
        max_nodes: the largest tree a decoded output may be; a bigger training tree is refused.
        format: the logical forms' notation, a key of :data:`FORMATS` (``"lisp"`` or ``"prolog"``).
        max_depth: the deepest path the positional encoding distinguishes (the paper's k): deeper
            trees are still encoded, with full paths, and :meth:`too_deep` reports them.

    A subclass sets ``layout`` and ``order``, or overrides :meth:`visits` and :meth:`initial_state`
    (see the module docstring). ``parse_text`` and ``print_tree`` are the *format*'s two functions.
    """

    state_features = frozenset({"path", "degree"})

    layout: ClassVar[Layout]  # the tree the paths are read in: Layout.NARY or Layout.LCRS
    order: ClassVar[Order]  # the top-down order nodes are decoded in: Order.DEPTH_FIRST or Order.BREADTH_FIRST
    max_arity_setting: ClassVar[str] = "max_degree"  # the config key that bounds max_arity, as errors name it

    def __init__(self, max_nodes: int = 200, format: Format = "lisp", max_depth: int = 32):
        if max_nodes < 1:
            raise ConfigurationError(f"must be at least 1, got {max_nodes}", key="max_nodes")
        if format not in FORMATS:
            raise ConfigurationError(f"must be one of {', '.join(FORMATS)}, got {format!r}", key="format")
        self.max_nodes, self.format, self.max_depth = max_nodes, format, max_depth
        self.parse_text, self.print_tree = FORMATS[format]

    @property
    def degree(self) -> int:
        """The branching factor of the tree the paths are read in (the tree positional encoding's)."""
        return 2

    @property
    def max_arity(self) -> int | None:
        """The most children a node may have, if the codec bounds it; ``oracle`` refuses wider trees."""
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
            self.refuse(example, f"expected a logical-form string as target, got {example.target!r}")
        try:
            return self.parse_text(example.target)
        except ValueError as error:
            self.refuse(example, f"{self.format} logical form: {error}")

    def visits(self, tree: Tree) -> list[Visit]:
        """The nodes of *tree* in the order they are decoded, with their paths in ``layout``.

        The oracle's symbols are their ``symbol``s. By default the top-down traversal in ``layout``
        and ``order``; a codec in another order overrides this and :meth:`initial_state` together.
        """
        return traverse(tree, self.layout, self.order)

    def oracle(self, example: Example) -> list[str]:
        """The symbols of :meth:`visits` of the gold tree, once it fits ``max_nodes`` and ``max_arity``."""
        tree = self.parse(example)
        if tree.size > self.max_nodes:
            self.refuse(example, f"the tree has {tree.size} nodes, more than grammar.max_nodes = {self.max_nodes}")
        if self.max_arity is not None and tree.max_degree > self.max_arity:
            self.refuse(example, f"a node has {tree.max_degree} children, more than grammar.{self.max_arity_setting} = {self.max_arity}")
        return [visit.symbol for visit in self.visits(tree)]

    def initial_state(self, example: Example) -> TreeState:
        """Decoding's first state: a :class:`TreeState` with one open slot, the root, filled in ``order``."""
        return TreeState(self, Frontier(self.layout, self.order), ())

    def data_report(self, examples: Sequence[Example]) -> dict[str, int]:
        """How many trees have paths longer than *max_depth*: the encoding forgets their oldest branches."""
        return {f"trees_deeper_than_max_depth_{self.max_depth}": sum(self.too_deep(example) for example in examples)}

    def too_deep(self, example: Example) -> bool:
        """Whether some node's path is longer than *max_depth*, so the encoding truncates it."""
        return max(len(visit.path) for visit in self.visits(self.parse(example))) > self.max_depth

    @staticmethod
    def refuse(example: Example, why: str) -> NoReturn:
        """Raise a :class:`DataError` saying *why*, naming *example*'s file and line."""
        raise DataError(why, example.meta.get("path"), example.meta.get("line")) from None

    @classmethod
    def _refuse(cls, example: Example, why: str) -> NoReturn:
        """The old, private name of :meth:`refuse`, kept for codecs written before it was public."""
        warn_deprecated(
            "TreeCodec._refuse is deprecated since parsing-toolkit 0.2 and may go in 0.3: call TreeCodec.refuse(example, why), "
            "with the same arguments; see CHANGELOG.md"
        )
        cls.refuse(example, why)


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
