"""The AMR state machine: actions as vocabulary symbols, the allowed set, and the parser state.

Actions (the paper's set; a label follows the first colon):

- ``SHIFT``: the current token span is done; the cursor moves to the next token.
- ``MERGE``: extend the current span by the next token (multi-word spans), before any node is made from it.
- ``PRED:<concept>``; the copies, which spell the concept from the span's words:
  ``COPY_LEMMA`` (the lemma), ``COPY_SENSE01`` (lemma + ``-01``), ``COPY_LEMMA:<NN>`` (lemma +
  ``-NN``, any other sense: ``meet-02``), ``COPY_LEMMA:<particle>-<NN>`` (a phrasal verb whose
  particle is a word of the sentence: ``give-up-07`` in "gave it up"), ``COPY_WORD`` (the words as
  written, lowercased, where the lemmatizer changed them: ``lost``, ``politics``), ``COPY_STEM``
  and ``COPY_STEM:<NN>`` (the word the lemma derives from, bare or with a sense: ``crossly`` ->
  ``cross``, ``exhausted`` -> ``exhaust-01``; only where :mod:`~transition_systems.amr.morphology`
  finds one), ``COPY_POSITIVE`` and ``COPY_POSITIVE:<NN>`` (what a word with a negative prefix
  negates: ``illegal`` -> ``legal-02``, ``unfortunately`` -> ``fortunate``), ``COPY_NUMBER`` (the
  number the words stand for, where it is written otherwise: ``20,000`` -> ``20000``, ``twelve``
  -> ``12``, ``3 million`` -> ``3000000``, ``March`` -> ``3``; see
  :mod:`~transition_systems.amr.numbers`), ``COPY_FRAME`` (the frame the grammar's ``frames``
  table gives the lemma: ``digestion`` -> ``digest-01``; only where it has one); and
  ``ENTITY:<type>`` (a ``<type>`` node with ``:name (name :op1 "w1" :op2 "w2" ...)`` from the span's
  tokens) and ``DEMONYM`` (the entity an adjective of place stands for: ``Turkish`` -> ``(country
  :name (name :op1 "Turkey"))``, from :data:`~transition_systems.amr.lexicon.DEMONYMS`) make a node
  aligned to the current span and push it on the stack. A span may make several nodes. Constants
  (``-``, ``6``, ``"Paris"``, ``imperative``) are nodes too.
- ``DEPENDENT:<edge>:<label>``: a leaf node attached to the stack top by ``<edge>``, not pushed;
  ``WIKI`` is the ``:wiki`` leaf spelled from the stack top's name (``"New_York"``).
- ``LA:<role>`` adds the edge ``s0 -role-> s1`` and ``RA:<role>`` the edge ``s1 -role-> s0``
  (stack top ``s0``, second ``s1``); nothing is popped, so a node can take several parents
  (re-entrancies). ``LA:root`` marks ``s0`` as the graph's top (once).
- ``SWAP`` moves ``s1`` to the bottom of the stack, bringing deeper nodes next to the top.
- ``REDUCE`` pops ``s0`` (only while another node of its connected component stays on the stack,
  so the graph can always still be connected).
- ``CLOSE`` ends the parse: every token is consumed, the top is set and the graph is connected.

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

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from toolkit.grammars.grammar import State, SymbolTable
from transition_systems.amr.graph import encode
from transition_systems.amr.lexicon import demonym
from transition_systems.amr.morphology import degree, derived_base, positive_base
from transition_systems.amr.numbers import number_value

if TYPE_CHECKING:
    from transition_systems.amr.system import AmrTransitionSystem

SHIFT, REDUCE, MERGE, SWAP, CLOSE = "SHIFT", "REDUCE", "MERGE", "SWAP", "CLOSE"
COPY_LEMMA, COPY_SENSE01, COPY_WORD, COPY_FRAME, COPY_NUMBER = "COPY_LEMMA", "COPY_SENSE01", "COPY_WORD", "COPY_FRAME", "COPY_NUMBER"
COPY_STEM, COPY_POSITIVE = "COPY_STEM", "COPY_POSITIVE"
BASES = {COPY_STEM: derived_base, COPY_POSITIVE: positive_base}  # the copies of a base word, bare or with a sense
PRED, ENTITY, DEMONYM, DEPENDENT, WIKI, LA, RA = "PRED", "ENTITY", "DEMONYM", "DEPENDENT", "WIKI", "LA", "RA"
ROOT = "root"
MAX_EDGES_BETWEEN = 2  # edges from one node to another
ACTION_KINDS = (
    SHIFT,
    REDUCE,
    MERGE,
    PRED,
    COPY_LEMMA,
    COPY_SENSE01,
    COPY_WORD,
    COPY_STEM,
    COPY_POSITIVE,
    COPY_FRAME,
    COPY_NUMBER,
    ENTITY,
    DEMONYM,
    WIKI,
    DEPENDENT,
    LA,
    RA,
    SWAP,
    CLOSE,
)


PARTICLES = frozenset("up out off on in down away over back about around through along across by forward together apart aside".split())


def is_sense(label: str) -> bool:
    """A PropBank sense number as copies take it: two digits (``02``)."""
    return len(label) == 2 and label.isdigit()


def is_lemma_copy(label: str, particles: frozenset[str]) -> bool:
    """What may follow ``COPY_LEMMA:``: a sense, or one of *particles* and a sense (``up-07``)."""
    particle, _, sense = label.rpartition("-")
    return is_sense(sense) and (not particle or particle in particles)


# the actions without a label, and the flag of AmrAllowed that allows each
BARE_SYMBOLS = {
    COPY_LEMMA: "create",
    COPY_SENSE01: "create",
    COPY_FRAME: "frame",
    COPY_STEM: "stem",
    COPY_POSITIVE: "positive",
    COPY_WORD: "word",
    COPY_NUMBER: "number",
    DEMONYM: "demonym",
    WIKI: "wiki",
    SHIFT: "shift",
    REDUCE: "reduce",
    MERGE: "merge",
    SWAP: "swap",
    CLOSE: "close",
}


@dataclass(frozen=True)
class AmrAllowed:
    """What a state allows, as flags plus two sets; ``symbol in allowed`` checks a symbol.

    *preds* is the PRED labels allowed at the current span (``None``: any); *excluded* the arc
    symbols that would duplicate an edge between ``s0`` and ``s1``; *left* / *right* are false once
    ``s0 -> s1`` / ``s1 -> s0`` has two edges (the most the Little Prince has between two nodes).
    """

    create: bool = False
    frame: bool = False  # COPY_FRAME: the span's lemma has a frame
    stem: bool = False  # COPY_STEM: the span's lemma derives from another word
    positive: bool = False  # COPY_POSITIVE: the span's lemma has a negative prefix
    word: bool = False  # COPY_WORD: the span's words differ from its lemma
    number: bool = False  # COPY_NUMBER: the span's words are a number written otherwise (``20,000``, ``twelve``)
    demonym: bool = False  # DEMONYM: the span is an adjective of place (``Turkish``)
    wiki: bool = False  # WIKI: s0 has a name and no :wiki yet
    particles: frozenset[str] = frozenset()  # the sentence's words that COPY_LEMMA may add as a phrasal verb's particle
    copies: frozenset[str] | None = None  # what may follow COPY_LEMMA:, COPY_STEM: and COPY_POSITIVE: at all (None: any)
    merge: bool = False
    shift: bool = False
    reduce: bool = False
    swap: bool = False
    close: bool = False
    dependent: bool = False
    arcs: bool = False
    root: bool = False
    left: bool = True
    right: bool = True
    preds: frozenset[str] | None = None
    excluded: frozenset[str] = frozenset()

    def __contains__(self, symbol: object) -> bool:
        if not isinstance(symbol, str):
            return False
        if (flag := BARE_SYMBOLS.get(symbol)) is not None:
            return getattr(self, flag)
        kind, _, label = symbol.partition(":")
        if not label:
            return False
        if kind == PRED:
            return self.create and (self.preds is None or label in self.preds)
        if kind == COPY_LEMMA or kind in BASES:
            return self._copies(kind, label)
        if kind == ENTITY:
            return self.create
        if kind == DEPENDENT:
            edge, _, value = label.partition(":")
            return self.dependent and bool(edge) and bool(value)
        if kind == LA and label == ROOT:
            return self.root
        if kind in (LA, RA):
            return self.arcs and (self.left if kind == LA else self.right) and label != ROOT and symbol not in self.excluded
        return False

    def _copies(self, kind: str, label: str) -> bool:
        """Whether ``kind:label`` is an allowed copy with a sense (and a particle)."""
        if self.copies is not None and label not in self.copies:
            return False
        if kind in BASES:
            return getattr(self, BARE_SYMBOLS[kind]) and is_sense(label)
        return self.create and is_lemma_copy(label, self.particles)

    def symbol_ids(self, table: SymbolTable) -> Iterator[int]:
        """The ids of the symbols in ``self``, kind by kind: what the model's vocabulary mask needs."""
        ids = table.ids
        yield from (ids[symbol] for symbol, flag in BARE_SYMBOLS.items() if getattr(self, flag) and symbol in ids)
        if self.root and f"{LA}:{ROOT}" in ids:
            yield ids[f"{LA}:{ROOT}"]
        if self.create:
            preds = table.labelled(PRED)
            yield from preds.values() if self.preds is None else (preds[label] for label in self.preds if label in preds)
            yield from table.labelled(ENTITY).values()
            for kind in (COPY_LEMMA, *BASES):
                yield from (i for label, i in table.labelled(kind).items() if self._copies(kind, label))
        if self.dependent:
            yield from (i for label, i in table.labelled(DEPENDENT).items() if all(label.partition(":")[::2]))
        if self.arcs:
            for kind, open_ in ((LA, self.left), (RA, self.right)):
                if open_:
                    yield from (i for label, i in table.labelled(kind).items() if label != ROOT and f"{kind}:{label}" not in self.excluded)


