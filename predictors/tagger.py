"""Sentences in, one tag per token out (for the ``tagger`` model)."""

from typing import Any

from predictors.predictor import Predictor, given_tokens
from toolkit.data.example import Example
from toolkit.errors import DataError


@Predictor.register("tagger")
class TaggerPredictor(Predictor):
    """Input: a whitespace-tokenised sentence per line, or ``{"sentence": "..."}`` / ``{"tokens": [...]}``;
    output: ``{"tokens": [...], "tags": [...]}``.
    """

    writes = "tags"

    def json_to_text(self, obj: dict[str, Any]) -> str:
        if tokens := given_tokens(obj):
            return " ".join(tokens)
        for key in ("sentence", "text"):
            if isinstance(obj.get(key), str):
                return " ".join(obj[key].split())
        raise DataError('a JSON input line needs a "sentence" string or a "tokens" list of tokens without spaces')

    def to_json(self, example: Example, prediction: Any) -> dict[str, Any]:
        return {"tokens": list(example.tokens), "tags": list(prediction)}
