"""Smatch (Cai & Knight 2013) for AMR graphs, with the ``smatch`` package, made deterministic and bounded.

The package's hill climbing uses random restarts and reseeds Python's global ``random`` from the
system on every pair; :func:`smatch_counts` hands it a private generator whose ``seed()`` always
restores a fixed seed, so a pair scores the same on every run and the global ``random`` state is
left alone. Graphs are PENMAN strings (any layout) or ``penman.Graph`` objects.

Hill climbing is not bounded by the graphs' size: every step tries every swap of two variables
and writes the whole mapping down for each, so a pair of 130-variable graphs took 20 s and 1.4 GB,
and one of 220 variables 190 s and 15 GB. Here the package's memo of mappings (a cache: the
score of a mapping never changes) keeps nothing, so memory stays flat, and a pair with a graph of
more than ``max_nodes`` variables (:data:`MAX_NODES` by default; 100 variables take about 5 s) is
not climbed at all, decided before any work on it: it is scored by :func:`greedy_counts`, one
mapping made in linear time (a lower bound of its Smatch, never more), counted in ``smatch_greedy``
and named in one warning per call. Leaving such pairs out would let a parser that writes huge
graphs drop its worst predictions from the score. A failure while scoring (a ``MemoryError``, a
graph the reader cannot lay out within Python's stack) propagates: it is never turned into a score.
"""

import contextlib
import io
import logging
import random
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

import penman
import smatch as smatch_package
from smatch import amr as smatch_amr

from toolkit.errors import DataError
from toolkit.from_params import PositiveInt
from toolkit.metrics.metric import Metric, kind_of

logger = logging.getLogger(__name__)

PLACEHOLDER = "(a / amr-empty)"
MAX_NODES = 100  # variables per graph that Smatch's hill climbing is run on (measured: about 5 s and 30 MB at 100)
_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"')


class _FixedRandom(random.Random):
    """A generator that ``seed()`` (with any argument, or none) always resets to the same seed."""

    def __init__(self, fixed: int) -> None:
        self.fixed = fixed
        super().__init__(fixed)

    def seed(self, *args: Any, **kwargs: Any) -> None:  # smatch calls random.seed() unseeded
        super().seed(getattr(self, "fixed", 0))


class _NoMemo(dict):
    """The package's ``match_triple_dict`` (mapping -> score, a pure cache), keeping nothing: it held every
    mapping each hill-climbing step tried, a tuple of all the variables per move and swap, gigabytes on large graphs.
    """

    def __setitem__(self, key: Any, value: Any) -> None:
        pass


def graph_size(graph: Any) -> int:
    """How many variables (nodes with a concept) *graph* has: a ``penman.Graph``'s instances, or for text the
    ``(`` outside quoted strings, counted without parsing (so the size is known before any work on it).
    """
    if isinstance(graph, penman.Graph):
        return len(graph.instances())
    if graph is None:
        return 0
    text = "\n".join(line for line in str(graph).splitlines() if not line.lstrip().startswith("#"))
    return _QUOTED.sub("", text).count("(")


def one_line(graph: Any) -> str:
    """A graph as one-line PENMAN without metadata; ``None`` or a string penman cannot read or lay out becomes a placeholder node."""
    if graph is None:
        return PLACEHOLDER
    try:
        if not isinstance(graph, penman.Graph):
            graph = penman.decode(str(graph))
        return penman.encode(penman.Graph(graph.triples, top=graph.top), indent=None)
    except penman.exceptions.PenmanError:  # an unreadable prediction scores as the placeholder; nothing else does
        return PLACEHOLDER


def _read(text: str) -> Any:
    """The ``smatch`` reader's AMR of one-line PENMAN, or of the placeholder if that reader rejects *text* (a graph penman
    accepted: it returns ``None``, and would crash the match), with its complaints on stderr kept quiet.
    """
    saved = smatch_amr.ERROR_LOG
    smatch_amr.ERROR_LOG = io.StringIO()
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            try:
                parsed = smatch_amr.AMR.parse_AMR_line(text)
            except (ValueError, IndexError, KeyError, AttributeError, TypeError):  # its reader's ways of failing on odd text
                parsed = None
            return parsed if parsed is not None else smatch_amr.AMR.parse_AMR_line(PLACEHOLDER)
    finally:
        smatch_amr.ERROR_LOG = saved


