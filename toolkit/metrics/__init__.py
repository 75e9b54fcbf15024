"""Evaluation metrics; importing this package registers the built-in ones."""

from toolkit.metrics.accuracy import TagAccuracy
from toolkit.metrics.attachment import AttachmentScores
from toolkit.metrics.bleu import Bleu
from toolkit.metrics.denotation import DenotationAccuracy
from toolkit.metrics.exact_match import ExactMatch
from toolkit.metrics.exact_smatch import ExactSmatch
from toolkit.metrics.logic_match import LogicMatch, canonical, parse_sexpr
from toolkit.metrics.metric import Metric
from toolkit.metrics.smatch import Smatch
from toolkit.metrics.token_accuracy import TokenAccuracy

__all__ = [
    "AttachmentScores",
    "Bleu",
    "DenotationAccuracy",
    "ExactMatch",
    "ExactSmatch",
    "LogicMatch",
    "Metric",
    "Smatch",
    "TagAccuracy",
    "TokenAccuracy",
    "canonical",
    "parse_sexpr",
]
