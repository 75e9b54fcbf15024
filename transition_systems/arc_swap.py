"""Arc-swap (Nivre, 2009): arc-standard plus SWAP, which reorders words and so builds any tree.

- ``SHIFT``, ``LEFT-ARC:r``, ``RIGHT-ARC:r``: as in arc-standard.
- ``SWAP``: move ``s1`` back to the front of the buffer, valid when ``0 < s1 < s0`` in the
  sentence, so no pair is swapped back and every run ends (in O(n^2) actions).

A parse has a swap budget, learned by ``fit``: the most swaps per word any training tree's oracle
needed (``max_swaps_per_word``, recorded in the config), so a parse of *n* words takes at most
``2 (n + ceil(rate * n))`` actions (a swapped word is shifted again), and the predictor's longest
sentence for the search's ``max_steps`` is one whose parse surely ends. (Unfitted, as in archives
made before the budget, SWAP is unbounded: ``max_actions`` counts ``2n``, and a search without a
fixed ``max_steps`` gives each input the ``2n + n^2`` steps that surely end it.)

The static oracle sorts the words into the tree's *projective order* (in-order traversal, in
which the tree is projective) and parses that order arc-standard style: an arc when the gold tree
has it and the dependent is complete, else SWAP when ``s0`` comes before ``s1`` in that order,
else SHIFT. The *eager* oracle swaps as soon as it may (Nivre, 2009); the *lazy* one waits while
``s0`` and the buffer's front belong to the same maximal projective component, i.e. while the
words can still be joined without reordering (Nivre, Kuhlmann & Hall, 2009), which needs fewer swaps.
"""

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from toolkit.data.example import Example
from toolkit.errors import ConfigurationError, DataError
from toolkit.grammars.grammar import Grammar
from transition_systems.actions import SHIFT, SWAP, ValidActions
from transition_systems.arc_standard import stack_arc_gold_action, stack_arc_transition, stack_arc_valid
from transition_systems.configuration import Configuration
from transition_systems.projectivity import projective_order
from transition_systems.transition_system import GoldTree, TransitionSystem


def projective_components(heads: Sequence[int]) -> tuple[int, ...]:
    """``component[node]``: the head of *node*'s maximal projective component (0 for the root).

    The components are the subtrees left on the stack when arc-standard parses the sentence in its
    own order, adding a gold arc whenever the dependent is complete and shifting otherwise.
    """
    parent = (-1, *heads)
    pending = [0] * (len(heads) + 1)
    for head in heads:
        pending[head] += 1
    built: list[list[int]] = [[] for _ in range(len(heads) + 1)]
    stack = [0]
    for word in range(1, len(heads) + 1):
        stack.append(word)
        while len(stack) >= 2:
            s1, s0 = stack[-2], stack[-1]
            if s1 and parent[s1] == s0 and not pending[s1]:
                head, dependent = s0, stack.pop(-2)
            elif parent[s0] == s1 and not pending[s0]:
                head, dependent = s1, stack.pop()
            else:
                break
            built[head].append(dependent)
            pending[head] -= 1
    component = [0] * (len(heads) + 1)
    for top in stack:
        todo = [top]
        while todo:
            node = todo.pop()
            component[node] = top
            todo.extend(built[node])
    return tuple(component)


@dataclass(frozen=True)
class SwapGoldTree(GoldTree):
    """The gold tree with each node's position in the projective order and its projective component."""

    position: tuple[int, ...] = ()
    component: tuple[int, ...] = ()


@dataclass(frozen=True)
class SwapConfiguration(Configuration):
    """A configuration that counts its swaps against the parse's budget (``None``: unbounded)."""

    swaps: int = 0
    swap_budget: int | None = None


