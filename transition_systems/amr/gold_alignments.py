"""Gold token alignments of AMR graphs, and how well an aligner agrees with them on concept nodes.

Three ways of writing gold alignments are read, all against the tokens of ``# ::tok`` (else the
``# ::snt`` split on spaces), 0-based:

- ISI's, in the graph: ``(s / see-01~e.3 ...)`` (``penman`` reads them; ``~e.2,3`` is a concept
  of two tokens);
- JAMR's ``# ::alignments 3-4|0.1+0.1.0 ...`` line: a token span ``start-end`` (end excluded) and
  the nodes it aligns, each by its address: ``0`` is the top, and ``.k`` goes to the node's
  ``k``-th relation (0-based, in the order written, constants included, re-entrant variables
  skipped, as JAMR's ``scripts/Alignment_Format.txt`` says);
- ISI's ``# ::alignments 3-1.2 4-1.2.1.r ...`` line (the AMR releases' ``alignments/`` files,
  Pourdamghani et al. 2014): one token and one address per item; ``1`` is the top, and ``.k``
  goes to the node's ``k``-th relation (1-based, in the order written, constants and re-entrant
  variables included: the path ``penman``'s ``Tree.walk`` gives, whose index 0 is the concept).
  An address ending in ``.r`` aligns the role into that node, not the node.

Only concept nodes are scored, so alignments of roles (``.r``, ``:ARG0~e.4``), constants and
re-entrant variables are checked (the address must exist, the token be in the sentence) and left out,
but for one convention: ISI aligns a name's strings (``:op1 "Paris"~e.3``), not its ``name`` node,
and JAMR the node; a name's strings' tokens count as its name node's, and an entity whose type the
gold leaves unaligned (ISI's: the strings stand for it) is not scored, so the aligner, which aligns
the node and the entity at the name, is scored by each format's own convention. Tokens are those of
:func:`~toolkit.data.tokenization.split_tokens`: a markup tag (``<xref ref-type="fig" rid="F3">``) is
one token, as in ISI's biomedical release, so the indices after one hold.
A file's first ``# ::alignments`` line decides the format of all of its lines (JAMR's items have a
``|``, ISI's never do); it is logged once per file and kept as each graph's ``alignment_format``.

ISI aligns an entity's type to the word that says it, where one stands by the name (*HCT116 cells*:
``cell-line`` at *cells*; *the kinase AKT*: ``enzyme`` at *kinase*), where the aligner puts the whole entity
at its name, since the oracle makes it there; :func:`isi_type_cues` moves the type to that word for
ISI's formats only (its line and its in-graph ``~e.N``; :data:`TYPE_WORDS`, and the words of the type's own label).

A concept node counts as aligned correctly when the aligner's token is one of its gold tokens.
Precision is over the nodes the aligner aligned, recall over the nodes the gold aligns; nodes
the gold leaves unaligned (concepts no word stands for) count against precision if aligned.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import penman
from penman import surface

from toolkit.data.tokenization import lemmatize, split_tokens
from toolkit.errors import DataError
from transition_systems.amr.graph import GoldGraph
from transition_systems.amr.state import Sentence

if TYPE_CHECKING:
    from transition_systems.amr.aligner import Alignment
    from transition_systems.amr.system import AmrTransitionSystem

logger = logging.getLogger(__name__)
JAMR, ISI = "JAMR", "ISI"
# words that say an entity's type beside those of its label (``cell-line``: *cell*, *line*), as lemmas
TYPE_WORDS: dict[str, frozenset[str]] = {
    "enzyme": frozenset({"kinase", "phosphatase", "ligase", "protease"}),
    "small-molecule": frozenset({"inhibitor", "compound", "drug"}),
    "pathway": frozenset({"signaling", "signalling", "cascade"}),
    "protein-family": frozenset({"family"}),
}
ITEMS = {
    JAMR: re.compile(r"(\d+)-(\d+)\|(0(?:\.\d+)*(?:\+0(?:\.\d+)*)*)"),  # start-end|address+address, addresses from 0
    ISI: re.compile(r"(\d+)-1((?:\.[1-9]\d*)*)(\.r)?"),  # token-address, from 1, maybe the role into the node (.r)
}


@dataclass(frozen=True)
class GoldAlignedGraph:
    """A graph, its sentence's tokens, and each aligned concept node's gold tokens."""

    id: str
    tokens: tuple[str, ...]
    graph: penman.Graph
    gold: dict[str, frozenset[int]]
    alignment_format: str | None = None  # of its ``# ::alignments`` line: "JAMR" or "ISI" (None: no such line)


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
    file_format: str | None = None  # the format of the file's first # ::alignments line, which all of them must have
    for number, block in _blocks(text):
        try:
            graph = penman.decode(block)
        except penman.DecodeError as error:
            raise DataError(f"not a PENMAN graph: {error}", path, number) from None
        except RecursionError:  # penman reads a graph with one Python call per level of nesting
            raise DataError("not a PENMAN graph this reader can read: nested too deeply", path, number) from None
        tokens = tuple(split_tokens(graph.metadata.get("tok") or graph.metadata.get("snt", "")))
        gold = _in_graph(graph)
        named = {i for indices in gold.values() for i in indices}
        line = graph.metadata.get("alignments", "")
        line_format = None
        if line.split():
            if file_format is None:
                file_format = JAMR if "|" in line else ISI
                logger.info("%s: gold alignments in %s format (its first # ::alignments line, at line %d)", path, file_format, number)
            line_format = file_format
            nodes, line_tokens = _alignment_line(block, line, file_format, path, number)
            for node, indices in nodes.items():
                gold[node] = gold.get(node, frozenset()) | indices
            named |= line_tokens
        wrong = sorted(i for i in named if i >= len(tokens))
        if wrong:
            raise DataError(f"alignment to token {wrong[0]}, but the sentence has {len(tokens)} tokens", path, number)
        graphs.append(GoldAlignedGraph(graph.metadata.get("id", f"line {number}"), tokens, graph, gold, line_format))
    return graphs


def score_aligner(grammar: AmrTransitionSystem, graphs: list[GoldAlignedGraph], forced: bool = False) -> AlignmentScore:
    """How the grammar's aligner agrees with the gold on concept nodes; *forced* counts force-aligned nodes too."""
    correct = predicted = gold = 0
    for item in graphs:
        gold_graph = GoldGraph.of(item.graph)
        alignment = grammar.align(gold_graph, Sentence(item.tokens, lemmatize(item.tokens)))
        # an entity whose type the gold leaves unaligned is ISI's convention (the strings stand for it), not a wrong guess
        by_convention = {source for source, role, _ in gold_graph.edges if role == "name" and source not in item.gold}
        cues = isi_type_cues(gold_graph, alignment, lemmatize(item.tokens)) if item.alignment_format != JAMR else {}
        ours = {
            node: cues.get(node, token)
            for node, token in alignment.tokens.items()
            if node not in gold_graph.constants and node not in by_convention and (forced or node not in alignment.forced)
        }
        predicted += len(ours)
        gold += len(item.gold)
        correct += sum(token in item.gold.get(node, ()) for node, token in ours.items())
    return AlignmentScore(correct, predicted, gold)


