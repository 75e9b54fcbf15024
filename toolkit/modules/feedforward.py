"""The position-wise feed-forward block of a Transformer layer."""

from torch import nn

from toolkit.modules.dropout import Dropout


class FeedForward(nn.Sequential):
    def __init__(self, dim: int, hidden_dim: int, dropout: float = 0.0, activation: str = "relu"):
        activations = {"relu": lambda: nn.ReLU(inplace=True), "gelu": nn.GELU}  # in place: the product before it is not needed again
        if activation not in activations:
            raise ValueError(f"unknown activation {activation!r}; available: {', '.join(activations)}")
        super().__init__(nn.Linear(dim, hidden_dim), activations[activation](), Dropout(dropout), nn.Linear(hidden_dim, dim))
