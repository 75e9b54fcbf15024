"""PENMAN graphs read into smatch 1.0.4's triples (``amr.py`` and ``smatch.py``), or smatchpp's.

The triples are exactly smatch's, so that the optimum found over them is the optimum of the very
objective smatch's hill-climber maximises, hence never lower:

* one ``instance`` triple per variable, plus ``TOP(root, top)`` as an attribute of the root;
* an edge to a variable is a relation triple, an edge to a constant an attribute triple;
* a role ending in ``-of`` (except ``prep-on-behalf-of``, ``prep-out-of``, ``consist-of``) is
  inverted, and ``:mod`` is read as an inverted ``:domain`` (smatchpp does not do the latter);
  an inverted role whose target is a constant (``:mod 1``, ``:quant-of 5``) is dropped, as smatch drops it;
* labels and values are compared lower-cased with trailing ``_`` removed; a quoted constant keeps
  only its first whitespace-separated word (``"New York"`` compares as ``new``), as in smatch's reader;
* duplicate triples are kept, and a pair of equal triples counts once per (test, gold) copy, as in
  smatch (so duplicates can push a pair's count above a graph's triple count, exactly as there).
"""

from __future__ import annotations

from dataclasses import dataclass

INVERSE_EXCEPTIONS = frozenset({"prep-on-behalf-of", "prep-out-of", "consist-of"})


def _normalize(item: str) -> str:
    return item.lower().rstrip("_")


def _constant(value: str) -> str:
    """A constant as smatch's reader leaves it, normalised as smatch compares it."""
    if value.startswith('"') and value.endswith('"') and len(value) >= 2:
        words = (value[1:-1].replace('"', "") + "_").split()
        value = words[0] if words else "_"
    return _normalize(value)


@dataclass
class SmatchGraph:
    """A graph's triples as smatch reads them, with variables numbered ``0..n-1`` (0 is the top)."""

    concepts: list[str]  # per variable
    attributes: list[tuple[int, str, str]]  # (variable, name, value), TOP included
    relations: list[tuple[str, int, int]]  # (name, source, target)

    @property
    def num_triples(self) -> int:
        return len(self.concepts) + len(self.attributes) + len(self.relations)


EMPTY_GRAPH = SmatchGraph([], [], [])


SEMANTICS = ("smatch", "smatchpp")


def read_graph(text: str, semantics: str = "smatch") -> SmatchGraph:
    """Parse one PENMAN string (comments allowed) into smatch's triples.

    ``semantics="smatchpp"`` reads the triples as smatchpp's generic standardizer does instead,
    to compare with it (and :func:`match_graphs` then counts a duplicated triple min(a, b) times,
    not a * b): every ``-of`` role is inverted (``consist-of`` too, an even number of
    ``-of`` cancels out), ``:mod`` stays ``:mod``, an inverted edge to a constant is kept (as an
    attribute named ``role-of``), and a quoted constant is kept whole (lower-cased, no quotes).
    """
    import penman

    if semantics not in SEMANTICS:
        raise ValueError(f"semantics must be one of {', '.join(SEMANTICS)}, got {semantics!r}")
    smatchpp = semantics == "smatchpp"
    tree = penman.parse(text)
    variables: dict[str, int] = {}
    concepts: list[str] = []
    edges: list[tuple[int, str, object]] = []

    def enter(var: str) -> int:
        index = variables.setdefault(var, len(variables))
        if index == len(concepts):
            concepts.append("")
        return index

    # depth first with a stack of its own (a graph nested thousands deep needs no Python recursion): each frame is a
    # node's index, its branches still to read, and the edge from its parent, written once the node is read
    stack = [(enter(tree.node[0]), iter(tree.node[1]), None)]
    while stack:
        index, branches, parent_edge = stack[-1]
        for role, target in branches:
            if role == "/":
                concept = str(target).replace('"', "")
                concepts[index] = concept.lower() if smatchpp else _normalize(concept)
            elif isinstance(target, tuple):
                child = enter(target[0])
                stack.append((child, iter(target[1]), (index, role.lstrip(":"), child)))
                break
            else:
                edges.append((index, role.lstrip(":"), target))
        else:
            stack.pop()
            if parent_edge is not None:
                edges.append(parent_edge)
    attributes: list[tuple[int, str, str]] = []
    relations: list[tuple[str, int, int]] = []
    for source, role, target in edges:
        if smatchpp:
            role = role.lower()
            inversions = 0
            while role.endswith("-of"):
                role, inversions = role[:-3], inversions + 1
            inverted = inversions % 2 == 1
        else:
            inverted = (role.endswith("-of") and role not in INVERSE_EXCEPTIONS) or role == "mod"
            role = "domain" if role == "mod" else _normalize(role[:-3] if inverted else role)
        if isinstance(target, str):
            if target in variables:
                target = variables[target]
            elif smatchpp:
                attributes.append((source, role + "-of" if inverted else role, target.replace('"', "").lower()))
                continue
            elif inverted:
                continue  # smatch drops an inverted edge to a constant
            else:
                attributes.append((source, role, _constant(target)))
                continue
        relations.append((role, target, source) if inverted else (role, source, target))
    if concepts:
        attributes.append((0, "top", "top"))
    return SmatchGraph(concepts, attributes, relations)
