"""The AMR parser state: the cursor over the sentence, the node stack and the graph so far.

The actions are listed in :mod:`transition_systems.amr.actions`; what a state reads of its sentence
is a :class:`~transition_systems.amr.sentence.Sentence`.

Past the grammar's action budget (``AmrTransitionSystem.action_budget``: per token, per node made,
and the SWAPs the stack's depth may need) a state *wraps up*: it allows only moves that bring the
parse strictly closer to ``CLOSE`` (SHIFT; then the top; arcs that join two components; REDUCE of a
node whose component stays on the stack). An untrained model that would otherwise SWAP and attach
without end thus ends with a connected graph, within the grammar's ``max_steps``. A result says in
a ``# ::warning`` line when its parse was wrapped up, or cut short before ``CLOSE`` by the search.

States are values (a frozen dataclass of tuples), and :class:`AmrAllowed`, the answer of
``allowed()``, is hashable, so the model memoises its vocabulary masks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from toolkit.grammars.grammar import State
from transition_systems.amr.actions import (  # noqa: F401  (re-exported: the names plugins and benchmarks import from here)
    ACTION_KINDS,
    BARE_SYMBOLS,
    BASES,
    CLOSE,
    COPY_FRAME,
    COPY_LEMMA,
    COPY_NUMBER,
    COPY_POSITIVE,
    COPY_SENSE01,
    COPY_STEM,
    COPY_WORD,
    DATE,
    DEMONYM,
    DEPENDENT,
    ENTITY,
    LA,
    MAX_EDGES_BETWEEN,
    MERGE,
    NAME,
    PARTICLES,
    PRED,
    RA,
    REDUCE,
    ROOT,
    SHIFT,
    SWAP,
    WIKI,
    AmrAllowed,
    is_lemma_copy,
    is_sense,
)
from transition_systems.amr.graph import encode
from transition_systems.amr.morphology import derived_base, positive_base
from transition_systems.amr.sentence import Sentence

if TYPE_CHECKING:
    from transition_systems.amr.system import AmrTransitionSystem


@dataclass(frozen=True)
class AmrState(State):
    """Cursor over the tokens (the current span is ``[cursor, span_end)``), the node stack and the graph so far."""

    system: AmrTransitionSystem = field(repr=False)
    sentence: Sentence = field(repr=False)
    cursor: int = 0
    span_end: int = 1
    here: int = 0  # nodes made from the current span
    stack: tuple[int, ...] = ()
    labels: tuple[str, ...] = ()
    anchors: tuple[int, ...] = ()  # each node's token
    edges: tuple[tuple[int, str, int], ...] = ()
    component: tuple[int, ...] = ()  # each node's connected component (a node of it), kept up to date by apply
    incident: tuple[tuple[int, ...], ...] = field(default=(), repr=False)  # per node, the indices of its edges (in either direction)
    stacked: tuple[int, ...] = field(default=(), repr=False)  # per component (by its node), how many of its nodes are on the stack
    parts: int = 0  # connected components
    top: int = -1
    swaps: int = 0  # SWAPs in a row
    steps: int = 0  # actions so far, against the grammar's action budget
    room: int = 0  # SWAPs the budget gives the nodes made: per node, the stack below it when made, less one
    closed: bool = False
    takes_mentions: bool = False  # a parse (not the oracle) of a grammar that takes_mentions: only NAME / DATE at a mention

    # ------------------------------------------------------------ State interface

    def allowed(self) -> AmrAllowed:
        return self._allowed

    @cached_property
    def _allowed(self) -> AmrAllowed:
        """Computed once per state: the search masks with it and ``apply`` checks against it."""
        if self.closed:
            return AmrAllowed()
        system, n = self.system, len(self.sentence.tokens)
        if self.steps >= system.action_budget(n, len(self.labels), self.room):
            return self._wrap_up()
        tokens_left = self.cursor < n
        room = len(self.labels) < system.node_limit(n)
        create = tokens_left and (system.max_nodes_per_span is None or self.here < system.max_nodes_per_span) and room
        merge = tokens_left and self.here == 0 and self.span_end < n and self.span_end - self.cursor < system.max_merge
        shift = tokens_left and (self.span_end < n or bool(self.labels))
        depth = len(self.stack)
        reduce = depth >= 2 and self._shares_component(self.stack[-1])
        arcs = depth >= 2
        excluded: frozenset[str] = frozenset()
        left = right = True
        if arcs:
            s0, s1 = self.stack[-1], self.stack[-2]
            shorter = self.incident[s0] if len(self.incident[s0]) <= len(self.incident[s1]) else self.incident[s1]
            pairs = ((s0, s1), (s1, s0))
            between = [
                (f"{LA}:{role}" if source == s0 else f"{RA}:{role}")
                for source, role, target in map(self.edges.__getitem__, shorter)
                if (source, target) in pairs
            ]
            excluded = frozenset(between)
            left = sum(symbol.startswith(LA) for symbol in between) < MAX_EDGES_BETWEEN
            right = sum(symbol.startswith(RA) for symbol in between) < MAX_EDGES_BETWEEN
        preds, frame, stem, positive, word, number, demonym, name, date = self._span_options() if create else (None,) + (False,) * 8
        name, date = (name, date) if self.here == 0 and self.span_end == self.cursor + 1 else (False, False)  # a mention's span is made whole
        if (name or date) and self.takes_mentions:
            return AmrAllowed(name=name, date=date)
        close = not tokens_left and bool(self.labels) and self.top >= 0 and self._connected()
        return AmrAllowed(
            create=create,
            frame=frame,
            stem=stem,
            positive=positive,
            word=word,
            number=number,
            demonym=demonym,
            name=name,
            date=date,
            wiki=depth >= 1 and room and self.wiki_of(self.stack[-1]) is not None,
            particles=self.sentence.particles if create else frozenset(),
            copies=system.copy_labels if create else None,
            merge=merge,
            shift=shift,
            reduce=reduce,
            swap=depth >= 3 and self.swaps < depth - 2,
            close=close,
            dependent=depth >= 1 and room,
            arcs=arcs,
            root=depth >= 1 and self.top < 0,
            left=left,
            right=right,
            preds=preds,
            excluded=excluded,
        )

    def _span_options(self) -> tuple:
        """What the current span allows to create (PRED labels and which copies), worked out once per span and grammar:
        the states between two SHIFTs (a node's arcs and SWAPs) all share it.
        """
        cache = self.sentence.spans
        cache_key = (id(self.system), self.cursor, self.span_end)
        if cache_key not in cache:
            system, sentence, start, end = self.system, self.sentence, self.cursor, self.span_end
            key = sentence.key(start, end)
            preds, frame = system.labels_for(key), system.frame_of(key) is not None
            stem, positive = derived_base(key) is not None, positive_base(key) is not None
            if preds is not None:  # whatever lemmas training saw them with: more / most at a comparative, - at a negated word
                preds = preds | {label for label in (sentence.degree(start, end), "-" if positive else None) if label}
            word = sentence.word(start, end) != key
            number = sentence.number(start, end) not in (None, key)
            demonym = sentence.demonym(start, end) is not None
            mention = sentence.mention(start) if end == start + 1 else None
            name = mention is not None and system.entity_type(mention.kind, sentence.tokens[mention.start : mention.end]) is not None
            date = mention is not None and sentence.date(mention) is not None
            cache[cache_key] = (preds, frame, stem, positive, word, number, demonym, name, date, self.system)  # the grammar kept, so its id stays its own
        return cache[cache_key][:9]

    def features(self) -> Mapping[str, Any]:
        """Token positions nearest first: the stack nodes' tokens (top first, each token once) and the unread tokens."""
        return {
            "stack": tuple(dict.fromkeys(self.anchors[node] for node in reversed(self.stack))),
            "buffer": range(self.cursor, len(self.sentence.tokens)),  # a range, not a tuple: a derivation keeps one per step
        }

    def apply(self, symbol: str) -> AmrState:
        """The state after *symbol*; ``ValueError`` if it is not allowed here."""
        if symbol not in self.allowed():
            raise ValueError(f"{symbol!r} is not allowed in the AMR state at token {self.cursor} with stack {self.stack}")
        kind, _, label = symbol.partition(":")
        replace = self._replace
        if kind == SHIFT:
            return replace(cursor=self.span_end, span_end=self.span_end + 1, here=0, swaps=0)
        if kind == MERGE:
            return replace(span_end=self.span_end + 1, swaps=0)
        if kind == REDUCE:
            return replace(stack=self.stack[:-1], stacked=_add(self.stacked, {self.component[self.stack[-1]]: -1}), swaps=0)
        if kind == SWAP:
            return replace(stack=(self.stack[-2],) + self.stack[:-2] + self.stack[-1:], swaps=self.swaps + 1)
        if kind == CLOSE:
            return replace(closed=True, swaps=0)
        if kind == LA and label == ROOT:
            return replace(top=self.stack[-1], swaps=0)
        if kind in (LA, RA):
            s0, s1 = self.stack[-1], self.stack[-2]
            edge = (s0, label, s1) if kind == LA else (s1, label, s0)
            kept, joined = self.component[s0], self.component[s1]
            incident = _add(self.incident, {s0: (len(self.edges),), s1: (len(self.edges),)})
            if kept == joined:
                return replace(edges=self.edges + (edge,), incident=incident, swaps=0)
            component = tuple(map({joined: kept}.get, self.component, self.component))
            stacked = _add(self.stacked, {kept: self.stacked[joined], joined: -self.stacked[joined]})
            return replace(edges=self.edges + (edge,), incident=incident, component=component, stacked=stacked, parts=self.parts - 1, swaps=0)
        if kind == DEPENDENT:
            edge, _, value = label.partition(":")
            return self._dependent(edge, value)
        if kind == WIKI:
            return self._dependent("wiki", self.wiki_of(self.stack[-1]) or "-")
        key = self.sentence.key(self.cursor, self.span_end)
        if kind == COPY_LEMMA:
            return self._create(f"{key}-{label}" if label else key)
        if kind == COPY_SENSE01:
            return self._create(f"{key}-01")
        if kind == COPY_WORD:
            return self._create(self.sentence.word(self.cursor, self.span_end))
        if kind == COPY_NUMBER:
            return self._create(self.sentence.number(self.cursor, self.span_end) or key)
        if kind in BASES:
            base = BASES[kind](key)
            return self._create(f"{base}-{label}" if label else base)
        if kind == COPY_FRAME:
            return self._create(self.system.frame_of(key) or key)
        if kind == PRED:
            return self._create(label)
        if kind == DEMONYM:
            entity, name = self.sentence.demonym(self.cursor, self.span_end) or ("thing", "")
            return self._entity(entity, name.split())
        if kind in (NAME, DATE):
            mention = self.sentence.mention(self.cursor)
            assert mention is not None  # allowed() said so
            spanned, words = replace(span_end=mention.end, steps=self.steps), self.sentence.tokens[mention.start : mention.end]
            if kind == DATE:
                return spanned._subgraph("date-entity", [(0, role, value) for role, value in self.sentence.date(mention) or ()])
            return spanned._entity(self.system.entity_type(mention.kind, words) or "thing", words)
        return self._entity(label, self.sentence.tokens[self.cursor : self.span_end])  # ENTITY

    def is_final(self) -> bool:
        return self.closed

    def result(self) -> str:
        """The graph as one-line PENMAN; valid for any state (a cut-short parse is repaired, an empty one is a placeholder).
        A parse that hit a limit says so in a ``# ::warning`` line before it, which the predictor's output keeps.
        """
        graph = encode(self.labels, self.edges, self.top)
        n = len(self.sentence.tokens)
        if not self.closed:
            return f"# ::warning cut short: decoding stopped after {self.steps} actions, before CLOSE; the graph is completed as it stood\n{graph}"
        if self.steps > (budget := self.system.action_budget(n, len(self.labels), self.room)):
            return f"# ::warning wrapped up: the parse reached its action budget ({budget} actions for {n} tokens and {len(self.labels)} nodes)\n{graph}"
        return graph

    # ------------------------------------------------------------ helpers

    def _replace(self, **changes: Any) -> AmrState:
        """The state after one more action, with *changes* (the fields copied as they are, not through ``__init__``:
        a parse makes one state per action; what ``cached_property`` stored is not copied).
        """
        state = object.__new__(AmrState)
        values = {name: value for name, value in self.__dict__.items() if name in FIELDS}
        values["steps"] = self.steps + 1
        values.update(changes)
        state.__dict__.update(values)
        return state

    def _wrap_up(self) -> AmrAllowed:
        """What a state past its action budget allows: each move shifts a token, sets the top, joins two
        components or pops a node whose component keeps another node on the stack, so CLOSE comes within
        tokens + 2 x nodes + 2 actions. Every component keeps a node on the stack (REDUCE demands it), so
        until the graph is connected either ``s0`` and ``s1`` lie in different components or ``s0`` can go.
        """
        n = len(self.sentence.tokens)
        if self.cursor < n:
            shift = self.span_end < n or bool(self.labels)
            return AmrAllowed(shift=shift, create=not shift, preds=frozenset())  # the last token makes a node if none exists
        depth, component = len(self.stack), self.components()
        joins = depth >= 2 and component[self.stack[-1]] != component[self.stack[-2]]
        return AmrAllowed(
            arcs=joins,
            reduce=depth >= 2 and self._shares_component(self.stack[-1]),
            root=depth >= 1 and self.top < 0,
            close=bool(self.labels) and self.top >= 0 and self.parts == 1,
        )

    def _entity(self, label: str, words: Sequence[str]) -> AmrState:
        """An entity: the *label* node, its name node and one string per word (ENTITY's are the span's tokens)."""
        strings = ['"' + word.replace('"', "'") + '"' for word in words]
        return self._subgraph(label, [(0, "name", "name")] + [(1, f"op{i}", string) for i, string in enumerate(strings, start=1)])

    def _subgraph(self, label: str, children: Sequence[tuple[int, str, str]]) -> AmrState:
        """A *label* node, pushed, with the nodes below it that one action makes too, not pushed: ``(parent, role,
        label)`` each, where parent ``0`` is the *label* node and ``k`` the k-th of *children*.
        """
        state = self._create(label)
        top, first = len(state.labels) - 1, len(state.edges)
        edges = tuple((top + parent, role, top + k) for k, (parent, role, _) in enumerate(children, start=1))
        incident = list(state.incident) + [()] * len(children)
        for index, (source, _, target) in enumerate(edges, start=first):
            incident[source] += (index,)
            incident[target] += (index,)
        return state._replace(
            labels=state.labels + tuple(child for _, _, child in children),
            anchors=state.anchors + (self.cursor,) * len(children),
            edges=state.edges + edges,
            component=state.component + (top,) * len(children),
            incident=tuple(incident),
            stacked=state.stacked + (0,) * len(children),
            steps=state.steps,
        )

    def _dependent(self, edge: str, value: str) -> AmrState:
        """A leaf *value* attached to the stack top by *edge*, not pushed."""
        node, s0, index = len(self.labels), self.stack[-1], len(self.edges)
        return self._replace(
            labels=self.labels + (value,),
            anchors=self.anchors + (self.anchors[s0],),
            edges=self.edges + ((s0, edge, node),),
            component=self.component + (self.component[s0],),
            incident=_add(self.incident, {s0: (index,)}) + ((index,),),
            stacked=self.stacked + (0,),
            swaps=0,
        )

    def wiki_of(self, node: int) -> str | None:
        """What WIKI makes for *node*: its name's strings joined by ``_`` (``"New_York"``), if it has a name and no ``:wiki`` yet."""
        edges = self.edges
        roles = {role: target for source, role, target in map(edges.__getitem__, self.incident[node]) if source == node and role in ("name", "wiki")}
        if "wiki" in roles or "name" not in roles:
            return None
        name = roles["name"]
        ops = sorted(
            (int(role[2:]), self.labels[target])
            for source, role, target in map(edges.__getitem__, self.incident[name])
            if source == name and role[2:].isdigit()
        )
        words = [label.strip('"') for _, label in ops if label.startswith('"')]
        return '"' + "_".join(words) + '"' if words else None

    def _create(self, label: str) -> AmrState:
        node = len(self.labels)
        return self._replace(
            labels=self.labels + (label,),
            anchors=self.anchors + (self.cursor,),
            stack=self.stack + (node,),
            component=self.component + (node,),
            incident=self.incident + ((),),
            stacked=self.stacked + (1,),
            parts=self.parts + 1,
            here=self.here + 1,
            swaps=0,
            room=self.room + max(len(self.stack) - 1, 0),
        )

    def components(self) -> tuple[int, ...]:
        """A representative per node: nodes linked by edges (either direction) share one."""
        return self.component

    def _shares_component(self, node: int) -> bool:
        """Whether another node of the component of *node* (the stack top) is on the stack."""
        return self.stacked[self.component[node]] >= 2

    def _connected(self) -> bool:
        return self.parts == 1


def _add(values: tuple, changes: dict[int, Any]) -> tuple:
    """*values* with ``changes[i]`` added to item ``i`` (a number, or a tuple to extend it with)."""
    changed = list(values)
    for index, change in changes.items():
        changed[index] = changed[index] + change
    return tuple(changed)


FIELDS = frozenset(AmrState.__dataclass_fields__)
