"""Transition systems: output grammars whose symbols are parser actions (dependency parsing).

Each is a :class:`toolkit.grammars.Grammar`; see docs/design.md. Pure Python, no torch.
Importing this package registers the grammars ``arc_standard``, ``arc_hybrid``, ``arc_swap`` and ``amr``
(see :mod:`transition_systems.amr`).
"""

from transition_systems import amr  # noqa: F401 - registers the amr grammar
from transition_systems.actions import KINDS, LEFT, REDUCE, RIGHT, SHIFT, SWAP, ValidActions, arc, split_action
from transition_systems.arc_hybrid import ArcHybrid
from transition_systems.arc_standard import ArcStandard
from transition_systems.arc_swap import ArcSwap, projective_components
from transition_systems.configuration import Configuration
from transition_systems.projectivity import is_projective, non_projective_arcs, projective_order, projectivize
from transition_systems.transition_system import GoldTree, ProjectiveTransitionSystem, TransitionSystem

__all__ = [
    "KINDS",
    "LEFT",
    "REDUCE",
    "RIGHT",
    "SHIFT",
    "SWAP",
    "ArcHybrid",
    "ArcStandard",
    "ArcSwap",
    "Configuration",
    "GoldTree",
    "ProjectiveTransitionSystem",
    "TransitionSystem",
    "ValidActions",
    "arc",
    "is_projective",
    "non_projective_arcs",
    "projective_components",
    "projective_order",
    "projectivize",
    "split_action",
]
