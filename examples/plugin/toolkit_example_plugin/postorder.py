"""A post-order (bottom-up, reverse Polish) tree codec: children first, then their parent.

The toolkit's codecs decode top-down: a node, then the slots it opens. Post-order is the other
way round: the decoder emits the leaves and small subtrees it is sure of first, and a node of
arity ``a`` then takes the last ``a`` finished subtrees as its children. The state is the number
of finished subtrees waiting for a parent, so ``allowed`` is an arity range:

- a node may take at most as many children as there are finished subtrees;
- an end symbol closes the output once exactly one subtree (the whole tree) is left;
- the tree must stay finishable within ``max_nodes`` with the symbols a model surely knows:
  leaves, and nodes of the largest arity seen in training (``max_arity``, learned by ``fit``).
  An untrained model that emits nothing but leaves is thus made to combine them in time.

It is a :class:`~tree_codecs.TreeCodec` that overrides the two hooks of a codec whose order is not
top-down, ``visits`` and ``initial_state``; parsing the logical forms (``format``), the
``max_nodes`` and ``max_arity`` checks and printing the results are the toolkit's, so the results
compare with every other codec's. docs/tree_codec_guide.md walks through this file.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from toolkit.data.example import Example
from toolkit.data.symbols import EOS
from toolkit.errors import ConfigurationError
from toolkit.grammars.grammar import Grammar, State
from tree_codecs import Layout, Tree, TreeCodec, Visit, split_symbol

END = EOS


def postorder(tree: Tree) -> list[Visit]:
    """The nodes of *tree*, each after all of its children, with their n-ary paths (without recursion)."""
    visits, stack = [], [(tree, (), False)]
    while stack:
        node, path, expanded = stack.pop()
        if expanded:
            visits.append(Visit(node.label, node.arity, path))
        else:
            stack.append((node, path, True))
            stack.extend((child, path + (index,), False) for index, child in reversed(list(enumerate(node.children))))
    return visits


@dataclass(frozen=True)
class Arities:
    """Node symbols whose arity is in *arities*, and the end symbol if *end*: hashable, so models memoise its mask."""

    arities: frozenset[int]
    end: bool

    def __contains__(self, candidate: object) -> bool:
        if candidate == END:
            return self.end
        if not isinstance(candidate, str):
            return False
        try:
            return split_symbol(candidate)[1] in self.arities
        except ValueError:
            return False


@dataclass(frozen=True)
class PostorderState(State):
    """The symbols so far and the subtrees they have finished, each waiting for a parent."""

    codec: PostorderCodec
    symbols: tuple[str, ...] = ()
    waiting: int = 0
    done: bool = False

    def allowed(self) -> Arities | tuple[()]:
        """The arities after which the tree can still be finished within ``max_nodes`` (see :meth:`PostorderCodec.finish_cost`)."""
        if self.done:
            return ()
        left = self.codec.max_nodes - len(self.symbols) - 1  # nodes that may follow the next one
        widest = self.waiting if self.codec.max_arity is None else min(self.waiting, self.codec.max_arity)
        arities = frozenset(arity for arity in range(widest + 1) if (cost := self.codec.finish_cost(self.waiting - arity + 1)) is not None and cost <= left)
        return Arities(arities, self.waiting == 1)

    def apply(self, emitted: str) -> PostorderState:
        if emitted not in self.allowed():
            raise ValueError(f"{emitted!r} is not allowed with {self.waiting} finished subtrees")
        if emitted == END:
            return PostorderState(self.codec, self.symbols, self.waiting, True)
        arity = split_symbol(emitted)[1]
        return PostorderState(self.codec, self.symbols + (emitted,), self.waiting - arity + 1)

    def is_final(self) -> bool:
        return self.done

    def result(self) -> str:
        """The logical form in the codec's notation, comparable to the gold one."""
        return self.codec.print_tree(self.tree())

    def tree(self) -> Tree:
        """Rebuild the tree with a stack: each node pops its children."""
        stack: list[Tree] = []
        for node in self.symbols:
            label, arity = split_symbol(node)
            children = tuple(stack[len(stack) - arity :])
            del stack[len(stack) - arity :]
            stack.append(Tree(label, children))
        if len(stack) != 1:
            raise ValueError(f"the symbols leave {len(stack)} subtrees, not one tree")
        return stack[0]


@Grammar.register("postorder")
class PostorderCodec(TreeCodec):
    """Trees as arity-annotated symbols in post-order, closed by the end symbol. Registered as ``"postorder"``.

    Args:
        max_nodes: the largest tree decoding may build.
        format: the logical forms' notation, ``"lisp"`` or ``"prolog"`` (as for the toolkit's codecs).
        max_arity: the most children a node may take; ``null`` learns it from the training trees:
            ``fit`` sets it to the widest node there (the most children any node has), and
            ``toolkit train`` records it in the run's config as ``grammar.max_arity``.
    """

    layout = Layout.NARY  # the paths visits() gives (no decoder reads them here: see state_features)
    state_features = frozenset()  # a post-order node's place is known only once its parent comes: no path to give
    max_arity_setting = "max_arity"
    max_arity: int | None = None  # a setting fit() may learn, where TreeCodec has a fixed property

    def __init__(self, max_nodes: int = 200, format: str = "lisp", max_arity: int | None = None):
        super().__init__(max_nodes, format)
        if max_arity is not None and max_arity < 0:
            raise ConfigurationError(f"must not be negative, got {max_arity}", key="max_arity")
        self.max_arity = max_arity

    # ------------------------------------------------------------ the two hooks of a codec in its own order

    def visits(self, tree: Tree) -> list[Visit]:
        """Every node after its children: the order the decoder emits them in."""
        return postorder(tree)

    def initial_state(self, example: Example) -> PostorderState:
        return PostorderState(self)

    # ------------------------------------------------------------ what post-order adds

    def oracle(self, example: Example) -> list[str]:
        """The nodes in post-order, then the end symbol: a finished tree may still become a child, so the output says where it ends."""
        return super().oracle(example) + [END]

    def fit(self, examples: Sequence[Example]) -> dict[str, Any]:
        """Learn ``max_arity``, the widest node of the training trees (unless the config set it)."""
        if self.max_arity is not None:
            return {}
        self.max_arity = max((self.parse(example).max_degree for example in examples), default=0)
        return {"max_arity": self.max_arity}

    def finish_cost(self, waiting: int) -> int | None:
        """How many more nodes join *waiting* finished subtrees into one, using only leaves and
        ``max_arity`` nodes (``None``: impossible). Each wide node joins ``max_arity`` subtrees into
        one; leaves top the count up so the last one has exactly enough.
        """
        if waiting <= 1:
            return 0
        if self.max_arity is None:
            return 1
        if self.max_arity < 2:
            return None
        wide = -(-(waiting - 1) // (self.max_arity - 1))
        return wide + wide * (self.max_arity - 1) - (waiting - 1)

    def gold(self, example: Example) -> str:
        """The logical form as this codec prints it (what ``result()`` gives after a round trip)."""
        return self.print_tree(self.parse(example))
