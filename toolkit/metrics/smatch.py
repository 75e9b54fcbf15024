"""Smatch (Cai & Knight 2013) for AMR graphs, with the ``smatch`` package, made deterministic.

The package's hill climbing uses random restarts and reseeds Python's global ``random`` from the
system on every pair; :func:`smatch_counts` hands it a private generator whose ``seed()`` always
restores a fixed seed, so a pair scores the same on every run and the global ``random`` state is
left alone. Graphs are PENMAN strings (any layout) or ``penman.Graph`` objects.
"""

import contextlib
import io
import random
from collections.abc import Sequence
from typing import Any

import penman
import smatch as smatch_package
from smatch import amr as smatch_amr

from toolkit.errors import DataError
from toolkit.metrics.metric import Metric, kind_of

PLACEHOLDER = "(a / amr-empty)"


class _FixedRandom(random.Random):
    """A generator that ``seed()`` (with any argument, or none) always resets to the same seed."""

    def __init__(self, fixed: int) -> None:
        self.fixed = fixed
        super().__init__(fixed)

    def seed(self, *args: Any, **kwargs: Any) -> None:  # smatch calls random.seed() unseeded
        super().seed(getattr(self, "fixed", 0))


def one_line(graph: Any) -> str:
    """A graph as one-line PENMAN without metadata; ``None`` or an unreadable string becomes a placeholder node."""
    if graph is None:
        return PLACEHOLDER
    try:
        if not isinstance(graph, penman.Graph):
            graph = penman.decode(str(graph))
        return penman.encode(penman.Graph(graph.triples, top=graph.top), indent=None)
    except Exception:  # noqa: BLE001 - a graph penman cannot read or lay out scores as the placeholder
        return PLACEHOLDER


def _readable_by_smatch(text: str) -> str:
    """*text*, or the placeholder if smatch's own AMR parser rejects it (it would crash the match)."""
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            parsed = smatch_amr.AMR.parse_AMR_line(text)
        except Exception:  # noqa: BLE001
            parsed = None
    return text if parsed is not None else PLACEHOLDER


def smatch_counts(prediction: Any, gold: Any, seed: int = 13, restarts: int = 5) -> tuple[int, int, int]:
    """``(matching triples, predicted triples, gold triples)`` of one pair, deterministic for a *seed*."""
    saved = smatch_package.random, smatch_package.iteration_num
    smatch_package.random, smatch_package.iteration_num = _FixedRandom(seed), restarts
    try:
        smatch_package.match_triple_dict.clear()
        first, second = one_line(prediction), one_line(gold)
        try:
            match, test, gold_total = smatch_package.get_amr_match(first, second)
        except Exception:  # noqa: BLE001 - smatch's parser rejected a graph penman accepted
            match, test, gold_total = smatch_package.get_amr_match(_readable_by_smatch(first), _readable_by_smatch(second))
    finally:
        smatch_package.random, smatch_package.iteration_num = saved
        smatch_package.match_triple_dict.clear()
    return int(match), int(test), int(gold_total)


def require_graph(name: str, gold: Any) -> None:
    """The :meth:`~Metric.check_gold` of a Smatch metric: a ``penman.Graph``, or text that PENMAN reads."""
    if isinstance(gold, penman.Graph):
        return
    if not isinstance(gold, str):
        raise DataError(f"the {name} metric scores AMR graphs (penman.Graph or PENMAN text); the golds here are of type {kind_of(gold)}")
    try:
        penman.decode(gold)
    except penman.exceptions.PenmanError as error:
        raise DataError(
            f"the {name} metric scores AMR graphs; these golds are text that is not PENMAN ({getattr(error, 'message', None) or type(error).__name__})"
        ) from None


@Metric.register("smatch")
class Smatch(Metric):
    """``{"smatch_precision", "smatch_recall", "smatch"}`` (F1), micro-averaged over triples, as smatch.py reports.

    Args:
        seed: the seed of the random restarts (the same seed gives the same score).
        restarts: random restarts per pair (smatch.py's ``-r``; default 5 as there).

    Registered as ``"smatch"``; predictions and golds are PENMAN strings or ``penman.Graph`` objects.
    """

    count_names = ("match", "predicted", "gold")

    def __init__(self, seed: int = 13, restarts: int = 5) -> None:
        self.seed, self.restarts = seed, restarts
        super().__init__()

    def check_gold(self, gold: Any) -> None:
        require_graph("smatch", gold)

    def __call__(self, predictions: Sequence, golds: Sequence) -> None:
        self._check_lengths(predictions, golds)
        for prediction, gold in zip(predictions, golds):
            match, test, total = smatch_counts(prediction, gold, self.seed, self.restarts)
            self._counts["match"] += match
            self._counts["predicted"] += test
            self._counts["gold"] += total

    def get_metric(self, reset: bool = False) -> dict[str, float]:
        match, predicted, gold = self._counts["match"], self._counts["predicted"], self._counts["gold"]
        precision = match / predicted if predicted else 0.0
        recall = match / gold if gold else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        if reset:
            self.reset()
        return {"smatch_precision": precision, "smatch_recall": recall, "smatch": f1}
