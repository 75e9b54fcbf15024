"""AMR graphs as the transition system sees them: nodes (concepts and constants) and labelled edges.

A :class:`GoldGraph` is read from a ``penman`` graph: every variable is a node labelled with its
concept, and every attribute value (``:polarity -``, ``:op1 "Paris"``, ``:quant 6``) is a node of
its own, a *constant*, so the oracle aligns and creates it like any other node. Roles are kept as
``penman`` normalises them (``:ARG0-of`` becomes ``:ARG0`` in the other direction), without the colon.
:func:`encode` turns nodes and edges back into PENMAN, repairing what a parse cut short leaves
(no top, several components), so every output is a valid graph.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass

import penman
from penman.layout import Pop, Push

from transition_systems.amr.penman_text import write_penman

CONSTANT_WORDS = frozenset({"imperative", "interrogative", "expressive"})
NUMBER = re.compile(r"[-+]?\d+(?:[.,/:]\d+)*")
BAD_CONCEPT = re.compile(r'[\s()":/~^#]+')  # what penman's lexer reads as structure ("#" opens a comment)
PLACEHOLDER = "(a / amr-empty)"

logging.getLogger("penman").setLevel(logging.WARNING)  # penman logs every graph it reads at INFO


def is_constant(label: str) -> bool:
    """Whether *label* is an attribute value (quoted string, number, ``-``/``+``, a mode word), not a concept."""
    return label.startswith('"') or label in ("-", "+") or label in CONSTANT_WORDS or bool(NUMBER.fullmatch(label))


@dataclass(frozen=True)
class GoldGraph:
    """Nodes in PENMAN order (the top first), their labels, which are constants, and the edges."""

    nodes: tuple[str, ...]
    labels: dict[str, str]
    constants: frozenset[str]
    edges: tuple[tuple[str, str, str], ...]
    top: str
    inverted: frozenset[tuple[str, str, str]] = frozenset()  # edges written as ``:role-of`` (the target above its source)

    @classmethod
    def of(cls, graph: penman.Graph) -> GoldGraph:
        labels: dict[str, str] = {}
        nodes: list[str] = []
        for source, _, target in graph.instances():
            if source not in labels:
                nodes.append(source)
            labels[source] = target if target is not None else "thing"
        constants, edges, inverted = set(), [], set()
        appears_inverted = _appears_inverted(graph)
        for triple in graph.triples:
            source, role, target = triple
            if role == ":instance":
                continue
            role = role[1:]
            if target in labels and triple in appears_inverted:
                inverted.add((source, role, target))
            if target in labels:
                edges.append((source, role, target))
            elif source in labels:
                constant = f"{source}~{len(nodes)}"
                nodes.append(constant)
                labels[constant] = str(target)
                constants.add(constant)
                edges.append((source, role, constant))
        top = graph.top if graph.top in labels else nodes[0]
        return cls(tuple(nodes), labels, frozenset(constants), tuple(dict.fromkeys(edges)), top, frozenset(inverted))

    def neighbours(self) -> dict[str, list[tuple[str, str, str]]]:
        """Per node, the edges it takes part in (in either direction)."""
        table: dict[str, list[tuple[str, str, str]]] = {node: [] for node in self.nodes}
        for edge in self.edges:
            table[edge[0]].append(edge)
            if edge[2] != edge[0]:
                table[edge[2]].append(edge)
        return table


def _appears_inverted(graph: penman.Graph) -> set[tuple[str, str, str]]:
    """The triples ``penman.layout.appears_inverted`` finds written inverted (``:ARG0-of``), all in one pass:
    penman's function recomputes the graph's variables and node contexts for every triple it is asked about.
    """
    variables = graph.variables()
    epidata = graph.epidata
    contexts: dict[tuple[str, str, str], str] = {}  # each triple's node context, at its first occurrence, while known
    stack = [graph.top]
    for triple in graph.triples:  # penman.layout.node_contexts
        if stack[-1] != triple[0] and not (triple[1] != ":instance" and triple[2] in variables and stack[-1] == triple[2]):
            break
        contexts.setdefault(triple, stack[-1])
        epis = epidata.get(triple, ())
        pushed = next((epi.variable for epi in epis if isinstance(epi, Push)), None)
        if pushed:
            stack.append(pushed)
        pops = sum(isinstance(epi, Pop) for epi in epis)
        if pops >= len(stack):
            break  # more POPs than contexts
        del stack[len(stack) - pops :]
    found = set()
    for triple in graph.triples:
        if triple[1] == ":instance" or triple[2] not in variables:
            continue
        pushed = next((epi.variable for epi in epidata.get(triple, ()) if isinstance(epi, Push)), None)
        if (pushed == triple[0]) if pushed is not None else (triple in contexts and triple[2] == contexts[triple]):
            found.add(triple)
    return found


def concept(label: str) -> str:
    """*label* made a valid PENMAN concept (a constant that must head a node loses its quotes)."""
    cleaned = BAD_CONCEPT.sub("_", label.strip('"')).strip("_")
    return cleaned or "thing"


def constant_value(label: str) -> str:
    if label.startswith('"'):
        inner = label[1:-1] if len(label) > 1 and label.endswith('"') else label[1:]
        return '"' + " ".join(inner.replace("\\", "").replace('"', "'").splitlines()) + '"'
    if not is_constant(label):
        return '"' + concept(label) + '"'
    return '"' + label + '"' if BAD_CONCEPT.search(label) else label  # a fraction, 1/2, is no bare symbol to penman


def encode(labels: Sequence[str], edges: Sequence[tuple[int, str, int]], top: int = -1) -> str:
    """PENMAN for nodes ``0..n-1`` with *labels* and *edges* ``(source, role, target)``; always valid.

    A constant with incoming edges and none outgoing becomes an attribute of each source; any other
    node is a variable (a constant label turned into a concept). Without a usable *top* the first
    variable is the top; a component the top does not reach is attached to it with ``:mod``.
    """
    if not labels:
        return PLACEHOLDER
    outgoing = {source for source, _, _ in edges}
    incoming = {target for _, _, target in edges}
    attribute = [is_constant(label) and index not in outgoing and index in incoming for index, label in enumerate(labels)]
    variables = [index for index in range(len(labels)) if not attribute[index]]
    if not variables:  # only constants without edges between variables: make the first one a concept
        attribute[0] = False
        variables = [0]
    if top < 0 or top >= len(labels) or attribute[top]:
        top = variables[0]
    names, counts = {}, {}
    for index in variables:
        letter = concept(labels[index])[0].lower()
        letter = letter if letter.isalpha() else "x"
        counts[letter] = counts.get(letter, 0) + 1
        names[index] = letter if counts[letter] == 1 else f"{letter}{counts[letter]}"
    triples = [(names[top], ":instance", concept(labels[top]))]
    triples += [(names[index], ":instance", concept(labels[index])) for index in variables if index != top]
    seen, parent = set(), {index: index for index in variables}

    def find(index: int) -> int:
        while parent[index] != index:
            parent[index] = parent[parent[index]]
            index = parent[index]
        return index

    for source, role, target in edges:
        role = role if role and not BAD_CONCEPT.search(role) else "mod"
        if attribute[source] or source == target:
            continue
        if attribute[target]:
            triple = (names[source], f":{role}", constant_value(labels[target]))
        else:
            triple = (names[source], f":{role}", names[target])
            parent[find(source)] = find(target)
        if triple not in seen:
            seen.add(triple)
            triples.append(triple)
    for index in variables:
        if find(index) != find(top):
            parent[find(index)] = find(top)
            triples.append((names[top], ":mod", names[index]))
    return write_penman(triples, names[top])
