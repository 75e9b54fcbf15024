"""The registered ``exact_smatch`` metric: corpus Smatch from the optimal mapping of each pair."""

from __future__ import annotations

from collections.abc import Sequence

from toolkit.metrics.exact_smatch.bootstrap import bootstrap_interval
from toolkit.metrics.exact_smatch.graph import SEMANTICS
from toolkit.metrics.exact_smatch.solver import PairScore, f_score, score_pair
from toolkit.metrics.metric import Metric


@Metric.register("exact_smatch")
class ExactSmatch(Metric):
    """``{"smatch_precision", "smatch_recall", "smatch_f1"}`` with the optimal mapping per pair.

    Predictions and golds are PENMAN strings. Counts are micro-averaged over the corpus as smatch
    does (sums of matched, test and gold triples). The scores of each pair since the last reset
    are in :attr:`pair_scores`. With ``bootstrap_samples > 0``, ``smatch_f1_ci_low`` and
    ``smatch_f1_ci_high`` give a percentile bootstrap interval over pairs (seeded, so repeatable);
    it needs the pairs, so it covers the pairs seen by this process only. ``semantics="smatchpp"``
    reads triples as smatchpp's generic standardizer does (see :func:`read_graph`).

    Registered as ``"exact_smatch"``.
    """

    count_names = ("matched", "test", "gold")

    def __init__(self, bootstrap_samples: int = 0, confidence: float = 0.95, seed: int = 0, semantics: str = "smatch") -> None:
        from toolkit.errors import ConfigurationError

        if semantics not in SEMANTICS:
            raise ConfigurationError(f"must be one of {', '.join(SEMANTICS)}, got {semantics!r}", key="semantics")
        if not 0 < confidence < 1:
            raise ConfigurationError(f"must be between 0 and 1, got {confidence}", key="confidence")
        self.bootstrap_samples, self.confidence, self.seed = bootstrap_samples, confidence, seed
        self.semantics = semantics
        self.pair_scores: list[PairScore] = []
        super().__init__()

    def reset(self) -> None:
        super().reset()
        self.pair_scores = []

    def check_gold(self, gold) -> None:
        from toolkit.metrics.smatch import require_graph

        require_graph("exact_smatch", gold)

    def __call__(self, predictions: Sequence, golds: Sequence) -> None:
        self._check_lengths(predictions, golds)
        for prediction, gold in zip(predictions, golds):
            pair = score_pair(prediction, gold, self.semantics)
            self.pair_scores.append(pair)
            self._counts["matched"] += pair.matched
            self._counts["test"] += pair.test
            self._counts["gold"] += pair.gold

    def get_metric(self, reset: bool = False) -> dict[str, float]:
        matched, test, gold = (self._counts[name] for name in self.count_names)
        values = {
            "smatch_precision": matched / test if test else 0.0,
            "smatch_recall": matched / gold if gold else 0.0,
            "smatch_f1": f_score(matched, test, gold),
        }
        if self.bootstrap_samples > 0:
            low, high = bootstrap_interval([(p.matched, p.test, p.gold) for p in self.pair_scores], self.bootstrap_samples, self.confidence, self.seed)
            values["smatch_f1_ci_low"], values["smatch_f1_ci_high"] = low, high
        if reset:
            self.reset()
        return values
