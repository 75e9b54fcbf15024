"""The state of a training run: what the loop and its callbacks share, and what ``--recover`` restores.

Each epoch's checkpoint saves, beside the weights, the optimizer, schedule and gradient scaler, the
:class:`TrainingState` (history, kept checkpoints, time, counters, the callbacks' own states) and
every rank's random generators, so that a resumed run ends bit-identical to an uninterrupted one.
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from toolkit.data.batching import TokenBudgetBatchSampler
from toolkit.data.example import Example
from toolkit.errors import TrainingError
from toolkit.files import write_atomically
from toolkit.metrics.metric import Metric
from toolkit.models.model import Model
from toolkit.training.checkpointer import Checkpointer
from toolkit.training.distributed import Distributed
from toolkit.training.schedulers import LearningRateScheduler
from toolkit.weights import load_weights

if TYPE_CHECKING:
    from toolkit.training.callbacks import TrainerCallback


@dataclass
class TrainingState:
    """What ``--recover`` restores, saved with every checkpoint; all of it but ``stop_reason``."""

    epoch: int = -1  # the last epoch whose checkpoint is saved: finished, or cut short (see cut)
    history: list[dict[str, Any]] = field(default_factory=list)  # each finished epoch's results
    kept: list[tuple[float, int]] = field(default_factory=list)  # (score, epoch) of the checkpoints to average: best (or, unvalidated, newest) first
    elapsed: float = 0.0  # seconds of training and validation over every leg of the run
    bad_epochs: int = 0  # validations since the validation metric last improved
    skipped_steps: int = 0  # optimizer steps left out (non-finite gradients, out of memory)
    callbacks: dict[str, Any] = field(default_factory=dict)  # each callback's state_dict(), by callback_keys()
    cut: dict[str, Any] | None = None  # epoch `epoch` stopped by the time budget: {"batches": trained so far, "sums": its running totals}
    stop_reason: str | None = None  # not saved: a recovered run, with its own limits, decides anew

    def stop(self, reason: str) -> None:
        """End training after this epoch; the first reason given is the one logged."""
        if self.stop_reason is None:
            self.stop_reason = reason

    def saved(self) -> dict[str, Any]:
        """The state as plain values, for ``torch.save(weights_only=True)``."""
        return {
            "epoch": self.epoch,
            "history": self.history,
            "kept": [list(k) for k in self.kept],
            "elapsed": self.elapsed,
            "bad_epochs": self.bad_epochs,
            "skipped_steps": self.skipped_steps,
            "callbacks": self.callbacks,
            "cut": self.cut,
        }

    @classmethod
    def from_saved(cls, saved: dict[str, Any]) -> TrainingState:
        return cls(
            epoch=saved["epoch"],
            history=saved["history"],
            kept=[tuple(k) for k in saved["kept"]],
            elapsed=saved["elapsed"],
            bad_epochs=saved["bad_epochs"],
            skipped_steps=saved.get("skipped_steps", 0),
            callbacks=saved.get("callbacks", {}),
            cut=saved.get("cut"),
        )


@dataclass
class TrainingRun:
    """One call of ``Trainer.train``: what the loop and the callbacks work on."""

    model: Model
    trained: torch.nn.Module  # the model, or its DistributedDataParallel wrapper under torchrun
    train_data: Sequence[dict[str, Any]]
    sampler: TokenBudgetBatchSampler
    validation_examples: Sequence[Example]
    validation_data: list[dict[str, Any]]  # the validation examples, indexed
    metrics: Sequence[Metric]
    optimizer: torch.optim.Optimizer
    scheduler: LearningRateScheduler | None
    scaler: torch.amp.GradScaler
    checkpointer: Checkpointer
    distributed: Distributed
    serialization_dir: Path
    callbacks: list[TrainerCallback]
    state: TrainingState = field(default_factory=TrainingState)
    deadline: float | None = None  # time.monotonic() at which the time budget is spent (None: no budget)

    def out_of_time(self) -> bool:
        """Whether the time budget is spent, decided alike on every rank."""
        return self.deadline is not None and self.distributed.max(float(time.monotonic() >= self.deadline)) > 0


def callback_keys(callbacks: Sequence[TrainerCallback]) -> list[str]:
    """A key per callback that does not shift when a recoverable key adds or drops a built-in one."""
    seen: Counter[str] = Counter()
    keys = []
    for callback in callbacks:
        name = f"{type(callback).__module__}.{type(callback).__qualname__}"
        keys.append(f"{name}#{seen[name]}" if seen[name] else name)
        seen[name] += 1
    return keys


def callback_states(callbacks: Sequence[TrainerCallback]) -> dict[str, Any]:
    return {key: state for key, callback in zip(callback_keys(callbacks), callbacks) if (state := callback.state_dict()) is not None}


def rng_state() -> dict[str, Any]:
    state = {"torch": torch.get_rng_state(), "python": list(random.getstate()[1]), "python_pos": random.getstate()[2]}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict[str, Any]) -> None:
    torch.set_rng_state(state["torch"])
    random.setstate((3, tuple(state["python"]), state["python_pos"]))
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def save_checkpoint(run: TrainingRun, results: dict[str, Any]) -> None:
    """Write the last epoch's metrics, weights and all that ``--recover`` needs (rank 0); every rank waits for it."""
    epoch = run.state.epoch
    run.state.callbacks = callback_states(run.callbacks)
    rng_per_rank = run.distributed.gather(rng_state())
    if run.distributed.is_main:
        write_atomically(run.serialization_dir / f"metrics_epoch_{epoch}.json", json.dumps(results, indent=2))
        saved = {
            "optimizer": run.optimizer.state_dict(),
            "scheduler": run.scheduler.state_dict() if run.scheduler else None,
            "scaler": run.scaler.state_dict() if run.scaler.is_enabled() else None,
            **run.state.saved(),
            "rng": rng_per_rank[0],
            "rng_per_rank": rng_per_rank,
        }
        kept = [epoch for _, epoch in run.state.kept] + [epoch]  # the newest weights stay, for --recover
        run.checkpointer.save(epoch, run.model, saved, kept)
    run.distributed.barrier()  # the checkpoint is complete before any rank reads it


def restore_checkpoint(run: TrainingRun) -> bool:
    """Continue from the last checkpoint exactly: weights, optimizer, schedule, run state, RNG; whether there was one."""
    saved = run.checkpointer.load_state()
    if saved is None:
        return False
    try:
        load_weights(run.model, run.checkpointer.weights(saved["epoch"]))
        run.optimizer.load_state_dict(saved["optimizer"])
        if run.scheduler and saved.get("scheduler"):
            run.scheduler.load_state_dict(saved["scheduler"])
        if saved.get("scaler"):
            run.scaler.load_state_dict(saved["scaler"])
    except (RuntimeError, ValueError, KeyError) as error:  # a state from another model (its config.json lost)
        raise TrainingError(
            f"--recover: the checkpoint of epoch {saved['epoch']} in {run.checkpointer.directory} does not fit the model this config "
            f"builds ({' '.join(str(error).split())[:300]}); train into a new directory instead"
        ) from None
    run.state = TrainingState.from_saved(saved)
    for key, callback in zip(callback_keys(run.callbacks), run.callbacks):
        if key in run.state.callbacks:
            callback.load_state_dict(run.state.callbacks[key])
    ranks = saved.get("rng_per_rank") or [saved["rng"]]
    set_rng_state(ranks[run.distributed.rank] if len(ranks) == run.distributed.world_size else saved["rng"])
    return True
