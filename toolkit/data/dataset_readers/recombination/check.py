"""Which generated examples are kept: those the grammar derives and whose queries answer.

A recombined or templated example is new text nobody checked by hand. Besides the repeats and
the raw examples whose question and query disagree, which the reader always drops, the ``check``
of the ``recombination`` reader drops one that

- the grammar cannot derive, or derives into something else (``oracle``): the grammar's oracle
  symbols, replayed through its states, must give the target back (and it must not be one the
  grammar skips, too big for ``max_nodes``);
- an executor cannot run (``error``, ``timeout``, ``memory``), or runs to no answer (``empty``,
  with ``nonempty``): a query about nothing teaches little, and execution-guided decoding passes
  over empty answers anyway.

Each reason is counted, and the reader logs the counts.
"""

from __future__ import annotations

from collections.abc import Sequence

from toolkit.data.example import Example
from toolkit.errors import ToolkitError
from toolkit.execution.executor import Executor
from toolkit.from_params import FromParams
from toolkit.grammars.grammar import Grammar


class ExampleCheck(FromParams):
    """The tests a generated example must pass to be kept (see the module docstring).

    Args:
        executor: runs each generated query (GEO: ``geoquery_prolog``); ``None``: not run. An
            inference limit lower than evaluation's keeps slow draws cheap: they are dropped.
        grammar: the training grammar, whose oracle must derive each generated example.
        nonempty: drop queries that run to an empty answer.
    """

    def __init__(self, executor: Executor | None = None, grammar: Grammar | None = None, nonempty: bool = True) -> None:
        self.executor, self.grammar, self.nonempty = executor, grammar, nonempty

    def problem(self, example: Example, forms: Sequence[str] | None = None) -> str | None:
        """Why *example* must be dropped (one of the reasons in the module docstring), or ``None``;
        *forms* are what the executor runs, where that is not the target.
        """
        if self.grammar is not None and not derives(self.grammar, example):
            return "oracle"
        if self.executor is not None:
            for denotation in self.executor.execute(list(forms or [str(example.target)])):
                if not denotation.ok:
                    return str(denotation.failure)
                if self.nonempty and not denotation.answers:
                    return "empty"
        return None

    def close(self) -> None:
        """Stop the executor's processes."""
        if self.executor is not None:
            self.executor.close()


def derives(grammar: Grammar, example: Example) -> bool:
    """Whether *grammar*'s oracle symbols for *example*, replayed through its states, each allowed, give its target back."""
    try:
        if grammar.skips(example):
            return False
        symbols = grammar.oracle(example)
        state = grammar.initial_state(example)
        for symbol in symbols:
            allowed = state.allowed()
            if allowed is not None and symbol not in allowed:
                return False
            state = state.apply(symbol)
    except (ValueError, ToolkitError):
        return False
    return state.is_final() and " ".join(str(state.result()).split()) == " ".join(str(example.target).split())
