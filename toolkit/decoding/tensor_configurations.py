"""A batch of parser configurations as tensors: a search's step loop with no Python state per sentence.

The transition systems stay pure Python; this module, in the decoding layer above them, holds the
tensor form of the shipped systems' rules, which a system names by its ``tensor_rules``.

A configuration is a few integer arrays (stack, buffer, heads, relations), and the shipped systems'
rules compare the tops of them. Kept as (N, ·) tensors on the model's device, a whole batch's
allowed masks, features and transitions are a handful of tensor operations per step, so a search
on a GPU sends nothing to the host inside its loop but whether to stop (issue 75: the Python step
loop parsed 201 sentences/s on an H200, against 394 on one CPU core).

Layout, per row: ``stack[:, :depth]`` holds nodes bottom first (the root, 0, at the bottom); the
buffer is kept as a stack too, its front last (``buffer[:, size - 1]``), so arc-swap's SWAP pushes a
word back onto it as SHIFT pops one; ``heads`` and ``relations`` are per node (``-1``: none yet).
Symbols are read through an :class:`ActionTable` made once per vocabulary.

:class:`~transition_systems.configuration.Configuration` stays the plugin API and the reference:
a system has a tensor form (its ``tensor_rules``) only where its rules are the ones written here
(:func:`tensor_configurations`), and tests hold both forms to the same allowed sets and trees, on treebank
sentences and on random action sequences.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any, Literal

import torch

from toolkit.data.dependency_tree import DependencyTree
from transition_systems.actions import LEFT, RIGHT, SHIFT, SWAP
from transition_systems.configuration import NO_HEAD, NO_LABEL, Configuration
from transition_systems.transition_system import TransitionSystem

KIND_CODES = {SHIFT: 0, LEFT: 1, RIGHT: 2, SWAP: 3}
NONE, DO_SHIFT, DO_LEFT, DO_RIGHT, DO_SWAP = -1, 0, 1, 2, 3
Rules = Literal["stack_arcs", "arc_hybrid", "arc_swap"]  # arc-standard's, arc-hybrid's, arc-swap's
UNBOUNDED = 2**62  # a swap budget no parse reaches
PER_ROW = ("stack", "depth", "buffer", "size", "heads", "relations", "shift_ids", "swaps", "swap_budget", "lengths")


def tensor_states(grammar: Any, examples: Sequence[Any], symbols: Sequence[str], device: Any) -> Any | None:
    """*examples*' initial states as one batch of tensors on *device* (*symbols*: the model's vocabulary): the grammar's own
    (:meth:`~toolkit.grammars.grammar.Grammar.tensor_states`, a plugin's), else a shipped transition system's; else ``None``.
    """
    own = grammar.tensor_states(examples, symbols, device)
    if own is not None or not isinstance(grammar, TransitionSystem):
        return own
    return tensor_configurations(grammar, [grammar.initial_state(example) for example in examples], symbols, device)


def tensor_configurations(
    system: TransitionSystem, configurations: Sequence[Configuration], symbols: Sequence[str], device: Any
) -> TensorConfigurations | None:
    """*configurations* of *system* as one batch of tensors, or ``None`` where its class's rules are not those of the class
    that named its ``tensor_rules`` (a subclass or plugin that changes ``valid`` or ``transition`` decodes by its own).
    """
    declarer = next((klass for klass in type(system).__mro__ if vars(klass).get("tensor_rules")), None)
    rules_of = ("valid", "transition", "root_attachment", "configuration_class", "swap_budget")
    if declarer is None or any(getattr(type(system), name, None) is not getattr(declarer, name, None) for name in rules_of):
        return None
    tables = system.__dict__.setdefault("_action_tables", {})
    key = (id(symbols), str(device))
    if key not in tables:  # once per vocabulary and device; the vocabulary is kept so its id stays its own
        tables[key] = (symbols, ActionTable.of(symbols, system.root_label, device))
    return TensorConfigurations.of(system, declarer.tensor_rules, tables[key][1], configurations)


@dataclass(frozen=True)
class ActionTable:
    """A vocabulary's symbols as the tensor rules read them, on one device: each symbol's kind code and relation.

    ``kinds[v]`` is ``-1`` for a symbol no rule makes (padding, the start symbol, a plugin's kind);
    a labeled ``SHIFT:word`` is a SHIFT, allowed only where it names the buffer's front.
    ``root[v]``: an arc carrying the grammar's root relation.
    """

    kinds: torch.Tensor  # (V,) long
    relations: torch.Tensor  # (V,) long: index into `names`, -1 for a move
    by_flags: torch.Tensor  # (16, V) bool: the arcs and SWAP allowed under each combination of FLAGS
    names: tuple[str, ...]
    ids: dict[str, int]

    @classmethod
    def of(cls, symbols: Sequence[str], root_label: str | None, device: torch.device | str = "cpu") -> ActionTable:
        names: dict[str, int] = {}
        kinds, relations = [], []
        for symbol in symbols:
            kind, colon, label = symbol.partition(":")
            arc = kind in (LEFT, RIGHT) and bool(label)
            kinds.append(KIND_CODES[kind] if kind == SHIFT or arc or (kind == SWAP and not colon) else NONE)
            relations.append(names.setdefault(label, len(names)) if arc else -1)
        kind, relation = torch.tensor(kinds, dtype=torch.long), torch.tensor(relations, dtype=torch.long)
        root = relation == (names.get(root_label, -2) if root_label is not None else -2)  # arcs carrying the root relation
        root_ok = root if root_label is not None else torch.ones_like(root)  # what an arc to the root may carry
        rows = []
        for code in range(16):  # which symbols the flags allow, as ValidActions.parse answers
            left, right, root_right, swap = (bool(code >> bit & 1) for bit in range(4))
            right_ok = root_ok if root_right else (~root if right else torch.zeros_like(root))
            rows.append(((kind == DO_LEFT) & left & ~root) | ((kind == DO_RIGHT) & right_ok) | ((kind == DO_SWAP) & swap))
        return cls(kind.to(device), relation.to(device), torch.stack(rows).to(device), tuple(names), {s: i for i, s in enumerate(symbols)})


@dataclass(frozen=True)
class TensorConfigurations:
    """N configurations as tensors (see the module docstring); a value, as a :class:`Configuration` is."""

    system: TransitionSystem
    rules: Rules
    table: ActionTable
    stack: torch.Tensor  # (N, n + 2) long, bottom first; every (N, ·) table's last column is put()'s spare
    depth: torch.Tensor  # (N,) long
    buffer: torch.Tensor  # (N, n + 1) long, front last
    size: torch.Tensor  # (N,) long: words in the buffer
    heads: torch.Tensor  # (N, n + 2) long, -1 unattached
    relations: torch.Tensor  # (N, n + 2) long, index into table.names, -1 none
    shift_ids: torch.Tensor  # (N, n + 1) long: the symbol id that shifts each node (-2: not in the vocabulary)
    swaps: torch.Tensor  # (N,) long
    swap_budget: torch.Tensor  # (N,) long
    lengths: torch.Tensor  # (N,) long: words per sentence

    @classmethod
    def of(cls, system: TransitionSystem, rules: Rules, table: ActionTable, configurations: Sequence[Configuration]) -> TensorConfigurations:
        """*configurations* (a system's Python ones: a search's initial states, an oracle's start) as one batch on the table's device."""
        width = max((len(c.heads) - 1 for c in configurations), default=0)
        relation_ids, plain = {name: i for i, name in enumerate(table.names)}, table.ids.get(SHIFT, -2)

        def padded(values: Sequence[int], fill: int, length: int) -> list[int]:
            return [*values, *[fill] * (length - len(values))]

        def shift_ids(c: Configuration) -> list[int]:
            symbols = c.shift_symbols[1:] if c.shift_symbols else [SHIFT] * (len(c.heads) - 1)
            return padded([-2, *(plain if s == SHIFT else table.ids.get(s, -2) for s in symbols)], -2, width + 1)

        def tensor(rows: list) -> torch.Tensor:
            return torch.tensor(rows, dtype=torch.long).view(len(configurations), -1).to(table.kinds.device)

        budgets = [getattr(c, "swap_budget", None) for c in configurations]
        return cls(
            system,
            rules,
            table,
            stack=tensor([padded(c.stack, 0, width + 2) for c in configurations]),
            depth=tensor([len(c.stack) for c in configurations]).view(-1),
            buffer=tensor([padded(c.buffer[::-1], 0, width + 1) for c in configurations]),
            size=tensor([len(c.buffer) for c in configurations]).view(-1),
            heads=tensor([padded(c.heads, NO_HEAD, width + 2) for c in configurations]),
            relations=tensor([padded([relation_ids.get(label, -1) for label in c.labels], -1, width + 2) for c in configurations]),
            shift_ids=tensor([shift_ids(c) for c in configurations]),
            swaps=tensor([getattr(c, "swaps", 0) for c in configurations]).view(-1),
            swap_budget=tensor([UNBOUNDED if b is None else b for b in budgets]).view(-1),
            lengths=tensor([len(c.heads) - 1 for c in configurations]).view(-1),
        )

    def __len__(self) -> int:
        return len(self.depth)

    # ------------------------------------------------------------ reading the tops

    def top(self, below: int) -> torch.Tensor:
        """(N,) the stack node *below* places under the top (``s0``, ``s1``), ``-1`` where the stack is not that deep."""
        index = self.depth - 1 - below
        return torch.where(index >= 0, self.stack.gather(1, index.clamp(min=0)[:, None]).squeeze(1), -1)

    def front(self) -> torch.Tensor:
        """(N,) the buffer's front word, ``-1`` where the buffer is empty."""
        return torch.where(self.size > 0, self.buffer.gather(1, (self.size - 1).clamp(min=0)[:, None]).squeeze(1), -1)

    def finished(self) -> torch.Tensor:
        """(N,) bool: the buffer empty and only the root on the stack."""
        return (self.size == 0) & (self.depth == 1)

    # ------------------------------------------------------------ what a row allows

    def flags(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Per row, whether it may SHIFT (N,), and which other kinds it allows as a code into ``ActionTable.by_flags`` (N,):
        word-to-word LEFT (1), word-to-word RIGHT (2), RIGHT to the root (4), SWAP (8).
        """
        buffered, depth = self.size > 0, self.depth
        to_root = (depth == 2) & ~buffered if self.system.single_root else depth == 2
        deep = depth >= 3
        left = buffered & (depth >= 2) if self.rules == "arc_hybrid" else deep
        code = left.long() + 2 * deep.long() + 4 * to_root.long()
        if self.rules == "arc_swap":
            code = code + 8 * (deep & (self.top(1) < self.top(0)) & (self.swaps < self.swap_budget)).long()
        return buffered, code

    def allowed_mask(self) -> torch.Tensor:
        """(N, V) bool: the symbols each row allows, as ``Configuration.allowed()`` answers; a finished row allows none.
        Two gathers and a scatter: the arcs from a table of the 16 answers, then each row's one SHIFT symbol.
        """
        shift, code = self.flags()
        mask = self.table.by_flags[code]
        shift_id = self.shift_ids.gather(1, self.front().clamp(min=0)[:, None])  # (N, 1): the buffer front's SHIFT symbol
        column = shift_id.clamp(min=0)  # a symbol the vocabulary lacks (-2) writes nothing new into column 0
        return mask.scatter(1, column, mask.gather(1, column) | (shift[:, None] & (shift_id >= 0)))

    # ------------------------------------------------------------ features

    def positions(self, stack: int | None = None, buffer: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """The source positions (0-based, the root left out) on the stack and in the buffer, nearest first, ``-1``
        padded: (N, *stack*) and (N, *buffer*) (default: all). What ``Configuration.features()`` lists.
        """
        return nearest_first(self.stack, self.depth - 1, stack, lowest=1), nearest_first(self.buffer, self.size - 1, buffer, lowest=0)

    # ------------------------------------------------------------ moving on

    def apply(self, symbols: torch.Tensor, moving: torch.Tensor | None = None) -> TensorConfigurations:
        """The configurations after *symbols* (N,) vocabulary ids, each allowed in its row; rows not *moving*
        (a finished row, or one the search holds) and rows whose symbol no rule makes stay as they are.
        """
        kind = self.table.kinds[symbols]
        if moving is not None:
            kind = torch.where(moving, kind, NONE)
        relation = self.table.relations[symbols]
        s0, s1, b0 = self.top(0), self.top(1), self.front()
        shift, left, right, swap = (kind == code for code in (DO_SHIFT, DO_LEFT, DO_RIGHT, DO_SWAP))
        if self.rules == "arc_hybrid":  # LEFT: b0 takes s0
            head, dependent, overwrite = torch.where(left, b0, s1), s0, swap
        else:  # LEFT: s0 takes s1, and takes its place
            head, dependent, overwrite = torch.where(left, s0, s1), torch.where(left, s1, s0), left | swap
        attach = left | right
        heads = put(self.heads, dependent, head, attach)
        relations = put(self.relations, dependent, relation, attach)
        # the stack: SHIFT pushes b0; arc-standard's LEFT and SWAP put s0 where s1 was; every other kind pops s0
        stack = put(put(self.stack, self.depth, b0, shift), self.depth - 2, s0, overwrite)
        depth = self.depth + shift.long() - (attach | swap).long()
        buffer = put(self.buffer, self.size, s1, swap)
        size = self.size - shift.long() + swap.long()
        return replace(self, stack=stack, depth=depth, buffer=buffer, size=size, heads=heads, relations=relations, swaps=self.swaps + swap.long())

    def select(self, index: torch.Tensor) -> TensorConfigurations:
        """The rows at *index*, in that order (a beam's reorder, or the rows still decoding)."""
        return replace(self, **{name: getattr(self, name)[index] for name in PER_ROW})

    def with_rows(self, index: torch.Tensor, other: TensorConfigurations) -> TensorConfigurations:
        """These configurations with the rows at *index* replaced by *other*'s, in order (*other* from :meth:`select`)."""
        return replace(self, **{name: getattr(self, name).index_copy(0, index, getattr(other, name)) for name in PER_ROW})

    # ------------------------------------------------------------ results

    def rows(self) -> list[ConfigurationRow]:
        """Each row as a search returns it (``result()``, ``is_final()``): a beam reads the trees of few of them."""
        return [ConfigurationRow(self, row) for row in range(len(self))]

    @cached_property
    def on_host(self) -> tuple[list[bool], list[int]]:
        """Whether each row is final, and its sentence's length: read to the host once for the batch."""
        return self.finished().tolist(), self.lengths.tolist()

    def tree(self, row: int) -> DependencyTree:
        """Row *row*'s tree, as ``Configuration.result()`` reads it."""
        n = self.on_host[1][row]
        return self.tree_of(self.heads[row, 1 : n + 1].tolist(), self.relations[row, 1 : n + 1].tolist())

    def tree_of(self, heads: list[int], relations: list[int]) -> DependencyTree:
        names = self.table.names
        return self.system.decoded(DependencyTree(tuple(max(h, 0) for h in heads), tuple(names[r] if r >= 0 else NO_LABEL for r in relations)))

    def results(self) -> list[DependencyTree]:
        """Every row's tree: one transfer to the host for the batch."""
        heads, relations, lengths = self.heads.tolist(), self.relations.tolist(), self.lengths.tolist()
        return [self.tree_of(h[1 : n + 1], r[1 : n + 1]) for h, r, n in zip(heads, relations, lengths)]


@dataclass(frozen=True)
class ConfigurationRow:
    """Row *row* of a batch of tensor configurations, as a finished search gives it: its tree and whether it is final."""

    batch: TensorConfigurations
    row: int

    def result(self) -> DependencyTree:
        return self.batch.tree(self.row)

    def is_final(self) -> bool:
        return self.batch.on_host[0][self.row]


def nearest_first(values: torch.Tensor, top: torch.Tensor, width: int | None, lowest: int) -> torch.Tensor:
    """Source positions (node - 1) of ``values[i, top[i]]``, ``values[i, top[i] - 1]``, ... down to column *lowest*, ``-1``
    past it: (N, *width*) (default: all columns).
    """
    width = values.size(1) - 1 if width is None else width  # the last column is put()'s spare
    below = top[:, None] - torch.arange(width, device=top.device)
    return torch.where(below >= lowest, values.gather(1, below.clamp(0, values.size(1) - 1)) - 1, -1)


def put(values: torch.Tensor, index: torch.Tensor, new: torch.Tensor, where: torch.Tensor) -> torch.Tensor:
    """*values* (N, L) with ``values[i, index[i]] = new[i]`` in the rows *where* holds; the other rows write their
    spare last column, which nothing reads (two operations, where a gather of the old values would take four).
    """
    return values.scatter(1, torch.where(where, index, values.size(1) - 1)[:, None], new[:, None])
