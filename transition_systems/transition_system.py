"""The base of dependency transition systems: output grammars whose symbols are parser actions.

A system defines three things over :class:`Configuration`: which actions are valid (``valid``),
what an action does (``transition``), and which action a static oracle takes towards a gold tree
(``gold_action``). The base class turns these into a :class:`Grammar`: ``oracle`` runs the
configuration from the start, asking ``gold_action`` at every step, so the oracle cannot disagree
with the state machine; ``gold`` is the target tree without its tags; ``data_report`` counts the
non-projective trees; ``fit`` learns the labeled-SHIFT words from the training data.
Implementations register under the Grammar registry (``@Grammar.register("arc_standard")``); a
config names them with ``"type"``.
"""

from __future__ import annotations

from abc import abstractmethod
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, NoReturn

from toolkit.data.dependency_tree import DependencyTree
from toolkit.data.example import Example
from toolkit.errors import ConfigurationError, DataError
from toolkit.grammars.grammar import Derivation, Grammar
from transition_systems.actions import SHIFT, ValidActions, labeled_shift
from transition_systems.configuration import NO_HEAD, Configuration
from transition_systems.dynamic_oracle import ActionCost, DynamicOracle
from transition_systems.projectivity import children_of, is_projective, projectivize
from transition_systems.pseudo_projective import lift, lower

TAG_FIELDS = ("upos", "feats")  # the word fields of a DependencyTree a parser can predict beside it
NonProjective = Literal["projectivize", "pseudo_projective", "skip"]


@dataclass(frozen=True)
class GoldTree:
    """The tree an oracle steers towards, indexed by node (0 is the root; ``heads[0]`` is unused)."""

    heads: tuple[int, ...]
    labels: tuple[str, ...]
    children: tuple[tuple[int, ...], ...]

    @classmethod
    def of(cls, heads: Sequence[int], labels: Sequence[str]) -> GoldTree:
        return cls((NO_HEAD, *heads), ("", *labels), tuple(map(tuple, children_of(heads))))

    def complete(self, node: int, config: Configuration) -> bool:
        """Whether every gold dependent of *node* is attached in *config* (so *node* may be reduced).

        Oracles ask at nearly every step: ``map`` and ``in`` run in C, where ``all()`` over a generator would not.
        """
        return NO_HEAD not in map(config.heads.__getitem__, self.children[node])


