"""Pictures of predicted structures: dependency trees (displaCy SVG), AMR graphs (Graphviz), logical forms (a tree).

spaCy and Graphviz's ``dot`` are optional: without spaCy a dependency tree cannot be drawn
(:class:`Unavailable` says so), and without ``dot`` a graph is written as its ``.dot`` source,
which ``dot -Tsvg`` turns into the picture later.
"""

import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

from matplotlib.figure import Figure

from toolkit.visualization.heatmaps import short
from tree_codecs.tree import Tree, parse_lisp

NO_DOT = "Graphviz's `dot` program is not installed (Debian: apt-get install graphviz), so graphs are written as .dot sources"


class Unavailable(Exception):
    """A picture that cannot be made here (a missing optional package); the message says what to install."""


# ---------------------------------------------------------------- dependency trees


def dependency_svg(tokens: Sequence[str], heads: Sequence[int], deprels: Sequence[str]) -> str:
    """DisplaCy's arc diagram of a tree (``heads[i]`` governs word ``i + 1``, 0 is the root) as SVG markup."""
    try:
        from spacy import displacy
    except ImportError:
        raise Unavailable('dependency trees are drawn by spaCy\'s displaCy, and spaCy is not installed: pip install "parsing-toolkit[spacy]"') from None
    words = [{"text": token, "tag": "ROOT" if head == 0 else ""} for token, head in zip(tokens, heads)]
    arcs = [
        {"start": min(word, head - 1), "end": max(word, head - 1), "label": label, "dir": "left" if word < head - 1 else "right"}
        for word, (head, label) in enumerate(zip(heads, deprels))
        if head > 0
    ]
    options = {"compact": True, "distance": 110, "word_spacing": 30, "font": "DejaVu Sans, Arial, sans-serif"}
    return displacy.render({"words": words, "arcs": arcs}, style="dep", manual=True, jupyter=False, options=options)


# ---------------------------------------------------------------- AMR graphs


def amr_digraph(penman_text: str):
    """A ``graphviz.Digraph`` of a PENMAN graph: concepts as ellipses (the top one doubled), constants as boxes."""
    import graphviz
    import penman

    graph = penman.decode(penman_text)
    dot = graphviz.Digraph(
        "amr",
        graph_attr={"rankdir": "TB", "fontsize": "10"},
        node_attr={"fontname": "Helvetica", "fontsize": "10"},
        edge_attr={"fontname": "Helvetica", "fontsize": "9"},
    )
    for instance in graph.instances():
        dot.node(instance.source, instance.target or "?", peripheries="2" if instance.source == graph.top else "1")
    for edge in graph.edges():
        dot.edge(edge.source, edge.target, label=edge.role)
    for number, attribute in enumerate(graph.attributes()):
        constant = f"constant{number}"
        dot.node(constant, str(attribute.target), shape="box", style="rounded")
        dot.edge(attribute.source, constant, label=attribute.role)
    return dot


def write_graph(dot, stem: Path, note: Callable[[str], None]) -> Path:
    """``stem.svg`` rendered by ``dot``; where ``dot`` is missing, ``stem.dot`` and a note saying so."""
    if shutil.which("dot") is None:
        note(NO_DOT)
        path = stem.with_suffix(".dot")
        path.write_text(dot.source, encoding="utf-8")
        return path
    path = stem.with_suffix(".svg")
    path.write_bytes(dot.pipe(format="svg"))
    return path


# ---------------------------------------------------------------- logical forms


def logical_form_tree(text: str, parse: Callable[[str], Tree] = parse_lisp) -> Tree:
    """The tree of a logical form (``( lambda $0 e ( state:t $0 ) )``, or one atom); ``ValueError`` if it is not one."""
    return parse(text)


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


def tree_figure(tree: Tree, title: str = "") -> Figure:
    nodes = tree_layout(tree)
    width = max(x for _, x, _, _ in nodes) + 1
    depth = max(d for _, _, d, _ in nodes) + 1
    figure = Figure(figsize=(max(3.0, 0.85 * width + 0.6), max(1.8, 0.65 * depth + 0.7)), layout="constrained")
    ax = figure.subplots()
    for _, x, d, parent in nodes:
        if parent >= 0:
            ax.plot([nodes[parent][1], x], [-nodes[parent][2], -d], color="#888888", linewidth=0.8, zorder=1)
    for label, x, d, _ in nodes:
        ax.text(
            x,
            -d,
            short(label),
            ha="center",
            va="center",
            fontsize=8,
            zorder=2,
            parse_math=False,
            bbox={"boxstyle": "round,pad=0.25", "facecolor": "#dde6f3", "edgecolor": "#4c72b0", "linewidth": 0.6},
        )
    ax.set_xlim(-0.7, width - 0.3)
    ax.set_ylim(-depth + 0.4, 0.5)
    ax.set_axis_off()
    if title:
        ax.set_title(title, fontsize=8, parse_math=False)
    return figure
