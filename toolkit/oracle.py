"""`toolkit oracle`: replay a config's grammar on gold data and count exact round trips.

For every example, the oracle's symbols are fed to the grammar's state machine (checking each is
allowed, as training does) and the final state's result is compared with the gold structure. A
grammar that cannot reproduce its own training data caps the parser's accuracy; this command
measures that cap before any training. Beyond exact round trips, the grammar's own counts
(:meth:`Grammar.data_report`, e.g. non-projective trees) and its oracle metrics
(:meth:`Grammar.oracle_metrics`, e.g. UAS/LAS, scored against the targets as evaluation does) are
reported, so a grammar that changes its training trees shows how far the ceiling drops.
"""

from collections import Counter
from collections.abc import Sequence
from typing import Any

from toolkit.data.example import Example
from toolkit.errors import DataError
from toolkit.grammars.grammar import Grammar
from toolkit.metrics.metric import Metric


def replay_oracle(grammar: Grammar, examples: Sequence[Example], metrics: Sequence[Metric] | None = None) -> dict[str, Any]:
    """Counts of examples, exact round trips, oracle failures (with the first few), skipped examples and symbols.

    *metrics* (default: the grammar's ``oracle_metrics()``) score the results of the examples the
    oracle derived, against their targets; skipped and failed examples are left out of them.
    """
    if metrics is None:  # the grammar names registered metrics (a plugin may still give instances)
        metrics = [metric if isinstance(metric, Metric) else Metric.from_params(metric) for metric in grammar.oracle_metrics()]
    report: dict[str, Any] = {"examples": len(examples), "exact_round_trips": 0, "oracle_errors": 0, "skipped": 0}
    lengths, errors, readable, results, targets = Counter(), [], [], [], []
    for example in examples:
        try:
            if grammar.skips(example):
                report["skipped"] += 1
                readable.append(example)
                continue
            derivation = grammar.derive(example)
        except DataError as error:
            report["oracle_errors"] += 1
            errors.append(str(error))
            continue
        readable.append(example)
        state = grammar.derivation_state(example)
        for symbol in derivation.symbols:
            state = state.apply(symbol)
        lengths[len(derivation.symbols)] += 1
        result = state.result()
        report["exact_round_trips"] += state.is_final() and result == grammar.gold(example)
        results.append(result)
        targets.append(example.target)
    report["round_trip_accuracy"] = report["exact_round_trips"] / max(len(examples), 1)
    report["mean_symbols"] = sum(n * c for n, c in lengths.items()) / max(sum(lengths.values()), 1)
    report["max_symbols"] = max(lengths, default=0)
    report.update(grammar.data_report(readable))
    if metrics:
        report["scored_examples"] = len(results)
    for metric in metrics:
        metric.reset()
        metric(results, targets)
        report.update(metric.get_metric(reset=True))
    if errors:
        report["first_errors"] = errors[:5]
    return report
