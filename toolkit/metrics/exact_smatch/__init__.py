"""Exact, deterministic Smatch: the optimal variable mapping instead of smatch's hill-climbing.

Importing this package registers the metric ``exact_smatch``. Its parts, one concept each:
:mod:`.graph` reads PENMAN into smatch's triples, :mod:`.problem` is the objective and its bounds,
:mod:`.local_search`, :mod:`.branch_and_bound` and :mod:`.program` are the solver's steps,
:mod:`.solver` chains them (:func:`match_graphs`, :func:`score_pair`), :mod:`.bootstrap` gives
confidence intervals and :mod:`.metric` the registered :class:`ExactSmatch`.
"""

from toolkit.metrics.exact_smatch.bootstrap import bootstrap_interval
from toolkit.metrics.exact_smatch.graph import EMPTY_GRAPH, SEMANTICS, SmatchGraph, read_graph
from toolkit.metrics.exact_smatch.metric import ExactSmatch
from toolkit.metrics.exact_smatch.solver import SEARCH_BUDGET, PairScore, f_score, match_graphs, score_pair

__all__ = [
    "EMPTY_GRAPH",
    "SEARCH_BUDGET",
    "SEMANTICS",
    "ExactSmatch",
    "PairScore",
    "SmatchGraph",
    "bootstrap_interval",
    "f_score",
    "match_graphs",
    "read_graph",
    "score_pair",
]
