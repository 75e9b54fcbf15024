"""Optimizers built from config: torch optimizers registered under :class:`Optimizer`.

Each is the torch class itself with a registrable name, so a config says
``"optimizer": {"type": "adam", "lr": 1e-3, "betas": [0.9, 0.98], "eps": 1e-9}`` and the trainer
supplies the parameters at run time (``Lazy[Optimizer]``).
"""

from collections.abc import Iterable
from typing import Any

import torch

from toolkit.registrable import Registrable


class Optimizer(Registrable):
    default_implementation = "adam"


def parameter_groups(model: torch.nn.Module) -> list[dict[str, Any]]:
    """The trainable parameters as optimizer groups: first every one without settings of its own
    (the optimizer's ``lr`` and the rest apply), then the model's own groups (``model.parameter_groups()``,
    e.g. a fine-tuned transformer with its learning rate). A frozen parameter is in none, so it
    never gets optimizer state.
    """
    own = [{**group, "params": [p for p in group["params"] if p.requires_grad]} for group in getattr(model, "parameter_groups", list)()]
    own = [group for group in own if group["params"]]
    taken = {id(parameter) for group in own for parameter in group["params"]}
    return [{"params": [p for p in model.parameters() if p.requires_grad and id(p) not in taken]}, *own]


@Optimizer.register("adam")
class AdamOptimizer(Optimizer, torch.optim.Adam):
    def __init__(
        self,
        model_parameters: Iterable[torch.nn.Parameter],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        amsgrad: bool = False,
    ):
        torch.optim.Adam.__init__(self, model_parameters, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad)


@Optimizer.register("adamw")
class AdamWOptimizer(Optimizer, torch.optim.AdamW):
    def __init__(
        self,
        model_parameters: Iterable[torch.nn.Parameter],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.01,
    ):
        torch.optim.AdamW.__init__(self, model_parameters, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)
