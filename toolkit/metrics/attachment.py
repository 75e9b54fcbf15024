"""Attachment scores of dependency trees: UAS (right head) and LAS (right head and relation).

Scores are word-level and micro-averaged over the corpus, as in the CoNLL 2018 shared task, which
also counts punctuation; excluding it (the older convention) is an option. Trees are anything with
``heads`` and ``deprels`` (and ``upos`` for the gold when punctuation is excluded), such as
:class:`toolkit.data.dataset_readers.conllu.DependencyTree`, or a mapping with those keys.
"""

from collections.abc import Sequence
from typing import Any

from toolkit.errors import DataError
from toolkit.metrics.metric import Metric, kind_of

PUNCT = "PUNCT"


def _field(tree: Any, name: str) -> Any:
    return tree.get(name) if isinstance(tree, dict) else getattr(tree, name, None)


@Metric.register("attachment_scores")
class AttachmentScores(Metric):
    """``{"uas": ..., "las": ...}``: the fractions of scored gold words with the right head (and relation).

    A missing prediction (``None``) or one with fewer words scores its missing words as wrong.

    Args:
        exclude_punctuation: leave out words whose gold UPOS is ``PUNCT`` (the gold needs ``upos``).
        universal_relations: compare only the universal part of relations (``nmod`` for
            ``nmod:poss``), as the CoNLL 2018 evaluation script does; off by default.

    Registered as ``"attachment_scores"``.
    """

    count_names = ("unlabelled", "labelled", "total")

    def __init__(self, exclude_punctuation: bool = False, universal_relations: bool = False) -> None:
        self.exclude_punctuation, self.universal_relations = exclude_punctuation, universal_relations
        super().__init__()

    def check_gold(self, gold: Any) -> None:
        if _field(gold, "heads") is None or _field(gold, "deprels") is None:
            raise DataError(f"attachment scores need gold dependency trees (heads and deprels), got {kind_of(gold)}")
        if self.exclude_punctuation and _field(gold, "upos") is None:
            raise DataError("attachment_scores.exclude_punctuation needs gold UPOS tags")

    def __call__(self, predictions: Sequence, golds: Sequence) -> None:
        self._check_lengths(predictions, golds)
        for prediction, gold in zip(predictions, golds):
            self.check_gold(gold)
            gold_heads, gold_labels = _field(gold, "heads"), _field(gold, "deprels")
            scored = range(len(gold_heads))
            if self.exclude_punctuation:
                tags = _field(gold, "upos")
                scored = [i for i in scored if tags[i] != PUNCT]
            heads, labels = _field(prediction, "heads") or (), _field(prediction, "deprels") or ()  # None: all wrong
            for i in scored:
                if i < len(heads) and heads[i] == gold_heads[i]:
                    self._counts["unlabelled"] += 1
                    self._counts["labelled"] += i < len(labels) and self._label(labels[i]) == self._label(gold_labels[i])
            self._counts["total"] += len(scored)

    def _label(self, label: str) -> str:
        return label.split(":")[0] if self.universal_relations else label

    def get_metric(self, reset: bool = False) -> dict[str, float]:
        total = self._counts["total"]
        values = {"uas": self._counts["unlabelled"] / total if total else 0.0, "las": self._counts["labelled"] / total if total else 0.0}
        if reset:
            self.reset()
        return values
