"""Seeded perturbations of PENMAN graphs: test and benchmark pairs for the exact Smatch scorer."""

from __future__ import annotations

import random


def perturb(text: str, seed: int, rate: float = 0.15) -> str:
    """A seeded perturbation of a PENMAN graph: relabel concepts and roles, change constants, drop and rewire edges.

    About ``rate`` of the triples are touched (at least one); the result stays one connected graph
    with the same top. After 20 draws that all disconnect the graph, the graph comes back unchanged.
    """
    import penman
    from penman.exceptions import LayoutError

    graph = penman.decode(text)
    rng = random.Random(seed)
    variables = sorted(graph.variables())
    for _attempt in range(20):
        triples = list(graph.triples)
        changed = []
        for source, role, target in triples:
            if rng.random() >= rate:
                changed.append((source, role, target))
                continue
            action = rng.random()
            if role == ":instance":
                changed.append((source, role, target + "-x" if action < 0.5 else rng.choice(["thing", "person", "be-01"])))
            elif target in graph.variables():
                if action < 0.3:
                    changed.append((source, rng.choice([":ARG0", ":ARG1", ":mod", ":op1", ":domain"]), target))
                elif action < 0.6:
                    changed.append((source, role, rng.choice(variables)))
                elif action < 0.8:
                    continue  # drop the edge (a retry follows if that disconnects the graph)
                else:
                    changed.append((source, role, target))
                    changed.append((rng.choice(variables), role, target))
            else:
                if action < 0.4:
                    continue  # drop the attribute
                changed.append((source, role, '"' + str(target).strip('"') + 'x"' if action < 0.7 else target))
                if action >= 0.7:
                    changed.append((rng.choice(variables), rng.choice([":polarity", ":quant"]), "-"))
        if changed == triples:
            continue  # nothing drawn: draw again, so that every pair differs
        try:
            return penman.encode(penman.Graph(changed, top=graph.top))
        except (LayoutError, ValueError, KeyError):
            continue
    return text
