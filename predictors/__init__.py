"""Predictors turn an archive into a line-in, JSON-out parser (``toolkit predict --predictor NAME``)."""

from predictors.amr import AmrPredictor
from predictors.dependency import DependencyPredictor
from predictors.predictor import Predictor
from predictors.semantic_parser import SemanticParserPredictor
from predictors.tagger import TaggerPredictor

__all__ = ["AmrPredictor", "DependencyPredictor", "Predictor", "SemanticParserPredictor", "TaggerPredictor"]
