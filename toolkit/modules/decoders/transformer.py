"""The Transformer decoder (Vaswani et al., 2017) with key/value caching for incremental decoding."""

import torch
from torch import nn

from toolkit.errors import ConfigurationError
from toolkit.from_params import PositiveInt, Probability
from toolkit.modules.attention import MultiHeadAttention, padding_mask
from toolkit.modules.decoders.decoder import Decoder, DecoderCache, SelfAttentionCache
from toolkit.modules.feedforward import FeedForward
from toolkit.modules.positional_encoding import SinusoidalPositionalEncoding
from toolkit.modules.tree_positional_encoding import TreePositionalEncoding


class TransformerDecoderLayer(nn.Module):
    def __init__(self, dim: int, num_heads: int, ff_dim: int, dropout: float, attention_dropout: float, norm_first: bool):
        super().__init__()
        self.self_attention = MultiHeadAttention(dim, num_heads, attention_dropout)
        self.cross_attention = MultiHeadAttention(dim, num_heads, attention_dropout)
        self.feedforward = FeedForward(dim, ff_dim, dropout)
        self.norms = nn.ModuleList(nn.LayerNorm(dim) for _ in range(3))
        self.dropout = nn.Dropout(dropout)
        self.norm_first = norm_first

    def sublayer(self, i: int, x: torch.Tensor, fn) -> torch.Tensor:
        """Residual connection around *fn* with pre- or post-LayerNorm."""
        if self.norm_first:
            return x + self.dropout(fn(self.norms[i](x)))
        return self.norms[i](x + self.dropout(fn(x)))

    def forward(
        self,
        x: torch.Tensor,
        memory_kv: tuple[torch.Tensor, torch.Tensor],
        memory_mask: torch.Tensor,
        cache: SelfAttentionCache | None = None,
        layer: int = 0,
    ) -> torch.Tensor:
        """*x* (B, T, D); with *cache* the T new positions follow the cached ones (as layer *layer* of it)."""

        def self_attend(h):
            keys, values = self.self_attention.project_keys_values(h)  # (B, H, T, d)
            if cache is not None:
                keys, values = cache.extend(layer, keys, values)
            # Incremental steps attend to every cached position; teacher forcing is causal.
            return self.self_attention.attend(h, keys, values, causal=cache is None and h.size(1) > 1)

        x = self.sublayer(0, x, self_attend)
        x = self.sublayer(1, x, lambda h: self.cross_attend(h, memory_kv, memory_mask))
        return self.sublayer(2, x, self.feedforward)

    def cross_attend(self, h: torch.Tensor, memory_kv: tuple[torch.Tensor, torch.Tensor], memory_mask) -> torch.Tensor:
        """Attention of the normalised states *h* over the source; the Stack-Transformer layer overrides it."""
        return self.cross_attention.attend(h, *memory_kv, mask=memory_mask)


@Decoder.register("transformer")
class TransformerDecoder(Decoder):
    """A stack of causal self-attention, cross-attention and feed-forward layers.

    *positional_encoding* is ``"sinusoidal"`` (sequence positions) or ``"tree"``: each input
    symbol carries the tree position of the node it belongs to, read from the grammar state's
    ``features()["path"]`` (the start symbol carries the root's zero vector), encoded as in
    Shiv & Quirk (2019) with *tree_degree*, *tree_max_depth* and *tree_parameterized*.
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
            raise ConfigurationError(f"decoder.positional_encoding must be 'sinusoidal' or 'tree', got {positional_encoding!r}")
        self.input_dim = input_dim
        self.uses_features = positional_encoding == "tree"
        if self.uses_features:
            self.tree_positions = TreePositionalEncoding(input_dim, tree_degree, tree_max_depth, tree_parameterized)
        else:
            self.positions = SinusoidalPositionalEncoding(input_dim, max_length)
            self.max_length = max_length
        self.dropout = nn.Dropout(dropout)
        self.layers = nn.ModuleList(TransformerDecoderLayer(input_dim, num_heads, ff_dim, dropout, attention_dropout, norm_first) for _ in range(num_layers))
        self.final_norm = nn.LayerNorm(input_dim) if norm_first else nn.Identity()

    def one_hots(self, paths, device) -> torch.Tensor:
        return self.tree_positions.one_hots(paths).to(device)

    def batch_features(self, features, device):
        """(B, T, n·k) one-hots: input t is the symbol of node t - 1, so it carries that node's path."""
        length = max(map(len, features))
        paths = [[()] + [step["path"] for step in steps[:-1]] + [()] * (length - len(steps)) for steps in features]
        return self.one_hots([path for example in paths for path in example], device).view(len(features), length, -1)

    def step_features(self, features, device):
        return self.one_hots([step["path"] for step in features], device)  # (N, n·k): the nodes about to be predicted

    def add_positions(self, embedded: torch.Tensor, one_hots: torch.Tensor | None, offset: int = 0) -> torch.Tensor:
        if self.uses_features:
            return embedded + self.tree_positions(one_hots).to(embedded.dtype)
        return self.positions(embedded, offset)

    def forward(self, embedded, memory, memory_mask, features=None):
        x = self.dropout(self.add_positions(embedded, features))
        mask = padding_mask(memory_mask)
        for layer in self.layers:
            x = layer(x, layer.cross_attention.project_keys_values(memory), mask)
        return self.final_norm(x)

    def start(self, memory, memory_mask):
        extra = {}
        if self.uses_features:  # the start symbol sits at the root: the zero position
            extra["input_position"] = memory.new_zeros(memory.size(0), self.tree_positions.width)
        return DecoderCache(
            memory_mask,
            [layer.cross_attention.project_keys_values(memory) for layer in self.layers],
            SelfAttentionCache(len(self.layers)),
            extra=extra,
        )

    def step(self, embedded, cache, features=None):
        position = cache.extra.get("input_position")
        x = self.dropout(self.add_positions(embedded, None if position is None else position[:, None], offset=cache.step))
        mask = padding_mask(cache.memory_mask)
        for i, (layer, memory_kv) in enumerate(zip(self.layers, cache.memory_keys_values)):
            x = layer(x, memory_kv, mask, cache.self_attention, i)
        # The node predicted now is the one the next input symbol belongs to.
        return self.final_norm(x), cache.advanced(x.size(1), {"input_position": features} if self.uses_features else None)
