"""What an AMR parse may still do once it must wrap up: past the grammar's action budget, or at a degenerate span.

Past the budget (``AmrTransitionSystem.action_budget``) a state allows only the moves of
:func:`wrap_up`, each of which brings the parse strictly closer to ``CLOSE``. A parse's span that
repeats a concept or makes no progress (:func:`stuck`) is wrapped up the same way, the span alone:
the parse shifts past it and goes on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from transition_systems.amr.actions import AmrAllowed

if TYPE_CHECKING:
    from transition_systems.amr.state import AmrState

ACTIONS_PER_NODE = 3  # a span's nodes earn it this many actions each (their creation and arcs) before it counts as making no progress


def stuck(state: AmrState) -> str:
    """Why *state*'s current span is degenerate, or ``""``: it made one label more often than the grammar's
    ``max_repeats_per_span``, or took more than ``max_actions_per_span`` actions, plus :data:`ACTIONS_PER_NODE`
    per node it made, without moving on (nodes, arcs and leaves count; REDUCEs and SWAPs, which the stack bounds,
    do not): a span that makes many nodes may tie each to several others. Only with ``guards``, in a parse: the
    oracle is free. A 2-epoch model that made ``!`` from one token 91 times, to the node cap, stops at the sixth.
    """
    if not state.guards:
        return ""
    system, made = state.system, state.made_here
    if system.max_repeats_per_span is not None and made and made.count(made[-1]) > system.max_repeats_per_span:
        return f"it made {made[-1]!r} {made.count(made[-1])} times from token {state.cursor}, more than grammar.max_repeats_per_span = {system.max_repeats_per_span}"
    if system.max_actions_per_span is not None and state.span_steps > system.max_actions_per_span + ACTIONS_PER_NODE * state.here:
        return (
            f"it took {state.span_steps} actions at token {state.cursor} for {state.here} nodes without moving on, more than "
            f"grammar.max_actions_per_span = {system.max_actions_per_span} plus {ACTIONS_PER_NODE} per node"
        )
    return ""


def wrap_up(state: AmrState) -> AmrAllowed:
    """What a state that must wrap up allows: each move shifts a token, sets the top, joins two components or pops
    a node whose component keeps another node on the stack, so CLOSE comes within tokens + 2 x nodes + 2 actions.
    Every component keeps a node on the stack (REDUCE demands it), so until the graph is connected either ``s0`` and
    ``s1`` lie in different components or ``s0`` can go.
    """
    n = len(state.sentence.tokens)
    if state.cursor < n:
        shift = state.span_end < n or bool(state.labels)
        return AmrAllowed(shift=shift, create=not shift, preds=frozenset())  # the last token makes a node if none exists
    depth = len(state.stack)
    joins = depth >= 2 and not state.connects(state.stack[-1], state.stack[-2])
    return AmrAllowed(
        arcs=joins,
        reduce=depth >= 2 and state.shares_component(state.stack[-1]),
        root=depth >= 1 and state.top < 0,
        close=bool(state.labels) and state.top >= 0 and state.parts == 1,
    )
