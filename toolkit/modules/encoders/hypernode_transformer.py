"""The hypernode Transformer encoder: attention over words and phrases ("attention over phrases").

The n word states of a sentence are extended with m hypernode states, one per phrase a
:class:`~toolkit.phrases.PhraseGenerator` lists, initialised to zeros. Every layer then runs

1. phase 1: multi-head self-attention over all n + m nodes (words and phrases alike);
2. phase 2: multi-head self-attention masked by the inclusion adjacency of the nodes
   (:func:`~toolkit.phrases.node_adjacency`, Eq. 4-6), whose output goes through a sigmoid before
   the residual connection (``linear: true`` leaves the sigmoid out);
3. the position-wise feed-forward block, on every node.

Each phase is a residual sub-layer with its own LayerNorm, placed as in the plain encoder (pre- or
post-norm). The encoder returns the n word states only, so any model that takes a
``Seq2SeqEncoder`` can use it. The cost is O((n + m)^2) per layer; n-grams of 2..k words give
m = (k - 1) n - k (k - 1) / 2 hypernodes, about (k - 1) n.

Hypernodes are generated once per example, when a model indexes it (:meth:`Seq2SeqEncoder.example_inputs`:
the phrases and their (m, n) word membership), and only padded per batch (``batch_inputs``); the
model passes the (B, M, N) membership to ``forward(..., hypernodes=...)``. Called without it, the
encoder builds the membership from the sentence lengths, which works for generators whose
phrases depend on the length alone (``ngram``) and is a configuration error for the others.
"""

from collections.abc import Sequence

import torch
from torch import nn

from toolkit.errors import ConfigurationError
from toolkit.from_params import Lazy, PositiveInt
from toolkit.modules.attention import MultiHeadAttention, padding_mask
from toolkit.modules.encoders.encoder import Seq2SeqEncoder
from toolkit.modules.encoders.transformer import TransformerEncoder, TransformerEncoderLayer
from toolkit.modules.positional_encoding import PositionalEncoding
from toolkit.modules.transformer_settings import DEFAULT_SETTINGS, TransformerSettings
from toolkit.phrases import PhraseGenerator, hypernode_membership, node_adjacency, pad_memberships


class HypernodeEncoderLayer(TransformerEncoderLayer):
    """A Transformer encoder layer with an optional phase-2 sub-layer between attention and feed-forward.

    Without phase 2 it has exactly the parameters and the computation of
    :class:`TransformerEncoderLayer`, so a plain encoder's weights load into it.
    """

    def __init__(self, dim: int, settings: TransformerSettings, phase_two: bool, linear: bool):
        super().__init__(dim, settings)
        self.phase_two, self.linear = phase_two, linear
        if phase_two:
            self.phrase_attention = MultiHeadAttention(dim, settings.num_heads, settings.attention_dropout)
            self.norm_phrase = nn.LayerNorm(dim)

    def phrase_sublayer(self, x: torch.Tensor, adjacency: torch.Tensor) -> torch.Tensor:
        h = self.norm_phrase(x) if self.norm_first else x
        out = self.phrase_attention(h, h, adjacency)
        out = self.dropout(out if self.linear else torch.sigmoid(out))
        return x + out if self.norm_first else self.norm_phrase(x + out)

    def forward(self, x: torch.Tensor, mask: torch.Tensor, adjacency: torch.Tensor | None = None) -> torch.Tensor:
        """*mask* (B, 1, 1, K) marks real nodes for phase 1; *adjacency* (B, 1, K, K) masks phase 2."""
        if self.norm_first:
            h = self.norm_attention(x)
            x = x + self.dropout(self.attention(h, h, mask))
        else:
            x = self.norm_attention(x + self.dropout(self.attention(x, x, mask)))
        if self.phase_two:
            x = self.phrase_sublayer(x, adjacency)
        if self.norm_first:
            return x + self.dropout(self.feedforward(self.norm_feedforward(x)))
        return self.norm_feedforward(x + self.dropout(self.feedforward(x)))


