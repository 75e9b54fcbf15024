"""PENMAN text without recursion.

``penman`` lays a graph out and writes it, and reads text back, with one Python call per level of
nesting, so a graph nested a few hundred deep raises RecursionError. These functions do the same
work with explicit stacks: :func:`write_penman` writes exactly what ``penman.encode`` writes for a
graph built from triples (no layout markers, ``indent=None``); :func:`read_penman` reads the
triples and top ``penman.decode`` would. :func:`metadata_value` writes a ``# ::key value`` line's value
so that penman's metadata parser reads it back whole, and :func:`read_metadata_value` undoes it.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Sequence

import penman
from penman.exceptions import LayoutError

INSTANCE = ":instance"
LAYOUT_PASSES = 20  # triples penman's layout may pass over, per triple, before write_penman lays the graph out depth first


def _invert_role(role: str) -> str:
    """``penman``'s default model: a role ending in ``-of`` loses it, any other role gains it."""
    return role[:-3] if role.endswith("-of") else role + "-of"


def write_penman(triples: Sequence[tuple[str, str, str]], top: str) -> str:
    """``penman.encode(penman.Graph(triples, top=top), indent=None)``, computed without recursion.

    The layout is penman's (``penman.layout.configure`` on a graph without layout markers): the
    triples are placed in their order at the node being filled while they fit it; when one does
    not, the next triple (going round the remaining ones) with an end already in the tree starts
    that end's node, and the triples skipped on the way go to the back. A disconnected graph
    raises ``penman.exceptions.LayoutError``, as in penman.

    Going round takes time in proportion to the triples for each node placed when the triples come
    in an order far from the graph's (edges listed from the last node back to the top: 7 s for a
    5,000-node chain). Past ``LAYOUT_PASSES`` triples passed over per triple, the graph is laid out
    depth first from the top instead (:func:`_layout_depth_first`): another layout of the same triples.
    """
    triples = [(source, role if role.startswith(":") else ":" + role, target) for source, role, target in triples]
    if not triples:
        return f"({top})" if top else "()"
    budget = LAYOUT_PASSES * len(triples) + 1000
    # a node is (variable, [[role, target]]), a target a string or, once that variable's node is placed there, its node;
    # nodemap maps each variable to its node, to the node that first has an edge to it (its site), or to None;
    # sites maps a variable with a site to that first edge to it, where its node goes (found there by going over the site's edges: quadratic in a star)
    nodemap: dict[str, tuple | None] = dict.fromkeys(source for source, _, _ in triples)
    sites: dict[str, list] = {}
    nodemap[top] = root = (top, [])
    queue = deque(reversed(triples))  # the next triple at the right end, as penman's list

    def establish(var: str) -> bool:
        """Whether *var* has a place in the tree; its node is made there if it has only a site (penman's ``_get_or_establish_site``)."""
        placed = nodemap[var]
        if placed is None:
            return False
        if placed[0] != var:  # a site: the node that has an edge to var
            node = (var, [])
            nodemap[var] = node
            sites.pop(var)[1] = node
        return True

    def fill(var: str) -> bool:
        """Place the triples at the right end of the queue while they fit *var*; whether one was surprising (penman's ``_configure_node``)."""
        node = nodemap[var]
        edges = node[1]
        surprising = False
        while queue:
            source, role, target = queue.pop()
            if source != var:
                if target == var and role != INSTANCE:
                    role, target, surprising = _invert_role(role), source, True
                else:
                    queue.append((source, role, target))
                    return True
            if role == INSTANCE:
                if target:
                    edges.insert(0, ("/", target))
            else:
                edge = [role, target]
                if target in nodemap and nodemap[target] is None:
                    nodemap[target], sites[target] = node, edge
                edges.append(edge)
        return surprising

    fill(top)
    skipped: deque = deque()  # penman's list of skipped triples, its first item the furthest from the queue's right end
    while queue:
        var, passed = None, []
        for triple in reversed(queue):  # from the next triple on (penman's ``_find_next``)
            source, _, target = triple
            if source in nodemap and establish(source):
                var = source
                break
            if target in nodemap and establish(target):
                var = target
                break
            passed.append(triple)
        budget -= len(passed)
        if budget < 0:
            return _format(_layout_depth_first(triples, top))
        if var is None:
            raise LayoutError("possibly disconnected graph")
        for _ in passed:
            queue.pop()
        skipped.extend(reversed(passed))
        count = len(queue)
        surprising = fill(var)
        if len(queue) == count and surprising:
            skipped.appendleft(queue.pop())
        elif len(queue) >= count:  # pragma: no cover - penman's own guard
            raise LayoutError("unknown configuration error")
        else:
            queue.extendleft(reversed(skipped))
            skipped.clear()
    if skipped:
        raise LayoutError("incomplete configuration")
    return _format(root)


