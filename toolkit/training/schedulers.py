"""Learning-rate schedules that scale the optimizer's base rate step by step.

``noam`` is Vaswani et al. (2017), eq. 3: ``factor * d^-0.5 * min(step^-0.5, step * warmup^-1.5)``,
a multiplier of the optimizer's ``lr`` (set ``lr`` to 1.0 for the paper's exact rates).
``inverse_sqrt`` (fairseq) warms up linearly to the base rate, then decays as ``sqrt(warmup / step)``.

A parameter group with a ``warmup_steps`` of its own (a fine-tuned pretrained transformer's, from
its token embedder) follows the same schedule with that warmup, from its own base rate.
"""

import torch

from toolkit.from_params import PositiveFloat, PositiveInt
from toolkit.registrable import Registrable


class LearningRateScheduler(Registrable):
    """Wraps ``torch.optim.lr_scheduler.LambdaLR`` around a multiplier of the step number (from 1)."""

    default_implementation = "inverse_sqrt"

    warmup_steps: int | None = None

    def __init__(self, optimizer: torch.optim.Optimizer):
        warmups = [group.get("warmup_steps", self.warmup_steps) for group in optimizer.param_groups]
        self.longest_warmup = max((warmup or 0 for warmup in warmups), default=0)
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, [lambda step, warmup=warmup: self.multiplier(step + 1, warmup) for warmup in warmups])

    def multiplier(self, step: int, warmup_steps: int | None) -> float:  # pragma: no cover - abstract
        """The factor of a group's base rate at *step* (from 1), for the group's *warmup_steps*."""
        raise NotImplementedError

    def step(self) -> None:
        self.scheduler.step()

    @property
    def warming_up(self) -> bool:
        """Whether some group's rate is still rising: a model validated then says little about patience."""
        return self.scheduler.last_epoch < self.longest_warmup

    def state_dict(self) -> dict:
        return self.scheduler.state_dict()

    def load_state_dict(self, state: dict) -> None:
        self.scheduler.load_state_dict(state)


@LearningRateScheduler.register("noam")
class NoamScheduler(LearningRateScheduler):
    def __init__(self, optimizer: torch.optim.Optimizer, model_size: PositiveInt, warmup_steps: PositiveInt = 4000, factor: PositiveFloat = 1.0):
        self.model_size, self.warmup_steps, self.factor = model_size, warmup_steps, factor
        super().__init__(optimizer)

    def multiplier(self, step: int, warmup_steps: int) -> float:
        return self.factor * self.model_size**-0.5 * min(step**-0.5, step * warmup_steps**-1.5)


@LearningRateScheduler.register("inverse_sqrt")
class InverseSqrtScheduler(LearningRateScheduler):
    def __init__(self, optimizer: torch.optim.Optimizer, warmup_steps: PositiveInt = 4000):
        self.warmup_steps = warmup_steps
        super().__init__(optimizer)

    def multiplier(self, step: int, warmup_steps: int) -> float:
        return min(step / warmup_steps, (warmup_steps / step) ** 0.5)


@LearningRateScheduler.register("constant")
class ConstantScheduler(LearningRateScheduler):
    """The base rate throughout (after a linear warmup, for a group that has one)."""

    def multiplier(self, step: int, warmup_steps: int | None) -> float:
        return min(1.0, step / warmup_steps) if warmup_steps else 1.0
