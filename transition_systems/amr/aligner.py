"""A rule-based token–node aligner for AMR graphs without alignments.

Steps, in order (each relies on the ones before; within a step, nodes go in PENMAN order):

1. **names**: a ``name`` node's ``:opN`` strings are found as a token span (case-insensitive);
   the name, its strings and the entity above it (``:name``) align to the span's start
   (multiword entities become one span the oracle merges), and the entity's ``:wiki`` is made
   with the entity (a dependent, below).
2. **words**: a concept or constant matches a token by, best first: the word itself (``see-01``
   without its sense, ``boy``); its lemma, a pronoun's forms (``i`` -> ``me``, ``my``), USC/ISI's
   verbalization and derivation lists (``teacher`` -> ``teach-01``, ``conquest`` ->
   ``conquer-01``, see :mod:`transition_systems.amr.lexicon`) or the cue words of abstract and
   modal concepts (``because`` -> ``cause-01``, ``can`` -> ``possible-01``, ``not`` -> ``-``);
   concepts of several words (``at-hand``, ``give-up-07``: their words in order within a few
   tokens; where the words are adjacent, ``at first``, their span is recorded in
   ``Alignment.spans`` and the oracle merges it as it merges a name); and last a shared stem (a
   prefix of 4 characters, or the whole of a shorter concept, also after a negative prefix:
   ``impenetrable`` -> ``penetrate-01``). Numbers match digits (``20,000``), number words and
   ordinals, a number with its multiplier (``3 million``, a span too), months their names
   (:mod:`~transition_systems.amr.numbers`), ``-`` also a negated word (``unhappy``).
   Ties go to a token no other node took, then to the one nearest an aligned neighbour (so a
   re-entrant node sits by the words around it).
3. **structure**, repeated until nothing changes: concepts AMR adds around a word align with
   that word: an entity or quantity (``date-entity``, ``temporal-quantity``) with its ``:unit``
   or first aligned part; ``have-rel-role-91`` / ``have-org-role-91`` with their role word
   (``:ARG2``, else a word of the role lists: ``dad``); ``have-degree-91`` / ``have-quant-91`` with their degree word (``:ARG3``, e.g.
   ``more``), else their ``:ARG2``; ``person``, ``thing`` and the other verbalized heads with the
   frame they are an argument of (``teacher``: ``person`` with ``teach-01``); ``possible-01``
   with an ``-able`` word its argument sits on; ``and``/``or`` with a comma between two operands.

A node no rule aligns is *dependent* when it is a leaf with a single parent (the transition
system makes it with ``DEPENDENT`` right after its parent, e.g. ``:polarity -`` without a
negation word, ``:mode imperative``); any other unaligned node is *force-aligned* to the token of
its nearest aligned neighbour in the graph, as the Stack-Transformer paper does to raise oracle
Smatch (the grammar's ``force_align``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from transition_systems.amr.graph import GoldGraph
from transition_systems.amr.lexicon import CUES, PUNCTUATION, Lexicon, demonym
from transition_systems.amr.morphology import negated_stem
from transition_systems.amr.numbers import number_value

SENSE = re.compile(r"-\d\d$")
PRONOUNS = {
    "i": {"i", "me", "my", "mine", "myself"},
    "you": {"you", "your", "yours", "yourself", "yourselves"},
    "he": {"he", "him", "his", "himself"},
    "she": {"she", "her", "hers", "herself"},
    "it": {"it", "its", "itself"},
    "we": {"we", "us", "our", "ours", "ourselves"},
    "they": {"they", "them", "their", "theirs", "themselves"},
    "this": {"this", "these"},  # AMR writes a demonstrative in the singular
    "that": {"that", "those"},
}
PREFIX = 4
ROLE_FRAMES = ("have-rel-role-91", "have-org-role-91")
WINDOW = 4  # how far apart the words of a multiword concept may be
EMPTY = Lexicon()


@dataclass
class Alignment:
    """Node id -> token index for aligned and force-aligned nodes; *dependents* have no token."""

    tokens: dict[str, int] = field(default_factory=dict)
    forced: set[str] = field(default_factory=set)
    dependents: set[str] = field(default_factory=set)
    names: dict[str, tuple[int, int]] = field(default_factory=dict)  # entity node -> token span [start, end)
    spans: dict[str, tuple[int, int]] = field(default_factory=dict)  # a concept spelled by adjacent words (``at-first``) -> their span

    @property
    def rule_aligned(self) -> int:
        return len(self.tokens) - len(self.forced)


def _base(label: str) -> str:
    return SENSE.sub("", label).lower()


def _abstract(label: str) -> bool:
    """AMR's own frames and entity types (``have-rel-role-91``, ``date-entity``), which align by cue words and structure only."""
    return label.endswith(("-91", "-entity", "-quantity"))