def isi_type_cues(graph: GoldGraph, alignment: Alignment, lemmas: Sequence[str]) -> dict[str, int]:
    """Entity node -> the word by its name that says its type, as ISI aligns types: the last of the run of such words
    right after the name (*HCT116 cell lines*: *lines*), else the word right before it (*the kinase AKT*).
    """
    cues = {}
    for entity, (start, end) in alignment.names.items():
        words = TYPE_WORDS.get(graph.labels[entity], frozenset()) | frozenset(graph.labels[entity].split("-"))
        after = end
        while after < len(lemmas) and lemmas[after] in words:
            after += 1
        if after > end:
            cues[entity] = after - 1
        elif start > 0 and lemmas[start - 1] in words:
            cues[entity] = start - 1
    return cues


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


def _in_graph(graph: penman.Graph) -> dict[str, frozenset[int]]:
    """The concepts' ``~e.N`` alignments, and a name's strings' as its name node's (roles and other attributes are left out)."""
    names = {source for source, _, concept in graph.instances() if concept == "name"}
    gold: dict[str, frozenset[int]] = {}
    for (source, role, _), found in surface.alignments(graph).items():
        if role == ":instance" or (source in names and _is_op(role)):
            gold[source] = gold.get(source, frozenset()) | frozenset(found.indices)
    return gold


def _is_name(node: tuple) -> bool:
    """Whether a ``penman`` tree node is a ``name`` (its concept maybe aligned: ``name~e.3``)."""
    return any(kind == "/" and str(target).partition("~")[0] == "name" for kind, target in node[1])


def _is_op(role: str) -> bool:
    """``:op1``, ``:op2``, ...: a name's strings."""
    return role.startswith(":op") and role[3:].isdigit()


def _alignment_line(block: str, line: str, line_format: str, path: Path, number: int) -> tuple[dict[str, frozenset[int]], set[int]]:
    """The concept nodes a ``# ::alignments`` line in *line_format* aligns, each address resolved in the graph's tree,
    and every token the line names (see the module docstring: the two formats number relations differently).
    """
    tree = penman.parse(block)
    variables = {variable for variable, _ in tree.nodes()}
    isi = line_format == ISI
    base = 1 if isi else 0  # the number of a node's first relation
    found: dict[str, set[int]] = {}
    named: set[int] = set()
    for item in line.split():
        match = ITEMS[line_format].fullmatch(item)
        if isi and match and (match[2] or not match[3]):  # "1.r" is no role: nothing leads into the top
            indices, addresses, role = range(int(match[1]), int(match[1]) + 1), ["1" + match[2]], bool(match[3])
        elif not isi and match and int(match[1]) < int(match[2]):
            indices, addresses, role = range(int(match[1]), int(match[2])), match[3].split("+"), False
        else:
            raise DataError(f"cannot read the alignment {item!r} in {line_format} format (that of the file's first # ::alignments line)", path, number)
        named.update(indices)
        for address in addresses:
            node: tuple | str = tree.node
            parent: tuple | None = None
            via = ""  # the role from parent to node
            for step in address.split(".")[1:]:
                relations = [
                    (kind, target)
                    for kind, target in (node[1] if isinstance(node, tuple) else ())  # a constant or re-entrancy has none
                    if kind != "/" and (isi or isinstance(target, tuple) or target.partition("~")[0] not in variables)
                ]
                if int(step) - base >= len(relations):
                    raise DataError(f"cannot read the alignment {item!r}: the graph has no node {address}", path, number)
                parent = node if isinstance(node, tuple) else None
                via, node = relations[int(step) - base]
            if isinstance(node, tuple) and not role:  # a concept node, not a constant, a re-entrancy or the role into it
                found.setdefault(node[0], set()).update(indices)
            elif isi and not role and parent is not None and _is_name(parent) and _is_op(via.partition("~")[0]):  # a name's string: the name's
                found.setdefault(parent[0], set()).update(indices)
    return {node: frozenset(indices) for node, indices in found.items()}, named
