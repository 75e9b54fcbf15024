"""Pictures of predicted structures as files: AMR graphs (Graphviz), logical forms (matplotlib).

Dependency trees are displaCy SVG (:mod:`toolkit.visualization.svg`). Graphviz's ``dot`` is
optional: without it a graph is written as its ``.dot`` source, which ``dot -Tsvg`` turns into the
picture later.
"""

import shutil
from collections.abc import Callable
from pathlib import Path

from matplotlib.figure import Figure

from toolkit.visualization.heatmaps import short
from toolkit.visualization.svg import tree_layout
from tree_codecs.tree import Tree, parse_lisp

NO_DOT = "Graphviz's `dot` program is not installed (Debian: apt-get install graphviz), so graphs are written as .dot sources"


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
