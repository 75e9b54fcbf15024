"""Arc-hybrid's dynamic oracle on tensor configurations: a whole batch's least-cost actions in a few tensor operations,
so that training with exploration walks the model's own paths without a Python state per sentence (issue 75).

The costs are :meth:`~transition_systems.arc_hybrid.ArcHybrid.action_costs`' (see :mod:`transition_systems.arc_hybrid`),
counted over membership masks of the stack and the buffer; relations as :class:`~transition_systems.dynamic_oracle.DynamicOracle`
pins them: an arc that gives a word its gold head is optimal with the gold relation only. Tests hold the masks to the
Python oracle's on random walks over real trees.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import torch

from toolkit.decoding.tensor_configurations import DO_LEFT, DO_RIGHT, DO_SHIFT, TensorConfigurations
from transition_systems.configuration import NO_HEAD
from transition_systems.dynamic_oracle import DynamicOracle

NEVER = 2**31  # the cost of a kind a row does not allow


@dataclass(frozen=True)
class TensorDynamicOracle:
    """Each row's gold tree, as tensors the size of its configurations' ``heads``: head and relation per node."""

    heads: torch.Tensor  # (N, n + 2) long, -1 for the root and past the words
    relations: torch.Tensor  # (N, n + 2) long: index into the action table's relations, -3 where it has none

    @classmethod
    def of(cls, oracles: Sequence[DynamicOracle], configurations: TensorConfigurations) -> TensorDynamicOracle | None:
        """The oracles' gold trees beside their start *configurations*; ``None`` unless the system is arc-hybrid as shipped."""
        from transition_systems.arc_hybrid import ArcHybrid

        system = configurations.system
        if configurations.rules != "arc_hybrid" or type(system).action_costs is not ArcHybrid.action_costs:
            return None
        width, names = configurations.heads.size(1), {name: i for i, name in enumerate(configurations.table.names)}
        heads = [[*oracle.gold.heads, *[NO_HEAD] * (width - len(oracle.gold.heads))] for oracle in oracles]
        relations = [[names.get(label, -3) for label in oracle.gold.labels] + [-3] * (width - len(oracle.gold.labels)) for oracle in oracles]
        device = configurations.depth.device
        return cls(torch.tensor(heads, dtype=torch.long, device=device), torch.tensor(relations, dtype=torch.long, device=device))

    def select(self, index: torch.Tensor) -> TensorDynamicOracle:
        return replace(self, heads=self.heads[index], relations=self.relations[index])

    def optimal_mask(self, configurations: TensorConfigurations, allowed: torch.Tensor) -> torch.Tensor:
        """(N, V) bool: the allowed symbols of least cost in each row, as ``DynamicOracle.optimal`` answers."""
        c, gold, table = configurations, self.heads, configurations.table
        s0, s1, b0 = c.top(0), c.top(1), c.front()
        in_stack, in_buffer = members(c.stack, c.depth, gold.size(1)), members(c.buffer, c.size, gold.size(1))
        at = lambda values, nodes: values.gather(1, nodes.clamp(min=0)[:, None]).squeeze(1)  # noqa: E731
        head_of_s0, head_of_b0 = at(gold, s0), at(gold, b0)
        below_s0 = in_stack.scatter(1, s0.clamp(min=0)[:, None], False)
        shift_cost = ((gold == b0[:, None]) & in_stack).sum(1) + (at(below_s0, head_of_b0) & (head_of_b0 >= 0))
        orphans = ((gold == s0[:, None]) & in_buffer).sum(1)
        head_waits = at(in_buffer, head_of_s0) & (head_of_s0 >= 0)
        left_cost = orphans + ((head_of_s0 == s1) | (head_waits & (head_of_s0 != b0)))
        right_cost = orphans + head_waits
        shift, code = c.flags()
        costs = torch.stack(
            [
                torch.where(shift, shift_cost, NEVER),
                torch.where(code & 1 > 0, left_cost, NEVER),
                torch.where(code & 6 > 0, right_cost, NEVER),
            ]
        )
        best = costs == costs.min(dim=0).values  # (3, N)
        relation = at(self.relations, s0)[:, None] == table.relations[None, :]  # the gold relation of s0's arc
        kinds = table.kinds[None, :]
        return allowed & (
            ((kinds == DO_SHIFT) & best[0][:, None])
            | ((kinds == DO_LEFT) & best[1][:, None] & ((head_of_s0 != b0)[:, None] | relation))
            | ((kinds == DO_RIGHT) & best[2][:, None] & ((head_of_s0 != s1)[:, None] | relation))
        )


def members(values: torch.Tensor, count: torch.Tensor, width: int) -> torch.Tensor:
    """(N, *width*) bool: the nodes in ``values[i, :count[i]]`` (a stack, or the buffer)."""
    held = torch.arange(values.size(1), device=values.device)[None, :] < count[:, None]
    nodes = torch.where(held, values, width - 1)  # the spare column takes the rest, as False
    return torch.zeros(values.size(0), width, dtype=torch.bool, device=values.device).scatter(1, nodes, held)
