"""N-ary paths, depth-first pre-order: short paths, at the cost of a bounded number of children."""

from toolkit.errors import ConfigurationError
from toolkit.grammars.grammar import Grammar
from tree_codecs.codec import Format, TreeCodec
from tree_codecs.frontier import Order
from tree_codecs.paths import Layout


@Grammar.register("nary_dfs")
class NaryDfsCodec(TreeCodec):
    """Nodes in pre-order; each path is read in the n-ary tree, so no node may exceed *max_degree* children.

    The ATIS training data has nodes with up to 15 children; the default 8 refuses those trees.
    """

    layout = Layout.NARY
    order = Order.DEPTH_FIRST

    def __init__(self, max_nodes: int = 200, format: Format = "lisp", max_depth: int = 32, max_degree: int = 8):
        super().__init__(max_nodes, format, max_depth)
        if max_degree < 1:
            raise ConfigurationError(f"must be at least 1, got {max_degree}", key="max_degree")
        self.max_degree = max_degree

    @property
    def degree(self) -> int:
        return self.max_degree

    @property
    def max_arity(self) -> int | None:
        return self.max_degree
