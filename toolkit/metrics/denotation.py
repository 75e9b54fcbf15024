"""Denotation accuracy: a predicted logical form is right when it gives the gold form's answer.

The measure GEO results are usually published in (Zettlemoyer & Collins 2007, Jia & Liang 2016):
it credits a prediction written differently from the gold that means the same, which exact or
logic match cannot. The forms are run by an :class:`~toolkit.execution.Executor`.
"""

from collections.abc import Sequence
from typing import Any

from toolkit.errors import DataError
from toolkit.execution import Denotation, Executor
from toolkit.metrics.metric import Metric, require_text


@Metric.register("denotation_accuracy")
class DenotationAccuracy(Metric):
    """Counts predictions that execute to the same answer as their gold.

    A gold that does not execute (an error, a limit, an answer that is not ground) cannot be
    matched: its prediction is counted wrong, and the gold counted in ``denotation_gold_failures``,
    so a broken database or data set shows instead of hiding in the accuracy. Predictions that fail
    to execute are counted in ``denotation_prediction_failures``. All three scores are fractions of
    the predictions. Each query a limit of the executor stopped is also a :meth:`note`, which
    ``toolkit evaluate`` and validation log with the input's file and line.

    Args:
        executor: what runs the forms (by default ``geoquery_prolog``, GeoQuery over Geobase).

    Registered as ``"denotation_accuracy"``.
    """

    key = "denotation_accuracy"
    count_names = ("correct", "total", "gold_failed", "predicted_failed")

    def __init__(self, executor: Executor | None = None) -> None:
        self.executor = executor if executor is not None else Executor.by_name(Executor.default_implementation)()
        super().__init__()

    def check_gold(self, gold: Any) -> None:
        require_text(self.key, gold)
        why = self.executor.check_form(gold)
        if why is not None:
            raise DataError(f"the {self.key} metric cannot execute these golds: {why}")

    def __call__(self, predictions: Sequence, golds: Sequence) -> None:
        self._check_lengths(predictions, golds)
        forms = [_form(gold) for gold in golds] + [_form(prediction) for prediction in predictions]
        denotations = self.executor.execute([form if form is not None else "" for form in forms])
        gold_denotations, predicted_denotations = denotations[: len(golds)], denotations[len(golds) :]
        self._notes = []
        for position, (gold, predicted) in enumerate(zip(gold_denotations, predicted_denotations)):
            self._counts["total"] += 1
            self._counts["gold_failed"] += not gold.ok
            self._counts["predicted_failed"] += not predicted.ok
            self._counts["correct"] += gold.ok and predicted == gold
            self._notes += [
                (position, f"the {side} query was stopped: {denotation.detail}")
                for side, denotation in (("gold", gold), ("predicted", predicted))
                if denotation.stopped
            ]

    def notes(self) -> list[tuple[int, str]]:
        """The queries of the last call that a limit of the executor stopped: which pair, which side, which limit."""
        return list(self._notes)

    def reset(self) -> None:
        super().reset()
        self._notes: list[tuple[int, str]] = []

    def get_metric(self, reset: bool = False) -> dict[str, float]:
        total = self._counts["total"]
        scores = {
            self.key: self._counts["correct"] / total if total else 0.0,
            "denotation_gold_failures": self._counts["gold_failed"] / total if total else 0.0,
            "denotation_prediction_failures": self._counts["predicted_failed"] / total if total else 0.0,
        }
        if reset:
            self.reset()
        return scores

    def denotations(self, forms: Sequence) -> list[Denotation]:
        """What each form (string or tokens) executes to: for looking at a model's errors."""
        return self.executor.execute([_form(form) or "" for form in forms])


def _form(value: Any) -> str | None:
    """A prediction or gold as one string (a token list is joined); ``None`` if it is neither."""
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)) and all(isinstance(item, str) for item in value):
        return " ".join(value)
    return None
