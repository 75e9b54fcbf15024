"""The AMR transition system as an output grammar (``"type": "amr"``), with its static oracle.

The oracle walks the sentence left to right. At each token it merges the span of a named entity
the aligner found, makes the nodes aligned there (``ENTITY``, ``COPY_LEMMA``, ``COPY_SENSE01`` or
``PRED``), and right after making a node adds every gold edge between it and the nodes already
on the stack (``SWAP`` brings each one next to the top, ``LA``/``RA`` adds the edge), then its
dependent leaves (``DEPENDENT``). Completed nodes are reduced, and ``SHIFT`` moves on; ``CLOSE``
ends. Since every node is aligned or force-aligned (:mod:`transition_systems.amr.aligner`), the
oracle rebuilds the whole graph unless a label constraint forbids a gold label (a PRED label not
seen with the lemma in training, on data the grammar was not fitted on): then it copies the lemma,
and the graph comes back with that node's label wrong. Any other failure falls back to a
one-node graph; ``data_report`` counts both, and ``toolkit oracle`` scores every graph with Smatch.
"""

from __future__ import annotations

import logging
from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

import penman

from toolkit.data.example import Example
from toolkit.data.tokenization import lemmatize
from toolkit.errors import ConfigurationError, DataError
from toolkit.grammars.grammar import Grammar
from transition_systems.amr.aligner import Alignment, align
from transition_systems.amr.graph import GoldGraph, same_graph
from transition_systems.amr.state import (
    CLOSE,
    COPY_LEMMA,
    COPY_SENSE01,
    DEPENDENT,
    ENTITY,
    LA,
    MERGE,
    PRED,
    RA,
    REDUCE,
    ROOT,
    SHIFT,
    SWAP,
    AmrState,
    Sentence,
)

logger = logging.getLogger(__name__)


class GoldAmr:
    """The gold graph as ``Grammar.gold`` gives it: equal to a result string that denotes the same graph
    up to variable names (:func:`~transition_systems.amr.graph.same_graph`, an exact check).
    """

    def __init__(self, graph: penman.Graph) -> None:
        self.graph = graph
        self.text = penman.encode(penman.Graph(graph.triples, top=graph.top), indent=None)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, GoldAmr):
            other = other.graph
        elif isinstance(other, str):
            try:
                other = penman.decode(other)
            except penman.DecodeError:
                return False
        if not isinstance(other, penman.Graph):
            return NotImplemented
        return same_graph(other, self.graph)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"GoldAmr({self.text!r})"


