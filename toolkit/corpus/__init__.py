"""Corpus prediction: many files (or very large ones) parsed shard by shard into a folder, on an
engine that spreads the shards over processes and machines, resumable from its manifest.
"""

from toolkit.corpus.engines import Engine
from toolkit.corpus.run import DEFAULT_SHARD_SIZE, predict_corpus
from toolkit.corpus.worker import PredictionSettings

__all__ = ["DEFAULT_SHARD_SIZE", "Engine", "PredictionSettings", "predict_corpus"]