def _stem_forms(token: str, lemma: str) -> tuple[str, ...]:
    """The forms of a word whose stem a concept may share: itself, its lemma, and what it negates (``unhappy`` -> ``happy``)."""
    negated = negated_stem(token)
    return (token, lemma) if negated is None else (token, lemma, negated)


def _stem_matches(base: str, forms: tuple[str, ...]) -> bool:
    """A shared stem: 4 common initial characters, or a short concept that begins the word (see :func:`_stem_forms`)."""
    for word in forms:
        if len(base) >= PREFIX and len(word) >= PREFIX and base[:PREFIX] == word[:PREFIX]:
            return True
        if len(base) >= 3 and word.startswith(base):
            return True
    return False


def _constant_matches(label: str, token: str, lemma: str) -> bool:
    value = label.strip('"').lower()
    if label == "-":
        return token in CUES["-"] or lemma in CUES["-"]
    if value in (token, lemma):
        return True
    return bool(token) and number_value([token]) == value


def align(graph: GoldGraph, tokens: Sequence[str], lemmas: Sequence[str], lexicon: Lexicon = EMPTY) -> Alignment:
    """Align every node of *graph* to a token of the sentence, or mark it dependent (see the module docstring)."""
    aligner = _Aligner(graph, tokens, lemmas, lexicon)
    aligner.align_names()
    aligner.align_words()
    aligner.align_by_structure()
    aligner.mark_dependents()
    aligner.force_align()
    return aligner.alignment


