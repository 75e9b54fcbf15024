"""Attention as heatmaps: encoder self-attention per layer and head, and the decoder's attention to the source.

One figure per layer, one panel per head (cross-attention adds the mean over heads first). Heads
are named after what they are: a PhraseTransformer head after its n (``head 2 (2-gram)``), a
Stack-Transformer head after the list it is tied to (``head 0 (stack)``). The hypernode encoder
attends over words *and* phrases, so its axes list the phrases (``[the dog]``) after the words.
"""

import math
import re
from collections.abc import Sequence

import torch
from matplotlib.figure import Figure

from toolkit.visualization.trace import Trace

MAX_LABEL = 22  # characters of a tick label; longer symbols are cut with an ellipsis
MAX_WIDTH = 16.0  # inches a figure may take before its panels wrap to another row
NULL_SLOT = "∅ (null)"  # the Stack-Transformer's extra key for an empty stack or buffer
LAYER_NAME = re.compile(r"\blayers\.(\d+)\.(\w+)$")


def short(label: str) -> str:
    return label if len(label) <= MAX_LABEL else label[: MAX_LABEL - 1] + "…"


def heatmap_figure(
    panels: Sequence[tuple[str, torch.Tensor]], rows: Sequence[str], columns: Sequence[str], title: str, row_axis: str, column_axis: str
) -> Figure:
    """A grid of heatmaps, one per (title, (T, S) matrix) panel; each panel is scaled to its own maximum."""
    cell = 0.2  # inches per token
    panel_width = max(3.0, cell * len(columns) + 1.8)
    panel_height = max(2.4, cell * len(rows) + 1.4)
    widest = max(1, min(5, int(MAX_WIDTH // panel_width)))  # panels a row
    grid_rows = math.ceil(len(panels) / widest)
    columns_per_row = math.ceil(len(panels) / grid_rows)  # the rows as even as can be
    figure = Figure(figsize=(panel_width * columns_per_row, panel_height * grid_rows + 0.5), layout="constrained")
    figure.suptitle(title, fontsize=10, parse_math=False)
    axes = figure.subplots(grid_rows, columns_per_row, squeeze=False)
    for ax in axes.flat[len(panels) :]:
        ax.set_axis_off()
    for ax, (name, matrix) in zip(axes.flat, panels):
        image = ax.imshow(matrix.numpy(), cmap="viridis", vmin=0.0, vmax=max(float(matrix.max()), 1e-6), aspect="auto", interpolation="nearest")
        figure.colorbar(image, ax=ax, fraction=0.05, pad=0.02).ax.tick_params(labelsize=6)
        ax.set_title(name, fontsize=9, parse_math=False)
        ax.set_xticks(range(len(columns)), [short(c) for c in columns], rotation=90, fontsize=7, parse_math=False)
        ax.set_yticks(range(len(rows)), [short(r) for r in rows], fontsize=7, parse_math=False)
        ax.set_xlabel(column_axis, fontsize=8)
        ax.set_ylabel(row_axis, fontsize=8)
    return figure


def layer_of(name: str) -> tuple[int, str] | None:
    """``decoder.layers.2.cross_attention`` -> (2, "cross_attention")."""
    match = LAYER_NAME.search(name)
    return (int(match.group(1)), match.group(2)) if match else None


# ---------------------------------------------------------------- encoder self-attention


def has_phrase_heads(encoder, layer: int) -> bool:
    """Whether layer *layer* (from 0) of a PhraseTransformer encoder has n-gram heads."""
    return getattr(encoder, "gram_sizes", None) is not None and layer + 1 in getattr(encoder, "phrase_layers", ())


def encoder_head_names(encoder, layer: int, num_heads: int) -> list[str]:
    """``head h``, or ``head h (n-gram)`` / ``head h (word)`` in a PhraseTransformer layer with phrase heads."""
    if not has_phrase_heads(encoder, layer):
        return [f"head {h}" for h in range(num_heads)]
    return [f"head {h} ({n}-gram)" if n else f"head {h} (word)" for h, n in enumerate(encoder.gram_sizes)]


def encoder_node_labels(encoder, tokens: Sequence[str]) -> list[str]:
    """What the encoder attends over: the tokens, then (hypernode encoder) one ``[phrase]`` per hypernode."""
    hypernodes = getattr(encoder, "hypernodes", None)
    if hypernodes is None:
        return list(tokens)
    membership = hypernodes(list(tokens))  # (m, n) bool
    return list(tokens) + ["[" + " ".join(tokens[i] for i in row.nonzero().flatten().tolist()) + "]" for row in membership]


def encoder_figures(trace: Trace, encoder) -> dict[str, Figure]:
    """``encoder_layer{k}.png`` (and ``encoder_layer{k}_phase2.png`` for hypernode phase 2) -> figure."""
    labels = encoder_node_labels(encoder, trace.tokens)
    figures = {}
    for name, weights in sorted(trace.attention.items()):
        place = layer_of(name)
        if not name.startswith("encoder.") or place is None:
            continue
        layer, kind = place
        phase_two = kind == "phrase_attention"
        size = weights.size(-1)
        nodes = labels[:size]
        heads = encoder_head_names(encoder, layer, weights.size(0))
        what = "phase 2 (inside phrases)" if phase_two else "self-attention"
        title = f"encoder layer {layer + 1} {what}"
        axis = "keys (words, then phrases)" if size > len(trace.tokens) else "keys"
        if has_phrase_heads(encoder, layer):
            axis = "keys (in an n-gram head: the n-gram ending here)"
        file = f"encoder_layer{layer + 1}{'_phase2' if phase_two else ''}.png"
        figures[file] = heatmap_figure(list(zip(heads, weights)), nodes, nodes, title, "queries", axis)
    return figures


# ---------------------------------------------------------------- cross-attention


def decoder_head_names(decoder, layer: int, num_heads: int) -> list[str]:
    """``head h``, or ``head h (stack)`` / ``head h (buffer)`` in a Stack-Transformer layer whose heads are masked."""
    kinds = getattr(decoder, "head_kinds", None)
    guided = getattr(decoder, "guided_layers", None)
    if kinds is None or not guided or not guided[layer]:
        return [f"head {h}" for h in range(num_heads)]
    return [f"head {h}" + ("", " (stack)", " (buffer)")[kind] for h, kind in enumerate(kinds.tolist())]


def cross_attention_figures(trace: Trace, decoder) -> dict[str, Figure]:
    """``cross_layer{k}.png`` -> a figure of the output symbols against the source tokens: the mean over heads, then each head."""
    figures = {}
    for name, weights in sorted(trace.attention.items()):
        place = layer_of(name)
        if not name.startswith("decoder.") or place is None or place[1] != "cross_attention":
            continue
        layer = place[0]
        columns = list(trace.tokens) + [NULL_SLOT] * (weights.size(-1) - len(trace.tokens))
        heads = decoder_head_names(decoder, layer, weights.size(0))
        panels = [("mean of heads", weights.mean(0))] + list(zip(heads, weights))
        title = f"decoder layer {layer + 1}: attention to the source"
        figures[f"cross_layer{layer + 1}.png"] = heatmap_figure(panels, trace.symbols, columns, title, "output symbols", "source tokens")
    return figures