def _layout_depth_first(triples: list[tuple[str, str, str]], top: str) -> tuple:
    """A layout of *triples* in one pass, depth first from *top*: each node takes its concept, then its triples in
    their order, an edge to a variable not yet placed opening that variable's node (``:role-of`` where the node is
    the edge's target). ``penman.exceptions.LayoutError`` if some triple is not reached from the top.
    """
    variables = {source for source, _, _ in triples} | {top}
    incident: dict[str, list[int]] = {var: [] for var in variables}
    for index, (source, role, target) in enumerate(triples):
        incident[source].append(index)
        if role != INSTANCE and target in variables and target != source:
            incident[target].append(index)
    placed = [False] * len(triples)
    nodes = {top: (top, [])}
    stack = [top]
    while stack:
        var = stack.pop()
        edges = nodes[var][1]
        opened = []
        for index in incident[var]:
            if placed[index]:
                continue
            placed[index] = True
            source, role, target = triples[index]
            if role == INSTANCE:
                if target:
                    edges.insert(0, ("/", target))
                continue
            if source != var:
                role, target = _invert_role(role), source
            if target in variables and target not in nodes:
                nodes[target] = (target, [])
                opened.append(target)
                edges.append((role, nodes[target]))
            else:
                edges.append((role, target))
        stack.extend(reversed(opened))
    if not all(placed):
        raise LayoutError("possibly disconnected graph")
    return nodes[top]


def _format(root: tuple) -> str:
    """A laid-out node as PENMAN on one line (penman's ``_format_node`` with ``indent=None``)."""
    pieces: list[str] = []
    stack: list = [root]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            pieces.append(item)
            continue
        var, edges = item
        if not var:
            pieces.append("()")
            continue
        if not edges:
            pieces.append(f"({var})")
            continue
        pieces.append(f"({var}")
        stack.append(")")
        for role, target in reversed(edges):
            if role != "/" and not role.startswith(":"):
                role = ":" + role
            if not target:
                stack.append(f" {role}")
            elif isinstance(target, str):
                stack.append(f" {role} {target}")
            else:
                stack.append(target)
                stack.append(f" {role} ")
    return "".join(pieces)


_TOKEN = re.compile(
    r"""(?P<COMMENT>\#.*$)|(?P<STRING>"[^"\\]*(?:\\.[^"\\]*)*")|(?P<LPAREN>\()|(?P<RPAREN>\))|(?P<SLASH>/)"""
    r"""|(?P<ROLE>:[^ \t\r\n\v\f"()/:~]*)|(?P<SYMBOL>[^ \t\r\n\v\f"()/:~]+)|(?P<ALIGNMENT>~(?:[a-z]\.?)?[0-9]+(?:,[0-9]+)*)"""
    r"""|(?P<UNEXPECTED>[^ \t\r\n\v\f])""",
    re.MULTILINE,
)  # penman's lexer (penman/_lexer.py), in its order