class TransitionSystem(Grammar):
    """Abstract base of dependency transition systems (see the module docstring).

    Args:
        root_label: the relation of the arc from the root (UD: ``root``); no other arc may carry
            it. ``null`` lets the root arc take any relation.
        single_root: exactly one word attaches to the root, as UD requires (a gold tree with more
            is refused); ``false`` allows several. How a system keeps to it is its own: arc-standard
            and arc-hybrid allow the root arc only as the last action (:meth:`root_attachment`);
            arc-eager (the example plugin) makes it as soon as the root's dependent is the buffer
            front, then offers no second root arc and never pops that dependent while words are
            left, so that every later word can still hang below it.
        labeled_shift_words: the labeled-SHIFT multitask (Stack-Transformer paper): shifting one
            of the *K* most frequent training words emits ``SHIFT:<word>`` instead of ``SHIFT``,
            so the decoder also learns to name the next word; other words shift with plain
            ``SHIFT``. Trees and scores are unchanged. Every system gets it without code of its
            own: its ``valid`` allows the kind ``SHIFT`` (never passing ``shift_symbol=``: the
            configuration puts in the buffer front's symbol), its ``transition`` receives kind
            ``SHIFT`` either way, and its ``gold_action`` returns plain ``SHIFT``. The words are counted by :meth:`fit`,
            which ``toolkit train`` calls on the training data before building the vocabulary
            and records as ``grammar.shift_words`` in the run's config, so an archive rebuilds
            the same grammar. ``0`` (the default) turns it off.
        shift_words: the decorated words themselves (exact forms), instead of counting them;
            what training records. Given, it wins over *labeled_shift_words*.
        tags: word fields of the tree the parser predicts beside it (``["upos", "feats"]``): the
            model puts a classifier for each on its encoder, trained with the actions (as UDPipe 2
            and spaCy's morphologizer share their encoder), and the trees it predicts carry them. A
            field's tags are what the training trees give, each string one class (a FEATS string
            such as ``Gender=Masc|Number=Sing`` included), learned by :meth:`fit`.
        tag_sets: the tags of each field, as training records them.
    """

    default_predictor = "dependency"
    result_kind = "dependency trees"
    state_features = frozenset({"stack", "buffer"})
    configuration_class: type[Configuration] = Configuration  # a subclass with more fields, for a system that needs them
    # The name of this class's rules in tensor form, where the decoding layer has them (toolkit.decoding.tensor_configurations:
    # "stack_arcs", "arc_hybrid", "arc_swap"); the grammar itself stays pure Python
    tensor_rules: str | None = None

    def __init__(
        self,
        root_label: str | None = "root",
        single_root: bool = True,
        labeled_shift_words: int = 0,
        shift_words: list[str] | None = None,
        tags: Sequence[str] = (),
        tag_sets: dict[str, list[str]] | None = None,
    ) -> None:
        if unknown := [field for field in tags if field not in TAG_FIELDS]:
            raise ConfigurationError(f"unknown word fields {unknown}; a tree's tags are {list(TAG_FIELDS)}", key="tags")
        if tag_sets is not None and set(tag_sets) != set(tags):
            raise ConfigurationError(f"has the tags of {sorted(tag_sets)} but the grammar's tags are {sorted(tags)}", key="tag_sets")
        if root_label is not None and (not root_label or ":" in root_label):
            raise ConfigurationError(f"must be a relation without ':', got {root_label!r}", key="root_label")
        if labeled_shift_words < 0:
            raise ConfigurationError(f"must be >= 0, got {labeled_shift_words}", key="labeled_shift_words")
        for word in shift_words or ():
            if not word or any(character.isspace() for character in word):
                raise ConfigurationError(f"must be non-empty words without whitespace, got {word!r}", key="shift_words")
        self.root_label, self.single_root = root_label, single_root
        self.labeled_shift_words = labeled_shift_words
        self.shift_words: frozenset[str] | None = None if shift_words is None else frozenset(shift_words)
        self.tags = tuple(tags)
        self.tag_sets: dict[str, tuple[str, ...]] = {field: tuple(values) for field, values in (tag_sets or {}).items()}

    # ------------------------------------------------------------ the system's rules

    @abstractmethod
    def valid(self, config: Configuration) -> ValidActions:
        """The actions *config* allows; never empty for a configuration that is not final."""

    @abstractmethod
    def transition(self, config: Configuration, kind: str, label: str | None) -> Configuration:
        """The configuration after the (already validated) action *kind* with relation *label*."""

    @abstractmethod
    def gold_action(self, config: Configuration, gold: GoldTree) -> str | None:
        """The static oracle's action in *config* towards *gold*, or ``None`` if it cannot go on."""

    def action_costs(self, config: Configuration, gold: GoldTree) -> list[ActionCost]:
        """The dynamic oracle: each valid action kind's cost in *config* towards *gold*, unlabeled (the
        relation's share is added by :class:`~transition_systems.dynamic_oracle.DynamicOracle`).
        A system without one leaves this alone and trains on its static oracle.
        """
        raise NotImplementedError(f"{self.name} has no dynamic oracle")

    @property
    def has_dynamic_oracle(self) -> bool:
        return type(self).action_costs is not TransitionSystem.action_costs

    def dynamic_oracle(self, example: Example) -> DynamicOracle | None:
        """*example*'s dynamic oracle, for training with exploration; ``None`` for a system without one."""
        if not self.has_dynamic_oracle:
            return None
        return DynamicOracle(self, self.gold_tree(*self.oracle_tree(example)), self.derivation_state(example))

    def root_attachment(self, buffer_empty: bool) -> bool:
        """Whether a right arc from the root is valid now, for a system whose root arc is its last action
        (arc-standard, arc-hybrid): with a single root only to finish, when the buffer is empty; without
        it, always. A system that makes the root arc earlier (arc-eager) decides in ``valid`` instead.
        """
        return buffer_empty or not self.single_root

    # ------------------------------------------------------------ the Grammar interface

    def initial_state(self, example: Example) -> Configuration:
        return self.configuration_class.start(self, len(example.tokens), self.shift_symbols(example.tokens))

    def max_actions(self, words: int) -> int:
        """The most actions a parse of *words* words takes (a shift and an attachment each, by default):
        how the dependency predictor sizes the longest sentence that fits the search's ``max_steps``.
        A system whose parses are longer (Covington's n(n + 1)/2 + n) says so here.
        """
        return 2 * words

    def shift_symbols(self, tokens: Sequence[str]) -> tuple[str, ...]:
        """Per node (the root first), the symbol that shifts it; empty without labeled SHIFT."""
        if self.shift_words is None:
            if self.labeled_shift_words:
                raise ConfigurationError(
                    "grammar.labeled_shift_words needs the training words: `toolkit train` counts them (grammar.fit) "
                    "and records grammar.shift_words; elsewhere give grammar.shift_words"
                )
            return ()
        words = self.shift_words
        return ("",) + tuple(labeled_shift(token) if token in words else SHIFT for token in tokens)

    def fit(self, examples: Sequence[Example]) -> dict[str, Any]:
        """Count the labeled-SHIFT words in the training *examples* (the *K* most frequent forms), and
        the tags of each of :attr:`tags`' fields (most frequent first).

        Returns the config entries (under ``grammar``) that rebuild the fitted grammar without the
        data, ``{"shift_words": [...], "tag_sets": {...}}``; nothing when there is nothing to learn.
        """
        fitted: dict[str, Any] = {}
        if self.labeled_shift_words and self.shift_words is None:
            counts = Counter(token for example in examples for token in example.tokens if not any(c.isspace() for c in token))
            words = [word for word, _ in counts.most_common(self.labeled_shift_words)]
            self.shift_words = frozenset(words)
            fitted["shift_words"] = words
        if self.tags and not self.tag_sets:
            self.tag_sets = {
                field: tuple(tag for tag, _ in Counter(tag for example in examples for tag in self.word_tags(example, field)).most_common())
                for field in self.tags
            }
            fitted["tag_sets"] = {field: list(values) for field, values in self.tag_sets.items()}
        return fitted

    def word_tags(self, example: Example, field: str) -> tuple[str, ...]:
        """*example*'s gold tags of *field*, one per word; a :class:`DataError` if its tree has none."""
        tags = getattr(self.target(example), field)
        if tags is None or len(tags) != len(example.tokens):
            self._refuse(example, f"grammar.tags names {field!r}, which this tree does not give for each word")
        return tags

    def with_tags(self, tree: DependencyTree, tags: dict[str, Sequence[str]]) -> DependencyTree:
        """*tree* carrying the predicted *tags* (``{"upos": [...], ...}``)."""
        return replace(tree, **{field: tuple(values) for field, values in tags.items()})

    def oracle(self, example: Example) -> list[str]:
        """The static oracle's actions for *example*'s tree (after :meth:`oracle_tree`)."""
        return self.walk(example)[0]

    def derive(self, example: Example) -> Derivation:
        """The oracle's actions and the features before each, from the oracle's own walk.

        The walk applies every action through the state machine (``Configuration.apply`` refuses
        an action the configuration does not allow) and ends in a final configuration, so it
        proves what :meth:`Grammar.derive`'s second replay would, at half the cost.
        """
        actions, configurations = self.walk(example)
        return Derivation(actions, [config.features() for config in configurations])

    def walk(self, example: Example) -> tuple[list[str], list[Configuration]]:
        """The oracle's actions, and the configuration each is taken in."""
        gold = self.gold_tree(*self.oracle_tree(example))
        config = self.derivation_state(example)
        actions: list[str] = []
        configurations: list[Configuration] = []
        limit = max(self.max_actions(len(example.tokens)), 2 * len(example.tokens) + len(example.tokens) ** 2)  # arc-swap's bound
        while not config.is_final():
            action = self.gold_action(config, gold)
            if action == SHIFT and config.shift_symbols:
                action = config.shift_symbols[config.buffer[0]]
            if action is None or len(actions) > limit:
                self._refuse(example, f"the {self.name} oracle is stuck with stack {config.stack} and buffer {config.buffer[:5]}")
            configurations.append(config)
            try:
                config = config.apply(action)
            except ValueError as error:  # a gold arc the system forbids (e.g. a relation reserved for the root)
                self._refuse(example, f"the {self.name} oracle's {error}")
            actions.append(action)
        return actions, configurations

    def decoded(self, tree: DependencyTree) -> DependencyTree:
        """The tree a finished parse stands for (its configuration's arcs as they are, by default)."""
        return tree

    def oracle_tree(self, example: Example) -> tuple[tuple[int, ...], tuple[str, ...]]:
        """The heads and relations the oracle derives: the target's, once checked."""
        tree = self.target(example)
        self._check_roots(example, tree)
        return tree.heads, tree.deprels

    def gold_tree(self, heads: tuple[int, ...], labels: tuple[str, ...]) -> GoldTree:
        """What :meth:`gold_action` consults; a system whose oracle needs more (arc-swap's order) extends it."""
        return GoldTree.of(heads, labels)

    def gold(self, example: Example) -> DependencyTree:
        """The target tree without tags: what ``result()`` equals after an exact round trip."""
        return self.target(example).without_upos()

    def data_report(self, examples: Sequence[Example]) -> dict[str, int]:
        """How many trees are non-projective (those a projective system skips or changes); labeled-SHIFT coverage."""
        return {"non_projective_trees": sum(not is_projective(self.target(example).heads) for example in examples), **self.shift_report(examples)}

    def shift_report(self, examples: Sequence[Example]) -> dict[str, int]:
        """With labeled SHIFT: how many words are decorated, and how many tokens of *examples* shift with a word."""
        if not self.shift_words:
            return {}
        return {
            "shift_words": len(self.shift_words),
            "labeled_shifts": sum(token in self.shift_words for example in examples for token in example.tokens),
        }

    def oracle_metrics(self) -> list[dict[str, Any]]:
        """UAS and LAS of the oracle's trees against the targets (punctuation included)."""
        return [{"type": "attachment_scores"}]

    # ------------------------------------------------------------ helpers

    @property
    def name(self) -> str:
        return type(self).__name__

    def target(self, example: Example) -> DependencyTree:
        """*example*'s gold tree; a :class:`DataError` if it has none or it does not fit the sentence."""
        tree = example.target
        if not isinstance(tree, DependencyTree):
            self._refuse(example, f"{self.name} needs a dependency tree as target (the 'conllu' reader), got {type(tree).__name__}")
        if len(tree) != len(example.tokens):
            self._refuse(example, f"the tree has {len(tree)} words but the sentence has {len(example.tokens)} tokens")
        return tree

    def _check_roots(self, example: Example, tree: DependencyTree) -> None:
        roots = [word for word, head in enumerate(tree.heads, start=1) if head == 0]
        if self.single_root and len(roots) != min(len(tree), 1):
            self._refuse(example, f"{len(roots)} words attach to the root (words {roots}); set grammar.single_root to false to allow that")
        if self.root_label is not None:
            for word, (head, label) in enumerate(zip(tree.heads, tree.deprels), start=1):
                if (head == 0) != (label == self.root_label):
                    self._refuse(
                        example,
                        f"word {word} has head {head} and relation {label!r}, but only the root's dependents take "
                        f"{self.root_label!r} (grammar.root_label; null allows any)",
                    )

    @staticmethod
    def _refuse(example: Example, why: str) -> NoReturn:
        raise DataError(why, example.meta.get("path"), example.meta.get("line")) from None


