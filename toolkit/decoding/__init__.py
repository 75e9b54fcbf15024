"""Greedy and beam search over grammar states, registered under :class:`Search`."""

from toolkit.decoding.beam import BeamSearch, search_with_beam
from toolkit.decoding.greedy import GreedySearch
from toolkit.decoding.search import IncrementalModel, Search

__all__ = ["BeamSearch", "GreedySearch", "IncrementalModel", "Search", "search_with_beam"]
