"""The one place the Transformer's layer settings are declared.

Every Transformer encoder and decoder reads them from one nested config key, ``layers``::

    encoder: { type: 'transformer', input_dim: 256, layers: { num_layers: 3, num_heads: 4, ff_dim: 1024, dropout: 0.1 } }

so a new Transformer variant takes the block instead of repeating six parameters, and an
override reaches the same key path in all of them (``model.encoder.layers.num_heads``).
"""

from dataclasses import dataclass

from toolkit.from_params import FromParams, PositiveInt, Probability


@dataclass(frozen=True)
class TransformerSettings(FromParams):
    """The shape and regularisation of a stack of Transformer layers.

    Attributes:
        num_layers: how many layers the stack has.
        num_heads: attention heads per layer; they must divide the model width.
        ff_dim: the width of the position-wise feed-forward block.
        dropout: on residual branches, positioned inputs and the feed-forward block.
        attention_dropout: on attention weights.
        norm_first: pre-norm layers with a final LayerNorm, which train stably without a long
            warmup; ``false`` gives the original post-norm Transformer.
    """

    num_layers: PositiveInt = 3
    num_heads: PositiveInt = 4
    ff_dim: PositiveInt = 1024
    dropout: Probability = 0.1
    attention_dropout: Probability = 0.0
    norm_first: bool = True


DEFAULT_SETTINGS = TransformerSettings()  # what a constructor's ``layers`` defaults to (frozen, so one instance serves all)
