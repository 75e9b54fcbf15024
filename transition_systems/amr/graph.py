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
from penman import layout

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
        for triple in graph.triples:
            source, role, target = triple
            if role == ":instance":
                continue
            role = role[1:]
            if target in labels and layout.appears_inverted(graph, triple):
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


def concept(label: str) -> str:
    """*label* made a valid PENMAN concept (a constant that must head a node loses its quotes)."""
    cleaned = BAD_CONCEPT.sub("_", label.strip('"')).strip("_")
    return cleaned or "thing"


def constant_value(label: str) -> str:
    if label.startswith('"'):
        inner = label[1:-1] if len(label) > 1 and label.endswith('"') else label[1:]
        return '"' + " ".join(inner.replace("\\", "").replace('"', "'").splitlines()) + '"'
    return label if is_constant(label) and not any(c.isspace() or c in "()" for c in label) else '"' + concept(label) + '"'


def encode(labels: Sequence[str], edges: Sequence[tuple[int, str, int]], top: int = -1, indent: int | None = None) -> str:
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
    return penman.encode(penman.Graph(triples, top=names[top]), indent=indent)


def same_graph(first: penman.Graph, second: penman.Graph) -> bool:
    """Whether two graphs are equal up to variable names (an isomorphism keeping the top, concepts, roles and values).

    Colour refinement narrows each variable's candidates, then a backtracking search checks
    every relation; AMR graphs are small and labelled, so this is fast and, unlike Smatch's
    hill climbing, never misses a match.
    """

    def parts(graph: penman.Graph):  # type: ignore[no-untyped-def]
        concepts = {source: str(target) for source, _, target in graph.instances()}
        attributes: dict[str, list[tuple[str, str]]] = {var: [] for var in concepts}
        relations = []
        for source, role, target in graph.triples:
            if role == ":instance" or source not in concepts:
                continue
            if target in concepts:
                relations.append((source, role, target))
            else:
                attributes[source].append((role, str(target)))
        return concepts, attributes, relations

    concepts_a, attributes_a, relations_a = parts(first)
    concepts_b, attributes_b, relations_b = parts(second)
    if len(concepts_a) != len(concepts_b) or len(set(relations_a)) != len(set(relations_b)):
        return False

    def colours(concepts, attributes, relations, top):  # type: ignore[no-untyped-def]
        colour = {var: hash((concepts[var], tuple(sorted(attributes[var])), var == top)) for var in concepts}
        for _ in range(3):
            signature = {var: [] for var in concepts}
            for source, role, target in set(relations):
                signature[source].append((role, 1, colour[target]))
                signature[target].append((role, -1, colour[source]))
            colour = {var: hash((colour[var], tuple(sorted(signature[var])))) for var in concepts}
        return colour

    colour_a = colours(concepts_a, attributes_a, relations_a, first.top)
    colour_b = colours(concepts_b, attributes_b, relations_b, second.top)
    if sorted(colour_a.values()) != sorted(colour_b.values()):
        return False
    edges_b = set(relations_b)
    by_colour: dict[int, list[str]] = {}
    for var, colour in colour_b.items():
        by_colour.setdefault(colour, []).append(var)
    order = sorted(concepts_a, key=lambda var: len(by_colour[colour_a[var]]))
    incident: dict[str, list[tuple[str, str, str]]] = {var: [] for var in concepts_a}
    for edge in set(relations_a):
        incident[edge[0]].append(edge)
        incident[edge[2]].append(edge)
    mapping: dict[str, str] = {}
    used: set[str] = set()

    def extend(position: int) -> bool:
        if position == len(order):
            return True
        var = order[position]
        for candidate in by_colour[colour_a[var]]:
            if candidate in used:
                continue
            mapping[var] = candidate
            if all((mapping[s], r, mapping[t]) in edges_b for s, r, t in incident[var] if s in mapping and t in mapping):
                used.add(candidate)
                if extend(position + 1):
                    return True
                used.discard(candidate)
            del mapping[var]
        return False

    return extend(0)
