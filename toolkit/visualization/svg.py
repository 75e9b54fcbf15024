"""Pictures of predicted structures as SVG markup, with no plotting library (what ``toolkit serve`` draws).

- dependency trees: spaCy's displaCy arcs (spaCy is optional; :class:`Unavailable` says what to install);
- logical forms: the tree, parents centred over their children;
- AMR graphs: the PENMAN tree (concepts in rounded boxes, the top one doubled, constants in square
  ones), with each reentrant edge drawn dashed to the node it names;
- tag sequences: each token over its tag.

Every label is escaped, so a token such as ``<script>`` is drawn, never run.
"""

from collections.abc import Sequence
from html import escape

from toolkit.extras import install_hint
from tree_codecs.tree import Tree

CHAR = 7.2  # px per character at the 12px font used throughout
UNIT_PAD = 28  # px between neighbouring labels
LEVEL = 64  # px between tree depths
STYLE = (
    "<style>text{font:12px 'DejaVu Sans',Arial,sans-serif}.node rect{fill:#dde6f3;stroke:#4c72b0}"
    ".constant rect{fill:#f3ecdd;stroke:#b0884c}.top rect{stroke-width:3}.edge{stroke:#888;fill:none}"
    ".reentrant{stroke-dasharray:4 3}.role{fill:#555;font-size:10px}.tag{fill:#4c72b0}</style>"
)


class Unavailable(Exception):
    """A picture that cannot be made here (a missing optional package); the message says what to install."""


def dependency_svg(tokens: Sequence[str], heads: Sequence[int], deprels: Sequence[str]) -> str:
    """DisplaCy's arc diagram of a tree (``heads[i]`` governs word ``i + 1``, 0 is the root) as SVG markup."""
    try:
        from spacy import displacy
    except ImportError:
        raise Unavailable(f"dependency trees are drawn by spaCy's displaCy, and spaCy is not installed: {install_hint('spacy')}") from None
    words = [{"text": token, "tag": "ROOT" if head == 0 else ""} for token, head in zip(tokens, heads)]
    arcs = [
        {"start": min(word, head - 1), "end": max(word, head - 1), "label": label, "dir": "left" if word < head - 1 else "right"}
        for word, (head, label) in enumerate(zip(heads, deprels))
        if head > 0
    ]
    options = {"compact": True, "distance": 110, "word_spacing": 30, "font": "DejaVu Sans, Arial, sans-serif"}
    return displacy.render({"words": words, "arcs": arcs}, style="dep", manual=True, jupyter=False, options=options)


def tree_layout(tree: Tree) -> list[tuple[str, float, int, int]]:
    """Nodes in pre-order as (label, x, depth, parent index or -1): leaves one unit apart, parents centred over their children."""
    nodes: list[tuple[str, float, int, int]] = []
    next_leaf = 0.0

    def place(node: Tree, depth: int, parent: int) -> float:
        nonlocal next_leaf
        index = len(nodes)
        nodes.append((node.label, 0.0, depth, parent))
        if node.children:
            xs = [place(child, depth + 1, index) for child in node.children]
            x = (xs[0] + xs[-1]) / 2
        else:
            x, next_leaf = next_leaf, next_leaf + 1
        nodes[index] = (node.label, x, depth, parent)
        return x

    place(tree, 0, -1)
    return nodes


def tree_svg(tree: Tree, roles: Sequence[str] = (), classes: Sequence[str] = (), extra_edges: Sequence[tuple[int, int, str]] = ()) -> str:
    """*tree* drawn top-down. Per node in pre-order, optionally: the *roles* on the edges from their parents
    and the CSS *classes* of their boxes; *extra_edges* (from, to, role) between pre-order indices are dashed.
    """
    nodes = tree_layout(tree)
    unit = max(len(label) for label, *_ in nodes) * CHAR + UNIT_PAD
    at = [(unit * (x + 0.5), LEVEL * depth + 24) for _, x, depth, _ in nodes]
    width = unit * (max(x for _, x, _, _ in nodes) + 1)
    height = LEVEL * max(depth for _, _, depth, _ in nodes) + 48
    parts = []
    for index, (_, _, _, parent) in enumerate(nodes):
        if parent >= 0:
            parts.append(_edge(at[parent], at[index], roles[index] if index < len(roles) else ""))
    for source, target, role in extra_edges:
        parts.append(_edge(at[source], at[target], role, reentrant=True))
    for index, (label, *_rest) in enumerate(nodes):
        kind = classes[index] if index < len(classes) else ""
        parts.append(_box(label, at[index], kind))
    return _svg("parse-tree", width, height, parts)


