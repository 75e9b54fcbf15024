"""Data-parallel training under ``torchrun``, with PyTorch's own DistributedDataParallel.

``torchrun --nproc_per_node N -m toolkit.cli train CONFIG -s DIR`` starts N processes and sets
``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK`` and the rendezvous address; :func:`init_distributed`
reads them and joins the process group: NCCL when training on GPUs (each process on
``cuda:LOCAL_RANK``), gloo on CPUs. Without them everything here is a no-op for one process, so
the trainer has a single code path.

What each rank does: it reads its share of every epoch's batches (the token-budget sampler is a
pure function of seed and epoch, so all ranks agree on the batches and take every N-th), DDP
averages the gradients, validation decodes a share of the examples and gathers the predictions,
and losses and counts are summed over ranks. Only rank 0 writes logs, checkpoints and the archive.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import torch
import torch.distributed as dist

from toolkit.errors import ConfigurationError

T = TypeVar("T")


@dataclass(frozen=True)
class Distributed:
    """This process's place among the training processes (``world_size == 1``: not distributed)."""

    rank: int = 0
    world_size: int = 1
    local_rank: int = 0

    @property
    def enabled(self) -> bool:
        return self.world_size > 1

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    def shard(self, items: Sequence[T]) -> list[T]:
        """This rank's share: every ``world_size``-th item, after dropping the remainder so that every
        rank takes the same number of optimizer steps (DDP needs all ranks in every step).
        """
        if not self.enabled:
            return list(items)
        if len(items) < self.world_size:
            raise ConfigurationError(
                f"an epoch has {len(items)} batches, fewer than the {self.world_size} training processes; lower trainer.max_tokens or use fewer processes"
            )
        usable = len(items) - len(items) % self.world_size
        return list(items[self.rank : usable : self.world_size])

    def sum(self, values: Sequence[float]) -> list[float]:
        """Element-wise sums over ranks."""
        return self._reduce(values, dist.ReduceOp.SUM)

    def max(self, value: float) -> float:
        """The largest *value* over ranks (so that time-budget decisions agree everywhere)."""
        return self._reduce([value], dist.ReduceOp.MAX)[0]

    def _reduce(self, values: Sequence[float], op) -> list[float]:
        if not self.enabled:
            return [float(value) for value in values]
        tensor = torch.tensor(list(values), dtype=torch.float64, device=self._device())
        dist.all_reduce(tensor, op=op)
        return tensor.tolist()

    def gather(self, value: Any) -> list[Any]:
        """Every rank's *value*, in rank order (any picklable object)."""
        if not self.enabled:
            return [value]
        gathered: list[Any] = [None] * self.world_size
        dist.all_gather_object(gathered, value)
        return gathered

    def gather_shards(self, local: Sequence[T], total: int) -> list[T]:
        """Undo :meth:`unpadded_shard`: the full list from every rank's ``items[rank::world_size]``."""
        if not self.enabled:
            return list(local)
        result: list[Any] = [None] * total
        for rank, part in enumerate(self.gather(list(local))):
            result[rank :: self.world_size] = part
        return result

    def unpadded_shard(self, items: Sequence[T]) -> list[T]:
        """``items[rank::world_size]``, remainder included (for evaluation, where ranks may differ in count)."""
        return list(items[self.rank :: self.world_size]) if self.enabled else list(items)

    def barrier(self) -> None:
        if self.enabled:
            dist.barrier()

    def _device(self) -> torch.device:
        return torch.device("cuda", self.local_rank) if dist.get_backend() == "nccl" else torch.device("cpu")


def init_distributed(device: str = "auto") -> Distributed:
    """Join the process group ``torchrun`` describes in the environment, if any (idempotent).

    *device* is the config's ``trainer.device``: NCCL when it will be a GPU, gloo otherwise.
    """
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    if world_size <= 1:
        return Distributed()
    rank, local_rank = int(os.environ["RANK"]), int(os.environ.get("LOCAL_RANK", "0"))
    gpu = torch.cuda.is_available() and not str(device).startswith("cpu")
    if not dist.is_initialized():
        if gpu:
            torch.cuda.set_device(local_rank)
        dist.init_process_group("nccl" if gpu else "gloo")
    return Distributed(rank, world_size, local_rank)


def current() -> Distributed:
    """The :class:`Distributed` of this process once :func:`init_distributed` has run (else a single process)."""
    if not (dist.is_available() and dist.is_initialized()):
        return Distributed()
    return Distributed(dist.get_rank(), dist.get_world_size(), int(os.environ.get("LOCAL_RANK", "0")))


def close_distributed() -> None:
    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()
