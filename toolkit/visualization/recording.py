"""Capture the attention probabilities of a model during one forward pass, without changing its code.

Every attention in the toolkit runs through :class:`~toolkit.modules.attention.MultiHeadAttention`,
whose fused kernel never materialises the probabilities. Inside :func:`record_attention` each such
module has a ``recorder`` that receives them; outside it the modules are exactly as before.
"""

from collections.abc import Iterator
from contextlib import contextmanager

import torch
from torch import nn

from toolkit.modules.attention import MultiHeadAttention

AttentionMaps = dict[str, list[torch.Tensor]]  # module name -> one (B, H, T, S) tensor per call, in call order


@contextmanager
def record_attention(model: nn.Module) -> Iterator[AttentionMaps]:
    """Record, per attention module of *model* (named as in ``named_modules``), the probabilities of every call.

    The tensors are detached float copies on the CPU, so recording never holds the graph or GPU memory.
    """
    maps: AttentionMaps = {}
    modules = [(name, module) for name, module in model.named_modules() if isinstance(module, MultiHeadAttention)]

    def recorder_of(name: str):
        return lambda _module, probabilities: maps.setdefault(name, []).append(probabilities.detach().float().cpu())

    for name, module in modules:
        module.recorder = recorder_of(name)
    try:
        yield maps
    finally:
        for _, module in modules:
            del module.recorder
