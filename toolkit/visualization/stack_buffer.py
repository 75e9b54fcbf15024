"""Which source tokens a transition parser holds at each action: its stack and its buffer.

The grid has one row per predicted action and one column per source token. A row shows the parser
state the action was taken in (``state.features()`` before it, the view the Stack-Transformer's
stack and buffer heads are masked to); stack cells carry their depth, 0 being the top.
"""

from collections.abc import Mapping, Sequence
from typing import Any

import torch
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from toolkit.visualization.heatmaps import short

ELSEWHERE, STACK, BUFFER = 0, 1, 2
COLOURS = ("#f2f2f2", "#4c72b0", "#dd8452")


def has_stack_and_buffer(steps: Sequence[Mapping[str, Any]]) -> bool:
    return bool(steps) and all("stack" in step and "buffer" in step for step in steps)


def stack_buffer_grid(steps: Sequence[Mapping[str, Any]], num_tokens: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(T, S) long: where each token is before each action (ELSEWHERE, STACK, BUFFER), and its stack depth (-1 off the stack)."""
    where = torch.full((len(steps), num_tokens), ELSEWHERE, dtype=torch.long)
    depth = torch.full((len(steps), num_tokens), -1, dtype=torch.long)
    for t, step in enumerate(steps):
        buffer, stack = list(step["buffer"]), list(step["stack"])
        where[t, buffer] = BUFFER
        where[t, stack] = STACK  # listed on both (AMR: a node's token still being read), the stack wins
        depth[t, stack] = torch.arange(len(stack))
    return where, depth


def stack_buffer_figure(steps: Sequence[Mapping[str, Any]], tokens: Sequence[str], symbols: Sequence[str]) -> Figure:
    where, depth = stack_buffer_grid(steps, len(tokens))
    cell = 0.24
    figure = Figure(figsize=(max(4.0, cell * len(tokens) + 2.6), max(3.0, cell * len(symbols) + 1.8)), layout="constrained")
    ax = figure.subplots()
    ax.imshow(where.numpy(), cmap=ListedColormap(COLOURS), vmin=0, vmax=2, aspect="auto", interpolation="nearest")
    for t, s in (depth >= 0).nonzero().tolist():
        ax.text(s, t, str(int(depth[t, s])), ha="center", va="center", fontsize=6, color="white")
    ax.set_xticks(range(len(tokens)), [short(token) for token in tokens], rotation=90, fontsize=7, parse_math=False)
    ax.set_yticks(range(len(symbols)), [short(symbol) for symbol in symbols], fontsize=7, parse_math=False)
    ax.set_xlabel("source tokens", fontsize=8)
    ax.set_ylabel("action (taken in the state shown)", fontsize=8)
    ax.set_title("stack (depth, 0 = top) and buffer before each action", fontsize=9)
    legend = [Patch(color=COLOURS[STACK], label="stack"), Patch(color=COLOURS[BUFFER], label="buffer")]
    ax.legend(handles=legend, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, frameon=False)
    return figure
