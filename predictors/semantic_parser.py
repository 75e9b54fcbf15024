"""Questions in, logical forms out."""

from typing import Any

from predictors.predictor import Predictor
from toolkit.archive import Archive
from toolkit.data.example import Example
from toolkit.decoding import Search
from toolkit.errors import DataError, ToolkitError
from toolkit.execution import Denotation, Executor


def archive_executor(archive: Archive) -> Executor | None:
    """The executor of the archive's execution metric (``denotation_accuracy``), or ``None``: what runs
    its predicted forms, for their answers and for execution-guided decoding (``--execution-guided``).
    """
    return next((metric.executor for metric in archive.metrics if isinstance(getattr(metric, "executor", None), Executor)), None)


@Predictor.register("semantic_parser")
class SemanticParserPredictor(Predictor):
    """Input: a plain question per line, or ``{"question": "..."}``; output: ``{"question", "logical_form"}``,
    and ``"answer"`` (a list) where the archive scores by execution (a ``denotation_accuracy`` metric):
    its executor runs the logical form (``"answer_error"`` says why a form has no answer: ``error``,
    ``timeout`` or ``memory``, then what the executor said, e.g. which limit stopped it; an answer
    that is not ground is an error, never an answer).
    The question is the one the user asked, before its entities were replaced by placeholders.
    """

    writes = "text"

    def __init__(self, archive: Archive, search: Search | None = None, max_tokens: int = 8192):
        super().__init__(archive, search, max_tokens)
        self.executor = archive_executor(archive)
        self.anonymizer = getattr(self.model.grammar, "anonymizer", None)  # the "anonymized" grammar's

    def json_to_text(self, obj: dict[str, Any]) -> str:
        for key in ("question", "source", "sentence"):
            if isinstance(obj.get(key), str):
                return " ".join(obj[key].split())  # a tab would start a gold logical form, which a JSON question has none of
        raise DataError('a JSON input line needs a "question" string')

    def to_json(self, example: Example, prediction: Any) -> dict[str, Any]:
        output = {"question": example.meta.get("question", " ".join(example.tokens)), "logical_form": str(prediction)}
        unrestored = self.anonymizer.unrestored(str(prediction)) if self.anonymizer is not None else []
        if self.executor is not None and unrestored:  # "stateid(e0)" would run, and answer nothing about anything
            output["answer_error"] = f"the query has {', '.join(unrestored)} where no entity of the question fits"
        elif self.executor is not None:
            try:
                [denotation] = self.executor.execute([str(prediction)])
            except ToolkitError as error:  # no swipl: the logical form is still worth writing
                output["answer_error"] = str(error)
            else:
                output.update({"answer": list(denotation.answers)} if denotation.ok else {"answer_error": failure_text(denotation)})
        return output


def failure_text(denotation: Denotation) -> str:
    """A failed denotation as ``answer_error`` writes it: its kind, then the executor's detail (``timeout: over the time limit (60 s)``)."""
    return f"{denotation.failure}: {denotation.detail}" if denotation.detail else str(denotation.failure)
