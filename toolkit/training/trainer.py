"""The training loop: token-budget batches, mixed precision, validation by decoding, checkpoints.

One epoch = one pass over the training batches; after it the model decodes the validation set,
the metrics decide which checkpoints to keep, and everything ``--recover`` needs is saved. At the
end the best (or last) N checkpoints are averaged into the final weights. The rest (MFU, early
stopping, the time budget, TensorBoard, curves, a plugin's own) are callbacks (:mod:`toolkit.training.callbacks`).
Validation itself is :mod:`toolkit.training.validation`.
"""

import contextlib
import json
import logging
import math
import random
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader
from tqdm import tqdm

from toolkit.data.batching import TokenBudgetBatchSampler
from toolkit.data.example import Example
from toolkit.decoding import Search
from toolkit.device import autocast, resolve_device, resolve_precision
from toolkit.errors import ConfigurationError, TrainingError
from toolkit.evaluation import move_to_device
from toolkit.from_params import Lazy, NonNegativeFloat, NonNegativeInt, PositiveFloat, PositiveInt
from toolkit.metrics.metric import Metric
from toolkit.models.model import Model
from toolkit.registrable import Registrable
from toolkit.training.callbacks import (
    EarlyStopping,
    LearningCurves,
    ModelFlopsUtilization,
    TensorBoardScalars,
    TimeBudget,
    TrainerCallback,
)
from toolkit.training.checkpointer import CHECKPOINTS_DIR, Checkpointer
from toolkit.training.distributed import Distributed
from toolkit.training.frozen_caches import cache_fill_seconds, caching_in_eval  # noqa: F401  (caching_in_eval re-exported: tests import it from here)
from toolkit.training.optimizers import Optimizer, parameter_groups
from toolkit.training.schedulers import LearningRateScheduler
from toolkit.training.state import TrainingRun, TrainingState, restore_checkpoint, save_checkpoint
from toolkit.training.validation import Validation

logger = logging.getLogger(__name__)


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


class Trainer(Registrable):
    default_implementation = "default"