def smatch_counts(prediction: Any, gold: Any, seed: int = 13, restarts: int = 5) -> tuple[int, int, int]:
    """``(matching triples, predicted triples, gold triples)`` of one pair, deterministic for a *seed*.

    What ``smatch.get_amr_match`` does, with each graph read once, a fixed seed and no memo of mappings.
    Any error while matching (``MemoryError`` included) propagates.
    """
    first, second = _read(one_line(prediction)), _read(one_line(gold))
    saved = smatch_package.random, smatch_package.iteration_num, smatch_package.match_triple_dict
    smatch_package.random, smatch_package.iteration_num, smatch_package.match_triple_dict = _FixedRandom(seed), restarts, _NoMemo()
    try:
        first.rename_node("a")
        second.rename_node("b")
        instance1, attributes1, relation1 = first.get_triples()
        instance2, attributes2, relation2 = second.get_triples()
        _, match = smatch_package.get_best_match(instance1, attributes1, relation1, instance2, attributes2, relation2, "a", "b")
    finally:
        smatch_package.random, smatch_package.iteration_num, smatch_package.match_triple_dict = saved
    test = len(instance1) + len(attributes1) + len(relation1)
    gold_total = len(instance2) + len(attributes2) + len(relation2)
    return int(match), test, gold_total


def greedy_counts(prediction: Any, gold: Any) -> tuple[int, int, int]:
    """``(matching triples, predicted triples, gold triples)`` under one mapping made in about linear time:
    each predicted variable goes to a free gold variable of the same concept, one with the same
    neighbourhood (its roles and its neighbours' concepts) first. The match of any one mapping is at
    most the best one's, so this is a lower bound of Smatch, for pairs too large to climb.
    """
    first, second = _read(one_line(prediction)), _read(one_line(gold))
    first.rename_node("a")
    second.rename_node("b")
    (instances1, attributes1, relations1), (instances2, attributes2, relations2) = first.get_triples(), second.get_triples()
    signatures1, signatures2 = _signatures(instances1, attributes1, relations1), _signatures(instances2, attributes2, relations2)
    free: dict[Any, list[str]] = {}
    for _, variable, concept in reversed(instances2):  # popped from the end: the first in the graph goes first
        free.setdefault(signatures2[variable], []).append(variable)
        free.setdefault(concept.lower(), []).append(variable)
    mapping: dict[str, str] = {}
    taken: set[str] = set()
    concepts1 = {variable: concept.lower() for _, variable, concept in instances1}
    for key in (signatures1, concepts1):  # the same neighbourhood first, then the same concept
        for _, variable, _ in instances1:
            candidates = free.get(key[variable], [])
            while variable not in mapping and candidates:
                if (target := candidates.pop()) not in taken:
                    mapping[variable] = target
                    taken.add(target)

    def matched(predicted: list[tuple[str, str, str]], golds: list[tuple[str, str, str]], mapped: Any) -> int:
        left = Counter((relation.lower(), source, target) for relation, source, target in golds)
        count = 0
        for relation, source, target in predicted:
            key = (relation.lower(), *mapped(source, target))
            if left[key] > 0:
                left[key] -= 1
                count += 1
        return count

    match = (
        len(mapping)
        + matched(attributes1, attributes2, lambda source, value: (mapping.get(source), value))
        + matched(relations1, relations2, lambda source, target: (mapping.get(source), mapping.get(target)))
    )
    return match, len(instances1) + len(attributes1) + len(relations1), len(instances2) + len(attributes2) + len(relations2)


