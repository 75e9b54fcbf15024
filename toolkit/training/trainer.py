"""The training loop: token-budget batches, mixed precision, validation by decoding, checkpoints.

One epoch = one pass over the training batches; after it the model decodes the validation set,
the metrics decide early stopping and which checkpoints to keep, and everything ``--recover``
needs is saved. At the end the best (or last) N checkpoints are averaged into the final weights.
"""

import contextlib
import difflib
import json
import logging
import math
import random
import time
from collections.abc import Sequence
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
from toolkit.device import PRECISION_DTYPES, autocast, resolve_device, resolve_precision
from toolkit.errors import ConfigurationError, TrainingError
from toolkit.evaluation import move_to_device, predict, score
from toolkit.files import write_atomically
from toolkit.from_params import Lazy, NonNegativeFloat, NonNegativeInt, PositiveFloat, PositiveInt
from toolkit.metrics.metric import Metric
from toolkit.models.model import Model
from toolkit.registrable import Registrable
from toolkit.training.checkpointer import Checkpointer
from toolkit.training.curves import TensorBoardLog
from toolkit.training.distributed import Distributed
from toolkit.training.flops import measure_peak_flops, model_flops_utilization
from toolkit.training.optimizers import Optimizer, parameter_groups
from toolkit.training.schedulers import LearningRateScheduler
from toolkit.weights import load_weights

logger = logging.getLogger(__name__)


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


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


class Trainer(Registrable):
    default_implementation = "default"


