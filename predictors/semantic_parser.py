"""Questions in, logical forms out."""

from typing import Any

from predictors.predictor import Predictor
from toolkit.archive import Archive
from toolkit.data.example import Example
from toolkit.decoding import Search
from toolkit.decoding.search import DOUBT
from toolkit.errors import DataError, ToolkitError
from toolkit.execution import Executor
from toolkit.grammars.anonymized import unnamed_entities, unused_mentions


def archive_executor(archive: Archive) -> Executor | None:
    """The executor of the archive's execution metric (``denotation_accuracy``), or ``None``: what runs
    its predicted forms, for their answers and for execution-guided decoding (``--execution-guided``).
    """
    return next((metric.executor for metric in archive.metrics if isinstance(getattr(metric, "executor", None), Executor)), None)


@Predictor.register("semantic_parser")
class SemanticParserPredictor(Predictor):
    """Input: a plain question per line, or ``{"question": "..."}``; output: ``{"question", "logical_form"}``,
    and ``"answer"`` (a list) where the archive scores by execution (a ``denotation_accuracy`` metric):
    its executor runs the logical form. Where there is no answer, ``"answer_error"`` says why in plain
    words: the query could not run, or ran past a limit of the executor (and what the executor said,
    e.g. which limit), or names an entity the question does not name ("I found no river named in the
    question"); an answer that is not ground is an error, never an answer.

    With a search that abstains (``abstain``, :class:`~toolkit.decoding.BeamSearch`), the predictor
    gives no answer rather than a guess: where no reading of the question passes (it fails to run, names
    an entity the question does not or leaves out one it does, or is not of the kind the question asks for, with the search's
    ``answer_kinds``), or the one that passes holds too little of the model's confidence (``min_confidence``),
    the output has ``"abstained": true`` and ``answer_error`` says why ("the question
    asks for a number, and no reading of it gives one"). The search still returned its best reading: the
    ``logical_form``. The question is the one the user asked, before its entities were replaced by placeholders.
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
        question = example.meta.get("question", " ".join(example.tokens))
        output = {"question": question, "logical_form": str(prediction)}
        if self.executor is None:
            return output
        search = self.search or self.model.search
        kinds, abstain = getattr(search, "answer_kinds", None), bool(getattr(search, "abstain", False))
        mentions = example.meta.get("mentions", ())
        # "stateid(e0)" would run, and answer nothing about anything; with abstain, an entity the question does not name counts too
        unnamed = unnamed_entities(self.anonymizer, str(prediction), question if abstain else None, mentions) if self.anonymizer is not None else []
        if unnamed:
            return {**output, "answer_error": found_no(unnamed, mentions), **({"abstained": True} if abstain else {})}
        if abstain and self.anonymizer is not None and (left_out := unused_mentions(self.anonymizer, str(prediction), mentions)):
            return {**output, "answer_error": f"no reading of the question is about {' or '.join(left_out)}, which it names", "abstained": True}
        try:
            [denotation] = self.executor.execute([str(prediction)])
        except ToolkitError as error:  # no swipl: the logical form is still worth writing
            return {**output, "answer_error": str(error)}
        problem = denotation.why() if not denotation.ok else kinds.problem(question, denotation) if kinds is not None else None
        if problem is not None and (abstain or not denotation.ok):
            return {**output, "answer_error": problem, **({"abstained": True} if abstain else {})}
        if abstain and (doubt := example.meta.get(DOUBT)):  # a reading that passes, but the model is unsure of it (min_confidence)
            return {**output, "answer_error": doubt, "abstained": True}
        return {**output, "answer": list(denotation.answers)}


def found_no(kinds: list[str], mentions) -> str:
    """Why a query about entities of *kinds* has no answer, in words: "I found no lake, river or state named in the question"."""
    kinds = list(kinds) if mentions else ["state", "city", "river", "lake", "mountain"]  # it names nothing at all
    listed = kinds[0] if len(kinds) == 1 else f"{', '.join(kinds[:-1])} or {kinds[-1]}"
    return f"I found no {listed} named in the question"