class ProjectiveTransitionSystem(TransitionSystem):
    """A system that only builds projective trees: what to do with non-projective training trees.

    Subclasses get all three treatments of non-projective trees, a plugin's system included (the
    example plugin's arc-eager is tested with each): the tree is changed before the oracle sees it
    (:meth:`oracle_tree`) and the parse after decoding (:meth:`decoded`), so ``valid``,
    ``transition`` and ``gold_action`` never know.

    Args:
        non_projective: ``"projectivize"`` (the default) trains on the tree made projective by lifting
            (:func:`~transition_systems.projectivity.projectivize`; the lifted words' heads are
            then wrong, which ``toolkit oracle`` shows as UAS below 1); ``"pseudo_projective"``
            lifts the same arcs but writes the original head's relation into the lifted word's
            (``nsubj^acl``), and the parser's results are lowered back (Nivre & Nilsson, 2005;
            :mod:`transition_systems.pseudo_projective`), so it predicts non-projective trees;
            ``"skip"`` leaves the example out of training (:meth:`skips`), and the oracle refuses it.
    """

    def __init__(
        self,
        non_projective: NonProjective = "projectivize",
        root_label: str | None = "root",
        single_root: bool = True,
        labeled_shift_words: int = 0,
        shift_words: list[str] | None = None,
        tags: Sequence[str] = (),
        tag_sets: dict[str, list[str]] | None = None,
    ) -> None:
        if non_projective not in ("projectivize", "pseudo_projective", "skip"):
            raise ConfigurationError(f"must be 'projectivize', 'pseudo_projective' or 'skip', got {non_projective!r}", key="non_projective")
        super().__init__(root_label, single_root, labeled_shift_words, shift_words, tags, tag_sets)
        self.non_projective = non_projective

    def oracle_tree(self, example: Example) -> tuple[tuple[int, ...], tuple[str, ...]]:
        heads, labels = super().oracle_tree(example)
        if is_projective(heads):
            return heads, labels
        if self.non_projective == "skip":
            self._refuse(example, f"a non-projective tree, which {self.name} cannot build (grammar.non_projective is 'skip')")
        if self.non_projective == "pseudo_projective":
            try:
                return lift(heads, labels)
            except ValueError as error:
                self._refuse(example, f"cannot encode this tree pseudo-projectively: {error}")
        return projectivize(heads)[0], labels

    def decoded(self, tree: DependencyTree) -> DependencyTree:
        if self.non_projective != "pseudo_projective":
            return tree
        heads, deprels = lower(tree.heads, tree.deprels)
        return DependencyTree(heads, deprels)

    def skips(self, example: Example) -> bool:
        return self.non_projective == "skip" and not is_projective(self.target(example).heads)

    def data_report(self, examples: Sequence[Example]) -> dict[str, int]:
        """Non-projective trees, and how many were skipped or how many arcs lifting moved."""
        non_projective = [example for example in examples if not is_projective(self.target(example).heads)]
        report = {"non_projective_trees": len(non_projective)}
        if self.non_projective == "skip":
            report["skipped_trees"] = len(non_projective)
        else:
            report["lifted_arcs"] = sum(projectivize(self.target(example).heads)[1] for example in non_projective)
        return {**report, **self.shift_report(examples)}
