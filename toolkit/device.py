"""Where training runs and in which precision: one place for CUDA/CPU and autocast choices."""

import contextlib
from typing import Any

import torch

from toolkit.errors import ConfigurationError

PRECISION_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}


def move_to_device(batch: Any, device: torch.device) -> Any:
    """*batch* with every tensor in it (also inside dicts, such as an encoder's inputs) on *device*."""
    if isinstance(batch, torch.Tensor):
        return batch.to(device, non_blocking=True)
    if isinstance(batch, dict):
        return {key: move_to_device(value, device) for key, value in batch.items()}
    return batch


def resolve_device(name: str = "auto", key: str = "trainer.device") -> torch.device:
    """``"auto"`` picks CUDA when present, else the CPU; anything else unusable here is an error naming *key*.

    *key* is where the name came from: the config's ``trainer.device``, or ``--device`` on the command line.
    """
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(name)
    except (RuntimeError, TypeError):
        device = None
    if device is None or device.type not in ("cpu", "cuda"):
        raise ConfigurationError(f'{key}: {name!r} is not a device this toolkit runs on; use "auto", "cpu", "cuda" or "cuda:N"')
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ConfigurationError(f'{key} is {name!r} but CUDA is not available; use "auto" or "cpu"')
    if device.type == "cuda" and device.index is not None and device.index >= torch.cuda.device_count():
        raise ConfigurationError(f"{key} is {name!r} but this machine has {torch.cuda.device_count()} CUDA device(s), numbered from 0")
    return device


def resolve_precision(precision: str | None, device: torch.device) -> str | None:
    """``"auto"`` means bf16 autocast on a GPU that supports it, and full precision elsewhere."""
    if precision == "auto":
        return "bf16" if device.type == "cuda" and torch.cuda.is_bf16_supported() else None
    if precision not in (None, "bf16", "fp16"):
        raise ConfigurationError(f"trainer.mixed_precision must be null, 'auto', 'bf16' or 'fp16', got {precision!r}")
    if precision == "fp16" and device.type == "cpu":
        raise ConfigurationError("trainer.mixed_precision 'fp16' needs a GPU; use 'bf16' on the CPU")
    return precision


def autocast(device: torch.device, precision: str | None):
    """Autocast to bf16/fp16 on *device*, or a no-op context when *precision* is ``None``."""
    if precision is None:
        return contextlib.nullcontext()
    return torch.autocast(device.type, dtype=PRECISION_DTYPES[precision])
