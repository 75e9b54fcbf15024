"""Token accuracy of decoded outputs: how many gold tokens the prediction has at the same position."""

from collections.abc import Sequence

from toolkit.metrics.metric import Metric, require_text


def _tokens(value: str | Sequence[str]) -> list[str]:
    return value.split() if isinstance(value, str) else list(value)


@Metric.register("token_accuracy")
class TokenAccuracy(Metric):
    """Position-wise matches over ``max(len(prediction), len(gold))``, summed over the corpus.

    Dividing by the longer length means extra or missing tokens count as errors, so an output that
    is a prefix of the gold scores below 1. (Training also reports the teacher-forced token
    accuracy, ``training_token_accuracy``, which needs no decoding.)
    """

    count_names = ("correct", "total")

    def check_gold(self, gold) -> None:
        require_text("token_accuracy", gold)

    def __call__(self, predictions: Sequence, golds: Sequence) -> None:
        self._check_lengths(predictions, golds)
        for prediction, gold in zip(predictions, golds):
            predicted, expected = _tokens(str(prediction) if not isinstance(prediction, list) else prediction), _tokens(gold)
            self._counts["correct"] += sum(p == g for p, g in zip(predicted, expected))
            self._counts["total"] += max(len(predicted), len(expected))

    def get_metric(self, reset: bool = False) -> dict[str, float]:
        value = self._counts["correct"] / self._counts["total"] if self._counts["total"] else 0.0
        if reset:
            self.reset()
        return {"token_accuracy": value}