@Trainer.register("default")
class GradientDescentTrainer(Trainer, Validation):
    """Trains a :class:`Model` with a token budget per batch.

    # Parameters
    optimizer, learning_rate_scheduler : built once the model exists (``Lazy``).
    num_epochs : the most epochs to run.
    max_minutes : a wall-clock budget for reading and indexing the data, training and validation
        (kept across ``--recover``). No epoch starts that would, at the pace of the last one, end
        past it (an epoch's time filling a frozen transformer's cache does not count toward that
        pace); an epoch that runs past it anyway (the first, or a machine that got busier) stops
        at the first optimizer step after it, its weights kept and, when there are no validated
        ones to prefer, used, and a validation that would run past it is cut short. So a budget
        holds to about one step on a busy machine too. ``--recover`` with a larger budget goes on
        from the step where the epoch stopped, as if it had never stopped.
    patience : stop after this many validations without improvement (``None``: never). Validations
        while the learning-rate scheduler still warms up some group do not count: early in the
        warmup a lucky epoch can set a best score that the rising rate first unsettles.
    validation_metric : ``"+name"`` to maximise or ``"-name"`` to minimise, e.g. ``"+logic_match"``.
    validate_every : validate after every K-th epoch (and the last); decoding is the slow part.
    num_checkpoints_to_average : the final weights are the mean of this many best checkpoints
        (the last ones when there is no validation data).
    grad_norm : clip the gradient norm to this value.
    max_tokens, max_examples : the padded-token budget and optional sentence cap of a batch (per
        process under ``torchrun``: the global batch is N times larger).
    accumulation_steps : sum the gradients of this many batches before each optimizer step, to
        reach a token budget larger than memory allows (``max_tokens`` × K per step).
    validation_search : the search used for validation (default: the model's own); greedy is a
        cheap stand-in for a beam when choosing checkpoints.
    decode_max_tokens : the padded-token budget of a validation or test batch; a beam of *k*
        divides it by *k* when decoding (:func:`~toolkit.evaluation.predict`).
    device : ``"auto"`` (CUDA when present), ``"cpu"``, ``"cuda"``, ``"cuda:1"``...
    mixed_precision : ``null``, ``"bf16"`` (CPU or GPU), ``"fp16"`` (GPU, with a gradient scaler), or
        ``"auto"``: bf16 on a GPU that has it, full precision on the CPU.
    max_skipped_steps : a step whose gradient is not finite (or, on a single GPU, whose batch runs
        out of memory) is skipped, counted and logged; more than this many skipped steps stop the
        run with a message. (fp16's gradient scaler skips overflowing steps itself, uncounted.)
    num_workers : processes that collate batches while the model trains (``0``: in the training
        process); batches go to pinned memory when training on CUDA.
    report_mfu : log each epoch's model FLOPs utilisation, ``6 x parameters x tokens/s`` over the
        device's matmul peak in the training precision (measured at the start, about a second, and
        once more if a share above 1 shows the machine was busy then; a share above 1 is never reported).
    callbacks : further :class:`TrainerCallback` s (``[{"type": ...}]``), run after those the keys
        above make (``mfu``, ``early_stopping``, ``time_budget``) and before ``tensorboard`` and
        ``learning_curves``.
    """

    def __init__(
        self,
        optimizer: Lazy[Optimizer] = Lazy(Optimizer),
        learning_rate_scheduler: Lazy[LearningRateScheduler] | None = None,
        num_epochs: PositiveInt = 100,
        patience: PositiveInt | None = None,
        validation_metric: str = "-loss",
        validate_every: PositiveInt = 1,
        num_checkpoints_to_average: PositiveInt = 1,
        grad_norm: PositiveFloat | None = None,
        max_tokens: PositiveInt = 4096,
        max_examples: PositiveInt | None = None,
        accumulation_steps: PositiveInt = 1,
        device: str = "auto",
        mixed_precision: str | None = None,
        max_minutes: NonNegativeFloat | None = None,
        decode_max_tokens: PositiveInt = 8192,
        validation_search: Search | None = None,
        progress_bar: bool = True,
        num_workers: NonNegativeInt = 0,
        report_mfu: bool = True,
        max_skipped_steps: NonNegativeInt = 10,
        callbacks: Sequence[TrainerCallback] = (),
    ):
        if validation_metric[:1] not in "+-" or len(validation_metric) < 2:
            raise ConfigurationError(f"must start with '+' or '-', got {validation_metric!r}", key="validation_metric")
        if num_epochs < 1:
            raise ConfigurationError(f"must be at least 1, got {num_epochs}", key="num_epochs")
        if accumulation_steps < 1:
            raise ConfigurationError(f"must be at least 1, got {accumulation_steps}", key="accumulation_steps")
        self.optimizer, self.scheduler = optimizer, learning_rate_scheduler
        self.num_epochs, self.patience = num_epochs, patience
        self.metric_name, self.maximize = validation_metric[1:], validation_metric[0] == "+"
        self.validate_every, self.num_average = validate_every, num_checkpoints_to_average
        self.grad_norm = grad_norm
        self.max_tokens, self.max_examples, self.accumulation_steps = max_tokens, max_examples, accumulation_steps
        self.device = resolve_device(device)
        self.mixed_precision = resolve_precision(mixed_precision, self.device)
        self.max_minutes, self.decode_max_tokens = max_minutes, decode_max_tokens
        self.validation_search = validation_search
        if num_workers < 0:
            raise ConfigurationError(f"must be >= 0, got {num_workers}", key="num_workers")
        self.progress_bar, self.num_workers, self.report_mfu = progress_bar, num_workers, report_mfu
        self.max_skipped_steps = max_skipped_steps
        self.callbacks: list[TrainerCallback] = [
            *([ModelFlopsUtilization()] if report_mfu else []),
            *([EarlyStopping(patience)] if patience is not None else []),
            *([TimeBudget(max_minutes)] if max_minutes is not None else []),
            *callbacks,
            TensorBoardScalars(),
            LearningCurves(),
        ]

    def train(
        self,
        model: Model,
        train_data: Sequence[dict[str, Any]],
        validation_examples: Sequence[Example] | None,
        metrics: Sequence[Metric],
        serialization_dir: str | Path,
        seed: int = 13,
        recover: bool = False,
        distributed: Distributed = Distributed(),
        preprocessing_seconds: float = 0.0,
        checkpointed: Callable[[], None] | None = None,
    ) -> tuple[dict[str, torch.Tensor], list[dict[str, Any]]]:
        """Train *model*; return the final (averaged) weights and the per-epoch metrics.

        Under ``torchrun`` (*distributed*), every rank runs this with the same data; each trains on
        its share of the batches and only rank 0 writes checkpoints. *preprocessing_seconds* (reading
        and indexing the data before training) counts toward the time budget and as data time of the
        first epoch. *checkpointed* is called once, when this leg's first checkpoint is on disk.
        """
        started = time.monotonic()
        if validation_examples:
            self.check_validation_metric(metrics)
        run = self.start_run(model, train_data, validation_examples or [], metrics, Path(serialization_dir), seed, distributed)
        if recover and restore_checkpoint(run):
            logger.info("recovered from epoch %d%s", run.state.epoch, f", cut short after batch {run.state.cut['batches']}" if run.state.cut else "")
        run.state.elapsed += preprocessing_seconds + (time.monotonic() - started)
        if self.max_minutes is not None:
            run.deadline = time.monotonic() + 60 * self.max_minutes - run.state.elapsed
        for callback in run.callbacks:
            callback.on_start(self, run)
        for epoch in range(run.state.epoch + (0 if run.state.cut else 1), self.num_epochs):
            if run.state.stop_reason is not None:
                logger.info("%s", run.state.stop_reason)
                break
            results = self.run_epoch(run, epoch, preprocessing_seconds)
            preprocessing_seconds = 0.0
            warming_up = run.scheduler is not None and run.scheduler.warming_up
            self.select_checkpoints(run.state, epoch, results, has_validation=bool(run.validation_data), warming_up=warming_up)
            if run.state.history and run.state.history[-1]["epoch"] == epoch:
                run.state.history[-1] = results  # the rest of an epoch the time budget had cut short
            else:
                run.state.history.append(results)
            run.state.epoch = epoch
            for callback in run.callbacks:
                callback.on_epoch(self, run, epoch, results)
            logger.info("epoch %d: %s", epoch, json.dumps(results))
            save_checkpoint(run, results)
            if checkpointed is not None:
                checkpointed()
                checkpointed = None
        if not run.state.history:
            raise TrainingError(f"training stopped before its first epoch: {run.state.stop_reason}")
        for callback in run.callbacks:
            callback.on_end(self, run)
        # Stopped before any validation (a tight time budget): the newest weights are all there is.
        epochs = sorted(epoch for _, epoch in run.state.kept) or [run.state.history[-1]["epoch"]]
        cut = f" (epoch {run.state.epoch} cut short by the time budget after {run.state.cut['batches']} batches)" if run.state.cut else ""
        logger.info("final weights: the average of epochs %s%s", epochs, cut if run.state.epoch in epochs else "")
        return run.checkpointer.average(epochs), run.state.history

    def start_run(
        self,
        model: Model,
        train_data: Sequence[dict[str, Any]],
        validation_examples: Sequence[Example],
        metrics: Sequence[Metric],
        serialization_dir: Path,
        seed: int,
        distributed: Distributed,
    ) -> TrainingRun:
        """Put the model on its device and build what it trains with: optimizer, schedule, batches, checkpointer."""
        if distributed.enabled and self.device.type == "cuda":
            self.device = torch.device("cuda", distributed.local_rank)
        model.to(self.device)
        optimizer = self.optimizer.construct(model_parameters=parameter_groups(model))
        scheduler = self.scheduler.construct(optimizer=optimizer) if self.scheduler else None
        scaler = torch.amp.GradScaler(self.device.type, enabled=self.mixed_precision == "fp16" and self.device.type == "cuda")
        checkpointer = Checkpointer(serialization_dir / CHECKPOINTS_DIR)
        validation_data = [model.index(e) for e in validation_examples]
        sampler = TokenBudgetBatchSampler([model.length(item) for item in train_data], self.max_tokens, self.max_examples, shuffle=True, seed=seed)
        # DDP averages the gradients over ranks; rank 0's initial weights are broadcast to all.
        trained = DistributedDataParallel(model, device_ids=[self.device.index] if self.device.type == "cuda" else None) if distributed.enabled else model
        if distributed.enabled:
            torch.manual_seed(seed + distributed.rank)  # different dropout on every rank
        return TrainingRun(
            model=model,
            trained=trained,
            train_data=train_data,
            sampler=sampler,
            validation_examples=validation_examples,
            validation_data=validation_data,
            metrics=metrics,
            optimizer=optimizer,
            scheduler=scheduler,
            scaler=scaler,
            checkpointer=checkpointer,
            distributed=distributed,
            serialization_dir=serialization_dir,
            callbacks=self.callbacks,
        )

    def run_epoch(self, run: TrainingRun, epoch: int, preprocessing_seconds: float) -> dict[str, Any]:
        """Train one epoch and validate when it is due; its results, timed (training and validation count as elapsed).

        An epoch the time budget cut short is not validated; a validation it cuts short is left out.
        """
        epoch_start, filled = time.perf_counter(), cache_fill_seconds(run.model)
        run.sampler.set_epoch(epoch)
        run.model.start_epoch(epoch)
        results: dict[str, Any] = {"epoch": epoch, **self.train_epoch(run, epoch, run.distributed.shard(list(run.sampler)))}
        if preprocessing_seconds:
            results["data_seconds"] = round(results["data_seconds"] + preprocessing_seconds, 2)
        due = run.validation_data and ((epoch + 1) % self.validate_every == 0 or epoch == self.num_epochs - 1)
        if due and run.state.cut is None:
            with autocast(self.device, self.mixed_precision):
                validation = None if run.out_of_time() else self.validate(run)
            if validation is None:
                logger.warning("epoch %d is not validated: the time budget of %s minutes ran out", epoch, f"{self.max_minutes:g}")
                run.state.stop(f"stopping: the time budget of {self.max_minutes:g} minutes ran out")
            else:
                results.update({f"validation_{k}": v for k, v in validation.items()})
        run.state.elapsed += run.distributed.max(time.perf_counter() - epoch_start)  # every rank takes the same budget decisions
        results.update(elapsed_seconds=round(run.state.elapsed, 1), epoch_seconds=round(time.perf_counter() - epoch_start, 1))
        if filled := cache_fill_seconds(run.model) - filled:
            results["cache_fill_seconds"] = round(filled, 1)  # not to be spent again: the time budget's pace leaves it out
        return results

    def train_epoch(self, run: TrainingRun, epoch: int, batches: list[list[int]]) -> dict[str, float]:
        """One pass over this rank's *batches*, training ``run.trained`` (the model or its DDP wrapper).

        With ``accumulation_steps`` K, each optimizer step sums the gradients of K batches (each
        loss divided by K); DDP synchronises only on the last of them.

        With a time budget, the epoch stops at the first optimizer step after the budget is spent, and
        ``run.state.cut`` records how far it got, so that ``--recover`` can go on from that batch (an
        epoch resumed so starts there, with the running totals it had).
        """
        model, trained, optimizer, scaler, distributed = run.model, run.trained, run.optimizer, run.scaler, run.distributed
        trained.train()
        first = min(run.state.cut["batches"], len(batches)) if run.state.cut and run.state.epoch == epoch else 0
        total_loss, steps, correct, tokens, budget_tokens, data_seconds, seconds = run.state.cut["sums"] if first else (0.0, 0, 0, 0, 0, 0.0, 0.0)
        run.state.cut = None
        start = time.perf_counter()
        loader = DataLoader(
            run.train_data,
            batch_sampler=batches[first:],
            collate_fn=model.collate,
            num_workers=self.num_workers,
            pin_memory=self.device.type == "cuda",
        )
        rng = torch.get_rng_state()
        loaded = iter(loader)  # draws the loader's seed from torch's generator
        if first:  # a resumed epoch drew it when it began, before the state it resumes from was saved
            torch.set_rng_state(rng)
        progress = tqdm(
            loaded,
            desc=f"epoch {epoch}",
            initial=first,
            total=len(batches),
            disable=not self.progress_bar or not distributed.is_main or None,
            leave=False,
            dynamic_ncols=True,
        )
        optimizer.zero_grad(set_to_none=True)
        data_start = time.perf_counter()
        for position, (indices, batch) in enumerate(zip(batches[first:], progress), start=first):
            batch = move_to_device(batch, self.device)
            data_seconds += time.perf_counter() - data_start
            stepping = (position + 1) % self.accumulation_steps == 0 or position == len(batches) - 1
            synchronise = contextlib.nullcontext() if stepping or not distributed.enabled else trained.no_sync()
            try:
                with synchronise:
                    with autocast(self.device, self.mixed_precision):
                        output = trained(batch)
                    loss = output["loss"]
                    scaler.scale(loss / self.accumulation_steps).backward()
            except torch.cuda.OutOfMemoryError:
                if distributed.enabled:
                    raise  # the other ranks are waiting in this step's all-reduce: no way to skip it alone
                del batch
                optimizer.zero_grad(set_to_none=True)  # with accumulation, the group's earlier batches go too
                torch.cuda.empty_cache()
                self.skip(
                    run.state, epoch, f"out of memory on a batch of {len(indices)} examples ({sum(model.length(run.train_data[i]) for i in indices)} tokens)"
                )
                data_start = time.perf_counter()
                continue
            if stepping:
                self.step(run, epoch)
            if math.isfinite(loss_value := loss.item()):
                total_loss, steps = total_loss + loss_value, steps + 1
            correct, tokens = correct + int(output["correct_tokens"]), tokens + int(output["num_tokens"])
            budget_tokens += sum(model.length(run.train_data[i]) for i in indices)
            progress.set_postfix(loss=f"{total_loss / max(steps, 1):.4f}", acc=f"{correct / max(tokens, 1):.3f}")
            for callback in run.callbacks:
                callback.on_batch(self, run, epoch, position, output)
            if stepping and position + 1 < len(batches) and run.out_of_time():
                run.state.cut = {"batches": position + 1, "sums": [total_loss, steps, correct, tokens, budget_tokens, data_seconds, 0.0]}
                break
            data_start = time.perf_counter()
        seconds += time.perf_counter() - start
        results = {}
        if run.state.cut is not None:
            run.state.cut["sums"][-1] = seconds
            results = {"trained_batches": run.state.cut["batches"], "epoch_batches": len(batches)}
            run.state.stop(f"stopping: the time budget of {self.max_minutes:g} minutes ran out")
            logger.warning(
                "the time budget of %s minutes ran out in epoch %d, after batch %d of %d: its weights are kept (--recover with a larger "
                "trainer.max_minutes goes on from there)",
                f"{self.max_minutes:g}",
                epoch,
                run.state.cut["batches"],
                len(batches),
            )
        total_loss, steps, correct, tokens, budget_tokens = distributed.sum([total_loss, steps, correct, tokens, budget_tokens])
        return {
            "training_loss": total_loss / max(steps, 1),
            "training_token_accuracy": correct / max(tokens, 1),
            "learning_rate": optimizer.param_groups[0]["lr"],
            "training_tokens_per_second": round(budget_tokens / max(seconds, 1e-9), 1),  # all ranks together
            "data_seconds": round(data_seconds, 2),
            "skipped_steps": run.state.skipped_steps,
            **results,
        }

    def step(self, run: TrainingRun, epoch: int) -> None:
        """One optimizer step on the summed gradients, clipped; a non-finite norm skips it (counted)."""
        run.scaler.unscale_(run.optimizer)
        norm = torch.nn.utils.clip_grad_norm_(run.model.parameters(), self.grad_norm if self.grad_norm is not None else math.inf)
        if torch.isfinite(norm) or run.scaler.is_enabled():  # fp16: the scaler skips the step and lowers its scale
            run.scaler.step(run.optimizer)
            run.scaler.update()
            if run.scheduler:
                run.scheduler.step()
        else:  # the norm is all-reduced under DDP, so every rank skips together
            self.skip(run.state, epoch, f"the gradient norm is {norm.item()}")
        run.optimizer.zero_grad(set_to_none=True)

    def skip(self, state: TrainingState, epoch: int, why: str) -> None:
        """Count a skipped optimizer step; too many stop the run."""
        state.skipped_steps += 1
        logger.warning("epoch %d: skipped an optimizer step: %s (%d so far)", epoch, why, state.skipped_steps)
        if state.skipped_steps > self.max_skipped_steps:
            raise TrainingError(
                f"stopping after {state.skipped_steps} skipped optimizer steps (non-finite gradients or out of memory), more than "
                "trainer.max_skipped_steps; lower the learning rate, clip gradients (trainer.grad_norm), prefer bf16 to fp16, "
                "or lower trainer.max_tokens"
            )
