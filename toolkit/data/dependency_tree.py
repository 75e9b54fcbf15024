"""The dependency tree: what CoNLL-U readers produce and dependency grammars build and compare.

Its own module, apart from the reader, so that grammars can use it without importing readers.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DependencyTree:
    """A basic dependency tree over words 1..n: ``heads[i]`` governs word ``i + 1`` (0 is the root).

    *upos* and *feats* (each word's FEATS column, ``"_"`` for none) are the gold tagging when read
    from a treebank, ``None`` where a parser does not predict them, so a prediction equals its gold
    when heads and relations agree (:meth:`without_upos`).
    """

    heads: tuple[int, ...]
    deprels: tuple[str, ...]
    upos: tuple[str, ...] | None = None
    feats: tuple[str, ...] | None = None

    def __len__(self) -> int:
        return len(self.heads)

    def without_upos(self) -> DependencyTree:
        """Heads and relations only (no tags): what a parser's output is compared with."""
        return DependencyTree(self.heads, self.deprels)