class _Aligner:
    """One sentence's alignment in progress.

    *used* holds the tokens a rule has taken, so that later rules prefer free tokens.
    """

    def __init__(self, graph: GoldGraph, tokens: Sequence[str], lemmas: Sequence[str], lexicon: Lexicon) -> None:
        self.graph, self.lexicon = graph, lexicon
        self.lowered = [token.lower() for token in tokens]
        self.lemmas = [lemma.lower() for lemma in lemmas]
        self.forms = [_stem_forms(token, lemma) for token, lemma in zip(self.lowered, self.lemmas)]
        self.evoked = [lexicon.evoked(token) | lexicon.evoked(lemma) for token, lemma in zip(self.lowered, self.lemmas)]
        self.alignment = Alignment()
        self.used: set[int] = set()
        self.parents: dict[str, list[tuple[str, str]]] = {}
        self.children: dict[str, list[tuple[str, str]]] = {}
        for source, role, target in graph.edges:
            self.parents.setdefault(target, []).append((role, source))
            self.children.setdefault(source, []).append((role, target))
        self.edges_of = graph.neighbours()

    def put(self, node: str, index: int) -> None:
        """Align *node* to token *index*, which later rules then avoid."""
        self.alignment.tokens[node] = index
        self.used.add(index)

    def token_of(self, node: str, roles: Sequence[str] = ()) -> int | None:
        """The token of *node*'s first aligned child by one of *roles* (any role if none given)."""
        for role, target in self.children.get(node, ()):
            if (not roles or role in roles) and target in self.alignment.tokens:
                return self.alignment.tokens[target]
        return None

    # ------------------------------------------------------------ 1. names

    def align_names(self) -> None:
        """A ``name`` node's ``:opN`` strings as a token span, which the name's entity (and its ``:wiki``) take too."""
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
                self.align_name_by_word(node, ops)
                continue
            start = next((s for s in spans if s not in self.used), spans[0])
            for offset, (_, target) in enumerate(ops):
                self.put(target, start + offset)
            self.put(node, start)
            for role, entity in self.parents.get(node, ()):
                if role == "name" and entity not in alignment.tokens:
                    self.put(entity, start)
                    alignment.names[entity] = (start, start + len(words))
                    for wiki in (target for role, target in self.children.get(entity, ()) if role == "wiki" and target in graph.constants):
                        alignment.dependents.add(wiki)

    def align_name_by_word(self, name: str, ops: list[tuple[str, str]]) -> None:
        """A name written as an adjective of place (``French`` for ``"France"``, ``American`` for ``"United" "States"``,
        :data:`~transition_systems.amr.lexicon.DEMONYMS`), or a one-word name written differently (``Turkish``
        for ``"Turkey"``), goes with that word; no span is merged.
        """
        words = " ".join(self.graph.labels[target].strip('"') for _, target in ops)
        index = next((i for i, token in enumerate(self.lowered) if (demonym(token) or ("", ""))[1] == words), None)
        if index is None and len(ops) == 1:
            word = words.lower()
            index = next((i for i, token in enumerate(self.lowered) if len(token) >= PREFIX and _stem_matches(word, self.forms[i])), None)
        if index is None:
            return
        for node in (*(target for _, target in ops), name, *(entity for role, entity in self.parents.get(name, ()) if role == "name")):
            if node not in self.alignment.tokens:
                self.put(node, index)

    # ------------------------------------------------------------ 2. words

    def scores(self, node: str) -> list[int]:
        """How well each token realises *node*: 3 the word itself, 2 by lemma or lexicon, 1 by stem, 0 not at all."""
        label = self.graph.labels[node]
        tokens = range(len(self.lowered))
        if node in self.graph.constants:
            return [self.constant_score(label, i) for i in tokens]
        cues = CUES.get(label, frozenset())
        if _abstract(label):  # no word is spelled like have-rel-role-91: cue words only
            return [2 if self.lowered[i] in cues or self.lemmas[i] in cues else 0 for i in tokens]
        base = _base(label)
        return [self.word_score(base, cues, i) for i in tokens]

    def constant_score(self, label: str, index: int) -> int:
        """3 for the constant's word or number (``20,000``, ``3 million``), 2 for an article standing for 1."""
        if _constant_matches(label, self.lowered[index], self.lemmas[index]) or number_value(self.lowered[index : index + 2]) == label:
            return 3
        return 2 * (label == "1" and self.lowered[index] in ("a", "an"))

    def word_score(self, base: str, cues: frozenset[str], index: int) -> int:
        token, lemma = self.lowered[index], self.lemmas[index]
        if base == token:
            return 3
        if base == lemma or token in cues or lemma in cues or base in PRONOUNS.get(token, ()) or token in PRONOUNS.get(base, ()):
            return 2
        if base in self.evoked[index] or self.multiword(base, index):
            return 2
        return int(_stem_matches(base, self.forms[index]))

    def multiword(self, base: str, index: int) -> bool:
        """Whether a concept of several words (``at-hand``, ``give-up``) starts at token *index*, its other words following within ``WINDOW`` tokens."""
        parts = base.split("-")
        if len(parts) < 2 or parts[0] not in (self.lowered[index], self.lemmas[index]):
            return False
        position = index
        for part in parts[1:]:
            following = range(position + 1, min(position + 1 + WINDOW, len(self.lowered)))
            position = next((i for i in following if part in (self.lowered[i], self.lemmas[i])), -1)
            if position < 0:
                return False
        return True

    def best(self, node: str) -> int | None:
        """The token matching *node* best: the best match, then a free token, then the nearest to an aligned neighbour."""
        scores = [(score, index) for index, score in enumerate(self.scores(node)) if score]
        if not scores:
            return None
        near = [self.alignment.tokens[other] for role, other in self.parents.get(node, []) + self.children.get(node, []) if other in self.alignment.tokens]

        def distance(index: int) -> int:
            return min((abs(index - anchor) for anchor in near), default=index)

        return max(scores, key=lambda item: (item[0], item[1] not in self.used, -distance(item[1])))[1]

    def align_words(self) -> None:
        """Every node not yet aligned, by its word (step 2), in PENMAN order."""
        for node in self.graph.nodes:
            if node not in self.alignment.tokens and node not in self.alignment.dependents:
                index = self.best(node)
                if index is not None:
                    self.put(node, index)
                    if (end := self.adjacent_words(node, index)) is not None:
                        self.alignment.spans[node] = (index, end)

    def adjacent_words(self, node: str, index: int) -> int | None:
        """The end of the run of adjacent tokens from *index* that spells *node*'s concept, if it has several
        words (``at first`` for ``at-first``, ``give up`` for ``give-up-07``) or is a compound number (``3 million``).
        """
        label = self.graph.labels[node]
        if node in self.graph.constants:
            end = index + 2
            return end if end <= len(self.lowered) and number_value(self.lowered[index:end]) == label else None
        parts = _base(label).split("-")
        end = index + len(parts)
        if len(parts) < 2 or _abstract(label) or end > len(self.lowered):
            return None
        matches = all(part in (self.lowered[i], self.lemmas[i]) for part, i in zip(parts, range(index, end)))
        return end if matches else None

    # ------------------------------------------------------------ 3. structure

    def structural(self, node: str) -> int | None:
        """The token of the word that *node*, a concept AMR adds around a word, goes with (step 3), if aligned."""
        label, graph = self.graph.labels[node], self.graph
        if node in graph.constants:  # a polarity on a negated word (``unhappy``, ``impenetrable``) goes with it
            parents = (self.alignment.tokens[parent] for _, parent in self.parents.get(node, ()) if parent in self.alignment.tokens)
            return next((index for index in parents if label == "-" and negated_stem(self.lowered[index]) is not None), None)
        if label.endswith(("-entity", "-quantity")) or label == "rate-entity-91":
            return self.token_of(node, ("unit",)) if self.token_of(node, ("unit",)) is not None else self.token_of(node)
        if label in ROLE_FRAMES:  # the role word: its :ARG2, else a word of USC/ISI's role lists (``dad``)
            role = self.token_of(node, ("ARG2", "ARG3"))
            words = [index for index, token in enumerate(self.lowered) if token in self.lexicon.role_words or self.lemmas[index] in self.lexicon.role_words]
            return role if role is not None else next((index for index in words if index not in self.used), words[0] if words else None)
        if label in ("have-degree-91", "have-quant-91"):
            return self.token_of(node, ("ARG3",)) if self.token_of(node, ("ARG3",)) is not None else self.token_of(node, ("ARG2",))
        if label == "possible-01":
            able = (i for i in (self.token_of(node, ("ARG1",)),) if i is not None and self.lowered[i].endswith(("able", "ible", "ably", "ibly")))
            return next(able, None)
        if label in ("and", "or"):
            operands = sorted(
                self.alignment.tokens[target] for role, target in self.children.get(node, ()) if role.startswith("op") and target in self.alignment.tokens
            )
            commas = (i for i in range(operands[0] + 1, operands[-1]) if self.lowered[i] in (",", ";")) if len(operands) >= 2 else iter(())
            return next(commas, None)
        if label in ("person", "thing") or label in self.lexicon.heads:
            frames = (source for source, role, target in graph.inverted if target == node and role.startswith("ARG"))
            return next((self.alignment.tokens[frame] for frame in frames if frame in self.alignment.tokens), None)
        if label in PUNCTUATION:
            marks = [index for index, token in enumerate(self.lowered) if token in PUNCTUATION[label]]
            return next((index for index in marks if index not in self.used), marks[0] if marks else None)
        return None

    def align_by_structure(self) -> None:
        """Step 3, repeated while it aligns something (a ``person`` waits for its ``have-rel-role-91``)."""
        changed = True
        while changed:
            changed = False
            for node in self.graph.nodes:
                if node not in self.alignment.tokens:
                    index = self.structural(node)
                    if index is not None:
                        self.put(node, index)
                        changed = True

    # ------------------------------------------------------------ what is left

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
