"""LCRS paths, breadth-first over the binary tree: shallow binary positions are decoded first."""

from toolkit.grammars.grammar import Grammar
from tree_codecs.codec import TreeCodec
from tree_codecs.frontier import Order
from tree_codecs.paths import Layout


@Grammar.register("lcrs_bfs")
class LcrsBfsCodec(TreeCodec):
    """Nodes level by level in the LCRS binary tree, first-child branch before next-sibling branch."""

    layout = Layout.LCRS
    order = Order.BREADTH_FIRST
