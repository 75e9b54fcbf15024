"""The registered ``exact_smatch`` metric: corpus Smatch from the optimal mapping of each pair."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from toolkit.from_params import PositiveFloat, PositiveInt
from toolkit.metrics.exact_smatch.bootstrap import bootstrap_interval
from toolkit.metrics.exact_smatch.graph import SEMANTICS
from toolkit.metrics.exact_smatch.solver import MAX_NODES, TIME_LIMIT, PairScore, f_score, score_pair
from toolkit.metrics.metric import Metric

logger = logging.getLogger(__name__)


@Metric.register("exact_smatch")
class ExactSmatch(Metric):
    """``{"smatch_precision", "smatch_recall", "smatch_f1"}`` with the optimal mapping per pair.

    Predictions and golds are PENMAN strings. Counts are micro-averaged over the corpus as smatch
    does (sums of matched, test and gold triples). The scores of each pair since the last reset
    are in :attr:`pair_scores`. With ``bootstrap_samples > 0``, ``smatch_f1_ci_low`` and
    ``smatch_f1_ci_high`` give a percentile bootstrap interval over pairs (seeded, so repeatable);
    it needs the pairs, so it covers the pairs seen by this process only. ``semantics="smatchpp"``
    reads triples as smatchpp's generic standardizer does (see :func:`read_graph`).

    The search is bounded per pair: a pair with a graph of more than *max_nodes* variables is scored
    by one greedy mapping, a lower bound (:func:`~toolkit.metrics.smatch.greedy_counts`; decided
    before any work: the solver's bounds take memory in proportion to the product of the graphs'
    sizes), and the linear and mixed-integer programs stop after *time_limit* seconds, keeping the
    best mapping found (a lower bound, like smatch's). Either is one warning per call, and reported
    as ``exact_smatch_greedy`` / ``exact_smatch_unproven`` (pair counts) when it happens.

    Registered as ``"exact_smatch"``.
    """

    count_names = ("matched", "test", "gold", "greedy", "unproven")

    def __init__(
        self,
        bootstrap_samples: int = 0,
        confidence: float = 0.95,
        seed: int = 0,
        semantics: str = "smatch",
        max_nodes: PositiveInt = MAX_NODES,
        time_limit: PositiveFloat = TIME_LIMIT,
    ) -> None:
        from toolkit.errors import ConfigurationError

        if semantics not in SEMANTICS:
            raise ConfigurationError(f"must be one of {', '.join(SEMANTICS)}, got {semantics!r}", key="semantics")
        if not 0 < confidence < 1:
            raise ConfigurationError(f"must be between 0 and 1, got {confidence}", key="confidence")
        self.bootstrap_samples, self.confidence, self.seed = bootstrap_samples, confidence, seed
        self.semantics, self.max_nodes, self.time_limit = semantics, max_nodes, time_limit
        self.pair_scores: list[PairScore] = []
        super().__init__()

    def reset(self) -> None:
        super().reset()
        self.pair_scores = []

    def check_gold(self, gold) -> None:
        from toolkit.metrics.smatch import require_graph

        require_graph("exact_smatch", gold)

    def __call__(self, predictions: Sequence, golds: Sequence) -> None:
        from toolkit.metrics.smatch import graph_size, greedy_counts, warn_greedy

        self._check_lengths(predictions, golds)
        greedy, unproven = [], []
        for position, (prediction, gold) in enumerate(zip(predictions, golds), start=1):
            size = max(graph_size(prediction), graph_size(gold))
            if size > self.max_nodes:  # decided before any work on the pair
                greedy.append((position, size))
                self._counts["greedy"] += 1
                matched, test, total = greedy_counts(prediction, gold)
                self._counts["matched"] += matched
                self._counts["test"] += test
                self._counts["gold"] += total
                continue
            pair = score_pair(prediction, gold, self.semantics, self.time_limit)
            if pair.proof == "unproven":
                unproven.append(position)
                self._counts["unproven"] += 1
            self.pair_scores.append(pair)
            self._counts["matched"] += pair.matched
            self._counts["test"] += pair.test
            self._counts["gold"] += pair.gold
        why = "the solver's bounds take memory in proportion to the product of the two graphs' sizes"
        warn_greedy("exact_smatch", greedy, len(golds), self.max_nodes, why, "exact_smatch_greedy")
        if unproven:
            logger.warning(
                "exact_smatch: %d of %d graph pairs were not proven optimal within time_limit = %s s (the first: pair %d); "
                "each counts the best mapping found, a lower bound, and they are reported as exact_smatch_unproven",
                len(unproven),
                len(golds),
                self.time_limit,
                unproven[0],
            )

    def get_metric(self, reset: bool = False) -> dict[str, float]:
        matched, test, gold = (self._counts[name] for name in ("matched", "test", "gold"))
        values = {
            "smatch_precision": matched / test if test else 0.0,
            "smatch_recall": matched / gold if gold else 0.0,
            "smatch_f1": f_score(matched, test, gold),
        }
        for name in ("greedy", "unproven"):
            if self._counts[name]:
                values[f"exact_smatch_{name}"] = self._counts[name]
        if self.bootstrap_samples > 0:
            low, high = bootstrap_interval([(p.matched, p.test, p.gold) for p in self.pair_scores], self.bootstrap_samples, self.confidence, self.seed)
            values["smatch_f1_ci_low"], values["smatch_f1_ci_high"] = low, high
        if reset:
            self.reset()
        return values
