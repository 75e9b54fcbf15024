"""Greedy and beam search over grammar states, registered under :class:`Search`."""

from toolkit.decoding.beam import BeamSearch
from toolkit.decoding.greedy import GreedySearch
from toolkit.decoding.search import IncrementalModel, Search

__all__ = ["BeamSearch", "GreedySearch", "IncrementalModel", "Search"]
