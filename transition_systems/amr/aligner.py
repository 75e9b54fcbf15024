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

import heapq
import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from transition_systems.amr.graph import GoldGraph
from transition_systems.amr.lexicon import CUES, PUNCTUATION, Lexicon, demonym
from transition_systems.amr.morphology import negated_stem
from transition_systems.amr.numbers import number_value

SENSE = re.compile(r"-\d\d$")
JOINER = re.compile(r"^@?(.+?)@?$")  # ISI's glue marks a token that joins its neighbours: "@-@" is a "-" inside a word
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


class _Postings:
    """The sorted token indices that match one key (a word, a lemma, a stem, ...), where the free ones (no rule took
    them) are found in near-constant time: each side keeps a pointer past the used positions, compressed as it is followed.
    """

    def __init__(self, indices: list[int]) -> None:
        self.indices = indices
        self.right = list(range(len(indices) + 1))  # right[k] == k: position k is free (len(indices): none is)
        self.left = list(range(len(indices) + 1))  # the same leftwards, shifted by one (0: none is)

    def use(self, position: int) -> None:
        self.right[position] = position + 1
        self.left[position + 1] = position

    @staticmethod
    def _find(pointers: list[int], position: int) -> int:
        root = position
        while pointers[root] != root:
            root = pointers[root]
        while pointers[position] != root:
            pointers[position], position = root, pointers[position]
        return root

    def free_from(self, index: int) -> int | None:
        """The first free token at or after token *index*."""
        position = self._find(self.right, bisect_left(self.indices, index))
        return self.indices[position] if position < len(self.indices) else None

    def free_until(self, index: int) -> int | None:
        """The last free token at or before token *index*."""
        position = self._find(self.left, bisect_right(self.indices, index))
        return self.indices[position - 1] if position > 0 else None

    def any_from(self, index: int) -> int | None:
        position = bisect_left(self.indices, index)
        return self.indices[position] if position < len(self.indices) else None

    def any_until(self, index: int) -> int | None:
        position = bisect_right(self.indices, index)
        return self.indices[position - 1] if position > 0 else None


