"""Trainer callbacks: what the training loop does besides training, one registered piece each.

A callback subclasses :class:`TrainerCallback`, registers a name and overrides the hooks it needs.
The trainer calls them in this order, on every rank under ``torchrun``, each callback in list order::

    on_start(trainer, run)                               once, after --recover restored run.state
    on_batch(trainer, run, epoch, batch_number, output)  after each batch that trained
    on_epoch(trainer, run, epoch, results)               after each epoch, before its checkpoint
    on_end(trainer, run)                                 once, after the last epoch (not on an error)

*run* (:class:`TrainingRun`) holds the model, optimizer, data and ``run.state``
(:class:`TrainingState`: history, elapsed time, validations without improvement...). In
``on_epoch`` a callback may add numbers to *results* (they reach the log, TensorBoard,
``metrics_epoch_K.json`` and ``metrics.json``) and may end training after this epoch with
``run.state.stop("why")``. Counters that must survive ``--recover`` come back from
``state_dict()`` (numbers, strings, lists, dicts, tensors) and go in again through
``load_state_dict()``; they are saved with every checkpoint. Write files on rank 0 only
(``run.distributed.is_main``), and draw nothing from the global random generators: a resumed run
would no longer end bit-identical to an uninterrupted one. A plugin registers one and lists it::

    @TrainerCallback.register("print_loss")
    class PrintLoss(TrainerCallback):
        def on_epoch(self, trainer, run, epoch, results):
            print(epoch, results["training_loss"])

    trainer: { callbacks: [{ type: "print_loss" }] }

The trainer builds the built-in callbacks from its own keys (``report_mfu``: ``mfu``;
``patience``: ``early_stopping``; ``max_minutes``: ``time_budget``; always ``tensorboard`` and
``learning_curves``); those of ``trainer.callbacks`` run after the first three and before the
writers, so TensorBoard records what they add.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import torch

from toolkit.device import PRECISION_DTYPES
from toolkit.from_params import NonNegativeFloat, PositiveInt
from toolkit.registrable import Registrable
from toolkit.training.curves import TensorBoardLog, plot_training_curves
from toolkit.training.flops import measure_peak_flops, model_flops_utilization
from toolkit.training.state import TrainingRun, TrainingState

__all__ = ["EarlyStopping", "LearningCurves", "ModelFlopsUtilization", "TensorBoardScalars", "TimeBudget", "TrainerCallback", "TrainingRun", "TrainingState"]

if TYPE_CHECKING:
    from toolkit.training.trainer import GradientDescentTrainer

logger = logging.getLogger(__name__)


class TrainerCallback(Registrable):
    """A hook into the training loop; every hook does nothing unless overridden (see the module's docs)."""

    def on_start(self, trainer: GradientDescentTrainer, run: TrainingRun) -> None:
        """Before the first epoch of this leg; a recovered run's ``run.state`` is already restored."""

    def on_batch(self, trainer: GradientDescentTrainer, run: TrainingRun, epoch: int, batch_number: int, output: dict[str, Any]) -> None:
        """After batch *batch_number* of this rank's share trained; *output* is the model's (``loss``, ``num_tokens``...)."""

    def on_epoch(self, trainer: GradientDescentTrainer, run: TrainingRun, epoch: int, results: dict[str, Any]) -> None:
        """After epoch *epoch*, whose *results* (already last in ``run.state.history``) may gain entries."""

    def on_end(self, trainer: GradientDescentTrainer, run: TrainingRun) -> None:
        """After the last epoch, before the final weights are averaged."""

    def state_dict(self) -> dict[str, Any] | None:
        """What ``--recover`` must give back to this callback; ``None``: nothing."""
        return None

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Take back what :meth:`state_dict` returned when the recovered checkpoint was written."""


@TrainerCallback.register("mfu")
class ModelFlopsUtilization(TrainerCallback):
    """Adds each epoch's model FLOPs utilisation (``mfu``) to its results; see ``trainer.report_mfu``."""

    def __init__(self) -> None:
        self.device, self.dtype = torch.device("cpu"), torch.float32
        self.parameters = 0
        self.measured_again = self.warned = False

    def on_start(self, trainer: GradientDescentTrainer, run: TrainingRun) -> None:
        self.device, self.dtype = trainer.device, PRECISION_DTYPES.get(trainer.mixed_precision, torch.float32)
        self.parameters = sum(p.numel() for p in run.model.parameters() if p.requires_grad)
        logger.info("matmul peak of %s in %s: %.1f GFLOP/s", self.device, trainer.mixed_precision or "fp32", self.peak_flops() / 1e9)

    def on_epoch(self, trainer: GradientDescentTrainer, run: TrainingRun, epoch: int, results: dict[str, Any]) -> None:
        if (mfu := self.utilization(self.parameters, results["training_tokens_per_second"], run.distributed.world_size)) is not None:
            results["mfu"] = mfu

    def peak_flops(self, again: bool = False) -> float:
        return measure_peak_flops(self.dtype, seconds=0.5, device=self.device, again=again)

    def utilization(self, parameters: int, tokens_per_second: float, world_size: int) -> float | None:
        """The epoch's MFU, a share of at most 1, or ``None`` (logged) when no honest figure exists.

        A share above 1 means the peak was measured while other work slowed the machine down, or
        that the formula overcounts this model (:func:`model_flops_utilization`: embedding lookups
        and parameters that see only the source or only the target count for every token): the
        peak is measured again (the higher figure kept), and if training still outran it, left out
        (said once a run: the same sentence every epoch would bury the log).
        """
        mfu = model_flops_utilization(parameters, tokens_per_second, self.peak_flops() * world_size)
        if mfu > 1 and not self.measured_again:  # once a run: each measurement takes a second
            self.measured_again = True
            mfu = model_flops_utilization(parameters, tokens_per_second, self.peak_flops(again=True) * world_size)
        if mfu > 1 and not self.warned:
            self.warned = True
            logger.warning(
                "MFU left out: 6 x parameters x tokens/s exceeds the matmul peak measured (%.1f GFLOP/s); the formula overcounts "
                "a model whose parameters do not all see every token (embeddings, source-only layers), or other work slowed the measurement",
                self.peak_flops() / 1e9,
            )
        return None if mfu > 1 else round(mfu, 4)


@TrainerCallback.register("early_stopping")
class EarlyStopping(TrainerCallback):
    """Stops after *patience* validations in a row that did not improve ``trainer.validation_metric``.

    Only the policy lives here: the count (``run.state.bad_epochs``) is trainer state, since checkpoint
    selection makes the same comparison and a recovered run that turns patience on must see it.
    """

    def __init__(self, patience: PositiveInt) -> None:
        self.patience = patience

    def on_start(self, trainer: GradientDescentTrainer, run: TrainingRun) -> None:
        self.check(trainer, run.state)

    def on_epoch(self, trainer: GradientDescentTrainer, run: TrainingRun, epoch: int, results: dict[str, Any]) -> None:
        self.check(trainer, run.state)

    def check(self, trainer: GradientDescentTrainer, state: TrainingState) -> None:
        if state.bad_epochs >= self.patience:
            state.stop(f"stopping early: no improvement in {trainer.metric_name} for {state.bad_epochs} validations")


@TrainerCallback.register("time_budget")
class TimeBudget(TrainerCallback):
    """Starts no epoch that would, at the pace of the last one, end past *max_minutes* of training.

    The pace leaves out the time the last epoch spent filling caches (``cache_fill_seconds``): a
    frozen transformer's first epoch can take 30 times what the epochs that read its cache do. A
    run always starts its first epoch; one that runs past the budget anyway is cut short by the
    trainer at an optimizer step (``trainer.max_minutes``), so this callback only spares the time
    of an epoch that could not end in time.
    """

    def __init__(self, max_minutes: NonNegativeFloat) -> None:
        self.max_minutes = max_minutes

    def on_start(self, trainer: GradientDescentTrainer, run: TrainingRun) -> None:
        self.check(run.state)

    def on_epoch(self, trainer: GradientDescentTrainer, run: TrainingRun, epoch: int, results: dict[str, Any]) -> None:
        self.check(run.state)

    def check(self, state: TrainingState) -> None:
        if not state.history:
            return  # nothing trained yet: the first epoch starts, and stops in time if it must
        last = state.history[-1]
        last_epoch_seconds = last.get("epoch_seconds", 0.0) - last.get("cache_fill_seconds", 0.0)
        if state.elapsed + last_epoch_seconds > 60 * self.max_minutes:
            state.stop(f"stopping: another epoch would overrun the time budget of {self.max_minutes:.1f} minutes")


@TrainerCallback.register("tensorboard")
class TensorBoardScalars(TrainerCallback):
    """Each epoch's numeric results as TensorBoard scalars under ``tensorboard/`` (rank 0; needs ``tensorboard``)."""

    def __init__(self) -> None:
        self.log: TensorBoardLog | None = None

    def on_start(self, trainer: GradientDescentTrainer, run: TrainingRun) -> None:
        self.log = TensorBoardLog(run.serialization_dir) if run.distributed.is_main else None

    def on_epoch(self, trainer: GradientDescentTrainer, run: TrainingRun, epoch: int, results: dict[str, Any]) -> None:
        if self.log is not None:
            self.log.add(epoch, results)

    def on_end(self, trainer: GradientDescentTrainer, run: TrainingRun) -> None:
        if self.log is not None:
            self.log.close()


@TrainerCallback.register("learning_curves")
class LearningCurves(TrainerCallback):
    """Draws ``training_curves.png`` from the whole history once training ends (rank 0; needs matplotlib)."""

    def on_end(self, trainer: GradientDescentTrainer, run: TrainingRun) -> None:
        if run.distributed.is_main:
            plot_training_curves(run.state.history, run.serialization_dir)
