"""The AMR transition system's actions, as vocabulary symbols, and :class:`AmrAllowed`, what a state allows.

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
  :mod:`~transition_systems.amr.numbers`), ``COPY_FRAME`` and ``COPY_FRAME:<NN>`` (the frame the grammar's ``frames``
  table gives the lemma, or its verb with another sense: ``digestion`` -> ``digest-01``,
  ``treatment`` -> ``treat-03``; only where it has one); and
  ``ENTITY:<type>`` (a ``<type>`` node with ``:name (name :op1 "w1" :op2 "w2" ...)`` from the span's
  tokens), ``DEMONYM`` (the entity an adjective of place stands for: ``Turkish`` -> ``(country
  :name (name :op1 "Turkey"))``, from :data:`~transition_systems.amr.lexicon.DEMONYMS`), and the
  mentions' (:mod:`~transition_systems.amr.mentions`), each in one action at the mention's first
  token, its span not yet merged: ``NAME`` (the named-entity mention there, merged, as its typed
  name: ``(person :name (name :op1 "Emmanuel" :op2 "Macron"))``, the type the grammar learned for
  the mention's kind) and ``DATE`` (the date mention there, merged, as a ``date-entity`` with
  ``:year``, ``:month``, ``:day`` and ``:weekday``) make a node
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
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from toolkit.grammars.grammar import SymbolTable
from transition_systems.amr.morphology import derived_base, positive_base

SHIFT, REDUCE, MERGE, SWAP, CLOSE = "SHIFT", "REDUCE", "MERGE", "SWAP", "CLOSE"
COPY_LEMMA, COPY_SENSE01, COPY_WORD, COPY_FRAME, COPY_NUMBER = "COPY_LEMMA", "COPY_SENSE01", "COPY_WORD", "COPY_FRAME", "COPY_NUMBER"
COPY_STEM, COPY_POSITIVE = "COPY_STEM", "COPY_POSITIVE"
BASES = {COPY_STEM: derived_base, COPY_POSITIVE: positive_base}  # the copies of a base word, bare or with a sense
PRED, ENTITY, DEMONYM, DEPENDENT, WIKI, LA, RA = "PRED", "ENTITY", "DEMONYM", "DEPENDENT", "WIKI", "LA", "RA"
NAME, DATE = "NAME", "DATE"
SENSED_COPIES = (COPY_LEMMA, COPY_FRAME, *BASES)  # the copies that may take a sense: COPY_FRAME:03 is the frame's verb, sense 03
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
    NAME,
    DATE,
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


def frame_verb(frame: str) -> str:
    """A frame without its sense: what ``COPY_FRAME:<NN>`` adds another sense to (``treat-01`` -> ``treat``)."""
    verb, _, sense = frame.rpartition("-")
    return verb if verb and is_sense(sense) else frame


def senses_of(frames: Iterable[str]) -> dict[str, frozenset[str]]:
    """Each verb of *frames* with its senses (``give-up-07`` -> ``give-up``: ``07``); frames without a two-digit sense are left out."""
    senses: dict[str, set[str]] = {}
    for frame in frames:
        verb, _, sense = frame.rpartition("-")
        if verb and is_sense(sense):
            senses.setdefault(verb, set()).add(sense)
    return {verb: frozenset(found) for verb, found in senses.items()}


def sensed_copies(key: str, frame: str | None, particles: Iterable[str], senses_for: Callable[[str | None], frozenset[str]]) -> frozenset[tuple[str, str]]:
    """The (copy, label) pairs that make a PropBank frame at a span whose lemma is *key* and whose frame table entry is
    *frame*; *senses_for* gives a verb's senses. Hashable, as what a state allows must be (the model memoises its mask).
    """
    phrasal = {f"{particle}-{sense}" for particle in particles for sense in senses_for(f"{key}-{particle}")}
    labels = {
        COPY_LEMMA: senses_for(key) | phrasal,
        COPY_FRAME: senses_for(frame and frame_verb(frame)),
        COPY_STEM: senses_for(derived_base(key)),
        COPY_POSITIVE: senses_for(positive_base(key)),
    }
    return frozenset((kind, label) for kind, found in labels.items() for label in found)


def is_lemma_copy(label: str, particles: frozenset[str]) -> bool:
    """What may follow ``COPY_LEMMA:``: a sense, or one of *particles* and a sense (``up-07``)."""
    particle, _, sense = label.rpartition("-")
    return is_sense(sense) and (not particle or particle in particles)


# the actions without a label, and the flag of AmrAllowed that allows each
BARE_SYMBOLS = {
    COPY_LEMMA: "create",
    COPY_SENSE01: "sense01",
    COPY_FRAME: "frame",
    COPY_STEM: "stem",
    COPY_POSITIVE: "positive",
    COPY_WORD: "word",
    COPY_NUMBER: "number",
    DEMONYM: "demonym",
    NAME: "name",
    DATE: "date",
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
    name: bool = False  # NAME: a named-entity mention starts at the cursor, and the grammar has a type for it
    date: bool = False  # DATE: a date mention starts at the cursor, and it reads as a date
    wiki: bool = False  # WIKI: s0 has a name and no :wiki yet
    particles: frozenset[str] = frozenset()  # the sentence's words that COPY_LEMMA may add as a phrasal verb's particle
    copies: frozenset[str] | None = None  # what may follow COPY_LEMMA:, COPY_STEM: and COPY_POSITIVE: at all (None: any)
    senses: frozenset[tuple[str, str]] | None = None  # the (copy, label) pairs that make a PropBank frame here (None: any)
    sense01_frame: bool = True  # the lemma's -01 is a PropBank frame (where senses are checked): COPY_SENSE01 may make it
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
        if kind in SENSED_COPIES:
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

    @property
    def sense01(self) -> bool:
        """COPY_SENSE01: a node may be made, and the lemma's -01 is one a copy may make."""
        return self.create and self.sense01_frame

    def _copies(self, kind: str, label: str) -> bool:
        """Whether ``kind:label`` is an allowed copy with a sense (and a particle)."""
        if self.copies is not None and label not in self.copies:
            return False
        if self.senses is not None and (kind, label) not in self.senses:
            return False
        if kind in BASES or kind == COPY_FRAME:
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
            for kind in SENSED_COPIES:
                yield from (i for label, i in table.labelled(kind).items() if self._copies(kind, label))
        if self.dependent:
            yield from (i for label, i in table.labelled(DEPENDENT).items() if all(label.partition(":")[::2]))
        if self.arcs:
            for kind, open_ in ((LA, self.left), (RA, self.right)):
                if open_:
                    yield from (i for label, i in table.labelled(kind).items() if label != ROOT and f"{kind}:{label}" not in self.excluded)


def node_alias(symbol: str) -> str | None:
    """The ``PRED`` that makes the node *symbol* makes at the top of its subgraph (``DATE``: ``PRED:date-entity``,
    ``ENTITY:<type>``: ``PRED:<type>``), for the model to read one as the other (``Grammar.input_aliases``).
    """
    kind, _, label = symbol.partition(":")
    if symbol == DATE:
        return f"{PRED}:date-entity"
    return f"{PRED}:{label}" if kind == ENTITY and label else None