def amr_svg(penman_text: str) -> str:
    """An AMR graph (PENMAN text) as its tree, with reentrancies dashed; ``ValueError`` if penman cannot read it."""
    import penman

    try:
        root = penman.parse(penman_text).node
    except penman.DecodeError as error:
        raise ValueError(f"not a PENMAN graph: {error}") from None
    defined = set(_variables(root))
    roles: list[str] = []
    classes: list[str] = []
    variables: dict[str, int] = {}  # variable -> pre-order index of its node
    references: list[tuple[int, str, str]] = []  # (source index, role, variable)

    def build(node, role: str, top: bool) -> Tree:  # pre-order, the order tree_layout numbers nodes in
        variable, branches = node
        index = len(roles)
        variables[variable] = index
        concept = next((str(target) for edge, target in branches if edge == "/"), variable)
        roles.append(role)
        classes.append("node top" if top else "node")
        children = []
        for edge, target in branches:
            if edge == "/":
                continue
            if isinstance(target, tuple):
                children.append(build(target, edge, False))
            elif target in defined:
                references.append((index, edge, target))
            else:
                roles.append(edge)
                classes.append("node constant")
                children.append(Tree(str(target)))
        return Tree(concept, tuple(children))

    tree = build(root, "", True)
    extra = [(source, variables[variable], role) for source, role, variable in references]
    return tree_svg(tree, roles, classes, extra)


def _variables(root) -> list[str]:
    """The variables of the nodes of a PENMAN tree (a string target naming one is a reference, not a constant)."""
    found, stack = [], [root]
    while stack:
        variable, branches = stack.pop()
        found.append(variable)
        stack.extend(target for _, target in branches if isinstance(target, tuple))
    return found


def tags_svg(tokens: Sequence[str], tags: Sequence[str]) -> str:
    """Each token with its tag beneath it."""
    widths = [max(len(token), len(tag)) * CHAR + UNIT_PAD for token, tag in zip(tokens, tags)]
    parts, x = [], 0.0
    for token, tag, width in zip(tokens, tags, widths):
        middle = x + width / 2
        parts.append(f'<text x="{middle:.1f}" y="20" text-anchor="middle">{escape(token)}</text>')
        parts.append(f'<text class="tag" x="{middle:.1f}" y="42" text-anchor="middle">{escape(tag)}</text>')
        x += width
    return _svg("parse-tags", x, 52, parts)


def _svg(kind: str, width: float, height: float, parts: list[str]) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="{kind}" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}">{STYLE}{"".join(parts)}</svg>'
    )


def _box(label: str, at: tuple[float, float], kind: str) -> str:
    x, y = at
    width = len(label) * CHAR + 10
    rounded = 0 if "constant" in kind else 6
    return (
        f'<g class="{kind or "node"}"><rect x="{x - width / 2:.1f}" y="{y - 11:.1f}" width="{width:.1f}" height="22" rx="{rounded}"/>'
        f'<text x="{x:.1f}" y="{y + 4:.1f}" text-anchor="middle">{escape(label)}</text></g>'
    )


def _edge(start: tuple[float, float], end: tuple[float, float], role: str, reentrant: bool = False) -> str:
    (x1, y1), (x2, y2) = start, end
    if reentrant:  # a curve bowing to one side, so that it hides no tree edge
        length = max(((x2 - x1) ** 2 + (y2 - y1) ** 2) ** 0.5, 1.0)
        bend = length / 4 + 20
        nx, ny = (y1 - y2) / length, (x2 - x1) / length  # the unit normal, turned to point down
        if ny < 0 or (ny == 0 and nx < 0):
            nx, ny = -nx, -ny
        cx, cy = (x1 + x2) / 2 + nx * bend, (y1 + y2) / 2 + ny * bend
        path = f'<path class="edge reentrant" d="M{x1:.1f},{y1:.1f} Q{cx:.1f},{cy:.1f} {x2:.1f},{y2:.1f}"/>'
        label_at = ((x1 + x2) / 2 + nx * bend / 2, (y1 + y2) / 2 + ny * bend / 2)
    else:
        path = f'<line class="edge" x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}"/>'
        label_at = ((x1 + x2) / 2, (y1 + y2) / 2)
    if not role:
        return path
    return path + f'<text class="role" x="{label_at[0] + 4:.1f}" y="{label_at[1]:.1f}">{escape(role)}</text>'
