"""Gold token alignments of AMR graphs, and how well an aligner agrees with them on concept nodes.

Two ways of writing gold alignments are read, both against the tokens of ``# ::tok`` (else the
``# ::snt`` split on spaces), 0-based:

- ISI's, in the graph: ``(s / see-01~e.3 ...)`` (``penman`` reads them; ``~e.2,3`` is a concept
  of two tokens);
- JAMR's, in a ``# ::alignments 3-4|0.1+0.1.0 ...`` line: a token span ``start-end`` (end
  excluded) and the nodes it aligns, each by its address: ``0`` is the top, and ``.k`` goes to
  the node's ``k``-th relation (0-based, in the order written, constants included).

A concept node counts as aligned correctly when the aligner's token is one of its gold tokens.
Precision is over the nodes the aligner aligned, recall over the nodes the gold aligns; nodes
the gold leaves unaligned (concepts no word stands for) count against precision if aligned.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import penman
from penman import surface

from toolkit.data.tokenization import lemmatize
from toolkit.errors import DataError
from transition_systems.amr.graph import GoldGraph
from transition_systems.amr.state import Sentence

if TYPE_CHECKING:
    from transition_systems.amr.system import AmrTransitionSystem


@dataclass(frozen=True)
class GoldAlignedGraph:
    """A graph, its sentence's tokens, and each aligned concept node's gold tokens."""

    id: str
    tokens: tuple[str, ...]
    graph: penman.Graph
    gold: dict[str, frozenset[int]]


@dataclass(frozen=True)
class AlignmentScore:
    """Counts of concept nodes: aligned correctly, aligned by the aligner, aligned by the gold."""

    correct: int
    predicted: int
    gold: int

    @property
    def precision(self) -> float:
        return self.correct / self.predicted if self.predicted else 0.0

    @property
    def recall(self) -> float:
        return self.correct / self.gold if self.gold else 0.0

    @property
    def f1(self) -> float:
        total = self.precision + self.recall
        return 2 * self.precision * self.recall / total if total else 0.0


def read_gold_alignments(path: str | Path) -> list[GoldAlignedGraph]:
    """Every graph of the PENMAN file *path* with its gold concept alignments (see the module docstring)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise DataError(f"cannot read gold alignments: {error}", path) from None
    graphs = []
    for number, block in _blocks(text):
        try:
            graph = penman.decode(block)
        except penman.DecodeError as error:
            raise DataError(f"not a PENMAN graph: {error}", path, number) from None
        except RecursionError:  # penman reads a graph with one Python call per level of nesting
            raise DataError("not a PENMAN graph this reader can read: nested too deeply", path, number) from None
        tokens = tuple((graph.metadata.get("tok") or graph.metadata.get("snt", "")).split())
        gold = _isi(graph)
        if "alignments" in graph.metadata:
            for node, indices in _jamr(block, graph.metadata["alignments"], path, number).items():
                gold[node] = gold.get(node, frozenset()) | indices
        wrong = sorted(i for indices in gold.values() for i in indices if i >= len(tokens))
        if wrong:
            raise DataError(f"alignment to token {wrong[0]}, but the sentence has {len(tokens)} tokens", path, number)
        graphs.append(GoldAlignedGraph(graph.metadata.get("id", f"line {number}"), tokens, graph, gold))
    return graphs


def score_aligner(grammar: AmrTransitionSystem, graphs: list[GoldAlignedGraph], forced: bool = False) -> AlignmentScore:
    """How the grammar's aligner agrees with the gold on concept nodes; *forced* counts force-aligned nodes too."""
    correct = predicted = gold = 0
    for item in graphs:
        gold_graph = GoldGraph.of(item.graph)
        alignment = grammar.align(gold_graph, Sentence(item.tokens, lemmatize(item.tokens)))
        ours = {node: token for node, token in alignment.tokens.items() if node not in gold_graph.constants and (forced or node not in alignment.forced)}
        predicted += len(ours)
        gold += len(item.gold)
        correct += sum(token in item.gold.get(node, ()) for node, token in ours.items())
    return AlignmentScore(correct, predicted, gold)


def _blocks(text: str) -> Iterator[tuple[int, str]]:
    """Each graph's text (comments included) and the line it starts on; file-level comments before a blank line are skipped."""
    lines: list[str] = []
    start = 1
    for number, line in enumerate(text.splitlines() + [""], start=1):
        if line.strip():
            if not lines:
                start = number
            lines.append(line)
        elif lines:
            if any(not candidate.lstrip().startswith("#") for candidate in lines):
                yield start, "\n".join(lines)
            lines = []


def _isi(graph: penman.Graph) -> dict[str, frozenset[int]]:
    return {source: frozenset(found.indices) for (source, role, _), found in surface.alignments(graph).items() if role == ":instance"}


def _jamr(block: str, line: str, path: Path, number: int) -> dict[str, frozenset[int]]:
    """The concept nodes of a JAMR ``# ::alignments`` line, by resolving each address in the graph's tree."""
    tree = penman.parse(block).node
    found: dict[str, set[int]] = {}
    for item in line.split():
        span, _, addresses = item.partition("|")
        try:
            start, end = (int(part) for part in span.split("-"))
            for address in addresses.split("+"):
                node = tree
                for step in address.split(".")[1:]:
                    relations = [branch for branch in node[1] if branch[0] != "/"]
                    node = relations[int(step)][1]
                if isinstance(node, tuple):
                    found.setdefault(node[0], set()).update(range(start, end))
        except (ValueError, IndexError):
            raise DataError(f"cannot read the alignment {item!r}", path, number) from None
    return {node: frozenset(indices) for node, indices in found.items()}
