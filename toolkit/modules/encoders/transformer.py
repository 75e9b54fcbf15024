"""The Transformer encoder (Vaswani et al., 2017), pre- or post-norm, over sentences or trees."""

import torch
from torch import nn

from toolkit.errors import ConfigurationError
from toolkit.from_params import PositiveInt, Probability
from toolkit.modules.attention import MultiHeadAttention, padding_mask
from toolkit.modules.encoders.encoder import Seq2SeqEncoder
from toolkit.modules.feedforward import FeedForward
from toolkit.modules.positional_encoding import SinusoidalPositionalEncoding
from toolkit.modules.tree_positional_encoding import TreePositionalEncoding


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
    """A stack of self-attention layers over positioned embeddings.

    *norm_first* selects pre-norm layers (with a final LayerNorm), which train stably without a
    long warmup; ``false`` gives the original post-norm Transformer. *positional_encoding* is
    ``"sinusoidal"`` for sentences, or ``"tree"`` for tree inputs (tree-to-tree, Shiv & Quirk, 2019):
    each token then carries its node's branch path (``Example.token_paths``, set by the
    ``tree_pairs`` reader), encoded with *tree_degree*, *tree_max_depth* and *tree_parameterized*.
    """

    def __init__(
        self,
        input_dim: PositiveInt,
        num_layers: PositiveInt = 3,
        num_heads: PositiveInt = 4,
        ff_dim: PositiveInt = 1024,
        dropout: Probability = 0.1,
        attention_dropout: Probability = 0.0,
        norm_first: bool = True,
        max_length: PositiveInt = 1024,
        positional_encoding: str = "sinusoidal",
        tree_degree: int = 2,
        tree_max_depth: int = 32,
        tree_parameterized: bool = True,
    ):
        super().__init__()
        if positional_encoding not in ("sinusoidal", "tree"):
            raise ConfigurationError(f"encoder.positional_encoding must be 'sinusoidal' or 'tree', got {positional_encoding!r}")
        self.input_dim = input_dim
        self.reads_trees = positional_encoding == "tree"
        if self.reads_trees:
            self.tree_positions = TreePositionalEncoding(input_dim, tree_degree, tree_max_depth, tree_parameterized)
        else:
            self.positions = SinusoidalPositionalEncoding(input_dim, max_length)
            self.max_length = max_length
        self.dropout = nn.Dropout(dropout)
        self.layers = nn.ModuleList(TransformerEncoderLayer(input_dim, num_heads, ff_dim, dropout, attention_dropout, norm_first) for _ in range(num_layers))
        self.final_norm = nn.LayerNorm(input_dim) if norm_first else nn.Identity()

    def example_inputs(self, example):
        """With tree positions, the branch path of every token (``Example.token_paths``)."""
        if not self.reads_trees:
            return {}
        if example.token_paths is None:
            raise ConfigurationError(
                "model.encoder reads tree inputs (positional_encoding 'tree'), but the examples are sentences: use a tree reader such as 'tree_pairs'"
            )
        return {"token_paths": example.token_paths}

    def batch_inputs(self, inputs, num_tokens):
        """``token_paths``: (B, S, n·k) branch one-hots; padding sits at the root (zero), and is masked anyway."""
        if not self.reads_trees:
            return {}
        padded = [path for item in inputs for path in list(item["token_paths"]) + [()] * (num_tokens - len(item["token_paths"]))]
        return {"token_paths": self.tree_positions.one_hots(padded).view(len(inputs), num_tokens, -1)}

    def forward(self, embedded: torch.Tensor, mask: torch.Tensor, token_paths: torch.Tensor | None = None) -> torch.Tensor:
        if not self.reads_trees:
            x = self.positions(embedded)
        elif token_paths is None:
            raise ConfigurationError("encoder.positional_encoding 'tree' needs tree inputs: use a tree reader such as 'tree_pairs'")
        else:
            x = embedded + self.tree_positions(token_paths).to(embedded.dtype)
        x = self.dropout(x)
        attention_mask = padding_mask(mask)  # (B, 1, 1, S)
        for layer in self.layers:
            x = layer(x, attention_mask)
        return self.final_norm(x)

    def get_output_dim(self) -> int:
        return self.input_dim
