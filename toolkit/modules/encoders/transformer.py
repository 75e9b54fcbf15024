"""The Transformer encoder (Vaswani et al., 2017), pre- or post-norm."""

import torch
from torch import nn

from toolkit.modules.attention import MultiHeadAttention, padding_mask
from toolkit.modules.encoders.encoder import Seq2SeqEncoder
from toolkit.modules.feedforward import FeedForward
from toolkit.modules.positional_encoding import SinusoidalPositionalEncoding


class TransformerEncoderLayer(nn.Module):
    def __init__(self, dim: int, num_heads: int, ff_dim: int, dropout: float, attention_dropout: float, norm_first: bool):
        super().__init__()
        self.attention = MultiHeadAttention(dim, num_heads, attention_dropout)
        self.feedforward = FeedForward(dim, ff_dim, dropout)
        self.norm_attention, self.norm_feedforward = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.dropout = nn.Dropout(dropout)
        self.norm_first = norm_first

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        if self.norm_first:
            h = self.norm_attention(x)
            x = x + self.dropout(self.attention(h, h, mask))
            return x + self.dropout(self.feedforward(self.norm_feedforward(x)))
        x = self.norm_attention(x + self.dropout(self.attention(x, x, mask)))
        return self.norm_feedforward(x + self.dropout(self.feedforward(x)))


@Seq2SeqEncoder.register("transformer")
class TransformerEncoder(Seq2SeqEncoder):
    """A stack of self-attention layers over sinusoidally positioned embeddings.

    *norm_first* selects pre-norm layers (with a final LayerNorm), which train stably without a
    long warmup; ``false`` gives the original post-norm Transformer.
    """

    def __init__(
        self,
        input_dim: int,
        num_layers: int = 3,
        num_heads: int = 4,
        ff_dim: int = 1024,
        dropout: float = 0.1,
        attention_dropout: float = 0.0,
        norm_first: bool = True,
        max_length: int = 1024,
    ):
        super().__init__()
        self.input_dim = input_dim
        self.positions = SinusoidalPositionalEncoding(input_dim, max_length)
        self.dropout = nn.Dropout(dropout)
        self.layers = nn.ModuleList(
            TransformerEncoderLayer(input_dim, num_heads, ff_dim, dropout, attention_dropout, norm_first) for _ in range(num_layers)
        )
        self.final_norm = nn.LayerNorm(input_dim) if norm_first else nn.Identity()

    def forward(self, embedded: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        x = self.dropout(self.positions(embedded))
        attention_mask = padding_mask(mask)  # (B, 1, 1, S)
        for layer in self.layers:
            x = layer(x, attention_mask)
        return self.final_norm(x)

    def get_output_dim(self) -> int:
        return self.input_dim
