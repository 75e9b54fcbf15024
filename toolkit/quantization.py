"""int8 dynamic quantization for CPU inference (``--quantize int8``, ``load_predictor(quantize="int8")``).

Every ``nn.Linear`` of a loaded model gets int8 weights, one scale per output row (per channel),
and its inputs are quantized batch by batch as it runs (``torch.ao.quantization.quantize_dynamic``
with ``per_channel_dynamic_qconfig``). One scale per row rather than per matrix halved the loss of a
parser reading MiniLM's first 3 layers (EWT dev LAS 85.78 in float32; 84.38 with one scale per
matrix, 85.05 per row, at 0.95 of the speed): the encoder's projections and feed-forward
blocks, the decoder's, and the output layer multiply in int8, which is most of a Transformer
parser's CPU time. Embeddings, attention's softmax and the layer norms stay in floating point.
Outputs can change: ``tests/test_quantization.py`` bounds how much on a fixture, and the benchmarks
report accuracy beside speed. Only the CPU has these kernels, so a model on a GPU is refused.
"""

from __future__ import annotations

import warnings

import torch
from torch import nn

from toolkit.errors import ConfigurationError

QUANTIZATIONS = ("int8",)


def quantize(model: nn.Module, scheme: str | None, option: str = "--quantize") -> nn.Module:
    """*model* with its Linear layers quantized to *scheme* in place (``None``: unchanged); for inference only."""
    if scheme is None:
        return model
    if scheme not in QUANTIZATIONS:
        raise ConfigurationError(f"{option} must be one of {', '.join(QUANTIZATIONS)}, got {scheme!r}")
    device = next((parameter.device for parameter in model.parameters()), torch.device("cpu"))
    if device.type != "cpu":
        raise ConfigurationError(f"{option} {scheme} runs on the CPU, and the model is on {device}: give --device cpu")
    model.eval()
    with warnings.catch_warnings():  # torch 2.13 points eager quantization to torchao; the eager API still works and needs no extra package
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", UserWarning)
        per_row = {nn.Linear: torch.ao.quantization.per_channel_dynamic_qconfig}
        torch.ao.quantization.quantize_dynamic(model, per_row, dtype=torch.qint8, inplace=True)
    return model
