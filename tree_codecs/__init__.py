"""Tree codecs: output grammars whose symbols are arity-annotated tree nodes (LCRS, BFS/DFS positions).

Each is a :class:`toolkit.grammars.Grammar`; see docs/design.md. Pure Python, no torch.
Importing this package registers the grammars ``lcrs_dfs``, ``lcrs_bfs`` and ``nary_dfs``, and the
``tree_pairs`` reader of tree inputs.
"""

from tree_codecs.arity import split_symbol, symbol
from tree_codecs.codec import FORMATS, ArityAtMost, TreeCodec, TreeState
from tree_codecs.editing import difference, leaf_labels, replace_at, replace_leaves, subtree_paths
from tree_codecs.frontier import Frontier, Order, Slot
from tree_codecs.lcrs import BinaryTree, from_lcrs, to_lcrs
from tree_codecs.lcrs_bfs import LcrsBfsCodec
from tree_codecs.lcrs_dfs import LcrsDfsCodec
from tree_codecs.nary_dfs import NaryDfsCodec
from tree_codecs.paths import Layout, Path
from tree_codecs.prolog import parse_prolog, to_prolog
from tree_codecs.traversal import Visit, breadth_first, depth_first, rebuild, traverse
from tree_codecs.tree import Tree, parse_lisp, to_lisp
from tree_codecs.tree_pairs import TreePairsReader

__all__ = [
    "FORMATS",
    "ArityAtMost",
    "BinaryTree",
    "Frontier",
    "Layout",
    "LcrsBfsCodec",
    "LcrsDfsCodec",
    "NaryDfsCodec",
    "Order",
    "Path",
    "Slot",
    "Tree",
    "TreeCodec",
    "TreePairsReader",
    "TreeState",
    "Visit",
    "breadth_first",
    "depth_first",
    "difference",
    "from_lcrs",
    "leaf_labels",
    "parse_lisp",
    "parse_prolog",
    "rebuild",
    "replace_at",
    "replace_leaves",
    "split_symbol",
    "subtree_paths",
    "symbol",
    "to_lcrs",
    "to_lisp",
    "to_prolog",
    "traverse",
]
