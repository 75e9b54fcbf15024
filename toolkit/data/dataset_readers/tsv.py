"""A reader for ``source<TAB>target`` lines, the format of the GEO and ATIS semantic parsing data."""

import re
from collections.abc import Iterator
from pathlib import Path

from toolkit.data.dataset_readers.dataset_reader import DatasetReader
from toolkit.data.example import Example
from toolkit.entities.anonymizer import Anonymizer
from toolkit.errors import DataError
from toolkit.from_params import NonNegativeInt

WORD = re.compile(r"\w+(?:[-'.]\w+)*\.?|[^\w\s]")  # "st. louis", "o'hare", "u.s." stay whole; "texas?" is two tokens
# Contractions spelled out as the data spells them (GEO's questions have none): "what's" -> "what is".
CONTRACTIONS = {
    **{f"{word}'s": (word, "is") for word in ("what", "where", "which", "who", "how", "that", "there", "it")},
    **{f"{verb}n't": (verb, "not") for verb in ("is", "are", "does", "do", "did", "was", "were")},
    "what're": ("what", "are"),
    "where're": ("where", "are"),
}


@DatasetReader.register("tsv")
class TsvReader(DatasetReader):
    """Reads ``question<TAB>logical form`` lines: whitespace-tokenized source, target kept as a string.

    The target's whitespace is normalized (single spaces, stripped) so that the grammar and the
    metrics see one spelling. Blank lines are skipped. ``meta`` is ``{"path": ..., "line": n}``.

    Args:
        anonymizer: replaces the questions' entity mentions with placeholders (raw GEO, with real names):
            the source is the anonymized question, the target stays the gold logical form, and
            ``meta`` gains the anonymized form and the mentions, for the ``anonymized`` grammar.
            Raw input to a predictor is then split at punctuation and its contractions spelled out
            (``what's``: ``what is``); the mentions are found in the words as written, so that
            capitals tell the state ``ME`` from the word "me", and the question is then lower-cased
            as the data is.

    Registered as ``"tsv"``.
    """

    def __init__(self, max_examples: NonNegativeInt | None = None, anonymizer: Anonymizer | None = None) -> None:
        super().__init__(max_examples)
        self.anonymizer = anonymizer

    def _read(self, path: Path) -> Iterator[Example]:
        for number, line in self._lines(path):
            if not line.strip():
                continue
            fields = line.split("\t")
            problem = _field_problem(fields)
            if problem:
                raise DataError(f"expected 'question<TAB>logical form', found {problem}", path=str(path), line=number)
            source, target = fields
            yield self.example(source.split(), " ".join(target.split()), {"path": str(path), "line": number})

    def example(self, tokens: list[str], target: str | None, meta: dict, question: str | None = None) -> Example:
        """The example of a question's *tokens* and its *target*, anonymized when the reader has an
        anonymizer; *question* is the text as the user wrote it, for the predictor's output.
        """
        if self.anonymizer is None:
            return Example(tokens, target, meta)
        anonymized = self.anonymizer.anonymize(tokens, target)
        if anonymized.logical_form is not None:
            meta["anonymized_target"] = " ".join(anonymized.logical_form)
        meta["mentions"], meta["question"] = anonymized.placeholders, question or " ".join(tokens)
        return Example([token.lower() for token in anonymized.question], target, meta)

    def text_to_example(self, text: str) -> Example:
        """A plain sentence, or a ``source<TAB>target`` line whose target is then kept."""
        source, tab, target = text.rstrip("\r\n").partition("\t")
        tokens = super().text_to_example(source).tokens  # an empty input is refused there
        if self.anonymizer is not None and not tab:
            tokens = [word for token in WORD.findall(source) for word in CONTRACTIONS.get(token.lower(), (token,))]
            return self.example(tokens, None, {}, question=" ".join(source.split()))
        return self.example(tokens, " ".join(target.split()) if tab and target.strip() else None, {})


def _field_problem(fields: list[str]) -> str | None:
    """What is wrong with the tab-separated *fields* of a non-blank line, or ``None``."""
    if len(fields) == 1:
        return "no tab"
    if len(fields) > 2:
        return f"{len(fields) - 1} tabs"
    if not fields[0].strip():
        return "an empty question"
    if not fields[1].strip():
        return "an empty logical form"
    return None
