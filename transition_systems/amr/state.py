"""The AMR parser state: the cursor over the sentence, the node stack and the graph so far.

The actions are listed in :mod:`transition_systems.amr.actions`; what a state reads of its sentence
is a :class:`~transition_systems.amr.sentence.Sentence`.

Past the grammar's action budget (``AmrTransitionSystem.action_budget``: per token, per node made,
and the SWAPs the stack's depth may need) a state *wraps up*: it allows only moves that bring the
parse strictly closer to ``CLOSE`` (SHIFT; then the top; arcs that join two components; REDUCE of a
node whose component stays on the stack). An untrained model that would otherwise SWAP and attach
without end thus ends with a connected graph, within the grammar's ``max_steps``. Sooner, a parse's
span that repeats a concept or makes no progress is cut (:mod:`~transition_systems.amr.limits`): it wraps up that
span alone and goes on. A result says in a ``# ::warning`` line when its parse was stopped so,
wrapped up, or cut short before ``CLOSE`` by the search.

States are values (a frozen dataclass), and :class:`AmrAllowed`, the answer of ``allowed()``, is
hashable, so the model memoises its vocabulary masks. The states of one parse share their graph
(:mod:`~transition_systems.amr.persistent`), and what ``allowed()`` asks of it is indexed, so an
action takes O(1) time (O(log n) for the connected components, a union-find), besides the stack
it copies: a whole derivation is linear in nodes + edges (a 5,000-node star took 55 s, one action
scanning the centre's edges).
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
    SENSED_COPIES,
    SHIFT,
    SWAP,
    WIKI,
    AmrAllowed,
    frame_verb,
    is_lemma_copy,
    is_sense,
    sensed_copies,
)
from transition_systems.amr.graph import encode
from transition_systems.amr.limits import stuck, wrap_up
from transition_systems.amr.morphology import derived_base, positive_base
from transition_systems.amr.persistent import Log, Versions
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
    labels: Log[str] = field(default_factory=Log)
    anchors: Log[int] = field(default_factory=Log)  # each node's token
    edges: Log[tuple[int, str, int]] = field(default_factory=Log)
    # the graph's indexes, kept up to date by apply: what allowed() asks, each in O(1)
    parent: Versions = field(default_factory=Versions, repr=False)  # connected components as a union-find: node -> a node nearer its root
    groups: Versions = field(default_factory=Versions, repr=False)  # component root -> (its nodes, how many of them are on the stack)
    between: Versions = field(default_factory=Versions, repr=False)  # (source, target) -> the roles of the edges from source to target
    entity: Versions = field(default_factory=Versions, repr=False)  # node -> (the target of its last :name edge or -1, whether it has a :wiki)
    spelled: Versions = field(default_factory=Versions, repr=False)  # node -> Log of (N, '"word"') for its :opN edges to strings
    parts: int = 0  # connected components
    top: int = -1
    swaps: int = 0  # SWAPs in a row
    steps: int = 0  # actions so far, against the grammar's action budget
    room: int = 0  # SWAPs the budget gives the nodes made: per node, the stack below it when made, less one
    closed: bool = False
    takes_mentions: bool = False  # a parse (not the oracle) of a grammar that takes_mentions: only NAME / DATE at a mention
    span_steps: int = 0  # actions since the span began (the last SHIFT or MERGE), less REDUCEs and SWAPs
    made_here: tuple[str, ...] = ()  # the labels of the nodes made from the current span
    guards: bool = False  # a parse (not the oracle): a span that repeats itself or makes no progress is cut (limits.stuck)
    stopped: str = ""  # why the guards first cut a span of this parse ("" : never); the result's warning says so

    # ------------------------------------------------------------ State interface

    def allowed(self) -> AmrAllowed:
        return self._allowed

    @cached_property
    def _allowed(self) -> AmrAllowed:
        """Computed once per state: the search masks with it and ``apply`` checks against it."""
        if self.closed:
            return AmrAllowed()
        system, n = self.system, len(self.sentence.tokens)
        if self.steps >= system.action_budget(n, len(self.labels), self.room) or stuck(self):
            return wrap_up(self)
        tokens_left = self.cursor < n
        room = len(self.labels) < system.node_limit(n)
        create = tokens_left and (system.max_nodes_per_span is None or self.here < system.max_nodes_per_span) and room
        merge = tokens_left and self.here == 0 and self.span_end < n and self.span_end - self.cursor < system.max_merge
        shift = tokens_left and (self.span_end < n or bool(self.labels))
        depth = len(self.stack)
        reduce = depth >= 2 and self.shares_component(self.stack[-1])
        arcs = depth >= 2
        excluded: frozenset[str] = frozenset()
        left = right = True
        if arcs:
            s0, s1 = self.stack[-1], self.stack[-2]
            forward, backward = self.between.get((s0, s1), ()), self.between.get((s1, s0), ())
            excluded = frozenset([f"{LA}:{role}" for role in forward] + [f"{RA}:{role}" for role in backward])
            left, right = len(forward) < MAX_EDGES_BETWEEN, len(backward) < MAX_EDGES_BETWEEN
        preds, frame, stem, positive, word, number, demonym, name, date, senses = self._span_options() if create else (None,) + (False,) * 8 + (None,)
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
            wiki=depth >= 1 and room and self._spelled_name(self.stack[-1]) is not None,
            particles=self.sentence.particles if create else frozenset(),
            copies=system.copy_labels if create else None,
            senses=senses,
            sense01_frame=senses is None or (COPY_LEMMA, "01") in senses,
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
            senses = None if system.senses is None else sensed_copies(key, system.frame_of(key), sentence.particles, system.senses_for)
            cache[cache_key] = (preds, frame, stem, positive, word, number, demonym, name, date, senses, self.system)  # the grammar kept: its id stays its own
        return cache[cache_key][:10]

    def features(self) -> Mapping[str, Any]:
        """Token positions nearest first: the stack nodes' tokens (top first, each token once) and the unread tokens."""
        return {
            "stack": tuple(dict.fromkeys(map(self.anchors.items.__getitem__, reversed(self.stack)))),
            "buffer": range(self.cursor, len(self.sentence.tokens)),  # a range, not a tuple: a derivation keeps one per step
        }

    def apply(self, symbol: str) -> AmrState:
        """The state after *symbol*; ``ValueError`` if it is not allowed here."""
        if symbol not in self.allowed():
            raise ValueError(f"{symbol!r} is not allowed in the AMR state at token {self.cursor} with stack {self.stack}")
        state = self._apply(symbol)
        if state.guards and not state.stopped and (why := stuck(state)):
            state.__dict__["stopped"] = why  # the first cut, kept for the result's warning and the search's count
        return state

    def _apply(self, symbol: str) -> AmrState:
        kind, _, label = symbol.partition(":")
        replace = self._replace
        if kind == SHIFT:
            return replace(cursor=self.span_end, span_end=self.span_end + 1, here=0, swaps=0, span_steps=0, made_here=())
        if kind == MERGE:
            return replace(span_end=self.span_end + 1, swaps=0, span_steps=0)
        if kind == REDUCE:
            root = self._root(self.stack[-1])
            size, stacked = self.groups[root]
            return replace(stack=self.stack[:-1], groups=self.groups.set(root, (size, stacked - 1)), swaps=0, span_steps=self.span_steps)
        if kind == SWAP:  # REDUCE and SWAP are not a span's actions: the stack bounds them, and the budget pays for them
            return replace(stack=(self.stack[-2],) + self.stack[:-2] + self.stack[-1:], swaps=self.swaps + 1, span_steps=self.span_steps)
        if kind == CLOSE:
            return replace(closed=True, swaps=0)
        if kind == LA and label == ROOT:
            return replace(top=self.stack[-1], swaps=0)
        if kind in (LA, RA):
            s0, s1 = self.stack[-1], self.stack[-2]
            edge = (s0, label, s1) if kind == LA else (s1, label, s0)
            changes = self._with_edges([edge], self.labels)
            first, second = self._root(s0), self._root(s1)
            if first != second:  # the smaller component goes under the larger's root, so that a node's root is O(log n) away
                (size, stacked), (other_size, other_stacked) = self.groups[first], self.groups[second]
                small, large = (first, second) if size < other_size else (second, first)
                joined = (size + other_size, stacked + other_stacked)
                changes.update(parent=self.parent.set(small, large), groups=self.groups.set(large, joined), parts=self.parts - 1)
            return replace(**changes, swaps=0)
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
            frame = self.system.frame_of(key) or key
            return self._create(f"{frame_verb(frame)}-{label}" if label else frame)
        if kind == PRED:
            return self._create(label)
        if kind == DEMONYM:
            entity, name = self.sentence.demonym(self.cursor, self.span_end) or ("thing", "")
            return self._entity(entity, name.split())
        if kind in (NAME, DATE):
            mention = self.sentence.mention(self.cursor)
            assert mention is not None  # allowed() said so
            spanned, words = replace(span_end=mention.end, steps=self.steps, span_steps=self.span_steps), self.sentence.tokens[mention.start : mention.end]
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
        graph = encode(self.labels[:], self.edges[:], self.top)
        n = len(self.sentence.tokens)
        if not self.closed:
            return f"# ::warning cut short: decoding stopped after {self.steps} actions, before CLOSE; the graph is completed as it stood\n{graph}"
        if self.stopped:
            return f"# ::warning stopped: {self.stopped}; the span was cut and the parse went on\n{graph}"
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
        values["steps"], values["span_steps"] = self.steps + 1, self.span_steps + 1
        values.update(changes)
        state.__dict__.update(values)
        return state

    def _entity(self, label: str, words: Sequence[str]) -> AmrState:
        """An entity: the *label* node, its name node and one string per word (ENTITY's are the span's tokens)."""
        strings = ['"' + word.replace('"', "'") + '"' for word in words]
        return self._subgraph(label, [(0, "name", "name")] + [(1, f"op{i}", string) for i, string in enumerate(strings, start=1)])

    def _subgraph(self, label: str, children: Sequence[tuple[int, str, str]]) -> AmrState:
        """A *label* node, pushed, with the nodes below it that one action makes too, not pushed: ``(parent, role,
        label)`` each, where parent ``0`` is the *label* node and ``k`` the k-th of *children*.
        """
        state = self._create(label)
        top = len(state.labels) - 1
        labels = state.labels.extended([child for _, _, child in children])
        parent = state.parent
        for k in range(1, len(children) + 1):
            parent = parent.set(top + k, top)
        return state._replace(
            labels=labels,
            anchors=state.anchors.extended([self.cursor] * len(children)),
            parent=parent,
            groups=state.groups.set(top, (1 + len(children), 1)),
            steps=state.steps,
            span_steps=state.span_steps,
            **state._with_edges([(top + above, role, top + k) for k, (above, role, _) in enumerate(children, start=1)], labels),
        )

    def _dependent(self, edge: str, value: str) -> AmrState:
        """A leaf *value* attached to the stack top by *edge*, not pushed."""
        node, s0 = len(self.labels), self.stack[-1]
        root = self._root(s0)
        size, stacked = self.groups[root]
        labels = self.labels.extended([value])
        return self._replace(
            labels=labels,
            anchors=self.anchors.extended([self.anchors[s0]]),
            parent=self.parent.set(node, root),
            groups=self.groups.set(root, (size + 1, stacked)),
            swaps=0,
            **self._with_edges([(s0, edge, node)], labels),
        )

    def _with_edges(self, edges: Sequence[tuple[int, str, int]], labels: Log[str]) -> dict[str, Any]:
        """The fields that change when *edges* are added (between nodes of *labels*): the edges and their indexes."""
        between, entity, spelled = self.between, self.entity, self.spelled
        for source, role, target in edges:
            between = between.set((source, target), between.get((source, target), ()) + (role,))
            if role in ("name", "wiki"):
                name, wikied = entity.get(source, (-1, False))
                entity = entity.set(source, (target, wikied) if role == "name" else (name, True))
            elif role[2:].isdigit() and labels[target].startswith('"'):
                spelled = spelled.set(source, spelled.get(source, Log()).extended([(int(role[2:]), labels[target])]))
        return {"edges": self.edges.extended(edges), "between": between, "entity": entity, "spelled": spelled}

    def wiki_of(self, node: int) -> str | None:
        """What WIKI makes for *node*: its name's strings joined by ``_`` (``"New_York"``), if it has a name and no ``:wiki`` yet."""
        words = self._spelled_name(node)
        return '"' + "_".join(label.strip('"') for _, label in sorted(words)) + '"' if words is not None else None

    def _spelled_name(self, node: int) -> Log | None:
        """The ``:opN`` strings of *node*'s last ``:name``, if it has one with strings and no ``:wiki``."""
        name, wikied = self.entity.get(node, (-1, False))
        return None if name < 0 or wikied else self.spelled.get(name) or None

    def _create(self, label: str) -> AmrState:
        node = len(self.labels)
        return self._replace(
            labels=self.labels.extended([label]),
            anchors=self.anchors.extended([self.cursor]),
            stack=self.stack + (node,),
            groups=self.groups.set(node, (1, 1)),
            parts=self.parts + 1,
            here=self.here + 1,
            made_here=self.made_here + (label,),
            swaps=0,
            room=self.room + max(len(self.stack) - 1, 0),
        )

    def _root(self, node: int) -> int:
        """The root of *node*'s connected component (the union-find's)."""
        parent = self.parent
        while (up := parent.get(node)) is not None:
            node = up
        return node

    def connects(self, first: int, second: int) -> bool:
        """Whether nodes *first* and *second* lie in one connected component."""
        return self._root(first) == self._root(second)

    def components(self) -> tuple[int, ...]:
        """A representative per node: nodes linked by edges (either direction) share one."""
        return tuple(self._root(node) for node in range(len(self.labels)))

    def shares_component(self, node: int) -> bool:
        """Whether another node of the component of *node* (the stack top) is on the stack."""
        return self.groups[self._root(node)][1] >= 2

    def _connected(self) -> bool:
        return self.parts == 1


FIELDS = frozenset(AmrState.__dataclass_fields__)
