"""The AMR transition system as an output grammar (``"type": "amr"``): its settings and the ``Grammar`` interface.

It ties together the state machine (:mod:`transition_systems.amr.state`), the aligner and the
static oracle (:mod:`transition_systems.amr.oracle`), whose actions it learns PRED labels from.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from functools import cached_property
from typing import Any

import penman

from toolkit.data.example import Example
from toolkit.data.tokenization import lemmatize
from toolkit.errors import ConfigurationError, DataError
from toolkit.extras import install_hint
from toolkit.grammars.grammar import Grammar
from transition_systems.amr.actions import frame_verb, node_alias, senses_of
from transition_systems.amr.aligner import Alignment, align
from transition_systems.amr.entity_types import entity_type
from transition_systems.amr.fitting import LearnsFromTraining
from transition_systems.amr.graph import GoldGraph
from transition_systems.amr.isomorphism import same_graph
from transition_systems.amr.lexicon import DEMONYMS, Lexicon, derived_frame
from transition_systems.amr.mentions import MAX_MENTION_WORDS, MENTION_SOURCES, find_mentions, spacy_available
from transition_systems.amr.name_tagger import NameTagger, merged
from transition_systems.amr.oracle import StaticOracle
from transition_systems.amr.penman_text import read_penman, write_penman
from transition_systems.amr.state import CLOSE, COPY_LEMMA, LA, ROOT, SHIFT, AmrState, Sentence

logger = logging.getLogger(__name__)
DEMONYM_WORDS = max(len(name.split()) for _, name in DEMONYMS.values())  # the most strings a DEMONYM's name makes
ENTITY_WORDS = max(DEMONYM_WORDS, MAX_MENTION_WORDS)  # the most strings one action's name makes (ENTITY's: max_merge)


class GoldAmr:
    """The gold graph as ``Grammar.gold`` gives it: equal to a result string that denotes the same graph
    up to variable names (:func:`~transition_systems.amr.isomorphism.same_graph`, an exact check).
    """

    def __init__(self, graph: penman.Graph) -> None:
        self.graph = graph

    @cached_property
    def text(self) -> str:
        return write_penman(self.graph.triples, self.graph.top)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, GoldAmr):
            other = other.graph
        elif isinstance(other, str):
            try:
                other = read_penman(other)
            except penman.DecodeError:
                return False
        if not isinstance(other, penman.Graph):
            return NotImplemented
        return same_graph(other, self.graph)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"GoldAmr({self.text!r})"


@Grammar.register("amr")
class AmrTransitionSystem(LearnsFromTraining, Grammar):
    """Transition-based AMR parsing (Stack-Transformer paper's action set; see :mod:`transition_systems.amr.state`).

    Args:
        restrict_pred_labels: ``PRED`` may only emit labels seen with the span's lemma in
            training (learned by :meth:`fit`); copies and ``ENTITY`` are always allowed.
        pred_labels: the lemma -> PRED labels table itself (what training records in the run's
            config, so an archive rebuilds the same grammar); given, it wins over fitting.
        open_label_lemmas: a PRED label that training saw with at least this many different
            lemmas is allowed with every lemma; ``0`` turns this off. Fitting records them as
            *open_labels*. The default, 1, opens every label training made. Tied to their lemmas
            (5, with *open_forced_share*, left 146 of The Little Prince's 218 tied: all but abstract
            concepts such as ``and``, ``person`` and the mostly force-aligned ones), the labels cost
            0.45 oracle Smatch on its test split, fitted on train, and gained a trained parser at
            most 0.1 (the README's AMR results); the vocabulary still holds only the labels
            training made, and the copies only its senses.
        open_forced_share: a PRED label the aligner force-aligned in at least this share of its
            training uses is open too: no rule ties it to a word (``have-condition-91``,
            ``exemplify-01``), so the lemma it sat at says nothing about where it goes next.
            ``0`` turns this off (only with ``force_align``).
        open_labels: those labels themselves (what training records).
        copy_labels: what may follow ``COPY_LEMMA:``, ``COPY_STEM:`` and ``COPY_POSITIVE:`` (senses, ``up-07``): those the
            training oracle used, as the model's vocabulary holds only those (what :meth:`fit`
            records when restricting; ``None``: any).
        max_merge: the longest span ``MERGE`` builds (tokens).
        max_nodes_per_span: how many nodes one span may make; ``null`` (the default): as many as
            the sentence may (:meth:`node_limit`), a cap no graph of it can exceed (another
            corpus needed 33 where The Little Prince needs 8).
        max_nodes: how many nodes a graph may have at most, whatever its length (bounds a runaway
            decode of a very long input); ``null``: only the per-token cap below.
        max_nodes_per_token: a graph may have this many nodes per token, plus 4 (the Little
            Prince has at most 1.4; an ENTITY's name and strings count too): the cap that bounds
            a runaway decode.
        max_actions_per_token, max_actions_per_node: the action budget (:meth:`action_budget`):
            10 actions, plus this many per token, plus this many per node made so far, plus the
            SWAPs the nodes made so far may need to reach the nodes below them (the stack below
            each new node, less one: what one turn of the stack takes). Past it the state only
            allows moves that finish the graph (see ``AmrState.allowed``), so even an untrained
            model's decode ends, well-formed, within :meth:`max_steps`. The budget follows the
            graph being built, not a corpus: a token takes one SHIFT or MERGE, a node one
            creation, its arcs and a REDUCE, and the SWAPs, the only part that grows faster than
            the graph, are paid as the stack deepens. The Little Prince oracle needs at most 0.7
            actions per node (besides 2 per token), Little Prince sentences joined into inputs of
            up to 234 tokens none. :meth:`fit` raises these and the node caps above to what the
            training data's oracle needs (times 1.25), so a cap never cuts a graph of the data
            the grammar was fitted on.
        max_repeats_per_span, max_actions_per_span: what a parse's span may do before it counts as
            degenerate: make one label more than this many times, or take more than this many actions
            without a SHIFT or MERGE, besides 3 per node it made (its creation and arcs; REDUCE and
            SWAP are not counted: the stack bounds them). A degenerate span is cut (``limits.stuck``: the parse shifts
            past it, or past the last token finishes the graph) and the result says so in a
            ``# ::warning stopped:`` line; the search logs how many outputs were stopped. An
            under-trained model otherwise makes the same node from one token until the node cap (a
            2-epoch model made ``.`` 31 times from a full stop) and spends its whole action budget,
            which is quadratic in the nodes. The defaults are The Little Prince oracle's needs (4, and 6
            actions besides 3 per node) with a margin; :meth:`fit` raises them to what the training data's oracle
            needs; ``null`` turns a guard off. The oracle is never cut.
        smatch_seed: the seed of Smatch's random restarts in ``toolkit oracle``.
        force_align: make the nodes no alignment rule reaches at a graph neighbour's token (the
            paper's trick). ``false`` leaves them out of the oracle (to measure what the trick is
            worth: their edges are lost, and loose parts are attached with ``:mod``).
        dictionaries: a folder with USC/ISI's AMR dictionaries (verbalizations, derivations, role
            words; see :mod:`transition_systems.amr.lexicon`) for the aligner, which the oracle
            uses in training, and for the *frames* :meth:`fit` records; ``null`` aligns by the
            built-in rules alone and makes no frames. Parsing never reads it.
        frames: the word -> frame table ``COPY_FRAME`` copies from (``digestion`` ->
            ``digest-01``): what :meth:`fit` records from the dictionaries, so an archive parses
            without them.
        verb_frames: PropBank's first frame of each verb (``signal-07``), what :meth:`fit` records from
            the dictionaries: a nominalization no list gives copies its verb's
            (:func:`~transition_systems.amr.lexicon.derived_frame`: *supplementation* -> ``supplement-01``).
        propbank_senses: a copy with a sense (``COPY_LEMMA:02``, ``COPY_SENSE01``, ``COPY_STEM:01``,
            ``COPY_FRAME:03``, ``COPY_LEMMA:up-07``) makes only a frame PropBank has for AMR, so a
            parser never invents ``cell-01`` or ``describe-05``; :meth:`fit` records the frames from
            the dictionaries (``propbank-amr-frames-*.txt``) as *propbank_frames*. Without
            dictionaries, copies take any sense training copied.
        propbank_frames: those frames (``signal-07``, ``give-up-07``: what :meth:`fit` records).
        mentions: where the named-entity and date mentions that ``NAME`` and ``DATE`` make whole
            come from (:mod:`~transition_systems.amr.mentions`): ``"spacy"`` (its NER), ``"rules"``,
            ``"none"`` (no NAME nor DATE), or ``"auto"``: spaCy's where it is installed, else the
            rules'; :meth:`fit` records which, and a grammar that finds spaCy missing when it
            parses says so once and uses the rules.
        entity_types, entity_names: the entity type ``NAME`` makes per kind of mention and per
            name (:mod:`~transition_systems.amr.entity_types`): what :meth:`fit` learns from the
            training graphs.
        learn_names: learn a tagger of names and their types from the training graphs' aligned names
            (:mod:`~transition_systems.amr.name_tagger`): its mentions come first, the *mentions*
            source's fill in where it finds none. For a domain a news NER does not know (proteins,
            drugs, cell lines).
        name_tagger: the learned tagger's weights (what :meth:`fit` records).
        take_mentions: at a mention's first token a parse may only make it whole (``NAME``,
            ``DATE``): every mention the grammar can type becomes its entity, however rarely the
            training data showed one (for parsing; the oracle of a grammar with it fails where a
            gold graph does not make a mention whole).
    """

    default_predictor = "amr"
    result_kind = "AMR graphs"
    state_features = frozenset({"stack", "buffer"})

    def __init__(
        self,
        restrict_pred_labels: bool = True,
        pred_labels: dict[str, list[str]] | None = None,
        open_label_lemmas: int = 1,
        open_forced_share: float = 0.5,
        open_labels: list[str] | None = None,
        copy_labels: list[str] | None = None,
        max_merge: int = 8,
        max_nodes_per_span: int | None = None,
        max_nodes: int | None = 200,
        max_nodes_per_token: float = 3.0,
        max_actions_per_token: float = 2.0,
        max_actions_per_node: float = 4.0,
        max_repeats_per_span: int | None = 5,
        max_actions_per_span: int | None = 10,
        smatch_seed: int = 13,
        force_align: bool = True,
        dictionaries: str | None = None,
        frames: dict[str, str] | None = None,
        verb_frames: list[str] | None = None,
        propbank_senses: bool = False,
        propbank_frames: list[str] | None = None,
        mentions: str = "auto",
        entity_types: dict[str, str] | None = None,
        entity_names: dict[str, str] | None = None,
        learn_names: bool = False,
        name_tagger: dict[str, dict[str, float]] | None = None,
        take_mentions: bool = False,
    ) -> None:
        for key, value in (("max_merge", max_merge), ("max_nodes_per_span", max_nodes_per_span), ("max_nodes", max_nodes)):
            if value is not None and value < 1:
                raise ConfigurationError(f"grammar.{key} must be >= 1, got {value}")
        self.restrict_pred_labels = restrict_pred_labels
        if open_label_lemmas < 0:
            raise ConfigurationError(f"must be >= 0, got {open_label_lemmas}", key="open_label_lemmas")
        self.open_label_lemmas = open_label_lemmas
        if not 0 <= open_forced_share <= 1:
            raise ConfigurationError(f"must be between 0 and 1, got {open_forced_share}", key="open_forced_share")
        self.open_forced_share = open_forced_share
        self.open_labels = frozenset(open_labels or ())
        self.copy_labels = None if copy_labels is None else frozenset(copy_labels)
        self.pred_labels: dict[str, frozenset[str]] | None = None
        if pred_labels is not None:
            self.pred_labels = {lemma: frozenset(labels) | self.open_labels for lemma, labels in pred_labels.items()}
        self.max_merge, self.max_nodes_per_span, self.max_nodes = max_merge, max_nodes_per_span, max_nodes
        for key, value in (("max_actions_per_token", max_actions_per_token), ("max_actions_per_node", max_actions_per_node)):
            if value <= 0:
                raise ConfigurationError(f"must be > 0, got {value}", key=key)
        self.max_nodes_per_token, self.max_actions_per_token, self.max_actions_per_node = max_nodes_per_token, max_actions_per_token, max_actions_per_node
        for key, value in (("max_repeats_per_span", max_repeats_per_span), ("max_actions_per_span", max_actions_per_span)):
            if value is not None and value < 1:
                raise ConfigurationError(f"must be >= 1, got {value}", key=key)
        self.max_repeats_per_span, self.max_actions_per_span = max_repeats_per_span, max_actions_per_span
        self.smatch_seed, self.force_align = smatch_seed, force_align
        self.dictionaries, self.frames = dictionaries, frames
        self.verb_frames = None if verb_frames is None else {frame_verb(frame): frame for frame in verb_frames}
        self.propbank_senses, self.senses = propbank_senses, None if propbank_frames is None else senses_of(propbank_frames)
        if mentions not in ("auto", *MENTION_SOURCES):
            raise ConfigurationError(f"must be one of auto, {', '.join(MENTION_SOURCES)}; got {mentions!r}", key="mentions")
        self.mentions = ("spacy" if spacy_available() else "rules") if mentions == "auto" else mentions
        if self.mentions == "spacy" and not spacy_available():
            logger.warning("this grammar's mentions came from spaCy's NER, which is not installed here, so rules find them: %s", install_hint("spacy"))
        self.entity_types, self.entity_names, self.take_mentions = entity_types, entity_names, take_mentions
        self.learn_names, self.name_tagger = learn_names, None if name_tagger is None else NameTagger(name_tagger)
        self.refused: set[object] = set()  # the examples over the node limit already warned about

    @cached_property
    def lexicon(self) -> Lexicon:
        """The aligner's dictionaries, read on first use (training and ``toolkit oracle``; never when parsing)."""
        return Lexicon.load(self.dictionaries)

    def align(self, graph: GoldGraph, sentence: Sentence) -> Alignment:
        """The aligner's token for each node of *graph* (:func:`~transition_systems.amr.aligner.align`)."""
        return align(graph, sentence.tokens, sentence.lemmas, self.lexicon)

    def labels_for(self, key: str) -> frozenset[str] | None:
        """The PRED labels allowed at a span whose lemma is *key*: those training saw with it, else the open ones (``None``: any)."""
        if self.pred_labels is None:
            return None
        return self.pred_labels.get(key, self.open_labels)

    def entity_type(self, kind: str, words: Sequence[str]) -> str | None:
        """The type of the entity ``NAME`` makes of a *kind* mention of *words* (``None``: none)."""
        return entity_type(kind, words, self.entity_types or {}, self.entity_names or {})

    def frame_of(self, key: str) -> str | None:
        """The frame ``COPY_FRAME`` makes at a span whose lemma is *key*, if the grammar has one for it."""
        listed = self.frames.get(key) if self.frames else None
        return listed or (derived_frame(key, self.verb_frames) if self.verb_frames else None)

    def senses_for(self, verb: str | None) -> frozenset[str] | None:
        """The senses a copy may give *verb* (``None``: any; empty where PropBank has no frame of it or there is no verb)."""
        if self.senses is None:
            return None
        return self.senses.get(verb, frozenset()) if verb else frozenset()

    def node_limit(self, tokens: int) -> int:
        """The most nodes a graph of a *tokens*-token sentence may have."""
        limit = int(self.max_nodes_per_token * tokens) + 4
        return limit if self.max_nodes is None else min(self.max_nodes, limit)

    def action_budget(self, tokens: int, nodes: int = 0, room: int = 0) -> int:
        """How many actions a parse of a *tokens*-token sentence takes freely before it must wrap up, once it has
        made *nodes* nodes and earned *room* SWAPs (``AmrState.room``).
        """
        return int(self.max_actions_per_token * tokens + self.max_actions_per_node * nodes) + room + 10

    def max_steps(self, example: Example) -> int:
        """The most actions any parse of *example* takes: the budget once the most nodes are made, each pushed on a
        stack holding all the others (the most room), then the wrap-up's moves (a SHIFT per token; a node, the top,
        and per node a join or a REDUCE: see ``limits.wrap_up``). Quadratic in the node cap only through a
        stack no parse of a real graph builds; a decode ends long before.
        """
        tokens = len(example.tokens)
        made = self.node_limit(tokens)  # creations: each needs room for one more node
        nodes = made + 1 + max(self.max_merge, ENTITY_WORDS)  # the last an entity with its name and strings
        room = max(made - 1, 0) * max(made - 2, 0) // 2
        return self.action_budget(tokens, nodes, room) + tokens + 2 * nodes + 3

    # ------------------------------------------------------------ Grammar interface

    def input_aliases(self, symbols: Sequence[str]) -> dict[str, str]:
        """``DATE`` reads as ``PRED:date-entity``, ``ENTITY:<type>`` as ``PRED:<type>``: each makes that node, more below it."""
        return {symbol: alias for symbol in symbols if (alias := node_alias(symbol))}

    def initial_state(self, example: Example) -> AmrState:
        """A parse's start: it takes every mention whole where the grammar says so (``take_mentions``), and its
        degenerate spans are cut (``max_repeats_per_span``, ``max_actions_per_span``).
        """
        return self.derivation_state(example)._replace(steps=0, span_steps=0, takes_mentions=self.take_mentions, guards=True)

    def derivation_state(self, example: Example) -> AmrState:
        """The oracle's start: free to make a mention's entity as its gold graph does."""
        tokens = tuple(example.tokens)
        lemmas = example.meta.get("lemmas") if example.meta else None
        if lemmas is None or len(lemmas) != len(tokens):
            lemmas = lemmatize(tokens)
        mentions = find_mentions(tokens, self.mentions)
        if self.name_tagger is not None:
            mentions = merged(self.name_tagger.mentions(tokens), mentions)
        return AmrState(self, Sentence(tokens, tuple(lemmas), mentions))

    def oracle(self, example: Example) -> list[str]:
        return self.run_oracle(example)[0]

    def run_oracle(self, example: Example) -> tuple[list[str], str]:
        """The oracle's actions and how it went: ``"exact"``, ``"relabelled"`` (a PRED label was not allowed, or
        the graph had to be connected), ``"partial"`` (nodes left out: ``force_align`` is off) or ``"fallback"``.

        A graph with more nodes than any parse of its sentence can make (:meth:`over_limit`) falls back before
        any work, with one warning naming its file, line and the limit (once per example).
        """
        graph = self.target(example)
        start = self.derivation_state(example)
        if (refusal := self.over_limit(graph, len(start.sentence.tokens))) is not None:
            where = ":".join(str(part) for part in (example.meta.get("path"), example.meta.get("line")) if part is not None)
            if (where or id(example)) not in self.refused:
                self.refused.add(where or id(example))
                logger.warning("%s%s; the oracle falls back to a one-node graph", f"{where}: " if where else "", refusal)
            return self.fallback(start), "fallback"
        try:
            return StaticOracle(self, example, graph, start).run()
        except (ValueError, KeyError, IndexError) as error:
            logger.debug("AMR oracle fell back at %s:%s: %s", example.meta.get("path"), example.meta.get("line"), error)
            return self.fallback(start), "fallback"

    def over_limit(self, graph: penman.Graph, tokens: int) -> str | None:
        """Why no parse of a *tokens*-token sentence can make *graph*, or ``None``: it has more nodes (its variables
        and the constants of its attributes, as :class:`~transition_systems.amr.graph.GoldGraph` counts them) than
        :meth:`node_limit`, plus what one last ``ENTITY`` or ``DEMONYM`` may add past it (its name and strings).
        """
        variables = {source for source, _, _ in graph.instances()}
        nodes = len(variables) + sum(1 for source, role, target in graph.triples if role != ":instance" and source in variables and target not in variables)
        limit = self.node_limit(tokens)
        if nodes <= limit + 1 + max(self.max_merge, ENTITY_WORDS):
            return None
        if limit == self.max_nodes:
            return f"the graph has {nodes} nodes, more than grammar.max_nodes = {self.max_nodes}"
        return f"the graph has {nodes} nodes, more than grammar.max_nodes_per_token = {self.max_nodes_per_token} allows a {tokens}-token sentence ({limit})"

    @staticmethod
    def fallback(state: AmrState) -> list[str]:
        """A one-node graph (the first token's lemma as the top): what the oracle does when all else fails."""
        actions = [COPY_LEMMA, f"{LA}:{ROOT}"] + [SHIFT] * len(state.sentence.tokens) + [CLOSE]
        for action in actions:
            state = state.apply(action)
        return actions

    def gold(self, example: Example) -> GoldAmr:
        return GoldAmr(self.target(example))

    def data_report(self, examples: Sequence[Example]) -> dict[str, int]:
        """Node alignment counts and how many graphs the oracle relabelled or could not build."""
        counts: Counter[str] = Counter()
        for example in examples:
            try:
                graph = GoldGraph.of(self.target(example))
            except DataError:
                continue
            state = self.derivation_state(example)
            alignment = self.align(graph, state.sentence)
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