@dataclass(frozen=True)
class Sentence:
    """The tokens and lemmas one parse reads (shared by all its states)."""

    tokens: tuple[str, ...]
    lemmas: tuple[str, ...]
    spans: dict = field(default_factory=dict, compare=False, hash=False, repr=False)  # AmrState._span_options, per grammar and span

    def key(self, start: int, end: int) -> str:
        """The lemma of a span: what PRED labels are looked up by and COPY_LEMMA copies."""
        return "-".join(self.lemmas[start:end]).lower() or "thing"

    def word(self, start: int, end: int) -> str:
        """The words of a span as written, lowercased: what COPY_WORD copies where the lemmatizer changed them."""
        return "-".join(self.tokens[start:end]).lower()

    def degree(self, start: int, end: int) -> str | None:
        """``more`` / ``most`` where the span is one comparative / superlative word (:func:`~transition_systems.amr.morphology.degree`)."""
        return degree(self.tokens[start].lower(), self.lemmas[start].lower()) if end - start == 1 else None

    def demonym(self, start: int, end: int) -> tuple[str, str] | None:
        """The entity type and name an adjective of place stands for (``Turkish``, ``Americans``), if the span is one."""
        return demonym(self.tokens[start]) if end - start == 1 else None

    def number(self, start: int, end: int) -> str | None:
        """The number the span's words stand for, if they do: what COPY_NUMBER makes (``20,000`` -> ``20000``)."""
        return number_value(self.tokens[start:end])

    @cached_property
    def particles(self) -> frozenset[str]:
        """The particles among the sentence's words: those a phrasal verb's copy may add."""
        return PARTICLES.intersection(token.lower() for token in self.tokens)


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
        preds, frame, stem, positive, word, number, demonym = self._span_options() if create else (None, False, False, False, False, False, False)
        close = not tokens_left and bool(self.labels) and self.top >= 0 and self._connected()
        return AmrAllowed(
            create=create,
            frame=frame,
            stem=stem,
            positive=positive,
            word=word,
            number=number,
            demonym=demonym,
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
            cache[cache_key] = (preds, frame, stem, positive, word, number, demonym, self.system)  # the grammar kept, so its id stays its own
        return cache[cache_key][:7]

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
        state = self._create(label)
        node = len(state.labels)
        labels = ("name",) + tuple('"' + word.replace('"', "'") + '"' for word in words)
        edges = ((node - 1, "name", node),) + tuple((node, f"op{i}", node + i) for i in range(1, len(words) + 1))
        first = len(state.edges)  # the indices of the new edges: first (name), first + i (op i)
        incident = _add(state.incident, {node - 1: (first,)}) + (tuple(range(first, first + len(edges))),)
        return state._replace(
            labels=state.labels + labels,
            anchors=state.anchors + (self.cursor,) * len(labels),
            edges=state.edges + edges,
            component=state.component + (node - 1,) * len(labels),
            incident=incident + tuple((first + i,) for i in range(1, len(words) + 1)),
            stacked=state.stacked + (0,) * len(labels),
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
