"""Checkpoints: model weights (safetensors) and training state, written atomically and checked, each epoch.

``model_epoch_K.safetensors`` holds the weights after epoch K; ``training_state.pt`` holds what
``--recover`` needs to continue exactly (optimizer, scheduler, RNG, history), loaded with
``weights_only=True`` so nothing is unpickled. Only the weights the final average needs are
kept: the newest (for ``--recover``) and those the trainer will average.
"""

import os
import pickle
import zipfile
from pathlib import Path
from typing import Any

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file

from toolkit.errors import TrainingError
from toolkit.files import atomic_write
from toolkit.weights import save_weights, sha256

CHECKPOINTS_DIR = "checkpoints"  # inside the serialization directory


class Checkpointer:
    """Each epoch's weights and the training state, written atomically; every file checked before it is used.

    The state records the SHA-256 of every weights file it keeps (``checksums``), so a checkpoint
    damaged after it was written (a flipped byte, a truncated copy) is found before ``--recover``
    or the final average reads it, and named in a :class:`TrainingError`.
    """

    STATE = "training_state.pt"

    def __init__(self, directory: str | os.PathLike):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.checksums: dict[str, str] = {}  # weights file name -> SHA-256, as the state records them

    def weights_path(self, epoch: int) -> Path:
        return self.directory / f"model_epoch_{epoch}.safetensors"

    def save(self, epoch: int, model: torch.nn.Module, state: dict[str, Any], kept_epochs: list[int]) -> None:
        """Write epoch *epoch*'s weights and the training state, then drop weights not in *kept_epochs*."""
        atomic_write(self.weights_path(epoch), lambda path: save_weights(model, path))
        kept = {self.weights_path(k).name for k in kept_epochs}
        previous = self.checksums
        checksums = {name: previous[name] for name in kept if name in previous}
        checksums[self.weights_path(epoch).name] = sha256(self.weights_path(epoch))
        self.checksums = checksums
        atomic_write(self.directory / self.STATE, lambda path: torch.save({**state, "checksums": checksums}, path))
        for path in self.directory.glob("model_epoch_*.safetensors"):
            if path.name not in kept:
                path.unlink()

    def load_state(self) -> dict[str, Any] | None:
        """The saved training state (``None`` before the first epoch ended); a damaged file is a TrainingError."""
        path = self.directory / self.STATE
        if not path.exists():
            return None
        if path.stat().st_size == 0:
            raise self.damaged(path, "it is empty (0 bytes)")
        try:
            state = torch.load(path, weights_only=True)
        except (EOFError, RuntimeError, pickle.UnpicklingError, zipfile.BadZipFile, ValueError, OSError) as error:
            raise self.damaged(path, f"it cannot be read ({' '.join(str(error).split())[:200]})") from None
        if not isinstance(state, dict) or "epoch" not in state:
            raise self.damaged(path, "it holds no training state")
        self.checksums = dict(state.get("checksums", {}))
        self.verify(state["epoch"])
        return state

    def verify(self, epoch: int) -> None:
        """Check epoch *epoch*'s weights file against the checksum the state recorded when it was written."""
        path = self.weights_path(epoch)
        if not path.exists():
            raise self.damaged(path, "it is missing")
        expected = self.checksums.get(path.name)
        if expected is not None and sha256(path) != expected:
            raise self.damaged(path, "its SHA-256 differs from the one recorded when it was written")

    def damaged(self, path: Path, why: str) -> TrainingError:
        return TrainingError(f"{path} is damaged: {why}; the run cannot go on from it exactly: start it again with --force")

    def weights(self, epoch: int) -> dict[str, torch.Tensor]:
        """Epoch *epoch*'s weights (on the CPU), checked first."""
        self.verify(epoch)
        try:
            return load_file(str(self.weights_path(epoch)))
        except (SafetensorError, OSError) as error:
            raise self.damaged(self.weights_path(epoch), f"it cannot be read ({error})") from None

    def average(self, epochs: list[int]) -> dict[str, torch.Tensor]:
        """The element-wise mean of the weights of *epochs* (Vaswani et al. average the last checkpoints)."""
        total: dict[str, torch.Tensor] = {}
        for epoch in epochs:
            for name, tensor in self.weights(epoch).items():
                total[name] = total.get(name, 0) + tensor.double()
        return {name: (tensor / len(epochs)).float() for name, tensor in total.items()}