@Grammar.register("amr")
class AmrTransitionSystem(Grammar):
    """Transition-based AMR parsing (Stack-Transformer paper's action set; see :mod:`transition_systems.amr.state`).

    Args:
        restrict_pred_labels: ``PRED`` may only emit labels seen with the span's lemma in
            training (learned by :meth:`fit`); copies and ``ENTITY`` are always allowed.
        pred_labels: the lemma -> PRED labels table itself (what training records in the run's
            config, so an archive rebuilds the same grammar); given, it wins over fitting.
        open_label_lemmas: a PRED label that training saw with at least this many different
            lemmas (``and``, ``person``, ``thing``, ``have-concession-91``: abstract concepts the
            aligner force-aligns to whatever token is near) is allowed with every lemma; ``0``
            turns this off. Fitting records them as *open_labels*.
        open_labels: those labels themselves (what training records).
        max_merge: the longest span ``MERGE`` builds (tokens).
        max_nodes_per_span: how many nodes one span may make.
        max_nodes: how many nodes a graph may have (bounds a runaway decode).
        max_nodes_per_token: and at most this many per token, plus 4 (the Little Prince has at
            most 1.4; an ENTITY's name and strings count too).
        max_actions_per_token: the action budget: after this many actions per token, plus 10,
            the state only allows moves that finish the graph (see ``AmrState.allowed``), so even
            an untrained model's decode ends, well-formed, in a bounded number of steps. The
            Little Prince oracle needs at most 5.8 (2.9 on average).
        smatch_seed: the seed of Smatch's random restarts in ``toolkit oracle``.
        force_align: make the nodes no alignment rule reaches at a graph neighbour's token (the
            paper's trick). ``false`` leaves them out of the oracle (to measure what the trick is
            worth: their edges are lost, and loose parts are attached with ``:mod``).
    """

    default_predictor = "amr"

    def __init__(
        self,
        restrict_pred_labels: bool = True,
        pred_labels: dict[str, list[str]] | None = None,
        open_label_lemmas: int = 5,
        open_labels: list[str] | None = None,
        max_merge: int = 8,
        max_nodes_per_span: int = 24,
        max_nodes: int = 200,
        max_nodes_per_token: float = 3.0,
        max_actions_per_token: float = 6.0,
        smatch_seed: int = 13,
        force_align: bool = True,
    ) -> None:
        for key, value in (("max_merge", max_merge), ("max_nodes_per_span", max_nodes_per_span), ("max_nodes", max_nodes)):
            if value < 1:
                raise ConfigurationError(f"grammar.{key} must be >= 1, got {value}")
        self.restrict_pred_labels = restrict_pred_labels
        if open_label_lemmas < 0:
            raise ConfigurationError(f"grammar.open_label_lemmas must be >= 0, got {open_label_lemmas}")
        self.open_label_lemmas = open_label_lemmas
        self.open_labels = frozenset(open_labels or ())
        self.pred_labels: dict[str, frozenset[str]] | None = None
        if pred_labels is not None:
            self.pred_labels = {lemma: frozenset(labels) | self.open_labels for lemma, labels in pred_labels.items()}
        self.max_merge, self.max_nodes_per_span, self.max_nodes = max_merge, max_nodes_per_span, max_nodes
        if max_actions_per_token <= 0:
            raise ConfigurationError(f"grammar.max_actions_per_token must be > 0, got {max_actions_per_token}")
        self.max_nodes_per_token, self.max_actions_per_token = max_nodes_per_token, max_actions_per_token
        self.smatch_seed, self.force_align = smatch_seed, force_align

    def node_limit(self, tokens: int) -> int:
        """The most nodes a graph of a *tokens*-token sentence may have."""
        return min(self.max_nodes, int(self.max_nodes_per_token * tokens) + 4)

    def action_budget(self, tokens: int) -> int:
        """How many actions a parse of a *tokens*-token sentence takes freely before it must wrap up."""
        return int(self.max_actions_per_token * tokens) + 10

    # ------------------------------------------------------------ Grammar interface

    def initial_state(self, example: Example) -> AmrState:
        tokens = tuple(example.tokens)
        lemmas = example.meta.get("lemmas") if example.meta else None
        if lemmas is None or len(lemmas) != len(tokens):
            lemmas = lemmatize(tokens)
        return AmrState(self, Sentence(tokens, tuple(lemmas)))

    def oracle(self, example: Example) -> list[str]:
        return self.run_oracle(example)[0]

    def run_oracle(self, example: Example) -> tuple[list[str], str]:
        """The oracle's actions and how it went: ``"exact"``, ``"relabelled"`` (a PRED label was not allowed, or
        the graph had to be connected), ``"partial"`` (nodes left out: ``force_align`` is off) or ``"fallback"``.
        """
        graph = self.target(example)
        start = self.initial_state(example)
        try:
            return _Oracle(self, example, graph, start).run()
        except (ValueError, KeyError, IndexError, RecursionError) as error:
            logger.debug("AMR oracle fell back at %s:%s: %s", example.meta.get("path"), example.meta.get("line"), error)
            return self.fallback(start), "fallback"

    @staticmethod
    def fallback(state: AmrState) -> list[str]:
        """A one-node graph (the first token's lemma as the top): what the oracle does when all else fails."""
        actions = [COPY_LEMMA, f"{LA}:{ROOT}"] + [SHIFT] * len(state.sentence.tokens) + [CLOSE]
        for action in actions:
            state = state.apply(action)
        return actions

    def gold(self, example: Example) -> GoldAmr:
        return GoldAmr(self.target(example))

    def fit(self, examples: Sequence[Example]) -> dict[str, Any]:
        """Learn which PRED labels each lemma takes in the training *examples* (the oracle's PRED actions).

        Returns ``{"pred_labels": {lemma: [labels]}, "open_labels": [labels]}`` for the run's config;
        nothing when not restricting.
        """
        if not self.restrict_pred_labels or self.pred_labels is not None:
            return {}
        table: dict[str, set[str]] = defaultdict(set)
        for example in examples:
            try:
                actions = self.run_oracle(example)[0]
            except DataError:
                continue
            state = self.initial_state(example)
            for action in actions:
                if action.startswith(PRED + ":"):
                    table[state.sentence.key(state.cursor, state.span_end)].add(action[len(PRED) + 1 :])
                state = state.apply(action)
        lemmas_of: Counter[str] = Counter(label for labels in table.values() for label in labels)
        self.open_labels = frozenset(label for label, count in lemmas_of.items() if self.open_label_lemmas and count >= self.open_label_lemmas)
        self.pred_labels = {lemma: frozenset(labels) | self.open_labels for lemma, labels in table.items()}
        return {"pred_labels": {lemma: sorted(labels) for lemma, labels in sorted(table.items())}, "open_labels": sorted(self.open_labels)}

    def data_report(self, examples: Sequence[Example]) -> dict[str, int]:
        """Node alignment counts and how many graphs the oracle relabelled or could not build."""
        counts: Counter[str] = Counter()
        for example in examples:
            try:
                graph = GoldGraph.of(self.target(example))
            except DataError:
                continue
            state = self.initial_state(example)
            alignment = align(graph, state.sentence.tokens, state.sentence.lemmas)
            counts["nodes"] += len(graph.nodes)
            counts["rule_aligned_nodes"] += alignment.rule_aligned
            counts["force_aligned_nodes"] += len(alignment.forced)
            counts["dependent_nodes"] += len(alignment.dependents)
            counts["entity_spans"] += len(alignment.names)
            counts["oracle_" + self.run_oracle(example)[1]] += 1
        return dict(counts)

    def oracle_metrics(self) -> list[dict[str, Any]]:
        return [{"type": "smatch", "seed": self.smatch_seed}]

    # ------------------------------------------------------------ helpers

    @staticmethod
    def target(example: Example) -> penman.Graph:
        graph = example.target
        if isinstance(graph, str):
            try:
                graph = penman.decode(graph)
            except penman.DecodeError as error:
                raise DataError(f"not a PENMAN graph: {error}", example.meta.get("path"), example.meta.get("line")) from None
        if not isinstance(graph, penman.Graph) or not graph.instances():
            raise DataError(
                f"the amr grammar needs a PENMAN graph as target (the 'penman' reader), got {type(graph).__name__}",
                example.meta.get("path"),
                example.meta.get("line"),
            )
        return graph


