"""The static oracle of the AMR transition system: the actions that rebuild a gold graph.

The oracle walks the sentence left to right. At each token it merges the span of a named entity
the aligner found, or of a concept spelled by adjacent words (``at first``, ``3 million``), makes the nodes aligned there (``ENTITY``, a copy where one gives the gold
concept, else ``PRED``; where a mention makes a gold entity or date whole, ``NAME`` or ``DATE`` at its first token, which merges it), and right after making a node adds every gold edge between it and the nodes already
on the stack (``SWAP`` brings each one next to the top, ``LA``/``RA`` adds the edge), then its
dependent leaves (``DEPENDENT``). Completed nodes are reduced, and ``SHIFT`` moves on; ``CLOSE``
ends. Since every node is aligned or force-aligned (:mod:`transition_systems.amr.aligner`), the
oracle rebuilds the whole graph unless a label constraint forbids a gold label (a PRED label not
seen with the lemma in training, on data the grammar was not fitted on): then it copies the lemma,
and the graph comes back with that node's label wrong. Any other failure falls back to a
one-node graph; ``data_report`` counts both, and ``toolkit oracle`` scores every graph with Smatch.

Each step looks only at what it touches: a node's edges are counted down as they are made (so
REDUCE does not go over them again), the oracle keeps which nodes are on the stack, and the
mentions find their gold entity or date through indexes; with the state's own indexes
(:mod:`~transition_systems.amr.state`), the oracle is linear in the graph's nodes + edges.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import TYPE_CHECKING

import penman

from toolkit.data.example import Example
from transition_systems.amr.aligner import Alignment
from transition_systems.amr.graph import GoldGraph
from transition_systems.amr.mentions import Mention
from transition_systems.amr.state import (
    BASES,
    CLOSE,
    COPY_FRAME,
    COPY_LEMMA,
    COPY_NUMBER,
    COPY_SENSE01,
    COPY_WORD,
    DATE,
    DEMONYM,
    DEPENDENT,
    ENTITY,
    LA,
    MERGE,
    NAME,
    PRED,
    RA,
    REDUCE,
    ROOT,
    SHIFT,
    SWAP,
    WIKI,
    AmrState,
    frame_verb,
    is_sense,
)

DATE_ROLES = frozenset({"year", "month", "day", "weekday"})  # what DATE makes below a date-entity

if TYPE_CHECKING:
    from transition_systems.amr.system import AmrTransitionSystem


class StaticOracle:
    """One run of the static oracle on one example (see the module docstring)."""

    def __init__(self, system: AmrTransitionSystem, example: Example, graph: penman.Graph, start: AmrState) -> None:
        self.system, self.gold = system, GoldGraph.of(graph)
        self.state = start
        self.actions: list[str] = []
        self.status = "exact"
        sentence = start.sentence
        self.alignment: Alignment = system.align(self.gold, sentence)
        n = len(sentence.tokens)
        self.edges_of = self.gold.neighbours()
        self.children: dict[str, list[tuple[str, str]]] = defaultdict(list)
        children = self.children
        for source, role, target in self.gold.edges:
            children[source].append((role, target))
        self.internal: set[str] = set()  # nodes made by the action that makes their entity (names, strings, a date's parts)
        self.named_at: dict[tuple[int, int], list[str]] = defaultdict(list)  # a span -> the entities aligned to it
        for entity, span in self.alignment.names.items():
            self.named_at[span].append(entity)
        # mentions that make a gold entity or date whole; then entity spans, then those of concepts of several words:
        # merged tokens' nodes move to the span's start
        self.mentioned: dict[str, tuple[str, list[str], int]] = {}  # gold node -> NAME or DATE, the nodes it makes below it, its token
        self.dates = _DateIndex(self)
        self.span_at: dict[int, int] = {}
        covered: dict[int, int] = {}
        for mention in sentence.mentions:
            made = self._mentioned(mention)
            if made is None or any(token in covered or token in self.span_at for token in range(mention.start, mention.end)):
                continue
            node, action, parts = made
            self.mentioned[node] = (action, parts, mention.start)
            self.internal.update(parts)
            self.span_at[mention.start] = mention.end
            covered.update((token, mention.start) for token in range(mention.start + 1, mention.end))
        for begin, end in [*sorted(self.alignment.names.values()), *sorted(self.alignment.spans.values())]:
            if any(token in covered or token in self.span_at for token in range(begin, end)):
                continue
            end = min(end, begin + system.max_merge, n)
            self.span_at[begin] = end
            for token in range(begin + 1, end):
                covered[token] = begin
        self.entities = {entity: span for entity, span in self.alignment.names.items() if self.span_at.get(span[0]) == span[1] and entity not in self.mentioned}
        for entity in list(self.entities):
            begin, end = self.entities[entity]
            words = ['"' + word.replace('"', "'") + '"' for word in sentence.tokens[begin:end]]
            if (parts := self._simple_name(entity, children)) is None or [self.gold.labels[op] for op in parts[1:]] != words:
                del self.entities[entity]
                continue
            self.internal.update(parts)
        # adjectives of place (Turkish: country "Turkey"), made whole by DEMONYM at the word the aligner gave them
        self.demonyms: set[str] = set()
        for entity, token in self.alignment.tokens.items():
            if entity in self.entities or entity in self.mentioned or self.span_at.get(token, token + 1) != token + 1 or token in covered:
                continue
            entity_type, name = sentence.demonym(token, token + 1) or ("", "")
            parts = self._simple_name(entity, children) if self.gold.labels[entity] == entity_type else None
            if parts is not None and [self.gold.labels[op] for op in parts[1:]] == [f'"{word}"' for word in name.split()]:
                self.demonyms.add(entity)
                self.internal.update(parts)
        self.token_of = {node: covered.get(token, token) for node, token in self.alignment.tokens.items()}
        self.token_of.update((node, start) for node, (_, _, start) in self.mentioned.items())
        self.at: dict[int, list[str]] = defaultdict(list)
        for node in self.gold.nodes:
            if node in self.token_of and node not in self.internal:
                if node in self.alignment.forced and not system.force_align:
                    self.status = "partial"
                    continue
                self.at[self.token_of[node]].append(node)
        for nodes in self.at.values():  # a mention's node first: its action merges the span
            nodes.sort(key=lambda node: node not in self.mentioned)
        self.dependents = defaultdict(list)
        for source, role, target in self.gold.edges:
            if target in self.alignment.dependents and target not in self.internal:
                self.dependents[source].append((role, target))
        self.node_of: dict[str, int] = {}  # gold node -> the node made for it
        self.gold_of: dict[int, str] = {}  # and back
        self.done: set[tuple[str, str, str]] = set()
        self.pending = {node: len(edges) for node, edges in self.edges_of.items()}  # per gold node, its edges not made yet
        self.on_stack: set[int] = set()  # the made nodes on the stack (arcs and SWAPs reorder it, never change what is on it)

    def _mentioned(self, mention: Mention) -> tuple[str, str, list[str]] | None:
        """The gold entity or date *mention* makes whole, the action that does, and the nodes it makes below it."""
        sentence = self.state.sentence
        words = sentence.tokens[mention.start : mention.end]
        date = sentence.date(mention)
        if date is not None:
            node = self.dates.find(date, mention)
            parts = self._date_parts(node, date) if node is not None else None
            return None if parts is None else (node, DATE, parts)
        entity_type = self.system.entity_type(mention.kind, words)
        strings = ['"' + word.replace('"', "'") + '"' for word in words]
        for entity in self.named_at.get((mention.start, mention.end), ()):
            # not one an earlier mention took (a date-entity with a :name): the parts that one makes would never be made
            if self.gold.labels[entity] == entity_type and entity not in self.mentioned:
                parts = self._simple_name(entity, self.children)
                if parts is not None and [self.gold.labels[op] for op in parts[1:]] == strings:
                    return entity, NAME, parts
        return None

    def _date_parts(self, node: str, date: tuple[tuple[str, str], ...]) -> list[str] | None:
        """The children of the gold ``date-entity`` *node* that DATE makes, in its order, if they are exactly *date*'s
        roles and values, each a leaf.
        """
        parts = {role: target for role, target in self.children[node] if role in DATE_ROLES}
        if len(parts) != sum(1 for role, _ in self.children[node] if role in DATE_ROLES) or sorted(parts) != sorted(role for role, _ in date):
            return None
        if any(self.gold.labels[parts[role]] != value or len(self.edges_of[parts[role]]) != 1 for role, value in date):
            return None
        return [parts[role] for role, _ in date]

    def _simple_name(self, entity: str, children: dict[str, list[tuple[str, str]]]) -> list[str] | None:
        """*entity*'s name node and its strings in order, if the name is one ENTITY or DEMONYM can make: one
        ``:name`` with ``:opN`` strings only, no other parent, and strings of its own.
        """
        names = [target for role, target in children[entity] if role == "name"]
        if len(names) != 1:
            return None
        name = names[0]
        ops = self._by_op(children[name])
        if (
            any(not role.startswith("op") for role, _ in children[name])
            or any(op not in self.gold.constants for op in ops)
            or sum(1 for edge in self.edges_of[name] if edge[2] == name) != 1
            or any(len(self.edges_of[op]) != 1 for op in ops)
        ):
            return None
        return [name, *ops]

    @staticmethod
    def _by_op(children: list[tuple[str, str]]) -> list[str]:
        ops = [(role, target) for role, target in children if role.startswith("op")]
        return [target for _, target in sorted(ops, key=lambda item: int(item[0][2:]) if item[0][2:].isdigit() else 99)]

    @property
    def made(self) -> dict[int, str]:
        """Made node -> its gold node."""
        return self.gold_of

    def bind(self, gold: str, made: int) -> None:
        self.node_of[gold] = made
        self.gold_of[made] = gold

    def do(self, action: str) -> None:
        before = self.state
        self.state = before.apply(action)
        self.actions.append(action)
        if len(self.state.stack) > len(before.stack):  # a node made and pushed
            self.on_stack.add(self.state.stack[-1])
        elif action == REDUCE:
            self.on_stack.discard(before.stack[-1])

    def mark(self, edges: Iterable[tuple[str, str, str]]) -> None:
        """Record gold *edges* as made, counting each down at its ends (REDUCE pops a node none is left at)."""
        for edge in edges:
            if edge not in self.done:
                self.done.add(edge)
                self.pending[edge[0]] -= 1
                if edge[2] != edge[0]:
                    self.pending[edge[2]] -= 1

    def run(self) -> tuple[list[str], str]:
        n = len(self.state.sentence.tokens)
        limit = 50 * (n + len(self.gold.nodes)) + 100
        while self.state.cursor < n:
            start = self.state.cursor
            merged_by_mention = bool(self.at.get(start)) and self.at[start][0] in self.mentioned
            for _ in range(start + 1, start + 1 if merged_by_mention else self.span_at.get(start, start + 1)):
                self.do(MERGE)
            for node in self.at.get(start, ()):
                self.make(node)
            self.reduce()
            if len(self.actions) > limit:
                raise ValueError("the oracle runs too long")
            self.do(SHIFT)
        self.finish()
        return self.actions, self.status

    def make(self, node: str) -> None:
        state = self.state
        label = self.gold.labels[node]
        key = state.sentence.key(state.cursor, state.span_end)
        if node in self.mentioned:
            action = self.mentioned[node][0]
        elif node in self.entities:
            action = f"{ENTITY}:{label}"
        elif node in self.demonyms:
            action = DEMONYM
        elif label == key:
            action = COPY_LEMMA
        elif label == f"{key}-01" and COPY_SENSE01 in state.allowed():  # not where the grammar holds copies to PropBank's frames
            action = COPY_SENSE01
        elif label == self.system.frame_of(key):
            action = COPY_FRAME
        elif label == state.sentence.word(state.cursor, state.span_end):
            action = COPY_WORD
        elif label == state.sentence.number(state.cursor, state.span_end):
            action = COPY_NUMBER
        elif (copy := _copy(label, key, state.sentence.particles, self.system.frame_of(key))) is not None and copy in state.allowed():
            action = copy
        else:
            action = f"{PRED}:{label}"
            if action not in state.allowed():
                action, self.status = COPY_LEMMA, "relabelled"
        before = len(state.labels)
        self.do(action)
        self.bind(node, before)
        if node in self.mentioned:
            parts = self.mentioned[node][1]
            for offset, part in enumerate(parts, start=1):
                self.bind(part, before + offset)
            made = {node, *parts}
            self.mark(edge for part in made for edge in self.edges_of[part] if edge[0] in made and edge[2] in made)
        elif node in self.entities or node in self.demonyms:
            name = next(target for role, target in self.children[node] if role == "name")
            self.bind(name, before + 1)
            for offset, op in enumerate(self._by_op(self.children[name]), start=2):
                self.bind(op, before + offset)
            self.mark(edge for edge in self.edges_of[node] + self.edges_of[name] if edge[0] in (node, name) and edge[2] in self.internal)
        if node == self.gold.top:
            self.do(f"{LA}:{ROOT}")
        self.connect(node)
        for role, child in self.dependents.get(node, ()):
            wiki = role == "wiki" and self.state.wiki_of(self.state.stack[-1]) == self.gold.labels[child]
            self.do(WIKI if wiki else f"{DEPENDENT}:{role}:{self.gold.labels[child]}")
            self.bind(child, len(self.state.labels) - 1)
            self.mark([(node, role, child)])

    def connect(self, node: str) -> None:
        """Every gold edge between *node* (the stack top) and nodes already made."""
        wanted = {}
        for edge in self.edges_of[node]:
            other = edge[2] if edge[0] == node else edge[0]
            if edge in self.done or other not in self.node_of or other == node:
                continue
            wanted.setdefault(self.node_of[other], []).append(edge)
        reachable = sum(other in self.on_stack for other in wanted)
        while wanted:
            stack = self.state.stack
            s1 = stack[-2] if len(stack) >= 2 else None
            if s1 in wanted:
                for source, role, target in wanted.pop(s1):
                    self.do(f"{LA}:{role}" if source == node else f"{RA}:{role}")
                    self.mark([(source, role, target)])
                reachable -= 1
                continue
            if not reachable or len(stack) < 3:
                raise ValueError(f"nodes {sorted(wanted)} are not on the stack")
            self.do(SWAP)

    def reduce(self) -> None:
        made, pending = self.made, self.pending
        while self.state.stack and pending.get(made.get(self.state.stack[-1]), 0) == 0 and REDUCE in self.state.allowed():
            self.do(REDUCE)

    def finish(self) -> None:
        """Set the top and connect what is left if something went wrong, then CLOSE."""
        if self.state.top < 0:
            self.status = "relabelled" if self.status == "exact" else self.status
            if not self.state.stack:
                raise ValueError("no node to make the top")
            self.do(f"{LA}:{ROOT}")
        guard = 0
        while CLOSE not in self.state.allowed():
            guard += 1
            if guard > 10 * len(self.state.labels) + 10:
                raise ValueError("cannot connect the graph")
            s0, s1 = self.state.stack[-1], self.state.stack[-2]
            if not self.state.connects(s0, s1):
                self.status = "relabelled" if self.status == "exact" else self.status
                self.do(f"{RA}:mod")
            else:
                self.do(SWAP)
        self.do(CLOSE)


class _DateIndex:
    """The gold ``date-entity`` nodes by the date their parts spell (roles and values, each part a leaf) and by their
    token, so that a date mention finds its node without going over every date of the graph: the first in PENMAN order
    of those aligned within the mention, else of all, that no mention has taken.
    """

    def __init__(self, oracle: StaticOracle) -> None:
        self.taken = oracle.mentioned
        self.date_of: dict[str, frozenset] = {}  # a date-entity node -> the (role, value) pairs of its parts
        self.by_date: dict[frozenset, list[str]] = defaultdict(list)  # and back, in PENMAN order
        self.at: dict[int, list[str]] = defaultdict(list)  # a token -> the date-entity nodes aligned to it
        self.skip: dict[frozenset, int] = defaultdict(int)  # per date, how many of its first nodes are taken
        self.order: dict[str, int] = {}  # a date-entity node's place in PENMAN order
        gold = oracle.gold
        for node in gold.nodes:
            if gold.labels[node] != "date-entity":
                continue
            parts = [(role, target) for role, target in oracle.children[node] if role in DATE_ROLES]
            if len({role for role, _ in parts}) == len(parts) and all(len(oracle.edges_of[target]) == 1 for _, target in parts):
                self.date_of[node], self.order[node] = frozenset((role, gold.labels[target]) for role, target in parts), len(self.order)
                self.by_date[self.date_of[node]].append(node)
                if node in oracle.alignment.tokens:
                    self.at[oracle.alignment.tokens[node]].append(node)

    def find(self, date: tuple[tuple[str, str], ...], mention: Mention) -> str | None:
        key = frozenset(date)
        nodes = self.by_date.get(key, []) if len(key) == len(date) else []
        aligned = [
            node for token in range(mention.start, mention.end) for node in self.at.get(token, ()) if self.date_of[node] == key and node not in self.taken
        ]
        if aligned:
            return min(aligned, key=self.order.__getitem__)
        while self.skip[key] < len(nodes) and nodes[self.skip[key]] in self.taken:
            self.skip[key] += 1
        return nodes[self.skip[key]] if self.skip[key] < len(nodes) else None


def _copy(label: str, key: str, particles: frozenset[str], frame: str | None = None) -> str | None:
    """The copy that makes *label* at a span whose lemma is *key*, if one does: the lemma with a sense other than
    ``01`` or with one of the sentence's *particles* and a sense, the verb of the lemma's *frame* with another
    sense, or a base word of the lemma (its stem, or what its negative prefix negates), bare or with a sense.
    """
    base, _, sense = label.rpartition("-")
    if is_sense(sense) and (base == key or (base.startswith(key + "-") and base[len(key) + 1 :] in particles)):
        return f"{COPY_LEMMA}:{label[len(key) + 1 :]}"
    if frame is not None and is_sense(sense) and base == frame_verb(frame):
        return f"{COPY_FRAME}:{sense}"
    for kind, base_of in BASES.items():
        word = base_of(key)
        if word is not None and word == label:
            return kind
        if word is not None and word == base and is_sense(sense):
            return f"{kind}:{sense}"
    return None
