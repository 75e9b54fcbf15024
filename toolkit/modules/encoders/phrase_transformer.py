"""The PhraseTransformer encoder: a Transformer encoder whose chosen layers use phrase heads."""

from dataclasses import replace

from toolkit.errors import ConfigurationError
from toolkit.from_params import Lazy, PositiveInt, Probability
from toolkit.modules.encoders.encoder import Seq2SeqEncoder
from toolkit.modules.encoders.transformer import TransformerEncoder
from toolkit.modules.phrase_attention import Composition, PhraseMultiHeadAttention
from toolkit.modules.positional_encoding import PositionalEncoding
from toolkit.modules.transformer_settings import DEFAULT_SETTINGS, TransformerSettings


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
    phrase_dropout : dropout on the n-gram LSTM's inputs (per position).
    compile : fuse the n-gram LSTM's pointwise steps with ``torch.compile`` (about 25 s to compile,
        at the first batch; it falls back to eager, with a warning, where compiling fails).
    layers : as for :class:`TransformerEncoder`, but its ``num_heads`` is ``len(gram_sizes)``;
        left at its default, it is set so.
    positional_encoding : as for :class:`TransformerEncoder`; a ``"tree"`` one reads tree inputs.
    """

    def __init__(
        self,
        input_dim: PositiveInt,
        gram_sizes: list[int],
        phrase_layers: list[int] | None = None,
        composition: Composition = "lstm",
        residual_gate: bool = False,
        phrase_dropout: Probability = 0.0,
        compile: bool = False,
        layers: TransformerSettings = DEFAULT_SETTINGS,
        positional_encoding: Lazy[PositionalEncoding] = Lazy(PositionalEncoding),
    ):
        if not gram_sizes or any(n < 0 for n in gram_sizes):
            raise ConfigurationError(f"must be a non-empty list of sizes >= 0 (0: a word head), got {gram_sizes}", key="gram_sizes")
        if layers.num_heads not in (len(gram_sizes), DEFAULT_SETTINGS.num_heads):
            raise ConfigurationError(
                f"must be len(gram_sizes) = {len(gram_sizes)}, one head per gram size (or left out), got {layers.num_heads}", key="layers.num_heads"
            )
        if input_dim % len(gram_sizes):
            raise ConfigurationError(f"must be divisible by the number of heads, len(gram_sizes) = {len(gram_sizes)}, got {input_dim}", key="input_dim")
        numbers = range(1, layers.num_layers + 1)
        phrase_layers = list(numbers) if phrase_layers is None else phrase_layers
        if any(number not in numbers for number in phrase_layers):
            raise ConfigurationError(f"are layer numbers from 1 to layers.num_layers ({layers.num_layers}), got {phrase_layers}", key="phrase_layers")
        if composition not in ("lstm", "sum"):
            raise ConfigurationError(f"must be 'lstm' or 'sum', got {composition!r}", key="composition")
        super().__init__(input_dim, replace(layers, num_heads=len(gram_sizes)), positional_encoding)
        self.gram_sizes, self.phrase_layers = list(gram_sizes), sorted(set(phrase_layers))
        for number in self.phrase_layers:
            self.layers[number - 1].attention = PhraseMultiHeadAttention(
                input_dim, self.gram_sizes, composition, residual_gate, layers.attention_dropout, phrase_dropout, compile
            )