class _Oracle:
    """One run of the static oracle (see the module docstring)."""

    def __init__(self, system: AmrTransitionSystem, example: Example, graph: penman.Graph, start: AmrState) -> None:
        self.gold = GoldGraph.of(graph)
        self.state = start
        self.actions: list[str] = []
        self.status = "exact"
        sentence = start.sentence
        self.alignment: Alignment = align(self.gold, sentence.tokens, sentence.lemmas)
        n = len(sentence.tokens)
        # entity spans: merged tokens' nodes move to the span's start
        self.span_at: dict[int, int] = {}
        covered: dict[int, int] = {}
        for _, (begin, end) in sorted(self.alignment.names.items(), key=lambda item: item[1]):
            if begin in covered or begin in self.span_at:
                continue
            end = min(end, begin + system.max_merge, n)
            self.span_at[begin] = end
            for token in range(begin + 1, end):
                covered[token] = begin
        self.entities = {entity: span for entity, span in self.alignment.names.items() if self.span_at.get(span[0]) == span[1]}
        self.internal: set[str] = set()
        children = defaultdict(list)
        for source, role, target in self.gold.edges:
            children[source].append((role, target))
        for entity in list(self.entities):
            names = [target for role, target in children[entity] if role == "name"]
            name = names[0]
            ops = [target for role, target in children[name] if role.startswith("op")]
            begin, end = self.entities[entity]
            words = ['"' + word.replace('"', "'") + '"' for word in sentence.tokens[begin:end]]
            if (
                len(names) != 1
                or any(not role.startswith("op") for role, _ in children[name])
                or [self.gold.labels[op] for op in self._by_op(children[name])] != words
                or sum(1 for e in self.gold.edges if e[2] == name) != 1
                or any(len([e for e in self.gold.edges if op in (e[0], e[2])]) != 1 for op in ops)
            ):
                del self.entities[entity]
                continue
            self.internal.update([name, *ops])
        self.token_of = {node: covered.get(token, token) for node, token in self.alignment.tokens.items()}
        self.at: dict[int, list[str]] = defaultdict(list)
        for node in self.gold.nodes:
            if node in self.token_of and node not in self.internal:
                if node in self.alignment.forced and not system.force_align:
                    self.status = "partial"
                    continue
                self.at[self.token_of[node]].append(node)
        self.dependents = defaultdict(list)
        for source, role, target in self.gold.edges:
            if target in self.alignment.dependents and target not in self.internal:
                self.dependents[source].append((role, target))
        self.node_of: dict[str, int] = {}
        self.done: set[tuple[str, str, str]] = set()
        self.edges_of = self.gold.neighbours()

    @staticmethod
    def _by_op(children: list[tuple[str, str]]) -> list[str]:
        ops = [(role, target) for role, target in children if role.startswith("op")]
        return [target for _, target in sorted(ops, key=lambda item: int(item[0][2:]) if item[0][2:].isdigit() else 99)]

    @property
    def made(self) -> dict[int, str]:
        return {made: gold for gold, made in self.node_of.items()}

    def do(self, action: str) -> None:
        self.state = self.state.apply(action)
        self.actions.append(action)

    def run(self) -> tuple[list[str], str]:
        n = len(self.state.sentence.tokens)
        limit = 50 * (n + len(self.gold.nodes)) + 100
        while self.state.cursor < n:
            start = self.state.cursor
            for _ in range(start + 1, self.span_at.get(start, start + 1)):
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
        if node in self.entities:
            action = f"{ENTITY}:{label}"
        elif label == key:
            action = COPY_LEMMA
        elif label == f"{key}-01":
            action = COPY_SENSE01
        else:
            action = f"{PRED}:{label}"
            if action not in state.allowed():
                action, self.status = COPY_LEMMA, "relabelled"
        before = len(state.labels)
        self.do(action)
        self.node_of[node] = before
        if node in self.entities:
            children = [(role, target) for source, role, target in self.gold.edges if source == node and role == "name"]
            name = children[0][1]
            self.node_of[name] = before + 1
            for offset, op in enumerate(self._by_op([(r, t) for s, r, t in self.gold.edges if s == name]), start=2):
                self.node_of[op] = before + offset
            self.done.update(edge for edge in self.gold.edges if edge[0] in (node, name) and edge[2] in self.internal)
        if node == self.gold.top:
            self.do(f"{LA}:{ROOT}")
        self.connect(node)
        for role, child in self.dependents.get(node, ()):
            self.do(f"{DEPENDENT}:{role}:{self.gold.labels[child]}")
            self.node_of[child] = len(self.state.labels) - 1
            self.done.add((node, role, child))

    def connect(self, node: str) -> None:
        """Every gold edge between *node* (the stack top) and nodes already made."""
        wanted = {}
        for edge in self.edges_of[node]:
            other = edge[2] if edge[0] == node else edge[0]
            if edge in self.done or other not in self.node_of or other == node:
                continue
            wanted.setdefault(self.node_of[other], []).append(edge)
        while wanted:
            stack = self.state.stack
            s1 = stack[-2] if len(stack) >= 2 else None
            if s1 in wanted:
                for source, role, target in wanted.pop(s1):
                    self.do(f"{LA}:{role}" if source == node else f"{RA}:{role}")
                    self.done.add((source, role, target))
                continue
            if not any(other in stack for other in wanted) or len(stack) < 3:
                raise ValueError(f"nodes {sorted(wanted)} are not on the stack")
            self.do(SWAP)

    def reduce(self) -> None:
        made = self.made
        while (
            self.state.stack and all(edge in self.done for edge in self.edges_of.get(made.get(self.state.stack[-1], ""), ())) and REDUCE in self.state.allowed()
        ):
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
            component = self.state.components()
            s0, s1 = self.state.stack[-1], self.state.stack[-2]
            if component[s0] != component[s1]:
                self.status = "relabelled" if self.status == "exact" else self.status
                self.do(f"{RA}:mod")
            else:
                self.do(SWAP)
        self.do(CLOSE)
