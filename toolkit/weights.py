"""Model weights as safetensors: written with tied tensors once, loaded with ties restored, hashed.

The archive and the checkpointer share these, so inference needs nothing from the trainer package.
"""

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path

import torch
from safetensors.torch import save_file


def sha256(path: Path) -> str:
    """The SHA-256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        while block := file.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def save_weights(model: torch.nn.Module, path: str | os.PathLike, leave_out: Sequence[str] = ()) -> None:
    """Write *model*'s weights as safetensors, each tied tensor once (under its first name).

    ``safetensors.save_model`` refuses tensors that are views into a larger shared buffer, which
    is what cuDNN makes of an ``nn.LSTM``'s weights on a GPU; here only exact aliases (tied
    embeddings) are merged, and every other tensor is written as its own contiguous copy. Keys
    that start with a prefix in *leave_out* are not written (pretrained weights an archive refers to).
    """
    tensors: dict[str, torch.Tensor] = {}
    seen: set[tuple] = set()
    for name, tensor in model.state_dict().items():
        if name.startswith(tuple(leave_out)):
            continue
        alias = (tensor.device, tensor.data_ptr(), tensor.shape, tensor.stride())
        if alias in seen:
            continue
        seen.add(alias)
        tensors[name] = tensor.detach().to("cpu", copy=True).contiguous()
    save_file(tensors, str(path))


def load_weights(model: torch.nn.Module, weights: dict[str, torch.Tensor], left_out: Sequence[str] = ()) -> None:
    """Load *weights* written by :func:`save_weights`, which stores each tied tensor once (and none under *left_out*)."""
    missing, unexpected = model.load_state_dict(weights, strict=False)
    loaded = {id(tensor) for name, tensor in model.state_dict(keep_vars=True).items() if name in weights}
    untied = [name for name in missing if id(model.state_dict(keep_vars=True)[name]) not in loaded and not name.startswith(tuple(left_out))]
    if untied or unexpected:
        raise RuntimeError(f"weights do not fit the model: missing {untied}, unexpected {unexpected}")
