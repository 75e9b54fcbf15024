"""The PhraseTransformer encoder: a Transformer encoder whose chosen layers use phrase heads."""

from toolkit.errors import ConfigurationError
from toolkit.from_params import PositiveInt, Probability
from toolkit.modules.encoders.encoder import Seq2SeqEncoder
from toolkit.modules.encoders.transformer import TransformerEncoder
from toolkit.modules.phrase_attention import Composition, PhraseMultiHeadAttention


@Seq2SeqEncoder.register("phrase_transformer")
class PhraseTransformerEncoder(TransformerEncoder):
    """Self-attention over words and n-gram phrases (Nguyen et al., 2022).

    # Parameters
    gram_sizes : one n per head (so ``num_heads = len(gram_sizes)``); 0 is an ordinary word head.
        The paper's setting is ``[0, 0, 2, 2, 3, 3, 4, 4]``.
    phrase_layers : which layers, numbered from 1 as in the paper, use phrase heads (default
        all); ``[1]`` is the first only, ``[3, 4, 5, 6]`` the upper four of six.
    composition : ``"lstm"`` (n-gram BiLSTM, Eq. 7-12) or ``"sum"`` (Eq. 14-15).
    residual_gate : mix each phrase with its word through Eq. 13's sigmoid gate.
    phrase_dropout : dropout on the n-gram LSTM's inputs.

    The other parameters are :class:`TransformerEncoder`'s.
    """

    def __init__(
        self,
        input_dim: PositiveInt,
        gram_sizes: list[int],
        phrase_layers: list[int] | None = None,
        composition: Composition = "lstm",
        residual_gate: bool = False,
        phrase_dropout: float = 0.0,
        num_layers: PositiveInt = 3,
        ff_dim: PositiveInt = 1024,
        dropout: Probability = 0.1,
        attention_dropout: Probability = 0.0,
        norm_first: bool = True,
        max_length: PositiveInt = 1024,
    ):
        if not gram_sizes or any(n < 0 for n in gram_sizes):
            raise ConfigurationError(f"encoder.gram_sizes must be a non-empty list of sizes >= 0 (0: a word head), got {gram_sizes}")
        if input_dim % len(gram_sizes):
            raise ConfigurationError(f"encoder.input_dim ({input_dim}) must be divisible by the number of heads, len(gram_sizes) = {len(gram_sizes)}")
        phrase_layers = list(range(1, num_layers + 1)) if phrase_layers is None else phrase_layers
        if any(not 1 <= number <= num_layers for number in phrase_layers):
            raise ConfigurationError(f"encoder.phrase_layers are layer numbers from 1 to num_layers ({num_layers}), got {phrase_layers}")
        if composition not in ("lstm", "sum"):
            raise ConfigurationError(f"encoder.composition must be 'lstm' or 'sum', got {composition!r}")
        super().__init__(input_dim, num_layers, len(gram_sizes), ff_dim, dropout, attention_dropout, norm_first, max_length)
        self.gram_sizes, self.phrase_layers = list(gram_sizes), sorted(set(phrase_layers))
        for number in self.phrase_layers:
            self.layers[number - 1].attention = PhraseMultiHeadAttention(
                input_dim, self.gram_sizes, composition, residual_gate, attention_dropout, phrase_dropout
            )
