"""A rule-based token–node aligner for AMR graphs without alignments.

Rules, tried per node in PENMAN order (a token is preferred when no other node took it, then the
one nearest to the parent's token):

- **names**: a ``name`` node's ``:opN`` strings are found as a token span (case-insensitive);
  the name node, its strings and the entity node above it (``:name``) align to the span's start.
- **exact / lemma / prefix**: the concept without its sense (``see-01`` -> ``see``) equals a
  token or its lemma, or shares a prefix of at least 4 characters with it (``magnificent``,
  ``happiness`` -> ``happy``); pronouns through their forms (``i`` -> ``me``, ``my``).
- **numbers and dates**: a number constant matches its digits, a number word or an ordinal; a
  month matches its name; a ``date-entity`` aligns with its first aligned part.
- **constants**: ``-`` (polarity) matches a negation word (``not``, ``n't``, ``never``, ``no``, ...).

A node no rule aligns is *dependent* when it is a leaf with a single parent (the transition
system makes it with ``DEPENDENT`` right after its parent, e.g. ``:polarity -`` without a
negation word, ``:wiki -``); any other unaligned node is *force-aligned* to the token of its
nearest aligned neighbour in the graph, as the Stack-Transformer paper does to raise oracle Smatch.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from transition_systems.amr.graph import GoldGraph

SENSE = re.compile(r"-\d\d$")
NEGATIONS = frozenset({"not", "n't", "no", "never", "none", "nothing", "nobody", "nowhere", "neither", "nor", "without", "cannot", "non"})
PRONOUNS = {
    "i": {"i", "me", "my", "mine", "myself"},
    "you": {"you", "your", "yours", "yourself", "yourselves"},
    "he": {"he", "him", "his", "himself"},
    "she": {"she", "her", "hers", "herself"},
    "it": {"it", "its", "itself"},
    "we": {"we", "us", "our", "ours", "ourselves"},
    "they": {"they", "them", "their", "theirs", "themselves"},
}
NUMBER_WORDS = {
    word: str(value)
    for value, word in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
            "thirteen",
            "fourteen",
            "fifteen",
            "sixteen",
            "seventeen",
            "eighteen",
            "nineteen",
            "twenty",
        ]
    )
}
NUMBER_WORDS.update(
    {
        "thirty": "30",
        "forty": "40",
        "fifty": "50",
        "sixty": "60",
        "hundred": "100",
        "thousand": "1000",
        "million": "1000000",
        "billion": "1000000000",
        "once": "1",
        "twice": "2",
        "first": "1",
        "second": "2",
        "third": "3",
        "fourth": "4",
        "fifth": "5",
        "sixth": "6",
        "half": "0.5",
        "a": "1",
        "an": "1",
        "single": "1",
    }
)
MONTHS = {
    name: str(number)
    for number, name in enumerate(
        ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"], start=1
    )
}
PREFIX = 4


@dataclass
class Alignment:
    """Node id -> token index for aligned and force-aligned nodes; *dependents* have no token."""

    tokens: dict[str, int] = field(default_factory=dict)
    forced: set[str] = field(default_factory=set)
    dependents: set[str] = field(default_factory=set)
    names: dict[str, tuple[int, int]] = field(default_factory=dict)  # entity node -> token span [start, end)

    @property
    def rule_aligned(self) -> int:
        return len(self.tokens) - len(self.forced)


def _base(label: str) -> str:
    return SENSE.sub("", label).lower()


def _matches(base: str, token: str, lemma: str) -> int:
    """How well a concept matches a token: 3 exact, 2 lemma, 1 prefix, 0 not at all."""
    if base == token:
        return 3
    if base == lemma or base in PRONOUNS.get(token, ()) or token in PRONOUNS.get(base, ()):
        return 2
    if len(base) >= PREFIX and len(token) >= PREFIX and (base[:PREFIX] == token[:PREFIX] or base[:PREFIX] == lemma[:PREFIX]):
        return 1
    return 0


def _constant_matches(label: str, token: str, lemma: str) -> bool:
    value = label.strip('"').lower()
    if label == "-":
        return token in NEGATIONS or lemma in NEGATIONS
    if value in (token, lemma):
        return True
    if NUMBER_WORDS.get(token) == value or MONTHS.get(token) == value:
        return True
    return bool(token) and token.replace(",", "") == value


def align(graph: GoldGraph, tokens: Sequence[str], lemmas: Sequence[str]) -> Alignment:
    """Align every node of *graph* to a token of the sentence, or mark it dependent (see the module docstring)."""
    aligner = _Aligner(graph, tokens, lemmas)
    aligner.align_names()
    aligner.align_by_rules()
    aligner.align_dates()
    aligner.mark_dependents()
    aligner.force_align()
    return aligner.alignment


class _Aligner:
    """One sentence's alignment in progress: the steps run in order, as each relies on the ones before.

    *used* holds the tokens a rule has taken, so that later rules prefer free tokens.
    """

    def __init__(self, graph: GoldGraph, tokens: Sequence[str], lemmas: Sequence[str]) -> None:
        self.graph, self.lemmas = graph, lemmas
        self.lowered = [token.lower() for token in tokens]
        self.alignment = Alignment()
        self.used: set[int] = set()
        self.parents: dict[str, list[str]] = {}
        self.children: dict[str, list[tuple[str, str]]] = {}
        for source, role, target in graph.edges:
            self.parents.setdefault(target, []).append(source)
            self.children.setdefault(source, []).append((role, target))
        self.edges_of = graph.neighbours()

    def put(self, node: str, index: int) -> None:
        """Align *node* to token *index*, which later rules then avoid."""
        self.alignment.tokens[node] = index
        self.used.add(index)

    def align_names(self) -> None:
        """Names first: a ``name`` node's ``:opN`` strings as a token span, which the name's entity takes too."""
        graph, alignment, lowered = self.graph, self.alignment, self.lowered
        for node in graph.nodes:
            if graph.labels[node] != "name" or node in alignment.tokens:
                continue
            ops = sorted(
                ((role, target) for role, target in self.children.get(node, ()) if role.startswith("op") and target in graph.constants),
                key=lambda item: int(item[0][2:]) if item[0][2:].isdigit() else 99,
            )
            words = [graph.labels[target].strip('"').lower() for _, target in ops]
            if not words:
                continue
            spans = [start for start in range(len(lowered) - len(words) + 1) if lowered[start : start + len(words)] == words]
            if not spans:
                continue
            start = next((s for s in spans if s not in self.used), spans[0])
            for offset, (_, target) in enumerate(ops):
                self.put(target, start + offset)
            self.put(node, start)
            for entity in self.parents.get(node, ()):
                if any(role == "name" and target == node for role, target in self.children.get(entity, ())) and entity not in alignment.tokens:
                    self.put(entity, start)
                    alignment.names[entity] = (start, start + len(words))

    def best(self, node: str) -> int | None:
        """The token matching *node* best: the best match, then a free token, then the nearest to the parent's token."""
        graph, alignment = self.graph, self.alignment
        label = graph.labels[node]
        scores = []
        for index, (token, lemma) in enumerate(zip(self.lowered, self.lemmas)):
            if node in graph.constants:
                score = 3 * _constant_matches(label, token, lemma)
            else:
                score = _matches(_base(label), token, lemma)
            if score:
                scores.append((score, index))
        if not scores:
            return None
        anchor = next((alignment.tokens[p] for p in self.parents.get(node, ()) if p in alignment.tokens), None)
        return max(scores, key=lambda item: (item[0], item[1] not in self.used, -abs(item[1] - anchor) if anchor is not None else -item[1]))[1]

    def align_by_rules(self) -> None:
        """Every other node but dates, by the concept and constant rules, in PENMAN order."""
        for node in self.graph.nodes:
            if node not in self.alignment.tokens and self.graph.labels[node] != "date-entity":
                index = self.best(node)
                if index is not None:
                    self.put(node, index)

    def align_dates(self) -> None:
        """A ``date-entity`` goes with its first aligned part (its parts are aligned by then)."""
        for node in self.graph.nodes:
            if self.graph.labels[node] == "date-entity" and node not in self.alignment.tokens:
                parts = sorted(self.alignment.tokens[target] for _, target in self.children.get(node, ()) if target in self.alignment.tokens)
                if parts:
                    self.put(node, parts[0])

    def mark_dependents(self) -> None:
        """Unaligned leaves with a single parent are made with ``DEPENDENT`` after it, so need no token."""
        graph, alignment, edges_of = self.graph, self.alignment, self.edges_of
        for node in graph.nodes:
            if node not in alignment.tokens and node != graph.top and len(edges_of[node]) == 1 and edges_of[node][0][2] == node:
                alignment.dependents.add(node)

    def force_align(self) -> None:
        """Every node still unaligned takes the token of its nearest aligned neighbour (the paper's trick)."""
        alignment, edges_of = self.alignment, self.edges_of
        pending = [node for node in self.graph.nodes if node not in alignment.tokens and node not in alignment.dependents]
        while pending:
            progress = False
            for node in list(pending):
                near = [edge[2] if edge[0] == node else edge[0] for edge in edges_of[node]]
                index = next((alignment.tokens[other] for other in near if other in alignment.tokens), None)
                if index is not None:
                    alignment.tokens[node] = index
                    alignment.forced.add(node)
                    pending.remove(node)
                    progress = True
            if not progress:  # a component with no aligned node at all: its first node takes the first token
                alignment.tokens[pending[0]] = 0
                alignment.forced.add(pending.pop(0))
