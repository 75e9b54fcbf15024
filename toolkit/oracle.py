"""`toolkit oracle`: replay a config's grammar on gold data and count exact round trips.

For every example, the oracle's symbols are fed to the grammar's state machine (checking each is
allowed, as training does) and the final state's result is compared with the gold structure. A
grammar that cannot reproduce its own training data caps the parser's accuracy; this command
measures that cap before any training.
"""

from collections import Counter
from collections.abc import Sequence
from typing import Any

from toolkit.data.example import Example
from toolkit.errors import DataError
from toolkit.grammars.grammar import Grammar


def replay_oracle(grammar: Grammar, examples: Sequence[Example]) -> dict[str, Any]:
    """Counts of examples, exact round trips, oracle failures (with the first few), and symbols."""
    report: dict[str, Any] = {"examples": len(examples), "exact_round_trips": 0, "oracle_errors": 0}
    lengths, errors = Counter(), []
    for example in examples:
        try:
            derivation = grammar.derive(example)
            state = grammar.replay(example)
        except DataError as error:
            report["oracle_errors"] += 1
            errors.append(str(error))
            continue
        lengths[len(derivation.symbols)] += 1
        report["exact_round_trips"] += state.is_final() and state.result() == grammar.gold(example)
    report["round_trip_accuracy"] = report["exact_round_trips"] / max(len(examples), 1)
    report["mean_symbols"] = sum(n * c for n, c in lengths.items()) / max(sum(lengths.values()), 1)
    report["max_symbols"] = max(lengths, default=0)
    if errors:
        report["first_errors"] = errors[:5]
    return report
