"""Executors run logical forms against a database and return their denotations (answers).

A semantic parser is judged by whether its query gives the right answer, not only by whether it
is written like the gold one: two different forms may mean the same thing. An :class:`Executor`
turns forms into :class:`Denotation` values that compare with ``==``; the ``denotation_accuracy``
metric (:mod:`toolkit.metrics.denotation`) is built on one.
"""

from __future__ import annotations

import math
import re
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from toolkit.registrable import Registrable

Failure = Literal["error", "timeout", "memory"]

_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
FAILURE_WORDS: dict[str, str] = {  # each failure in words a user reads (Denotation.why)
    "error": "the query could not run (it is malformed, names an unknown predicate, or failed while running)",
    "timeout": "the query ran past one of the executor's limits on time or Prolog calls",
    "memory": "the query needed more memory, or a longer answer, than the executor allows",
}


@dataclass(frozen=True)
class Denotation:
    """What one form executes to: a sorted tuple of answers, or a failure.

    Answers are a set (written sorted, without duplicates) so that equal answers compare equal
    whatever order the database gave them in; ``()`` is a valid (empty) answer. A failure is
    ``"error"`` (syntax, unknown predicate, runtime error, an answer that is not ground), or a
    limit of the executor that stopped the form: ``"timeout"`` (its time or inference limit) or
    ``"memory"`` (its memory limit, or its answers' size limit); ``detail`` says why, naming the
    limit, and is left out of comparisons.

    ``kinds`` are the kinds of thing the answers are, where the executor knows them (sorted, each
    once; left out of comparisons too). Geobase's answers are typed terms until they are printed
    (``cityid(austin, tx)`` is a ``city``), so ``geoquery_prolog`` gives ``state``, ``city``,
    ``river``, ``lake``, ``mountain``, ``place``, ``country``, ``number`` or ``name`` (any other
    atom: an abbreviation): what :mod:`toolkit.execution.answer_kinds` checks an answer by.
    """

    answers: tuple[str, ...] = ()
    failure: Failure | None = None
    detail: str = field(default="", compare=False)
    kinds: tuple[str, ...] = field(default=(), compare=False)

    @classmethod
    def of(cls, answers: Iterable[str], kinds: Iterable[str] = ()) -> Denotation:
        """A successful denotation of *answers* (normalized with :func:`canonical_answer`, deduplicated, sorted) of *kinds*."""
        return cls(tuple(sorted({canonical_answer(answer) for answer in answers})), kinds=tuple(sorted(set(kinds))))

    @classmethod
    def error(cls, detail: str = "") -> Denotation:
        """A form that could not run (malformed, unknown predicate, runtime error)."""
        return cls((), "error", detail)

    @classmethod
    def timeout(cls, detail: str = "") -> Denotation:
        """A form that ran past the time limit (or the inference limit)."""
        return cls((), "timeout", detail)

    @classmethod
    def out_of_memory(cls, detail: str = "") -> Denotation:
        """A form that ran past the memory limit, or whose answers ran past their size limit."""
        return cls((), "memory", detail)

    @property
    def ok(self) -> bool:
        """Whether the form ran (an empty answer ran too)."""
        return self.failure is None

    @property
    def stopped(self) -> bool:
        """Whether a limit of the executor stopped the form (rather than the form being wrong)."""
        return self.failure in ("timeout", "memory")

    def why(self) -> str:
        """A failure in plain words, then the executor's detail: "the query could not run: Unknown procedure: capitol/1"."""
        words = FAILURE_WORDS.get(self.failure or "", "the query gave no answer")
        return f"{words}: {self.detail}" if self.detail else words

    def __str__(self) -> str:
        if self.failure:
            return f"<{self.failure}{': ' + self.detail if self.detail else ''}>"
        return "[" + ", ".join(self.answers) + "]"


def canonical_answer(text: str) -> str:
    """One answer as canonical text: numbers as their value, so ``266807.0`` and ``266807`` are one answer.

    An integral number is written as an integer; any other as its shortest form at 12 significant
    digits (so the order of a floating-point computation does not matter).

    >>> canonical_answer("266807.0"), canonical_answer("0.125"), canonical_answer("austin")
    ('266807', '0.125', 'austin')
    """
    text = text.strip()
    if not _NUMBER.fullmatch(text):
        return text
    value = float(text)
    if not math.isfinite(value):
        return text
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return format(value, ".12g")


class Executor(Registrable, ABC):
    """Runs logical forms and returns their denotations, one per form, in order.

    Implementations may keep processes or connections open: use one as a context manager or call
    :meth:`close` so nothing outlives it.
    """

    default_implementation: ClassVar[str | None] = "geoquery_prolog"

    @abstractmethod
    def execute(self, forms: Sequence[str | Sequence[str]]) -> list[Denotation]:
        """The denotation of each form (a string, or a list of tokens); a bad form is a failure, never an exception."""

    def check_form(self, form: Any) -> str | None:
        """Why *form* is not a form this executor runs (one line), or ``None`` if it may be one."""
        return None

    def close(self) -> None:
        """Release processes and files; the executor may start them again if used afterwards."""

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
