"""AMR parsing as a transition system: reader, aligner, state machine and oracle (``"type": "amr"``).

Importing this package registers the grammar ``amr``; its data come from the ``penman`` dataset reader
(:mod:`toolkit.data.dataset_readers.penman`).
"""

from transition_systems.amr.aligner import Alignment, align
from transition_systems.amr.graph import GoldGraph, encode, is_constant
from transition_systems.amr.state import ACTION_KINDS, AmrAllowed, AmrState, Sentence
from transition_systems.amr.system import AmrTransitionSystem, GoldAmr

__all__ = [
    "ACTION_KINDS",
    "Alignment",
    "AmrAllowed",
    "AmrState",
    "AmrTransitionSystem",
    "GoldAmr",
    "GoldGraph",
    "Sentence",
    "align",
    "encode",
    "is_constant",
]
