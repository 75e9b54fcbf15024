"""Decoding a data set and scoring it: shared by validation, `toolkit evaluate` and predictors."""

import logging
from collections.abc import Callable, Sequence
from typing import Any

import torch
from tqdm import tqdm

from toolkit.data.batching import TokenBudgetBatchSampler
from toolkit.data.example import Example
from toolkit.decoding.beam import BeamTooWide
from toolkit.decoding.search import Search
from toolkit.device import move_to_device
from toolkit.metrics.metric import Metric, check_golds
from toolkit.models.model import Model

__all__ = ["DecodingStopped", "evaluate", "move_to_device", "predict", "undecodable"]

logger = logging.getLogger(__name__)


class DecodingStopped(Exception):
    """:func:`predict` was told to stop between batches (a training run's time budget ran out while it validated)."""


@torch.no_grad()
def predict(
    model: Model, examples: Sequence[Example], max_tokens: int = 8192, search=None, should_stop: Callable[[], bool] | None = None, progress: bool = False
) -> list[Any]:
    """Predictions for *examples* in their original order, decoded in length-sorted batches.

    *max_tokens* bounds a batch's padded source tokens times the search's hypotheses per sentence
    (``Search.hypotheses_per_input``): a beam of *k* decodes *k* rows per sentence, so its batches
    hold *k* times fewer sentences. Sized
    like greedy's, a beam's batches were 1.35× slower on one CPU thread (EWT, beam 5,
    ``benchmarks/dependency_speed.py``); the outputs are the same either way. *should_stop* is asked
    before each batch; ``True`` raises :class:`DecodingStopped`. *progress* shows a progress bar of the
    inputs decoded (on a terminal, as training's: the test set's decoding at the end of ``train``).
    """
    model.eval()
    lengths = [len(example.tokens) for example in examples]
    predictions: list[Any] = [None] * len(examples)
    searching = search or getattr(model, "search", None)  # a tagger has no search
    rows = searching.hypotheses_per_input if isinstance(searching, Search) else 1
    with tqdm(total=len(examples), desc="decoding", unit="input", disable=not progress or None, leave=False, dynamic_ncols=True) as bar:
        for indices in TokenBudgetBatchSampler(lengths, max(max_tokens // rows, 1), shuffle=False):
            if should_stop is not None and should_stop():
                raise DecodingStopped
            for i, prediction in zip(indices, predict_halving([examples[i] for i in indices], model, search)):
                predictions[i] = prediction
            bar.update(len(indices))
    return predictions


def predict_halving(examples: list[Example], model: Model, search=None) -> list[Any]:
    """``model.predict(examples, search)``, decoding half the examples at a time, recursively, where a
    beam does not fit in memory for all of them at once: the size of a batch is no reason to fail
    (the README's main job was refused on a machine with 6.4 GB free). One example that does not fit is an error.
    """
    try:
        return list(model.predict(examples, search))
    except BeamTooWide:
        if len(examples) == 1:
            raise
    half = len(examples) // 2
    return predict_halving(examples[:half], model, search) + predict_halving(examples[half:], model, search)


def undecodable(model: Model, examples: Sequence[Example], search=None) -> list[Example]:
    """The *examples* longer than *model* decodes whole (:meth:`Model.max_decodable_words`), logged in one
    warning with the first one's file and line: their predictions are cut short, and score as such.
    """
    limit = model.max_decodable_words(search)
    over = [example for example in examples if limit is not None and len(example.tokens) > limit]
    if over:
        first = over[0].meta
        where = f"{first['path']}:{first['line']}: " if first.get("path") and first.get("line") else ""
        logger.warning(
            "%s%d of %d inputs are longer than this model decodes whole (%d words: its search's max_steps and its positions); "
            "they are scored as it parses them, cut short",
            where,
            len(over),
            len(examples),
            limit,
        )
    return over


def evaluate(
    model: Model, examples: Sequence[Example], metrics: Sequence[Metric], max_tokens: int = 8192, search=None, progress: bool = False
) -> dict[str, float]:
    """Decode *examples* (with a progress bar where *progress*) and score the predictions against their targets with every metric.

    A metric that cannot score these targets (Smatch on dependency trees) fails before decoding.
    """
    check_golds(metrics, examples)
    return score(predict(model, examples, max_tokens, search, progress=progress), examples, metrics)


def score(predictions: Sequence[Any], examples: Sequence[Example], metrics: Sequence[Metric]) -> dict[str, float]:
    """Every metric's scores of *predictions* against the targets of *examples* (one dict, in metric order).

    Where the examples come from several domains (``meta["domain"]``, :mod:`toolkit.training.data_sources`),
    each domain's scores follow the whole's, named ``DOMAIN_SCORE`` (``bio_smatch``).
    """
    results = _score(predictions, examples, metrics)
    domains = list(dict.fromkeys(example.meta.get("domain") for example in examples))
    if len(domains) > 1:
        for domain in domains:
            chosen = [i for i, example in enumerate(examples) if example.meta.get("domain") == domain]
            scores = _score([predictions[i] for i in chosen], [examples[i] for i in chosen], metrics)
            results.update({f"{domain or 'other'}_{name}": value for name, value in scores.items()})
    return results


def _score(predictions: Sequence[Any], examples: Sequence[Example], metrics: Sequence[Metric]) -> dict[str, float]:
    results: dict[str, float] = {}
    for metric in metrics:
        metric.reset()
        metric(predictions, [example.target for example in examples])
        for position, note in metric.notes():  # e.g. a query stopped by an executor's limit: named by its input
            meta = examples[position].meta
            logger.warning("%s%s", f"{meta['path']}:{meta['line']}: " if meta.get("path") and meta.get("line") else f"input {position + 1}: ", note)
        results.update(metric.get_metric(reset=True))
    return results
