"""Corpus BLEU (Papineni et al., 2002) as sacreBLEU computes it, from counts that add up across batches.

Each sentence contributes its clipped n-gram matches and n-gram totals (n = 1..4) and its
hypothesis and reference lengths; the score is computed from the corpus sums with sacreBLEU's
own ``compute_bleu`` (exponential smoothing, brevity penalty), so it equals
``sacrebleu.corpus_bleu(predictions, [references], tokenize=..., lowercase=...)`` with one
reference per sentence. The counts are plain numbers, so states from several processes sum.
"""

from collections.abc import Sequence

from toolkit.data.tokenization import bleu_tokenizer
from toolkit.errors import ConfigurationError
from toolkit.metrics.metric import Metric, require_text

ORDER = 4


def _text(value: str | Sequence[str] | None) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else " ".join(value)


@Metric.register("bleu")
class Bleu(Metric):
    """``{"bleu": corpus BLEU / 100}``: a fraction like every metric here (0.3461 is BLEU 34.61).

    Predictions and golds are strings (or token lists, joined with spaces). With the
    ``parallel_text`` reader both are already tokenised by the same sacreBLEU tokenizer, which
    leaves its own output unchanged (13a is idempotent), so the score equals sacreBLEU's on the
    raw references with the system output as produced; if the reader lower-cases, the score is
    case-insensitive BLEU (``sacrebleu -lc``).

    Args:
        tokenize: the sacreBLEU tokenizer applied to both sides, ``"13a"`` (its default) or ``"intl"``, ``"none"``...
        lowercase: compare lower-cased text.
        smooth_method: sacreBLEU's smoothing: ``"exp"`` (its corpus default), ``"floor"``, ``"add-k"``, ``"none"``.

    Registered as ``"bleu"``.
    """

    count_names = ("hypothesis_length", "reference_length") + tuple(f"{kind}_{n}" for kind in ("matches", "ngrams") for n in range(1, ORDER + 1))

    def __init__(self, tokenize: str = "13a", lowercase: bool = False, smooth_method: str = "exp") -> None:
        from sacrebleu.metrics.bleu import BLEU

        if smooth_method not in BLEU.SMOOTH_DEFAULTS:
            raise ConfigurationError(f"must be one of {', '.join(BLEU.SMOOTH_DEFAULTS)}, got {smooth_method!r}", key="smooth_method")
        self.tokenizer = bleu_tokenizer(tokenize)
        self.lowercase, self.smooth_method = lowercase, smooth_method
        super().__init__()

    def _tokens(self, text: str) -> str:
        return self.tokenizer((text.lower() if self.lowercase else text).rstrip())

    def check_gold(self, gold) -> None:
        require_text("bleu", gold)

    def __call__(self, predictions: Sequence, golds: Sequence) -> None:
        from sacrebleu.metrics.helpers import extract_all_word_ngrams

        self._check_lengths(predictions, golds)
        for prediction, gold in zip(predictions, golds):
            hypothesis, hypothesis_length = extract_all_word_ngrams(self._tokens(_text(prediction)), 1, ORDER)
            reference, reference_length = extract_all_word_ngrams(self._tokens(_text(gold)), 1, ORDER)
            self._counts["hypothesis_length"] += hypothesis_length
            self._counts["reference_length"] += reference_length
            for ngram, count in hypothesis.items():
                self._counts[f"ngrams_{len(ngram)}"] += count
                self._counts[f"matches_{len(ngram)}"] += min(count, reference.get(ngram, 0))

    def get_metric(self, reset: bool = False) -> dict[str, float]:
        from sacrebleu.metrics.bleu import BLEU

        counts = self._counts
        if counts["hypothesis_length"] == 0:
            score = 0.0
        else:
            score = BLEU.compute_bleu(
                [int(counts[f"matches_{n}"]) for n in range(1, ORDER + 1)],
                [int(counts[f"ngrams_{n}"]) for n in range(1, ORDER + 1)],
                int(counts["hypothesis_length"]),
                int(counts["reference_length"]),
                smooth_method=self.smooth_method,
            ).score
        if reset:
            self.reset()
        return {"bleu": score / 100}
