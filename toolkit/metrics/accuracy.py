"""Tag accuracy: the fraction of tokens whose predicted tag equals the gold one (UPOS accuracy, say)."""

from collections.abc import Sequence

from toolkit.errors import DataError
from toolkit.grammars.tags import gold_tags
from toolkit.metrics.metric import Metric, kind_of


@Metric.register("tag_accuracy")
class TagAccuracy(Metric):
    """``{"tag_accuracy": correct / gold tokens}``, micro-averaged over the corpus.

    Tags are compared position by position over the gold tokens: a prediction that is missing
    (``None``) or shorter than its gold scores its missing tokens as wrong.

    Args:
        field: where structured golds (and predictions) keep their tags, e.g. ``"upos"`` of the
            ``conllu`` reader's ``DependencyTree``; strings and lists are tags themselves.
        name: the key it reports, so one run can score several fields (``"feats_accuracy"``).

    Registered as ``"tag_accuracy"``.
    """

    count_names = ("correct", "total")

    def __init__(self, field: str = "upos", name: str = "tag_accuracy") -> None:
        self.field, self.name = field, name
        super().__init__()

    def check_gold(self, gold) -> None:
        if gold_tags(gold, self.field) is None:
            raise DataError(f"tag accuracy needs gold tags ({self.field!r}), got {kind_of(gold)}")

    def __call__(self, predictions: Sequence, golds: Sequence) -> None:
        self._check_lengths(predictions, golds)
        for prediction, gold in zip(predictions, golds):
            self.check_gold(gold)
            expected = gold_tags(gold, self.field)
            predicted = () if prediction is None else gold_tags(prediction, self.field)
            if predicted is None:  # a parser's trees scored as tags would count every tag wrong
                raise DataError(f"tag accuracy needs predicted tags ({self.field!r}); this model predicts {kind_of(prediction)} without them")
            self._counts["correct"] += sum(p == g for p, g in zip(predicted, expected))
            self._counts["total"] += len(expected)

    def get_metric(self, reset: bool = False) -> dict[str, float]:
        total = self._counts["total"]
        value = self._counts["correct"] / total if total else 0.0
        if reset:
            self.reset()
        return {self.name: value}
