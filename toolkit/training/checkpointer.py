"""Checkpoints: model weights (safetensors) and training state, written atomically, each epoch.

``model_epoch_K.safetensors`` holds the weights after epoch K; ``training_state.pt`` holds what
``--recover`` needs to continue exactly (optimizer, scheduler, RNG, history), loaded with
``weights_only=True`` so nothing is unpickled. Only the weights the final average needs are
kept: the newest (for ``--recover``) and those the trainer will average.
"""

import os
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file


def atomic_write(path: Path, write) -> None:
    """Call ``write(temporary_path)`` then rename over *path*, so a crash never leaves a torn file."""
    temporary = path.with_name(path.name + ".tmp")
    write(temporary)
    with open(temporary, "rb") as handle:
        os.fsync(handle.fileno())
    os.replace(temporary, path)


class Checkpointer:
    STATE = "training_state.pt"

    def __init__(self, directory: str | os.PathLike):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)

    def weights_path(self, epoch: int) -> Path:
        return self.directory / f"model_epoch_{epoch}.safetensors"

    def save(self, epoch: int, model: torch.nn.Module, state: dict[str, Any], kept_epochs: list[int]) -> None:
        """Write epoch *epoch*'s weights and the training state, then drop weights not in *kept_epochs*."""
        atomic_write(self.weights_path(epoch), lambda path: save_weights(model, path))
        atomic_write(self.directory / self.STATE, lambda path: torch.save(state, path))
        for path in self.directory.glob("model_epoch_*.safetensors"):
            if int(path.stem.rsplit("_", 1)[1]) not in kept_epochs:
                path.unlink()

    def load_state(self) -> dict[str, Any] | None:
        path = self.directory / self.STATE
        return torch.load(path, weights_only=True) if path.exists() else None

    def average(self, epochs: list[int]) -> dict[str, torch.Tensor]:
        """The element-wise mean of the weights of *epochs* (Vaswani et al. average the last checkpoints)."""
        total: dict[str, torch.Tensor] = {}
        for epoch in epochs:
            for name, tensor in load_file(str(self.weights_path(epoch))).items():
                total[name] = total.get(name, 0) + tensor.double()
        return {name: (tensor / len(epochs)).float() for name, tensor in total.items()}


def save_weights(model: torch.nn.Module, path: str | os.PathLike) -> None:
    """Write *model*'s weights as safetensors, each tied tensor once (under its first name).

    ``safetensors.save_model`` refuses tensors that are views into a larger shared buffer, which
    is what cuDNN makes of an ``nn.LSTM``'s weights on a GPU; here only exact aliases (tied
    embeddings) are merged, and every other tensor is written as its own contiguous copy.
    """
    tensors: dict[str, torch.Tensor] = {}
    seen: set[tuple] = set()
    for name, tensor in model.state_dict().items():
        alias = (tensor.device, tensor.data_ptr(), tensor.shape, tensor.stride())
        if alias in seen:
            continue
        seen.add(alias)
        tensors[name] = tensor.detach().to("cpu", copy=True).contiguous()
    save_file(tensors, str(path))


def load_weights(model: torch.nn.Module, weights: dict[str, torch.Tensor]) -> None:
    """Load *weights* written by :func:`save_weights`, which stores each tied tensor once."""
    missing, unexpected = model.load_state_dict(weights, strict=False)
    loaded = {id(tensor) for name, tensor in model.state_dict(keep_vars=True).items() if name in weights}
    untied = [name for name in missing if id(model.state_dict(keep_vars=True)[name]) not in loaded]
    if untied or unexpected:
        raise RuntimeError(f"weights do not fit the model: missing {untied}, unexpected {unexpected}")
