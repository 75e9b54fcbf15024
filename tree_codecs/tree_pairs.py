"""A reader of tree inputs (tree-to-tree, tree-to-sequence): the source side is a tree.

The source tree is listed by a tree codec, so the encoder reads its arity-annotated nodes in the
codec's order and each token carries its node's branch path (``Example.token_paths``) for an
encoder with tree positional encodings (Shiv & Quirk, 2019). The target stays a string, for
whatever grammar the config decodes with (another tree codec, ``bracketed``, ``sequence``).
"""

from collections.abc import Iterator
from pathlib import Path

from toolkit.data.dataset_readers.dataset_reader import DatasetReader
from toolkit.data.example import Example
from toolkit.errors import ConfigurationError, DataError
from tree_codecs.codec import TreeCodec
from tree_codecs.tree import Tree


@DatasetReader.register("tree_pairs")
class TreePairsReader(DatasetReader):
    """Reads ``tree<TAB>target`` lines (or ``target<TAB>tree`` with ``source_column: 1``).

    *source_codec* parses and lists the source trees: its ``format`` is their notation and its
    layout and order give the tokens and their paths (``lcrs_dfs``: binary paths, so the
    encoder's ``positional_encoding.degree`` is 2; ``nary_dfs``: its ``max_degree``). Registered as ``"tree_pairs"``.
    """

    def __init__(self, source_codec: TreeCodec, source_column: int = 0, max_examples: int | None = None) -> None:
        super().__init__(max_examples)
        if source_column not in (0, 1):
            raise ConfigurationError(f"must be 0 or 1, got {source_column}", key="source_column")
        self.source_codec, self.source_column = source_codec, source_column

    def _read(self, path: Path) -> Iterator[Example]:
        for number, line in self._lines(path):
            if not line.strip():
                continue
            fields = line.split("\t")
            if len(fields) != 2 or not all(field.strip() for field in fields):
                raise DataError("expected two non-empty tab-separated fields: a tree and a target", str(path), number)
            source, target = fields[self.source_column], fields[1 - self.source_column]
            yield self.tree_example(source, " ".join(target.split()), {"path": str(path), "line": number})

    def text_to_example(self, text: str) -> Example:
        """A source tree alone, or a whole data line (whose target is then kept)."""
        fields = text.rstrip("\r\n").split("\t")
        if len(fields) == 2 and all(field.strip() for field in fields):
            source, target = fields[self.source_column], " ".join(fields[1 - self.source_column].split())
        else:
            source, target = text, None
        if not source.strip():
            raise DataError("empty input: expected a tree")
        return self.tree_example(source, target, {})

    def tree_example(self, source: str, target: str | None, meta: dict) -> Example:
        """The example of a source tree; one too large, too wide or too deep for *source_codec* is a ``DataError``.

        The source codec's ``max_nodes`` (and ``max_degree``) bound source trees as they bound
        decoded ones: LCRS paths grow with the number of siblings, so an unbounded tree (one
        megabyte-long line) would take memory quadratic in its size.
        """
        codec = self.source_codec
        try:
            tree = codec.parse(Example([], source.strip(), meta))
        except RecursionError:
            raise DataError("the source tree is nested too deeply to read", meta.get("path"), meta.get("line")) from None
        size, widest = _size_and_degree(tree)
        if size > codec.max_nodes:
            raise DataError(f"the source tree has {size} nodes, more than source_codec.max_nodes = {codec.max_nodes}", meta.get("path"), meta.get("line"))
        if codec.max_arity is not None and widest > codec.max_arity:
            raise DataError(f"a source node has {widest} children, more than source_codec.max_degree = {codec.max_arity}", meta.get("path"), meta.get("line"))
        visits = codec.visits(tree)
        return Example([visit.symbol for visit in visits], target, meta, [visit.path for visit in visits])


def _size_and_degree(tree: Tree) -> tuple[int, int]:
    """The number of nodes of *tree* and the most children of any node, without recursion (trees may be deep)."""
    size, widest, stack = 0, 0, [tree]
    while stack:
        node = stack.pop()
        size, widest = size + 1, max(widest, len(node.children))
        stack.extend(node.children)
    return size, widest