class _Aligner:
    """One sentence's alignment in progress.

    *used* holds the tokens a rule has taken, so that later rules prefer free tokens. Tokens are
    indexed by word, lemma, stem, number and the concepts the dictionaries tie them to, so each
    node looks only at the tokens that can match it: time grows with the matches, not with nodes
    times tokens.
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
        # node -> the frames it is an argument of (written :ARGn-of), in PENMAN order: graph.inverted is a set, whose
        # order changes with PYTHONHASHSEED (a person that is :ARG0-of sail-01 and :ARG1-of shipwreck-01 went with either)
        self.frames_of: dict[str, list[str]] = {}
        for edge in graph.edges:
            if edge[1].startswith("ARG") and edge in graph.inverted:
                self.frames_of.setdefault(edge[2], []).append(edge[0])
        # the token indexes: (kind, key) -> sorted token indices
        self.index: dict[tuple[str, str], list[int]] = {}
        for i, (token, lemma) in enumerate(zip(self.lowered, self.lemmas)):
            keys = {("word", token), ("lemma", lemma)}
            keys.update(("evoked", concept) for concept in self.evoked[i])
            for word in self.forms[i]:
                keys.update((kind, word[:size]) for kind, size in (("prefix", PREFIX), ("prefix3", 3)) if len(word) >= size)
            if token and (value := number_value([token])) is not None:
                keys.add(("number", value))
            if (value := number_value(self.lowered[i : i + 2])) is not None:
                keys.add(("pair", value))
            for key in keys:
                self.index.setdefault(key, []).append(i)
        self.postings: dict[object, _Postings] = {}
        self.members: list[list[tuple[_Postings, int]]] = [[] for _ in self.lowered]  # token -> the postings it is in
        self.commas = [i for i, token in enumerate(self.lowered) if token in (",", ";")]
        self.demonym_at: dict[str, int] = {}
        for i, token in enumerate(self.lowered):
            self.demonym_at.setdefault((demonym(token) or ("", ""))[1], i)
        self.stem_word_at: dict[str, int | None] = {}

    def put(self, node: str, index: int) -> None:
        """Align *node* to token *index*, which later rules then avoid."""
        self.alignment.tokens[node] = index
        if index not in self.used:
            self.used.add(index)
            for postings, position in self.members[index]:
                postings.use(position)

    def listed(self, key: object, indices: Sequence[int] | None = None) -> _Postings:
        """The postings of *key*: the token indices ``self.index`` has for it, or the given (sorted) *indices*."""
        postings = self.postings.get(key)
        if postings is None:
            postings = self.postings[key] = _Postings(list(self.index.get(key, ())) if indices is None else list(indices))
            for position, token in enumerate(postings.indices):
                self.members[token].append((postings, position))
                if token in self.used:
                    postings.use(position)
        return postings

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
            key = ("span", tuple(words))
            if key not in self.postings:
                starts = [start for start in self.index.get(("word", words[0]), ()) if lowered[start : start + len(words)] == words]
                self.listed(key, starts)
            spans = self.postings[key]
            if not spans.indices:
                spelled = self.spelled_span(words)
                if spelled is None:
                    self.align_name_by_word(node, ops)
                    continue
                start, end, firsts = spelled
            else:
                start = spans.free_from(0)
                start = spans.indices[0] if start is None else start
                end, firsts = start + len(words), [start + offset for offset in range(len(ops))]
            for first, (_, target) in zip(firsts, ops):
                self.put(target, first)
            self.put(node, start)
            for role, entity in self.parents.get(node, ()):
                if role == "name" and entity not in alignment.tokens:
                    self.put(entity, start)
                    alignment.names[entity] = (start, end)
                    for wiki in (target for role, target in self.children.get(entity, ()) if role == "wiki" and target in graph.constants):
                        alignment.dependents.add(wiki)

    def spelled_span(self, words: Sequence[str]) -> tuple[int, int, list[int]] | None:
        """Where ISI's tokens spell the name *words*, split with its glue marks: ``B @-@ Raf`` for ``"B-Raf"``, ``ERK1 @/@ 2``
        for ``"ERK1/2"``. The first such span's start and end, and the token each word begins at.

        Only a span with a glue mark counts: ``B - Raf`` (spaCy's) stays unaligned, since an entity made of its tokens
        would spell ``"B" "-" "Raf"`` (on Bio AMR's test part the oracle lost 0.4 Smatch so).
        """
        target = "".join(words)
        pieces = [JOINER.sub(r"\1", token) for token in self.lowered]
        for start in range(len(pieces)):
            spelled, firsts, end = "", [], start
            while end < len(pieces) and len(spelled) < len(target) and target.startswith(spelled + pieces[end]):
                if len("".join(words[: len(firsts)])) == len(spelled):
                    firsts.append(end)
                spelled += pieces[end]
                end += 1
            glued = any(self.lowered[i] != pieces[i] for i in range(start, end))
            if spelled == target and glued and len(firsts) == len(words):
                return start, end, firsts
        return None

    def align_name_by_word(self, name: str, ops: list[tuple[str, str]]) -> None:
        """A name written as an adjective of place (``French`` for ``"France"``, ``American`` for ``"United" "States"``,
        :data:`~transition_systems.amr.lexicon.DEMONYMS`), or a one-word name written differently (``Turkish``
        for ``"Turkey"``), goes with that word; no span is merged.
        """
        words = " ".join(self.graph.labels[target].strip('"') for _, target in ops)
        index = self.demonym_at.get(words)
        if index is None and len(ops) == 1:
            index = self.first_stem_word(words.lower())
        if index is None:
            return
        for node in (*(target for _, target in ops), name, *(entity for role, entity in self.parents.get(name, ()) if role == "name")):
            if node not in self.alignment.tokens:
                self.put(node, index)

    def first_stem_word(self, word: str) -> int | None:
        """The first token of at least ``PREFIX`` letters that shares a stem with *word* (once per word)."""
        if word not in self.stem_word_at:
            found = (i for i in self.stems(word).indices if len(self.lowered[i]) >= PREFIX and _stem_matches(word, self.forms[i]))
            self.stem_word_at[word] = next(found, None)
        return self.stem_word_at[word]

    def stems(self, base: str) -> _Postings:
        """The tokens one of whose forms shares a stem with *base*: exactly those :func:`_stem_matches` accepts."""
        if len(base) >= PREFIX:  # a form that begins with base shares its first PREFIX letters too
            return self.listed(("prefix", base[:PREFIX]))
        return self.listed(("prefix3", base) if len(base) == 3 else ("none", ""))

    # ------------------------------------------------------------ 2. words

    def groups(self, node: str) -> list[list[_Postings]]:
        """The tokens that realise *node*, best first: by the word itself (3), by lemma or lexicon (2), by stem (1); each a
        list of postings (see :meth:`best`). A token is in a group exactly when the rules of step 2 give it that score.
        """
        label = self.graph.labels[node]
        if node in self.graph.constants:  # the constant's word or number (``20,000``, ``3 million``), an article standing for 1
            value = label.strip('"').lower()
            if label == "-":
                exact = [self.listed((kind, word)) for word in sorted(CUES["-"]) for kind in ("word", "lemma")]
            else:
                exact = [self.listed(("word", value)), self.listed(("lemma", value)), self.listed(("number", value))]
            article = [self.listed(("word", "a")), self.listed(("word", "an"))] if label == "1" else []
            return [exact + [self.listed(("pair", label))], article]
        cues = sorted(CUES.get(label, frozenset()))
        cued = [self.listed((kind, word)) for word in cues for kind in ("word", "lemma")]
        if _abstract(label):  # no word is spelled like have-rel-role-91: cue words only
            return [cued]
        base = _base(label)
        pronouns = [self.listed(("word", form)) for form in sorted(PRONOUNS.get(base, ()))]
        pronouns += [self.listed(("word", pronoun)) for pronoun, forms in PRONOUNS.items() if base in forms]
        lexical = [self.listed(("lemma", base)), *cued, *pronouns, self.listed(("evoked", base)), self.multiwords(base)]
        return [[self.listed(("word", base))], lexical, [self.stems(base)]]

    def multiwords(self, base: str) -> _Postings:
        """The tokens where a concept of several words (``at-hand``, ``give-up``) starts, its other words following within ``WINDOW`` tokens."""
        key = ("multiword", base)
        if key not in self.postings:
            parts = base.split("-")
            starts = sorted(set(self.index.get(("word", parts[0]), ())) | set(self.index.get(("lemma", parts[0]), ()))) if len(parts) >= 2 else []
            self.listed(key, [index for index in starts if self.multiword(parts, index)])
        return self.postings[key]

    def multiword(self, parts: list[str], index: int) -> bool:
        position = index
        for part in parts[1:]:
            following = range(position + 1, min(position + 1 + WINDOW, len(self.lowered)))
            position = next((i for i in following if part in (self.lowered[i], self.lemmas[i])), -1)
            if position < 0:
                return False
        return True

    def best(self, node: str) -> int | None:
        """The token matching *node* best: the best match, then a free token, then the nearest to an aligned neighbour
        (the first such token where several are as near; the first token if no neighbour is aligned).
        """
        group = next((group for group in self.groups(node) if any(postings.indices for postings in group)), None)
        if group is None:
            return None
        near = sorted(
            {self.alignment.tokens[other] for role, other in self.parents.get(node, []) + self.children.get(node, []) if other in self.alignment.tokens}
        )

        def key(index: int) -> tuple[int, int]:  # the distance to the nearest anchor: one on either side of the index
            at = bisect_left(near, index)
            return min((abs(index - near[i]) for i in (at - 1, at) if 0 <= i < len(near)), default=index), index

        for before, after in ((_Postings.free_until, _Postings.free_from), (_Postings.any_until, _Postings.any_from)):
            # the nearest token to the anchors is the nearest on one side of one anchor
            found = (
                [after(postings, 0) for postings in group]
                if not near
                else [side(postings, anchor) for postings in group for anchor in near for side in (before, after)]
            )
            found = [index for index in found if index is not None]
            if found:
                return min(found, key=key)
        return None  # pragma: no cover - the group has a token

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

    def first_free(self, key: object, indices: Callable[[], list[int]]) -> int | None:
        """The first token of the postings *key* (*indices* lists them, asked once) that no rule took yet, else its first, else ``None``."""
        postings = self.postings.get(key) or self.listed(key, indices())
        found = postings.free_from(0)
        return found if found is not None else (postings.indices[0] if postings.indices else None)

    def structural(self, node: str) -> int | None:
        """The token of the word that *node*, a concept AMR adds around a word, goes with (step 3), if aligned.

        Whether it finds one depends only on the alignment of the node's parents and children (which
        token, among several, may also depend on the tokens already taken).
        """
        label, graph, lowered = self.graph.labels[node], self.graph, self.lowered
        if node in graph.constants:  # a polarity on a negated word (``unhappy``, ``impenetrable``) goes with it
            parents = (self.alignment.tokens[parent] for _, parent in self.parents.get(node, ()) if parent in self.alignment.tokens)
            return next((index for index in parents if label == "-" and negated_stem(lowered[index]) is not None), None)
        if label.endswith(("-entity", "-quantity")) or label == "rate-entity-91":
            return self.token_of(node, ("unit",)) if self.token_of(node, ("unit",)) is not None else self.token_of(node)
        if label in ROLE_FRAMES:  # the role word: its :ARG2, else a word of USC/ISI's role lists (``dad``)
            role = self.token_of(node, ("ARG2", "ARG3"))
            if role is not None:
                return role
            roles = self.lexicon.role_words
            return self.first_free(("role words",), lambda: [i for i, token in enumerate(lowered) if token in roles or self.lemmas[i] in roles])
        if label in ("have-degree-91", "have-quant-91"):
            return self.token_of(node, ("ARG3",)) if self.token_of(node, ("ARG3",)) is not None else self.token_of(node, ("ARG2",))
        if label == "possible-01":
            able = (i for i in (self.token_of(node, ("ARG1",)),) if i is not None and lowered[i].endswith(("able", "ible", "ably", "ibly")))
            return next(able, None)
        if label in ("and", "or"):  # the first comma between two operands
            operands = sorted(
                self.alignment.tokens[target] for role, target in self.children.get(node, ()) if role.startswith("op") and target in self.alignment.tokens
            )
            if len(operands) < 2:
                return None
            position = bisect_right(self.commas, operands[0])
            return self.commas[position] if position < len(self.commas) and self.commas[position] < operands[-1] else None
        if label in ("person", "thing") or label in self.lexicon.heads:
            return next((self.alignment.tokens[frame] for frame in self.frames_of.get(node, ()) if frame in self.alignment.tokens), None)
        if label in PUNCTUATION:
            return self.first_free(("marks", label), lambda: [i for i, token in enumerate(lowered) if token in PUNCTUATION[label]])
        return None

    def align_by_structure(self) -> None:
        """Step 3, repeated while it aligns something (a ``person`` waits for its ``have-rel-role-91``), in PENMAN order.

        The rounds are those of trying every unaligned node again each time, but a node is tried only
        when a parent or child was aligned since its last try (nothing else decides whether it finds a
        token), so the step takes time in proportion to the graph's size, not its size squared.
        """
        rounds = _Rounds(self.graph, self.edges_of, [node for node in self.graph.nodes if node not in self.alignment.tokens])
        while rounds.next_round():
            for node in rounds:
                if node not in self.alignment.tokens and (index := self.structural(node)) is not None:
                    self.put(node, index)
                    rounds.changed(node)

    # ------------------------------------------------------------ what is left

    def mark_dependents(self) -> None:
        """Unaligned leaves with a single parent are made with ``DEPENDENT`` after it, so need no token."""
        graph, alignment, edges_of = self.graph, self.alignment, self.edges_of
        for node in graph.nodes:
            if node not in alignment.tokens and node != graph.top and len(edges_of[node]) == 1 and edges_of[node][0][2] == node:
                alignment.dependents.add(node)

    def force_align(self) -> None:
        """Every node still unaligned takes the token of its nearest aligned neighbour (the paper's trick), in rounds in
        PENMAN order; a round that aligns nothing (a component with no aligned node at all) puts its first node at the
        first token. As in :meth:`align_by_structure`, a node is tried again only when a neighbour was aligned.
        """
        alignment, edges_of = self.alignment, self.edges_of
        pending = [node for node in self.graph.nodes if node not in alignment.tokens and node not in alignment.dependents]
        rounds = _Rounds(self.graph, edges_of, pending)
        first = 0  # pending[:first] are aligned
        while True:
            progress = False
            if rounds.next_round():
                for node in rounds:
                    if node in alignment.tokens:
                        continue
                    near = (edge[2] if edge[0] == node else edge[0] for edge in edges_of[node])
                    index = next((alignment.tokens[other] for other in near if other in alignment.tokens), None)
                    if index is not None:
                        alignment.tokens[node] = index
                        alignment.forced.add(node)
                        rounds.changed(node)
                        progress = True
            if progress:
                continue
            while first < len(pending) and pending[first] in alignment.tokens:
                first += 1
            if first == len(pending):
                return
            alignment.tokens[pending[first]] = 0
            alignment.forced.add(pending[first])
            rounds.changed(pending[first], restart=True)


class _Rounds:
    """Rounds over the given nodes in PENMAN order that try only those a change may concern: at first all of them,
    then those with a neighbour changed since their last try (this round if they come after the change, else the next).
    """

    def __init__(self, graph: GoldGraph, edges_of: dict[str, list[tuple[str, str, str]]], nodes: list[str]) -> None:
        self.nodes = graph.nodes
        self.place = {node: i for i, node in enumerate(graph.nodes)}
        self.edges_of = edges_of
        self.later: set[int] = {self.place[node] for node in nodes}
        self.eligible = frozenset(self.later)  # only these are ever tried
        self.current: list[int] = []
        self.queued: set[int] = set()
        self.position = -1

    def next_round(self) -> bool:
        """Start the next round; false when no node is left to try."""
        self.current, self.queued, self.later = sorted(self.later), set(self.later), set()
        self.position = -1
        return bool(self.current)

    def __iter__(self) -> Iterator[str]:
        while self.current:
            self.position = heapq.heappop(self.current)
            yield self.nodes[self.position]

    def changed(self, node: str, restart: bool = False) -> None:
        """*node* was aligned: its neighbours are tried again (all in the next round if *restart*)."""
        for source, _, target in self.edges_of[node]:
            where = self.place[target if source == node else source]
            if where not in self.eligible:
                continue
            if where > self.position and not restart:
                if where not in self.queued:
                    self.queued.add(where)
                    heapq.heappush(self.current, where)
            else:
                self.later.add(where)
