"""The dependency tree: what CoNLL-U readers produce and dependency grammars build and compare.

Its own module, apart from the reader, so that grammars can use it without importing readers.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DependencyTree:
    """A basic dependency tree over words 1..n: ``heads[i]`` governs word ``i + 1`` (0 is the root).

    *upos* is the gold tagging when read from a treebank, ``None`` in a parser's output, so a
    prediction equals its gold when heads and relations agree.
    """

    heads: tuple[int, ...]
    deprels: tuple[str, ...]
    upos: tuple[str, ...] | None = None

    def __len__(self) -> int:
        return len(self.heads)

    def without_upos(self) -> DependencyTree:
        """Heads and relations only: what a parser's output is compared with."""
        return DependencyTree(self.heads, self.deprels)
