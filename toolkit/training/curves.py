"""Training curves: loss and validation metrics per epoch, as a PNG beside ``metrics.json`` at the end of
training, and as TensorBoard scalars while it runs when ``tensorboard`` is installed.

Both are optional (matplotlib comes with the ``viz`` extra; ``tensorboard`` is a package of its own): without them training runs
the same and says once what it skipped.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from numbers import Real
from pathlib import Path
from typing import Any

from toolkit.extras import install_hint

logger = logging.getLogger(__name__)

CURVES_NAME = "training_curves.png"
TENSORBOARD_DIR = "tensorboard"


def plot_training_curves(history: Sequence[Mapping[str, Any]], directory: str | Path) -> Path | None:
    """Two panels over the epochs of *history* (the trainer's per-epoch results): training and
    validation loss, and every validation metric, with the best epoch marked. Returns the PNG's path,
    or ``None`` without matplotlib or without epochs.
    """
    try:  # the object API: no pyplot, no GUI backend, thread-safe
        from matplotlib.figure import Figure
    except ImportError:
        logger.info("matplotlib is not installed: no %s (%s)", CURVES_NAME, install_hint("viz"))
        return None
    if not history:
        return None
    figure = Figure(figsize=(9, 3.4), layout="constrained")
    losses, scores = figure.subplots(1, 2)
    for key, axes in (("training_loss", losses), ("validation_loss", losses)):
        _plot(axes, history, key, key.split("_")[0])
    for key in sorted({key for epoch in history for key in epoch if key.startswith("validation_") and key != "validation_loss"}):
        _plot(scores, history, key, key.removeprefix("validation_"))
    best = history[-1].get("best_epoch")
    for axes, title in ((losses, "loss"), (scores, "validation")):
        axes.set_title(title)
        axes.set_xlabel("epoch")
        axes.grid(alpha=0.3)
        if best is not None:
            axes.axvline(best, color="grey", linestyle="--", linewidth=0.8)
        if axes.get_legend_handles_labels()[0]:  # GEO has no validation set: nothing to label there
            axes.legend(fontsize="small")
    path = Path(directory) / CURVES_NAME
    figure.savefig(path, dpi=100)
    return path


def _plot(axes: Any, history: Sequence[Mapping[str, Any]], key: str, label: str) -> None:
    points = [(epoch["epoch"], epoch[key]) for epoch in history if isinstance(epoch.get(key), Real)]
    if points:
        axes.plot(*zip(*points), marker="o", markersize=3, label=label)


class TensorBoardLog:
    """Each epoch's numeric results as TensorBoard scalars under ``DIR/tensorboard`` (``training/loss``,
    ``validation/las``, ...); a no-op when ``tensorboard`` is not installed.
    """

    def __init__(self, directory: str | Path) -> None:
        try:
            from torch.utils.tensorboard import SummaryWriter
        except ImportError:  # torch raises it when the tensorboard package is missing
            self.writer = None
            return
        self.writer = SummaryWriter(str(Path(directory) / TENSORBOARD_DIR))

    def add(self, epoch: int, results: Mapping[str, Any]) -> None:
        if self.writer is None:
            return
        for key, value in results.items():
            if isinstance(value, Real) and key not in ("epoch", "best_epoch"):
                group, _, name = key.partition("_")
                tag = f"{group}/{name}" if group in ("training", "validation") else f"run/{key}"
                self.writer.add_scalar(tag, value, epoch)
        self.writer.flush()

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
