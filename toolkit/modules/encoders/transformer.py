"""The Transformer encoder (Vaswani et al., 2017), pre- or post-norm, over sentences or trees."""

import torch
from torch import nn

from toolkit.errors import ConfigurationError
from toolkit.from_params import Lazy, PositiveInt
from toolkit.modules import tree_positional_encoding  # noqa: F401 - registers the "tree" positional encoding
from toolkit.modules.attention import MultiHeadAttention, Packing, padding_mask
from toolkit.modules.dropout import Dropout
from toolkit.modules.encoders.encoder import Seq2SeqEncoder
from toolkit.modules.feedforward import FeedForward
from toolkit.modules.positional_encoding import PositionalEncoding
from toolkit.modules.transformer_settings import DEFAULT_SETTINGS, TransformerSettings


class TransformerEncoderLayer(nn.Module):
    """Self-attention then feed-forward, each a residual sub-layer normalised as *settings* say."""

    def __init__(self, dim: int, settings: TransformerSettings):
        super().__init__()
        self.attention = MultiHeadAttention(dim, settings.num_heads, settings.attention_dropout)
        self.feedforward = FeedForward(dim, settings.ff_dim, settings.dropout)
        self.norm_attention, self.norm_feedforward = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.dropout = Dropout(settings.dropout)
        self.norm_first = settings.norm_first

    def forward(self, x: torch.Tensor, mask: torch.Tensor, packing: Packing | None = None) -> torch.Tensor:
        """*x* (B, S, D) with *mask* (B, 1, 1, S); or, with *packing*, the packed words (T, D)."""
        attend = (lambda h: self.attention(h, h, mask)) if packing is None else (lambda h: self.attention.attend_packed(h, packing))
        if self.norm_first:
            x = x + self.dropout(attend(self.norm_attention(x)))
            return x + self.dropout(self.feedforward(self.norm_feedforward(x)))
        x = self.norm_attention(x + self.dropout(attend(x)))
        return self.norm_feedforward(x + self.dropout(self.feedforward(x)))

    @property
    def packs(self) -> bool:
        """Whether :meth:`forward` may run packed: plain multi-head attention (subclasses and phrase heads read the padded layout)."""
        return type(self) is TransformerEncoderLayer and type(self.attention) is MultiHeadAttention


@Seq2SeqEncoder.register("transformer")
class TransformerEncoder(Seq2SeqEncoder):
    """A stack of self-attention layers over positioned embeddings.

    # Parameters
    input_dim : the model width (the embeddings' and the states').
    layers : the layer stack's settings (:class:`TransformerSettings`): ``num_layers``,
        ``num_heads``, ``ff_dim``, ``dropout``, ``attention_dropout``, ``norm_first``.
    positional_encoding : a registered :class:`PositionalEncoding`, built with the model width:
        ``{"type": "sinusoidal", "max_length": 1024}`` (the default) for sentences, or
        ``{"type": "tree", "degree": 2}`` for tree inputs (tree-to-tree, Shiv & Quirk, 2019): each
        token then carries its node's branch path (``Example.token_paths``, set by the
        ``tree_pairs`` reader).

    Subclasses change a layer through :meth:`build_layer` and read more of an example by
    extending :meth:`example_inputs` and :meth:`batch_inputs`.
    """

    def __init__(
        self,
        input_dim: PositiveInt,
        layers: TransformerSettings = DEFAULT_SETTINGS,
        positional_encoding: Lazy[PositionalEncoding] = Lazy(PositionalEncoding),
    ):
        super().__init__()
        self.input_dim, self.settings = input_dim, layers
        self.positions: PositionalEncoding = positional_encoding.construct(dim=input_dim)
        self.max_length, self.reads_trees = self.positions.max_length, self.positions.reads_trees
        self.dropout = Dropout(layers.dropout)
        self.layers = nn.ModuleList(self.build_layer(number) for number in range(1, layers.num_layers + 1))
        self.final_norm = nn.LayerNorm(input_dim) if layers.norm_first else nn.Identity()

    def build_layer(self, number: int) -> nn.Module:
        """Layer *number* (from 1) of the stack."""
        return TransformerEncoderLayer(self.input_dim, self.settings)

    def example_inputs(self, example):
        """With tree positions, the branch path of every token (``Example.token_paths``)."""
        if not self.reads_trees:
            return {}
        if example.token_paths is None:
            raise ConfigurationError(
                "model.encoder reads tree inputs (a 'tree' positional_encoding), but the examples are sentences: use a tree reader such as 'tree_pairs'"
            )
        return {"token_paths": example.token_paths}

    def batch_inputs(self, inputs, num_tokens):
        """``token_paths``: (B, S, n·k) branch one-hots, when the positions are a tree's."""
        if not self.reads_trees:
            return {}
        return {"token_paths": self.positions.batch_one_hots([item["token_paths"] for item in inputs], num_tokens)}

    def embed_positions(self, embedded: torch.Tensor, token_paths: torch.Tensor | None) -> torch.Tensor:
        """The embeddings with their positions added, and dropout."""
        if self.reads_trees and token_paths is None:
            raise ConfigurationError("model.encoder has a 'tree' positional_encoding, which needs tree inputs: use a tree reader such as 'tree_pairs'")
        return self.dropout(self.positions(embedded, token_paths))

    def forward(self, embedded: torch.Tensor, mask: torch.Tensor, token_paths: torch.Tensor | None = None) -> torch.Tensor:
        """(B, S, D) states; in inference a batch with padding runs packed (:class:`Packing`), its padding states zero.

        Training stays padded, so its dropout masks, and with them every seeded run, are as they were.
        """
        x = self.embed_positions(embedded, token_paths)
        attention_mask = padding_mask(mask)  # (B, 1, 1, S)
        if self.training or bool(mask.all()) or not all(layer.packs for layer in self.layers):
            for layer in self.layers:
                x = layer(x, attention_mask)
            return self.final_norm(x)
        packing = Packing(mask)
        x = packing.pack(x)
        for layer in self.layers:
            x = layer(x, attention_mask, packing)
        return packing.unpack(self.final_norm(x))

    def get_output_dim(self) -> int:
        return self.input_dim