@Grammar.register("arc_swap")
class ArcSwap(TransitionSystem):
    """Arc-standard with SWAP (see the module docstring). Registered as ``"arc_swap"``.

    Args:
        swap_oracle: ``"lazy"`` (default, fewer swaps) or ``"eager"``.
        max_swaps_per_word: the swap budget of a parse of *n* words is ``ceil(max_swaps_per_word * n)``;
            ``fit`` sets it to what the training trees needed (0.5 on EWT with the lazy oracle, 1.62
            with the eager one). ``None``: unbounded.
        root_label, single_root, labeled_shift_words, shift_words, tags, tag_sets: as for every :class:`TransitionSystem`.
    """

    def __init__(
        self,
        swap_oracle: Literal["lazy", "eager"] = "lazy",
        max_swaps_per_word: float | None = None,
        root_label: str | None = "root",
        single_root: bool = True,
        labeled_shift_words: int = 0,
        shift_words: list[str] | None = None,
        tags: Sequence[str] = (),
        tag_sets: dict[str, list[str]] | None = None,
    ) -> None:
        if swap_oracle not in ("lazy", "eager"):
            raise ConfigurationError(f"must be 'lazy' or 'eager', got {swap_oracle!r}", key="swap_oracle")
        if max_swaps_per_word is not None and not max_swaps_per_word >= 0:
            raise ConfigurationError(f"must be at least 0 (or null: unbounded), got {max_swaps_per_word}", key="max_swaps_per_word")
        super().__init__(root_label, single_root, labeled_shift_words, shift_words, tags, tag_sets)
        self.swap_oracle, self.max_swaps_per_word = swap_oracle, max_swaps_per_word

    configuration_class = SwapConfiguration
    tensor_rules = "arc_swap"
    state_features = frozenset({"stack", "buffer"})  # declared again: this class makes its own states

    def swap_budget(self, words: int) -> int | None:
        # less 0.01: fit rounds the rate up to 6 decimals, which must not add a swap (below 10,000 words)
        return None if self.max_swaps_per_word is None else math.ceil(self.max_swaps_per_word * words - 0.01)

    def max_actions(self, words: int) -> int:
        return 2 * (words + (self.swap_budget(words) or 0))  # a swapped word is shifted again

    def max_steps(self, example: Example) -> int:
        """Unfitted, SWAP is unbounded: a run still ends within ``2n + n^2`` actions (no pair swaps back)."""
        words = len(example.tokens)
        return self.max_actions(words) if self.max_swaps_per_word is not None else 2 * words + words**2

    def initial_state(self, example: Example) -> SwapConfiguration:
        """Decoding's start: with the sentence's swap budget."""
        return self.derivation_state(example).evolve(swap_budget=self.swap_budget(len(example.tokens)))

    def derivation_state(self, example: Example) -> SwapConfiguration:
        """The oracle's start: unbounded, so a held-out tree that needs more swaps than training's keeps its loss."""
        return super().initial_state(example)

    def fit(self, examples: Sequence[Example]) -> dict[str, Any]:
        """The labeled-SHIFT words, and the swap budget: the most swaps per word a training oracle takes."""
        fitted = super().fit(examples)
        if self.max_swaps_per_word is None:
            rate = max((swaps / words for swaps, words in self.oracle_swaps(examples)), default=0.0)
            self.max_swaps_per_word = fitted["max_swaps_per_word"] = math.ceil(rate * 1e6) / 1e6  # readable, never below
        return fitted

    def oracle_swaps(self, examples: Sequence[Example]) -> Iterator[tuple[int, int]]:
        """(SWAPs, words) of the oracle of each tree in *examples*; broken trees are reported where data is derived."""
        for example in examples:
            if example.tokens and example.target is not None:
                try:
                    yield self.oracle(example).count(SWAP), len(example.tokens)
                except DataError:
                    continue

    def data_report(self, examples: Sequence[Example]) -> dict[str, Any]:
        """The counts of every transition system, and the swaps the oracle makes: in all, and the most per word
        (the ``max_swaps_per_word`` that ``fit`` would learn from *examples*), beside the grammar's own budget.
        """
        counts = list(self.oracle_swaps(examples))
        report = {
            **super().data_report(examples),
            "swaps": sum(swaps for swaps, _ in counts),
            "max_swaps_per_word": round(max((swaps / words for swaps, words in counts), default=0.0), 6),
        }
        return report | ({"swap_budget_per_word": self.max_swaps_per_word} if self.max_swaps_per_word is not None else {})

    def valid(self, config: SwapConfiguration) -> ValidActions:  # type: ignore[override]
        valid = stack_arc_valid(self, config)
        stack = config.stack
        if len(stack) >= 3 and stack[-2] < stack[-1] and (config.swap_budget is None or config.swaps < config.swap_budget):
            return valid.but(moves=valid.moves | {SWAP})
        return valid

    def transition(self, config: SwapConfiguration, kind: str, label: str | None) -> Configuration:  # type: ignore[override]
        if kind == SWAP:
            stack = config.stack
            return config.move(stack[:-2] + stack[-1:], stack[-2:-1] + config.buffer, swaps=config.swaps + 1)
        return stack_arc_transition(config, kind, label)

    def gold_tree(self, heads: tuple[int, ...], labels: tuple[str, ...]) -> SwapGoldTree:
        base = GoldTree.of(heads, labels)
        position = [0] * (len(heads) + 1)
        for rank, node in enumerate(projective_order(heads)):
            position[node] = rank
        component = projective_components(heads) if self.swap_oracle == "lazy" else ()
        return SwapGoldTree(base.heads, base.labels, base.children, tuple(position), component)

    def gold_action(self, config: Configuration, gold: SwapGoldTree) -> str | None:
        if action := stack_arc_gold_action(config, gold):
            return action
        stack, buffer = config.stack, config.buffer
        out_of_order = len(stack) >= 3 and gold.position[stack[-1]] < gold.position[stack[-2]]
        if out_of_order and (self.swap_oracle == "eager" or not buffer or gold.component[stack[-1]] != gold.component[buffer[0]]):
            return SWAP
        return SHIFT if buffer else None
