"""Exact match: the fraction of predictions equal to their gold up to whitespace."""

from collections.abc import Sequence
from typing import Any

from toolkit.metrics.metric import Metric, require_text


@Metric.register("exact_match")
class ExactMatch(Metric):
    """Counts predictions equal to their gold after whitespace normalization.

    Predictions and golds may be strings or token lists; both are compared as single-spaced
    strings. Reports ``{"exact_match": correct / total}``.

    Registered as ``"exact_match"``.
    """

    key = "exact_match"
    count_names = ("correct", "total")

    def check_gold(self, gold: Any) -> None:
        require_text(self.key, gold)

    def __call__(self, predictions: Sequence, golds: Sequence) -> None:
        self._check_lengths(predictions, golds)
        for prediction, gold in zip(predictions, golds):
            gold_form = self._gold_form(gold)
            predicted_form = self._predicted_form(prediction)
            self._counts["correct"] += predicted_form is not None and predicted_form == gold_form
            self._counts["total"] += 1

    def get_metric(self, reset: bool = False) -> dict[str, float]:
        total = self._counts["total"]
        value = self._counts["correct"] / total if total else 0.0
        if reset:
            self.reset()
        return {self.key: value}

    def _predicted_form(self, prediction: str | Sequence[str]) -> str | None:
        """The form compared for a prediction; ``None`` makes it a miss."""
        return _normalize(prediction)

    def _gold_form(self, gold: str | Sequence[str]) -> str:
        """The form compared for a gold."""
        return _normalize(gold)


def _normalize(value: str | Sequence[str]) -> str:
    """A string or token list as one single-spaced string."""
    return " ".join(value.split() if isinstance(value, str) else value)