@Seq2SeqEncoder.register("hypernode_transformer")
class HypernodeTransformerEncoder(TransformerEncoder):
    """Self-attention over words and phrase hypernodes, in two phases per layer (see the module docstring).

    # Parameters
    phrases : the phrase generator, e.g. ``{"type": "ngram", "max_n": 2}`` or
        ``{"type": "spacy_dependency"}``.
    phase_two_layers : which layers, numbered from 1, run phase 2 (default: all); ``[]`` switches
        it off, leaving hypernodes that take part in phase 1 only.
    linear : phase 2 without the sigmoid on its output (the "linear" variant).

    The other parameters are :class:`TransformerEncoder`'s. The positional encoding places the
    words only (a tree's reads their ``token_paths``); hypernodes have no position.
    """

    def __init__(
        self,
        input_dim: PositiveInt,
        phrases: PhraseGenerator,
        phase_two_layers: list[int] | None = None,
        linear: bool = False,
        layers: TransformerSettings = DEFAULT_SETTINGS,
        positional_encoding: Lazy[PositionalEncoding] = Lazy(PositionalEncoding),
    ):
        numbers = range(1, layers.num_layers + 1)
        phase_two_layers = list(numbers) if phase_two_layers is None else phase_two_layers
        if any(number not in numbers for number in phase_two_layers):
            raise ConfigurationError(f"are layer numbers from 1 to layers.num_layers ({layers.num_layers}), got {phase_two_layers}", key="phase_two_layers")
        self.phase_two_layers, self.linear = sorted(set(phase_two_layers)), linear  # read by build_layer, which the base calls
        super().__init__(input_dim, layers, positional_encoding)
        self.phrases = phrases

    def build_layer(self, number: int) -> nn.Module:
        return HypernodeEncoderLayer(self.input_dim, self.settings, number in self.phase_two_layers, self.linear)

    def hypernodes(self, tokens: Sequence[str]) -> torch.Tensor:
        """The (m, n) bool membership of one sentence's phrases: called once per example, when the model indexes it."""
        return hypernode_membership([self.phrases(tokens)], len(tokens))[0]

    def batch_hypernodes(self, hypernodes: Sequence[torch.Tensor], num_words: int) -> torch.Tensor:
        """The (B, M, num_words) membership of a batch, from :meth:`hypernodes`' answers: what ``forward`` takes."""
        return pad_memberships(hypernodes, num_words)

    def example_inputs(self, example):
        return {**super().example_inputs(example), "hypernodes": self.hypernodes(example.tokens)}

    def batch_inputs(self, inputs, num_tokens):
        return {**super().batch_inputs(inputs, num_tokens), "hypernodes": self.batch_hypernodes([item["hypernodes"] for item in inputs], num_tokens)}

    def forward(
        self, embedded: torch.Tensor, mask: torch.Tensor, hypernodes: torch.Tensor | None = None, token_paths: torch.Tensor | None = None
    ) -> torch.Tensor:
        """(B, N, D) word embeddings and (B, N) mask in, (B, N, D) word states out.

        *hypernodes* is the (B, M, N) membership from :meth:`batch_hypernodes`; without it the
        generator builds it from the lengths (``ngram`` only). *token_paths* places the words of
        a tree input, for a tree positional encoding.
        """
        batch, num_words, dim = embedded.shape
        if hypernodes is None:
            hypernodes = self.phrases.batch_membership(mask.sum(-1), num_words)
            if hypernodes is None:
                raise ConfigurationError(
                    f"model.encoder.phrases: '{type(self.phrases).__name__}' phrases are generated per example, "
                    "so the encoder needs the hypernodes its example_inputs made"
                )
        hypernodes = hypernodes.to(mask.device)
        if hypernodes.shape[0] != batch or hypernodes.shape[2] != num_words:
            raise ValueError(f"hypernode membership {tuple(hypernodes.shape)} does not fit a batch of {batch} x {num_words} words")
        adjacency, valid = node_adjacency(hypernodes, mask)
        x = self.embed_positions(embedded, token_paths)
        x = torch.cat([x, x.new_zeros(batch, hypernodes.size(1), dim)], dim=1)  # hypernode states start at zero
        node_mask, phrase_mask = padding_mask(valid), adjacency[:, None]  # (B, 1, 1, K), (B, 1, K, K)
        for layer in self.layers:
            x = layer(x, node_mask, phrase_mask)
        return self.final_norm(x[:, :num_words])
