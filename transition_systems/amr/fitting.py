"""What an AMR grammar learns from its training data: entity types, caps and PRED labels (``Grammar.fit``)."""

from __future__ import annotations

import copy
import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

from toolkit.data.example import Example
from toolkit.errors import DataError
from transition_systems.amr.actions import senses_of
from transition_systems.amr.entity_types import learn_entity_types
from transition_systems.amr.graph import GoldGraph
from transition_systems.amr.limits import ACTIONS_PER_NODE
from transition_systems.amr.mentions import DATE
from transition_systems.amr.name_tagger import NameTagger
from transition_systems.amr.state import PRED, SENSED_COPIES

UNBOUNDED = 10**9
CAP_MARGIN = 1.25  # caps fitted on training data leave this much room for unseen sentences
INTEGER_CAPS = frozenset({"max_nodes", "max_nodes_per_span", "max_repeats_per_span", "max_actions_per_span"})


class LearnsFromTraining:
    """The fitting half of :class:`~transition_systems.amr.system.AmrTransitionSystem` (its settings are documented there)."""

    def fit(self, examples: Sequence[Example]) -> dict[str, Any]:
        """Learn from the training *examples* what parsing them takes: the caps (:meth:`fit_caps`) and which
        PRED labels each lemma takes (the oracle's PRED actions; only when restricting).

        Returns what changed, for the run's config: the dictionaries' frames, raised caps,
        ``{"pred_labels": {lemma: [labels]}, "open_labels": [labels], "copy_labels": [labels]}``.
        """
        fitted: dict[str, Any] = {}
        if self.frames is None and self.lexicon.frames:
            self.frames = dict(self.lexicon.frames)
            fitted["frames"] = self.frames
        if self.verb_frames is None and self.lexicon.verb_frames:
            self.verb_frames = dict(self.lexicon.verb_frames)
            fitted["verb_frames"] = sorted(self.verb_frames.values())
        if self.propbank_senses and self.senses is None and self.lexicon.propbank_frames:
            self.senses = senses_of(self.lexicon.propbank_frames)
            fitted["propbank_frames"] = sorted(self.lexicon.propbank_frames)
        fitted.update(self.fit_name_tagger(examples))
        fitted.update(self.fit_entity_types(examples))
        fitted.update(self.fit_caps(examples))
        if not self.restrict_pred_labels or self.pred_labels is not None:
            return fitted
        table: dict[str, set[str]] = defaultdict(set)
        copies: set[str] = set()
        uses, forced = Counter(), Counter()  # per concept: its nodes in training, and those the aligner force-aligned
        for example in examples:
            try:
                actions = self.run_oracle(example)[0]
                graph = GoldGraph.of(self.target(example))
            except DataError:
                continue
            state = self.derivation_state(example)
            if self.open_forced_share and self.force_align:
                alignment = self.align(graph, state.sentence)
                uses.update(graph.labels[node] for node in graph.nodes)
                forced.update(graph.labels[node] for node in alignment.forced)
            for action in actions:
                kind, _, label = action.partition(":")
                if kind == PRED:
                    table[state.sentence.key(state.cursor, state.span_end)].add(label)
                elif kind in SENSED_COPIES and label:
                    copies.add(label)
                state = state.apply(action)
        lemmas_of: Counter[str] = Counter(label for labels in table.values() for label in labels)
        self.open_labels = frozenset(
            label
            for label, count in lemmas_of.items()
            if (self.open_label_lemmas and count >= self.open_label_lemmas)
            or (self.open_forced_share and forced[label] >= self.open_forced_share * uses[label] > 0)
        )
        self.pred_labels = {lemma: frozenset(labels) | self.open_labels for lemma, labels in table.items()}
        self.copy_labels = frozenset(copies)
        return {
            **fitted,
            "pred_labels": {lemma: sorted(labels) for lemma, labels in sorted(table.items())},
            "open_labels": sorted(self.open_labels),
            "copy_labels": sorted(copies),
        }

    def fit_name_tagger(self, examples: Sequence[Example]) -> dict[str, Any]:
        """With ``learn_names`` (and no tagger given), learn the name tagger from the names the aligner finds as token spans."""
        if not self.learn_names or self.name_tagger is not None:
            return {}
        tagged = []
        for example in examples:
            try:
                graph = GoldGraph.of(self.target(example))
            except DataError:
                continue
            sentence = self.derivation_state(example).sentence
            tagged.append((sentence.tokens, {span: graph.labels[entity] for entity, span in self.align(graph, sentence).names.items()}))
        self.name_tagger = NameTagger.train(tagged)
        return {"name_tagger": self.name_tagger.weights}

    def fit_entity_types(self, examples: Sequence[Example]) -> dict[str, Any]:
        """Learn the entity type of each kind of mention and each name from the gold entities whose names'
        spans are mentions (unless given), and record where the mentions came from.
        """
        fitted: dict[str, Any] = {"mentions": self.mentions}
        if (self.mentions == "none" and self.name_tagger is None) or self.entity_types is not None:
            return fitted
        seen = []
        for example in examples:
            try:
                graph = GoldGraph.of(self.target(example))
            except DataError:
                continue
            sentence = self.derivation_state(example).sentence
            names = {span: entity for entity, span in self.align(graph, sentence).names.items()}
            for start, end, kind in sentence.mentions:
                if kind != DATE and (start, end) in names:
                    seen.append((kind, sentence.tokens[start:end], graph.labels[names[start, end]]))
        self.entity_types, self.entity_names = learn_entity_types(seen)
        return {**fitted, "entity_types": self.entity_types, "entity_names": self.entity_names}

    def fit_caps(self, examples: Sequence[Example]) -> dict[str, float]:
        """Raise the caps that bound a decode (nodes, nodes per span and per token, actions per token, a span's repeats and actions) to what
        the oracle needs on *examples*, with a margin, so that no graph of them falls back because of a cap
        set for the data the defaults were chosen on; caps left at ``null`` stay so. Returns the raised caps.
        """
        unbounded = copy.copy(self)
        unbounded.max_nodes = unbounded.max_nodes_per_span = UNBOUNDED
        unbounded.max_nodes_per_token = unbounded.max_actions_per_token = UNBOUNDED
        unbounded.max_repeats_per_span = unbounded.max_actions_per_span = UNBOUNDED
        needs: dict[str, float] = {}
        for example in examples:
            try:
                actions, status = unbounded.run_oracle(example)
            except DataError:
                continue
            if status == "fallback":
                continue
            state, per_span, per_token, repeats, span_actions = unbounded.derivation_state(example), 0, 0.0, 0, 0
            tokens = len(state.sentence.tokens)
            for action in actions:  # the budget is checked before each action, against the nodes and room made so far
                spare = state.steps + 1 - self.action_budget(0, len(state.labels), state.room)
                per_token = max(per_token, spare / tokens)
                state = state.apply(action)
                per_span = max(per_span, state.here)
                span_actions = max(span_actions, state.span_steps - ACTIONS_PER_NODE * state.here)
                if state.made_here:
                    repeats = max(repeats, state.made_here.count(state.made_here[-1]))
            nodes = len(state.labels)
            for key, need in (
                ("max_nodes", nodes),
                ("max_nodes_per_span", per_span),
                ("max_nodes_per_token", (nodes - 4) / tokens),
                ("max_actions_per_token", per_token),
                ("max_repeats_per_span", repeats),
                ("max_actions_per_span", span_actions),
            ):
                needs[key] = max(needs.get(key, 0), need)
        raised: dict[str, float] = {}
        for key, need in needs.items():
            wanted = math.ceil(need * CAP_MARGIN) if key in INTEGER_CAPS else round(need * CAP_MARGIN + 0.05, 1)
            if getattr(self, key) is not None and wanted > getattr(self, key):
                setattr(self, key, wanted)
                raised[key] = wanted
        return raised