def _signatures(instances: list, attributes: list, relations: list) -> dict[str, tuple]:
    """Each variable's concept with its roles and what they lead to (neighbours by concept, constants by value), sorted."""
    concept = {variable: name.lower() for _, variable, name in instances}
    around: dict[str, list[tuple[str, str]]] = {variable: [] for variable in concept}
    for relation, source, value in attributes:
        around[source].append((relation.lower(), str(value)))
    for relation, source, target in relations:
        around[source].append((relation.lower(), concept.get(target, "")))
        around.setdefault(target, []).append(("~" + relation.lower(), concept.get(source, "")))
    return {variable: (concept[variable], tuple(sorted(around[variable]))) for variable in concept}


def require_graph(name: str, gold: Any) -> None:
    """The :meth:`~Metric.check_gold` of a Smatch metric: a ``penman.Graph``, or text that PENMAN reads."""
    if isinstance(gold, penman.Graph):
        return
    if not isinstance(gold, str):
        raise DataError(f"the {name} metric scores AMR graphs (penman.Graph or PENMAN text); the golds here are of type {kind_of(gold)}")
    try:
        penman.decode(gold)
    except penman.exceptions.PenmanError as error:
        raise DataError(
            f"the {name} metric scores AMR graphs; these golds are text that is not PENMAN ({getattr(error, 'message', None) or type(error).__name__})"
        ) from None


def warn_greedy(name: str, greedy: Sequence[tuple[int, int]], total: int, limit: int, why: str, key: str) -> None:
    """One warning for the pairs the metric *name* scored by :func:`greedy_counts` ((1-based position, variables) of each),
    which it reports as *key*.
    """
    if greedy:
        position, size = greedy[0]
        logger.warning(
            "%s: %d of %d graph pairs have a graph of more than %s.max_nodes = %d variables (the first: pair %d, with %d); %s, "
            "so they are scored by one greedy mapping, a lower bound, and reported as %s",
            name,
            len(greedy),
            total,
            name,
            limit,
            position,
            size,
            why,
            key,
        )


@Metric.register("smatch")
class Smatch(Metric):
    """``{"smatch_precision", "smatch_recall", "smatch"}`` (F1), micro-averaged over triples, as smatch.py reports.

    Args:
        seed: the seed of the random restarts (the same seed gives the same score).
        restarts: random restarts per pair (smatch.py's ``-r``; default 5 as there).
        max_nodes: the most variables a graph of a pair may have for the pair to be scored (see the module
            docstring); pairs with a larger graph are scored by a greedy mapping (a lower bound) and reported as ``smatch_greedy``.

    Registered as ``"smatch"``; predictions and golds are PENMAN strings or ``penman.Graph`` objects.
    """

    count_names = ("match", "predicted", "gold", "greedy")

    def __init__(self, seed: int = 13, restarts: int = 5, max_nodes: PositiveInt = MAX_NODES) -> None:
        self.seed, self.restarts, self.max_nodes = seed, restarts, max_nodes
        super().__init__()

    def check_gold(self, gold: Any) -> None:
        require_graph("smatch", gold)

    def __call__(self, predictions: Sequence, golds: Sequence) -> None:
        self._check_lengths(predictions, golds)
        greedy = []
        for position, (prediction, gold) in enumerate(zip(predictions, golds), start=1):
            size = max(graph_size(prediction), graph_size(gold))
            if size > self.max_nodes:  # decided before any work on the pair
                greedy.append((position, size))
                self._counts["greedy"] += 1
                match, test, total = greedy_counts(prediction, gold)
            else:
                match, test, total = smatch_counts(prediction, gold, self.seed, self.restarts)
            self._counts["match"] += match
            self._counts["predicted"] += test
            self._counts["gold"] += total
        warn_greedy("smatch", greedy, len(golds), self.max_nodes, "hill climbing grows with the fourth power of a graph's size", "smatch_greedy")

    def get_metric(self, reset: bool = False) -> dict[str, float]:
        match, predicted, gold = self._counts["match"], self._counts["predicted"], self._counts["gold"]
        precision = match / predicted if predicted else 0.0
        recall = match / gold if gold else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        values = {"smatch_precision": precision, "smatch_recall": recall, "smatch": f1}
        if self._counts["greedy"]:
            values["smatch_greedy"] = self._counts["greedy"]
        if reset:
            self.reset()
        return values
