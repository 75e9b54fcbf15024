"""Validation while training: the metric that chooses checkpoints checked up front, the validation set decoded, the best epochs kept."""

import difflib
from collections.abc import Sequence
from typing import Any

import torch

from toolkit.data.batching import TokenBudgetBatchSampler
from toolkit.decoding import Search
from toolkit.errors import ConfigurationError
from toolkit.evaluation import DecodingStopped, move_to_device, predict, score
from toolkit.metrics.metric import Metric
from toolkit.training.frozen_caches import caching_in_eval
from toolkit.training.state import TrainingRun, TrainingState


class Validation:
    """What :class:`~toolkit.training.trainer.GradientDescentTrainer` does with its validation set, from the settings it keeps."""

    metric_name: str
    maximize: bool
    num_average: int
    decode_max_tokens: int
    validation_search: Search | None
    device: torch.device

    def check_validation_metric(self, metrics: Sequence[Metric]) -> None:
        """Fail before the first epoch, not after it, if no metric computes ``validation_metric``."""
        names = [metric.names() for metric in metrics]
        if any(found is None for found in names):
            return
        available = ["loss"] + [name for found in names for name in found]
        per_domain = any(self.metric_name.endswith(f"_{name}") for name in available)  # bio_smatch: a domain's (toolkit.evaluation.score)
        if self.metric_name not in available and not per_domain:
            close = difflib.get_close_matches(self.metric_name, available, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise ConfigurationError(f"trainer.validation_metric: no metric computes {self.metric_name!r}{hint}; available: {', '.join(available)}")

    def select_checkpoints(self, state: TrainingState, epoch: int, results: dict[str, Any], has_validation: bool, warming_up: bool = False) -> None:
        """Keep the best epochs for the final average (the last ones without validation data) and count validations without improvement (none during a warmup)."""
        score_key = f"validation_{self.metric_name}"
        if has_validation and score_key not in results and any(k.startswith("validation_") for k in results):
            raise ConfigurationError(
                f"trainer.validation_metric {self.metric_name!r} is not computed; available: "
                + ", ".join(k.removeprefix("validation_") for k in results if k.startswith("validation_"))
            )
        state.kept = [kept for kept in state.kept if kept[1] != epoch]  # an epoch the time budget had cut short, now finished
        if score_key in results:
            score = results[score_key] if self.maximize else -results[score_key]
            improved = not state.kept or score > max(state.kept)[0]
            state.bad_epochs = 0 if improved else state.bad_epochs + (0 if warming_up else 1)
            state.kept = sorted(state.kept + [(score, epoch)], reverse=True)[: self.num_average]
        elif not has_validation:
            state.kept = ([(float(epoch), epoch)] + state.kept)[: self.num_average]  # the last N epochs
        results["best_epoch"] = max(state.kept)[1] if state.kept else epoch

    @torch.no_grad()
    def validate(self, run: TrainingRun) -> dict[str, float] | None:
        """Loss and metrics on the validation set; under ``torchrun`` each rank decodes a share.

        ``None`` when the time budget ran out before the validation ended (checked between batches,
        except under ``torchrun``, where ranks decode shares of different sizes and could not agree).
        """
        model, validation_data, validation_examples, metrics, distributed = (
            run.model,
            run.validation_data,
            run.validation_examples,
            run.metrics,
            run.distributed,
        )
        model.eval()
        shard = distributed.unpadded_shard(range(len(validation_data)))
        sampler = TokenBudgetBatchSampler([model.length(validation_data[i]) for i in shard], self.decode_max_tokens, shuffle=False)
        loss, tokens = 0.0, 0
        should_stop = None if distributed.enabled else run.out_of_time
        with caching_in_eval(model):
            for indices in sampler:
                if should_stop is not None and should_stop():
                    return None
                output = model(move_to_device(model.collate([validation_data[shard[i]] for i in indices]), self.device))
                loss += output["loss"].item() * int(output["num_tokens"])
                tokens += int(output["num_tokens"])
            try:
                examples = [validation_examples[i] for i in shard]
                local = predict(model, examples, self.decode_max_tokens, self.validation_search, should_stop) if metrics else None
            except DecodingStopped:
                return None
        loss, tokens = distributed.sum([loss, tokens])
        results = {"loss": loss / max(tokens, 1)}
        if metrics:
            predictions = distributed.gather_shards(local, len(validation_examples))
            results.update(score(predictions, validation_examples, metrics))
        return results
