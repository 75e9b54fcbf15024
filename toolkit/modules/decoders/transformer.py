"""The Transformer decoder (Vaswani et al., 2017) with key/value caching for incremental decoding."""

import torch
from torch import nn

from toolkit.from_params import Lazy, PositiveInt
from toolkit.modules import tree_positional_encoding  # noqa: F401 - registers the "tree" positional encoding
from toolkit.modules.attention import MultiHeadAttention, padding_mask
from toolkit.modules.decoders.decoder import Decoder, DecoderCache, SelfAttentionCache
from toolkit.modules.dropout import Dropout
from toolkit.modules.feedforward import FeedForward
from toolkit.modules.positional_encoding import PositionalEncoding
from toolkit.modules.transformer_settings import DEFAULT_SETTINGS, TransformerSettings


class TransformerDecoderLayer(nn.Module):
    """Causal self-attention, cross-attention and feed-forward, each a residual sub-layer normalised as *settings* say."""

    def __init__(self, dim: int, settings: TransformerSettings):
        super().__init__()
        self.self_attention = MultiHeadAttention(dim, settings.num_heads, settings.attention_dropout)
        self.cross_attention = MultiHeadAttention(dim, settings.num_heads, settings.attention_dropout)
        self.feedforward = FeedForward(dim, settings.ff_dim, settings.dropout)
        self.norms = nn.ModuleList(nn.LayerNorm(dim) for _ in range(3))
        self.dropout = Dropout(settings.dropout)
        self.norm_first = settings.norm_first

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
            if cache is not None:  # incremental steps attend to every cached position
                return self.self_attention.attend_prefix(h, *cache.extend(layer, keys, values))
            return self.self_attention.attend(h, keys, values, causal=h.size(1) > 1)  # teacher forcing

        x = self.sublayer(0, x, self_attend)
        x = self.sublayer(1, x, lambda h: self.cross_attend(h, memory_kv, memory_mask))
        return self.sublayer(2, x, self.feedforward)

    def cross_attend(self, h: torch.Tensor, memory_kv: tuple[torch.Tensor, torch.Tensor], memory_mask) -> torch.Tensor:
        """Attention of the normalised states *h* over the source; the Stack-Transformer layer overrides it."""
        return self.cross_attention.attend(h, *memory_kv, mask=memory_mask)


@Decoder.register("transformer")
class TransformerDecoder(Decoder):
    """A stack of causal self-attention, cross-attention and feed-forward layers.

    # Parameters
    input_dim : the model width.
    layers : the layer stack's settings (:class:`TransformerSettings`).
    positional_encoding : a registered :class:`PositionalEncoding`, built with the model width:
        sinusoidal sequence positions by default, or ``{"type": "tree", ...}``: each input symbol
        then carries the tree position of the node it belongs to, read from the grammar state's
        ``features()["path"]`` (the start symbol carries the root's zero vector), encoded as in
        Shiv & Quirk (2019).
    """

    def __init__(
        self,
        input_dim: PositiveInt,
        layers: TransformerSettings = DEFAULT_SETTINGS,
        positional_encoding: Lazy[PositionalEncoding] = Lazy(PositionalEncoding),
    ):
        super().__init__()
        self.input_dim = input_dim
        self.positions: PositionalEncoding = positional_encoding.construct(dim=input_dim)
        self.max_length, self.uses_features = self.positions.max_length, self.positions.reads_trees
        self.features_read = frozenset({"path"}) if self.uses_features else frozenset()
        self.dropout = Dropout(layers.dropout)
        self.layers = nn.ModuleList(TransformerDecoderLayer(input_dim, layers) for _ in range(layers.num_layers))
        self.final_norm = nn.LayerNorm(input_dim) if layers.norm_first else nn.Identity()

    def batch_features(self, features, device):
        """(B, T, n·k) one-hots: input t is the symbol of node t - 1, so it carries that node's path."""
        length = max(map(len, features))
        paths = [[()] + [step["path"] for step in steps[:-1]] for steps in features]
        return self.positions.batch_one_hots(paths, length).to(device)

    def step_features(self, features, device):
        return self.positions.one_hots([step["path"] for step in features]).to(device)  # (N, n·k): the nodes about to be predicted

    def embed_positions(self, embedded: torch.Tensor, one_hots: torch.Tensor | None, offset: int = 0) -> torch.Tensor:
        """The embedded symbols with their positions added (tree one-hots, or sequence positions from *offset*), and dropout."""
        return self.dropout(self.positions(embedded, one_hots, offset=offset))

    def forward(self, embedded, memory, memory_mask, features=None):
        x = self.embed_positions(embedded, features)
        mask = padding_mask(memory_mask)
        for layer in self.layers:
            x = layer(x, layer.cross_attention.project_keys_values(memory), mask)
        return self.final_norm(x)

    def start(self, memory, memory_mask):
        extra = {}
        if self.uses_features:  # the start symbol sits at the root: the zero position
            extra["input_position"] = memory.new_zeros(memory.size(0), self.positions.width)
        return DecoderCache(
            memory_mask,
            [layer.cross_attention.project_keys_values(memory) for layer in self.layers],
            SelfAttentionCache(len(self.layers)),
            extra=extra,
        )

    def step(self, embedded, cache, features=None):
        position = cache.extra.get("input_position")
        x = self.embed_positions(embedded, None if position is None else position[:, None], offset=cache.step)
        mask = padding_mask(cache.memory_mask)
        for i, (layer, memory_kv) in enumerate(zip(self.layers, cache.memory_keys_values)):
            x = layer(x, memory_kv, mask, cache.self_attention, i)
        # The node predicted now is the one the next input symbol belongs to.
        return self.final_norm(x), cache.advanced(x.size(1), {"input_position": features} if self.uses_features else None)