@Trainer.register("default")
class GradientDescentTrainer(Trainer):
    """Trains a :class:`Model` with a token budget per batch.

    # Parameters
    optimizer, learning_rate_scheduler : built once the model exists (``Lazy``).
    num_epochs : the most epochs to run.
    max_minutes : a wall-clock budget for training and validation: no epoch starts that would,
        at the pace of the last one, end past it (the time is kept across ``--recover``).
    patience : stop after this many validations without improvement (``None``: never).
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
    ):
        if validation_metric[:1] not in "+-" or len(validation_metric) < 2:
            raise ConfigurationError(f"trainer.validation_metric must start with '+' or '-', got {validation_metric!r}")
        if num_epochs < 1:
            raise ConfigurationError(f"trainer.num_epochs must be at least 1, got {num_epochs}")
        if accumulation_steps < 1:
            raise ConfigurationError(f"trainer.accumulation_steps must be at least 1, got {accumulation_steps}")
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
            raise ConfigurationError(f"trainer.num_workers must be >= 0, got {num_workers}")
        self.progress_bar, self.num_workers, self.report_mfu = progress_bar, num_workers, report_mfu
        self.max_skipped_steps, self.skipped_steps = max_skipped_steps, 0
        self.peak_measured_again = False

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
    ) -> tuple[dict[str, torch.Tensor], list[dict[str, Any]]]:
        """Train *model*; return the final (averaged) weights and the per-epoch metrics.

        Under ``torchrun`` (*distributed*), every rank runs this with the same data; each trains on
        its share of the batches and only rank 0 writes checkpoints. *preprocessing_seconds* (the
        indexing before training) counts as data time of the first epoch.
        """
        if validation_examples:
            self.check_validation_metric(metrics)
        if distributed.enabled and self.device.type == "cuda":
            self.device = torch.device("cuda", distributed.local_rank)
        model.to(self.device)
        optimizer = self.optimizer.construct(model_parameters=parameter_groups(model))
        scheduler = self.scheduler.construct(optimizer=optimizer) if self.scheduler else None
        scaler = torch.amp.GradScaler(self.device.type, enabled=self.mixed_precision == "fp16" and self.device.type == "cuda")
        checkpointer = Checkpointer(Path(serialization_dir) / "checkpoints")
        validation_data = [model.index(e) for e in validation_examples] if validation_examples else []
        sampler = TokenBudgetBatchSampler([model.length(item) for item in train_data], self.max_tokens, self.max_examples, shuffle=True, seed=seed)
        # DDP averages the gradients over ranks; rank 0's initial weights are broadcast to all.
        trained = DistributedDataParallel(model, device_ids=[self.device.index] if self.device.type == "cuda" else None) if distributed.enabled else model
        if distributed.enabled:
            torch.manual_seed(seed + distributed.rank)  # different dropout on every rank
        parameters = sum(p.numel() for p in model.parameters() if p.requires_grad)
        peak = self.peak_flops() if self.report_mfu else None
        if peak:
            logger.info("matmul peak of %s in %s: %.1f GFLOP/s", self.device, self.mixed_precision or "fp32", peak / 1e9)

        history: list[dict[str, Any]] = []
        kept: list[tuple[float, int]] = []  # (score, epoch) of the checkpoints kept for averaging
        start_epoch, elapsed, bad_epochs = 0, 0.0, 0
        state = checkpointer.load_state() if recover else None
        if state is not None:
            try:
                load_weights(model, checkpointer.weights(state["epoch"]))
                optimizer.load_state_dict(state["optimizer"])
                if scheduler and state.get("scheduler"):
                    scheduler.load_state_dict(state["scheduler"])
                if state.get("scaler"):
                    scaler.load_state_dict(state["scaler"])
            except (RuntimeError, ValueError, KeyError) as error:  # a state from another model (its config.json lost)
                raise TrainingError(
                    f"--recover: the checkpoint of epoch {state['epoch']} in {checkpointer.directory} does not fit the model this config "
                    f"builds ({' '.join(str(error).split())[:300]}); train into a new directory instead"
                ) from None
            history, kept = state["history"], [tuple(k) for k in state["kept"]]
            start_epoch, elapsed, bad_epochs = state["epoch"] + 1, state["elapsed"], state["bad_epochs"]
            self.skipped_steps = state.get("skipped_steps", 0)
            ranks = state.get("rng_per_rank") or [state["rng"]]
            set_rng_state(ranks[distributed.rank] if len(ranks) == distributed.world_size else state["rng"])
            logger.info("recovered from epoch %d", state["epoch"])
            preprocessing_seconds = 0.0

        tensorboard = TensorBoardLog(serialization_dir) if distributed.is_main else None
        for epoch in range(start_epoch, self.num_epochs):
            if bad_epochs and self.patience is not None and bad_epochs >= self.patience:
                logger.info("stopping early: no improvement in %s for %d validations", self.metric_name, bad_epochs)
                break
            last_epoch_seconds = history[-1]["epoch_seconds"] if history else 0.0
            if self.max_minutes is not None and elapsed + last_epoch_seconds > 60 * self.max_minutes:
                logger.info("stopping: another epoch would overrun the time budget of %.1f minutes", self.max_minutes)
                break
            epoch_start = time.perf_counter()
            sampler.set_epoch(epoch)
            batches = distributed.shard(list(sampler))
            results = {"epoch": epoch, **self.train_epoch(trained, model, train_data, batches, optimizer, scheduler, scaler, epoch, distributed)}
            if epoch == start_epoch and preprocessing_seconds:
                results["data_seconds"] = round(results["data_seconds"] + preprocessing_seconds, 2)
            if peak and (mfu := self.utilization(parameters, results["training_tokens_per_second"], distributed.world_size)) is not None:
                results["mfu"] = mfu
            last = epoch == self.num_epochs - 1
            if validation_data and ((epoch + 1) % self.validate_every == 0 or last):
                with autocast(self.device, self.mixed_precision):
                    results.update({f"validation_{k}": v for k, v in self.validate(model, validation_data, validation_examples, metrics, distributed).items()})
            elapsed += distributed.max(time.perf_counter() - epoch_start)  # every rank takes the same budget decisions
            results.update(elapsed_seconds=round(elapsed, 1), epoch_seconds=round(time.perf_counter() - epoch_start, 1))

            score_key = f"validation_{self.metric_name}"
            if validation_data and score_key not in results and any(k.startswith("validation_") for k in results):
                raise ConfigurationError(
                    f"trainer.validation_metric {self.metric_name!r} is not computed; available: "
                    + ", ".join(k.removeprefix("validation_") for k in results if k.startswith("validation_"))
                )
            if score_key in results:
                score = results[score_key] if self.maximize else -results[score_key]
                improved = not kept or score > max(kept)[0]
                bad_epochs = 0 if improved else bad_epochs + 1
                kept = sorted(kept + [(score, epoch)], reverse=True)[: self.num_average]
            elif not validation_data:
                kept = ([(float(epoch), epoch)] + kept)[: self.num_average]  # the last N epochs
            results["best_epoch"] = max(kept)[1] if kept else epoch
            history.append(results)
            logger.info("epoch %d: %s", epoch, json.dumps(results))
            if tensorboard is not None:
                tensorboard.add(epoch, results)
            rng_per_rank = distributed.gather(rng_state())
            if distributed.is_main:
                write_atomically(Path(serialization_dir, f"metrics_epoch_{epoch}.json"), json.dumps(results, indent=2))
                checkpointer.save(
                    epoch,
                    model,
                    {
                        "epoch": epoch,
                        "optimizer": optimizer.state_dict(),
                        "scheduler": scheduler.state_dict() if scheduler else None,
                        "scaler": scaler.state_dict() if scaler.is_enabled() else None,
                        "history": history,
                        "kept": [list(k) for k in kept],
                        "elapsed": elapsed,
                        "bad_epochs": bad_epochs,
                        "skipped_steps": self.skipped_steps,
                        "rng": rng_per_rank[0],
                        "rng_per_rank": rng_per_rank,
                    },
                    [epoch for _, epoch in kept] + [epoch],  # the newest weights stay, for --recover
                )
            distributed.barrier()  # the checkpoint is complete before any rank reads it
        if tensorboard is not None:
            tensorboard.close()
        # Stopped before any validation (a tight time budget): the newest weights are all there is.
        epochs = sorted(epoch for _, epoch in kept) or [history[-1]["epoch"]]
        logger.info("final weights: the average of epochs %s", epochs)
        return checkpointer.average(epochs), history

    def train_epoch(self, trained, model, train_data, batches, optimizer, scheduler, scaler, epoch, distributed) -> dict[str, float]:
        """One pass over this rank's *batches*; *trained* is *model* or its DDP wrapper.

        With ``accumulation_steps`` K, each optimizer step sums the gradients of K batches (each
        loss divided by K); DDP synchronises only on the last of them.
        """
        trained.train()
        total_loss, steps, correct, tokens, budget_tokens, data_seconds = 0.0, 0, 0, 0, 0, 0.0
        start = time.perf_counter()
        loader = DataLoader(train_data, batch_sampler=batches, collate_fn=model.collate, num_workers=self.num_workers, pin_memory=self.device.type == "cuda")
        progress = tqdm(loader, desc=f"epoch {epoch}", disable=not self.progress_bar or not distributed.is_main or None, leave=False, dynamic_ncols=True)
        optimizer.zero_grad(set_to_none=True)
        data_start = time.perf_counter()
        for position, (indices, batch) in enumerate(zip(batches, progress)):
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
                self.skip(epoch, f"out of memory on a batch of {len(indices)} examples ({sum(model.length(train_data[i]) for i in indices)} tokens)")
                data_start = time.perf_counter()
                continue
            if stepping:
                scaler.unscale_(optimizer)
                norm = torch.nn.utils.clip_grad_norm_(model.parameters(), self.grad_norm if self.grad_norm is not None else math.inf)
                if torch.isfinite(norm) or scaler.is_enabled():  # fp16: the scaler skips the step and lowers its scale
                    scaler.step(optimizer)
                    scaler.update()
                    if scheduler:
                        scheduler.step()
                else:  # the norm is all-reduced under DDP, so every rank skips together
                    self.skip(epoch, f"the gradient norm is {norm.item()}")
                optimizer.zero_grad(set_to_none=True)
            if math.isfinite(loss_value := loss.item()):
                total_loss, steps = total_loss + loss_value, steps + 1
            correct, tokens = correct + int(output["correct_tokens"]), tokens + int(output["num_tokens"])
            budget_tokens += sum(model.length(train_data[i]) for i in indices)
            progress.set_postfix(loss=f"{total_loss / max(steps, 1):.4f}", acc=f"{correct / max(tokens, 1):.3f}")
            data_start = time.perf_counter()
        seconds = time.perf_counter() - start
        total_loss, steps, correct, tokens, budget_tokens = distributed.sum([total_loss, steps, correct, tokens, budget_tokens])
        return {
            "training_loss": total_loss / max(steps, 1),
            "training_token_accuracy": correct / max(tokens, 1),
            "learning_rate": optimizer.param_groups[0]["lr"],
            "training_tokens_per_second": round(budget_tokens / max(seconds, 1e-9), 1),  # all ranks together
            "data_seconds": round(data_seconds, 2),
            "skipped_steps": self.skipped_steps,
        }

    def check_validation_metric(self, metrics: Sequence[Metric]) -> None:
        """Fail before the first epoch, not after it, if no metric computes ``validation_metric``."""
        names = [metric.names() for metric in metrics]
        if any(found is None for found in names):
            return
        available = ["loss"] + [name for found in names for name in found]
        if self.metric_name not in available:
            close = difflib.get_close_matches(self.metric_name, available, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise ConfigurationError(f"trainer.validation_metric: no metric computes {self.metric_name!r}{hint}; available: {', '.join(available)}")

    def peak_flops(self, again: bool = False) -> float:
        return measure_peak_flops(PRECISION_DTYPES.get(self.mixed_precision, torch.float32), seconds=0.5, device=self.device, again=again)

    def utilization(self, parameters: int, tokens_per_second: float, world_size: int) -> float | None:
        """The epoch's MFU, a share of at most 1, or ``None`` (logged) when no honest figure exists.

        A share above 1 means the peak was measured while other work slowed the machine down: it
        is measured again (the higher figure kept), and if training still outran it, left out.
        """
        mfu = model_flops_utilization(parameters, tokens_per_second, self.peak_flops() * world_size)
        if mfu > 1 and not self.peak_measured_again:  # once a run: each measurement takes a second
            self.peak_measured_again = True
            mfu = model_flops_utilization(parameters, tokens_per_second, self.peak_flops(again=True) * world_size)
        if mfu > 1:
            logger.warning("MFU left out: training ran faster than the matmul peak measured on this busy machine (%.1f GFLOP/s)", self.peak_flops() / 1e9)
            return None
        return round(mfu, 4)

    def skip(self, epoch: int, why: str) -> None:
        """Count a skipped optimizer step; too many stop the run."""
        self.skipped_steps += 1
        logger.warning("epoch %d: skipped an optimizer step: %s (%d so far)", epoch, why, self.skipped_steps)
        if self.skipped_steps > self.max_skipped_steps:
            raise TrainingError(
                f"stopping after {self.skipped_steps} skipped optimizer steps (non-finite gradients or out of memory), more than "
                "trainer.max_skipped_steps; lower the learning rate, clip gradients (trainer.grad_norm), prefer bf16 to fp16, "
                "or lower trainer.max_tokens"
            )

    @torch.no_grad()
    def validate(self, model, validation_data, validation_examples, metrics, distributed=Distributed()) -> dict[str, float]:
        """Loss and metrics on the validation set; under ``torchrun`` each rank decodes a share."""
        model.eval()
        shard = distributed.unpadded_shard(range(len(validation_data)))
        sampler = TokenBudgetBatchSampler([model.length(validation_data[i]) for i in shard], self.decode_max_tokens, shuffle=False)
        loss, tokens = 0.0, 0
        for indices in sampler:
            output = model(move_to_device(model.collate([validation_data[shard[i]] for i in indices]), self.device))
            loss += output["loss"].item() * int(output["num_tokens"])
            tokens += int(output["num_tokens"])
        loss, tokens = distributed.sum([loss, tokens])
        results = {"loss": loss / max(tokens, 1)}
        if metrics:
            local = predict(model, [validation_examples[i] for i in shard], self.decode_max_tokens, self.validation_search)
            predictions = distributed.gather_shards(local, len(validation_examples))
            results.update(score(predictions, validation_examples, metrics))
        return results
