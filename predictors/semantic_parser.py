"""Questions in, logical forms out."""

from typing import Any

from predictors.predictor import Predictor
from toolkit.data.example import Example
from toolkit.errors import DataError


@Predictor.register("semantic_parser")
class SemanticParserPredictor(Predictor):
    """Input: a plain question per line, or ``{"question": "..."}``; output: ``{"question", "logical_form"}``."""

    writes = "text"

    def json_to_text(self, obj: dict[str, Any]) -> str:
        for key in ("question", "source", "sentence"):
            if isinstance(obj.get(key), str):
                return " ".join(obj[key].split())  # a tab would start a gold logical form, which a JSON question has none of
        raise DataError('a JSON input line needs a "question" string')

    def to_json(self, example: Example, prediction: Any) -> dict[str, Any]:
        return {"question": " ".join(example.tokens), "logical_form": str(prediction)}
