"""A grammar over anonymized logical forms whose results name the entities again.

The reader (``tsv`` with an ``anonymizer``) replaces each entity mention of a question with a
placeholder (``what is the capital of e0 ?``), keeps the gold logical form as it is in
``example.target``, and puts the anonymized one (``... _stateid ( e0 ) ...``) and the mentions in
``example.meta``. This grammar trains its inner grammar on the anonymized form, and its states'
results are the inner results with every placeholder restored from the mentions of that very
question. So the decoder learns a vocabulary without entity names, entities no training question
names are parsed as well as the others, and metrics and predictors see real logical forms, which
an executor can run. A placeholder that cannot be restored (one the question does not have) stays
as it is: the form then fails to execute, and scores as wrong.
"""

from collections.abc import Mapping, Sequence
from typing import Any

from toolkit.data.example import Example
from toolkit.entities.anonymizer import Anonymizer, RestoreError
from toolkit.entities.mentions import Mention
from toolkit.grammars.grammar import Allowed, Grammar, State

ANONYMIZED_TARGET, MENTIONS = "anonymized_target", "mentions"  # the keys of Example.meta the reader fills


class RestoringState(State):
    """The inner grammar's state; its result has the question's entities in place of the placeholders."""

    def __init__(self, inner: State, anonymizer: Anonymizer, mentions: Sequence[Mention]):
        self.inner, self.anonymizer, self.mentions = inner, anonymizer, mentions

    def allowed(self) -> Allowed:
        return self.inner.allowed()

    def features(self) -> Mapping[str, Any]:
        return self.inner.features()

    def apply(self, symbol: str) -> "RestoringState":
        return RestoringState(self.inner.apply(symbol), self.anonymizer, self.mentions)

    def is_final(self) -> bool:
        return self.inner.is_final()

    def result(self) -> Any:
        try:
            return self.anonymizer.restore(self.inner.result(), self.mentions).text
        except RestoreError:  # a placeholder the question does not have: kept, the form fails to execute
            return self.inner.result()


@Grammar.register("anonymized")
class AnonymizedGrammar(Grammar):
    """*grammar* over the anonymized targets the reader made, its results restored by *anonymizer*
    (the same component as the reader's, configured once in a jsonnet ``local``).
    """

    def __init__(self, grammar: Grammar, anonymizer: Anonymizer):
        self.grammar, self.anonymizer = grammar, anonymizer
        self.default_predictor, self.result_kind = grammar.default_predictor, grammar.result_kind

    @staticmethod
    def anonymized(example: Example) -> Example:
        """*example* with the anonymized logical form as its target (as it is, when the reader made none)."""
        if ANONYMIZED_TARGET not in example.meta:
            return example
        return Example(example.tokens, example.meta[ANONYMIZED_TARGET], example.meta, example.token_paths)

    def oracle(self, example: Example) -> list[str]:
        return self.grammar.oracle(self.anonymized(example))

    def initial_state(self, example: Example) -> RestoringState:
        return RestoringState(self.grammar.initial_state(self.anonymized(example)), self.anonymizer, example.meta.get(MENTIONS, ()))

    def derivation_state(self, example: Example) -> RestoringState:
        return RestoringState(self.grammar.derivation_state(self.anonymized(example)), self.anonymizer, example.meta.get(MENTIONS, ()))

    def fit(self, examples: Sequence[Example]) -> dict[str, Any]:
        fitted = self.grammar.fit([self.anonymized(example) for example in examples])
        return {"grammar": fitted} if fitted else {}

    def skips(self, example: Example) -> bool:
        return self.grammar.skips(self.anonymized(example))

    def data_report(self, examples: Sequence[Example]) -> dict[str, int]:
        return self.grammar.data_report([self.anonymized(example) for example in examples])

    def max_actions(self, words: int) -> int | None:
        return self.grammar.max_actions(words)

    def max_steps(self, example: Example) -> int | None:
        return self.grammar.max_steps(self.anonymized(example))