def read_penman(text: str) -> penman.Graph:
    """The triples (in their order) and top ``penman.decode`` reads from *text*, read without recursion;
    alignments are dropped and comments skipped. Text that is not one PENMAN graph raises ``penman.DecodeError``.
    """
    tokens = [(match.lastgroup, match.group()) for match in _TOKEN.finditer(text) if match.lastgroup != "COMMENT"]
    tokens.append(("END", ""))
    position = 0

    def take(*kinds: str) -> str:
        nonlocal position
        kind, value = tokens[position]
        if kinds and kind not in kinds:
            raise penman.DecodeError(f"Expected: {' or '.join(kinds)}, found {kind} {value!r}")
        position += 1
        if tokens[position][0] == "ALIGNMENT" and kind in ("ROLE", "SYMBOL", "STRING"):
            position += 1
        return value

    out: list = []  # triples in penman's order; None holds a node's place for the instance triple of a node without a concept
    atoms: list[int] = []  # the places of edges to atoms, inverted at the end if their target is a variable
    variables: set[str] = set()
    open_nodes: list[list] = []  # [variable, its place in out, whether it has a concept]

    def open_node() -> None:
        take("LPAREN")
        var = take("SYMBOL")
        variables.add(var)
        open_nodes.append([var, len(out), False])
        out.append(None)
        if tokens[position][0] == "SLASH":
            take("SLASH")
            concept = _strip_alignment(take()) if tokens[position][0] in ("SYMBOL", "STRING") else None
            out.append((var, INSTANCE, concept))
            open_nodes[-1][2] = True

    open_node()
    top = open_nodes[0][0]
    while open_nodes:
        if tokens[position][0] == "RPAREN":
            take("RPAREN")
            var, place, has_concept = open_nodes.pop()
            if not has_concept:
                out[place] = (var, INSTANCE, None)
            continue
        node = open_nodes[-1]
        role = take("ROLE")
        node[2] = node[2] or role == INSTANCE
        kind = tokens[position][0]
        if kind == "LPAREN":
            target = tokens[position + 1][1]
            out.append((target, role[:-3], node[0]) if role.endswith("-of") else (node[0], role, target))
            open_node()
        elif kind in ("SYMBOL", "STRING"):
            atoms.append(len(out))
            out.append((node[0], role, _strip_alignment(take())))
        elif kind in ("ROLE", "RPAREN"):
            out.append((node[0], role, None))
        else:
            raise penman.DecodeError(f"Expected: SYMBOL, STRING, LPAREN, found {kind} {tokens[position][1]!r}")
    for place in atoms:
        source, role, target = out[place]
        if role.endswith("-of") and target in variables:
            out[place] = (target, role[:-3], source)
    return penman.Graph([triple for triple in out if triple is not None], top=top)


_COLON = re.compile(r"(\\*):")  # a colon and the backslashes right before it


def metadata_value(text: str) -> str:
    r"""*text* as the value of a ``# ::key value`` metadata line, written so that penman reads it back as one value.

    penman's metadata parser starts a new key at every ``::`` of a comment line (https://github.com/goodmami/penman/issues/145:
    ``# ::snt the prince ::id 2 sleeps`` gives ``snt`` "the prince" and ``id`` "2 sleeps"), and a line
    ends at a line break. So runs of whitespace (line breaks, tabs, U+2028 ...) are written as one
    space, as the AMR releases' ``::snt`` lines are, and no ``::`` is written: a ``:`` right after a
    ``:`` is written ``\:``, and backslashes right before a ``:`` are doubled, so that the escape
    is undone exactly (:func:`read_metadata_value`). Text without ``::`` or ``\:`` is written as it is.

    >>> metadata_value("the prince ::id 2 sleeps")
    'the prince :\\:id 2 sleeps'
    """
    text = " ".join(text.split())

    def escape(match: re.Match) -> str:
        after_colon = not match[1] and match.start() > 0 and text[match.start() - 1] == ":"
        return match[1] * 2 + ("\\" if after_colon else "") + ":"

    return _COLON.sub(escape, text)


def read_metadata_value(value: str) -> str:
    """The text :func:`metadata_value` wrote as *value* (as penman's metadata parser gives it)."""
    return _COLON.sub(lambda match: match[1][: len(match[1]) // 2] + ":", value)


def _strip_alignment(value: str) -> str:
    """An atom without its alignment (``"Paris"~e.3``), as penman's ``_process_atomic`` leaves it."""
    if value and "~" in value:
        if value.startswith('"'):
            return value[: value.rindex('"') + 1]
        return value.partition("~")[0]
    return value
