"""Branch paths: where a node sits, as the child indices leading to it from the root.

The positional encoding sees a node only through its path, so the layout decides what a path
means. In the n-ary tree, child *i* of a node at *p* is at ``p + (i,)``. In the LCRS binary tree,
branch 0 is the first child and branch 1 the next sibling, so child *i* is at
``p + (0,) + (1,) * i``: every path is binary, at the price of longer paths for later siblings.
"""

from enum import Enum

Path = tuple[int, ...]


class Layout(Enum):
    """The tree a path is read in: the original n-ary tree or its LCRS binary tree."""

    NARY = "nary"
    LCRS = "lcrs"

    def child(self, parent: Path, index: int) -> Path:
        """The path of child *index* (from 0) of the node at *parent*."""
        return parent + (index,) if self is Layout.NARY else parent + (0,) + (1,) * index

    def next_sibling(self, path: Path) -> Path:
        """The path of the next sibling of the (non-root) node at *path*."""
        return path[:-1] + (path[-1] + 1,) if self is Layout.NARY else path + (1,)
