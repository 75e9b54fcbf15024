"""Whether two AMR graphs are the same up to variable names: an exact check, with a bounded search."""

from __future__ import annotations

import penman

from transition_systems.amr.penman_text import INSTANCE

SEARCH_STEPS = 200  # candidate trials per node and edge that same_graph's search may take before it gives up


def same_graph(first: penman.Graph, second: penman.Graph) -> bool:
    """Whether two graphs are equal up to variable names (an isomorphism keeping the top, concepts, roles and values).

    Colour refinement narrows each variable's candidates; then a search maps the variables depth
    first from the top, each to a neighbour of its parent's image by the same role, and backtracks
    where an edge does not match. The search keeps its own stack, so a graph of any size or depth
    is compared without recursion, and takes at most ``SEARCH_STEPS`` trials per node and edge: a
    pair so symmetric that it runs out (no AMR graph; refinement leaves labelled graphs few
    candidates) raises ``ValueError`` rather than answer either way. Unlike Smatch's hill
    climbing, it never misses a match. Candidates already taken at the front of a variable's list
    are skipped once, not by every sibling: a star of 5,000 leaves of one concept gave up (each
    leaf tried the leaves before it), and `toolkit oracle` ended in that ``ValueError``.
    """
    side_a, side_b = _Side(first), _Side(second)
    if len(side_a.concepts) != len(side_b.concepts) or len(side_a.relations) != len(side_b.relations):
        return False
    colour_a, colour_b = _refine(side_a, side_b)
    if sorted(colour_a.values()) != sorted(colour_b.values()):
        return False
    return _search(side_a, side_b, colour_a, colour_b)


class _Side:
    """One graph's variables with their concepts and attributes, its relations (as a set), and their indexes."""

    def __init__(self, graph: penman.Graph) -> None:
        self.concepts = {source: str(target) for source, _, target in graph.instances()}
        self.attributes: dict[str, list[tuple[str, str]]] = {var: [] for var in self.concepts}
        relations = []
        for source, role, target in graph.triples:
            if role == INSTANCE or source not in self.concepts:
                continue
            if target in self.concepts:
                relations.append((source, role, target))
            else:
                self.attributes[source].append((role, str(target)))
        self.relations = list(dict.fromkeys(relations))
        self.top = graph.top
        self.incident: dict[str, list[tuple[str, str, str]]] = {var: [] for var in self.concepts}
        for edge in self.relations:
            source, role, target = edge
            self.incident[source].append(edge)
            if target != source:
                self.incident[target].append(edge)


def _refine(side_a: _Side, side_b: _Side, rounds: int = 16) -> tuple[dict[str, int], dict[str, int]]:
    """Colour refinement of both graphs with one shared palette (exact: signatures are numbered, not hashed),
    until the number of colours stops growing or after *rounds* rounds.
    """
    palette: dict[object, int] = {}

    def paint(signature: object) -> int:
        return palette.setdefault(signature, len(palette))

    colours = [{var: paint((side.concepts[var], tuple(sorted(side.attributes[var])), var == side.top)) for var in side.concepts} for side in (side_a, side_b)]
    count = len(set(colours[0].values()) | set(colours[1].values()))
    for _ in range(rounds):
        palette = {}
        refined = []
        for side, colour in zip((side_a, side_b), colours):
            signature: dict[str, list[tuple[str, int, int]]] = {var: [] for var in side.concepts}
            for source, role, target in side.relations:
                signature[source].append((role, 1, colour[target]))
                signature[target].append((role, -1, colour[source]))
            refined.append({var: paint((colour[var], tuple(sorted(signature[var])))) for var in side.concepts})
        colours = refined
        new_count = len(palette)
        if new_count == count:
            break
        count = new_count
    return colours[0], colours[1]


def _search(side_a: _Side, side_b: _Side, colour_a: dict[str, int], colour_b: dict[str, int]) -> bool:
    """Depth-first backtracking over the variables of *side_a* in a depth-first order from the top (see :func:`same_graph`)."""
    by_colour: dict[int, list[str]] = {}
    for var, colour in colour_b.items():
        by_colour.setdefault(colour, []).append(var)
    # the order: depth first from the top, then from each variable not reached (fewest candidates first);
    # each variable but a start comes with the edge to an earlier one that narrows its candidates
    order: list[tuple[str, tuple[str, str, str] | None]] = []
    seen: set[str] = set()
    starts = sorted(side_a.concepts, key=lambda var: (var != side_a.top, len(by_colour.get(colour_a[var], ()))))
    for start in starts:
        if start in seen:
            continue
        seen.add(start)
        stack = [(start, None)]
        while stack:
            var, via = stack.pop()
            order.append((var, via))
            for edge in reversed(side_a.incident[var]):
                other = edge[2] if edge[0] == var else edge[0]
                if other not in seen:
                    seen.add(other)
                    stack.append((other, edge))
    edges_b = set(side_b.relations)
    budget = SEARCH_STEPS * (len(order) + len(side_a.relations) + 1)
    mapping: dict[str, str] = {}
    used: set[str] = set()
    options: list[list[str]] = [[] for _ in order]
    tried = [0] * len(order)
    # the candidates of a variable, by what narrows them: its colour, and the image of an earlier neighbour and the role
    pools: dict[tuple, list[str]] = {("colour", colour): variables for colour, variables in by_colour.items()}
    for source, role, target in side_b.relations:
        pools.setdefault(("out", source, role, colour_b[target]), []).append(target)
        pools.setdefault(("in", target, role, colour_b[source]), []).append(source)
    # per pool, how many of its first candidates were used when last looked at, and how many releases ago: the
    # siblings of a star (one pool) take its candidates in turn, and each would go over those taken before it
    skip: dict[tuple, tuple[int, int]] = {}
    releases = 0

    def candidates(position: int) -> tuple[list[str], int]:
        """The pool of *position*'s variable, and where in it to start (before: candidates in use since)."""
        var, via = order[position]
        colour = colour_a[var]
        if via is None:
            key: tuple = ("colour", colour)
        elif via[2] == var:  # var is the target of an edge from an earlier variable
            key = ("out", mapping[via[0]], via[1], colour)
        else:
            key = ("in", mapping[via[2]], via[1], colour)
        pool = pools.get(key, [])
        start, since = skip.get(key, (0, releases))
        start = start if since == releases else 0
        while start < len(pool) and pool[start] in used:
            start += 1
        skip[key] = (start, releases)
        return pool, start

    position = 0
    if order:
        options[0], tried[0] = candidates(0)
    while 0 <= position < len(order):
        var = order[position][0]
        choices = options[position]
        placed = False
        while tried[position] < len(choices):
            budget -= 1
            if budget < 0:
                raise ValueError(f"same_graph gave up after {SEARCH_STEPS} trials per node and edge ({len(order)} nodes): the graphs are too symmetric")
            candidate = choices[tried[position]]
            tried[position] += 1
            if candidate in used:
                continue
            mapping[var] = candidate
            if all((mapping[s], r, mapping[t]) in edges_b for s, r, t in side_a.incident[var] if s in mapping and t in mapping):
                used.add(candidate)
                placed = True
                break
            del mapping[var]
        if placed:
            position += 1
            if position < len(order):
                options[position], tried[position] = candidates(position)
        else:
            position -= 1
            if position >= 0:
                used.discard(mapping.pop(order[position][0]))
                releases += 1
    return position == len(order)
