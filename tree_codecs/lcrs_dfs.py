"""LCRS paths, depth-first pre-order: the node order of the logical form's own text."""

from toolkit.grammars.grammar import Grammar
from tree_codecs.codec import TreeCodec
from tree_codecs.frontier import Order
from tree_codecs.paths import Layout


@Grammar.register("lcrs_dfs")
class LcrsDfsCodec(TreeCodec):
    """Nodes in pre-order; each path is read in the LCRS binary tree (0 = first child, 1 = next sibling)."""

    layout = Layout.LCRS
    order = Order.DEPTH_FIRST
