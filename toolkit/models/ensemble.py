"""Several trained parsers of one grammar, decoding as one: each step's next-symbol distribution is the mean of theirs.

Averaging the predictions of independently trained models is the most dependable accuracy gain
in parsing and translation, and here it costs no new search. Every parser decodes through the
same searches over grammar states, so an ensemble is one more model of the search's
:class:`~toolkit.decoding.search.IncrementalModel` protocol. Each member reads the sentence its
own way (its own word vocabulary, with or without a pretrained encoder) and keeps its own decoder
cache; at every step the members' probabilities are averaged,

    log p(y | prefix) = log (1/K) sum_k p_k(y | prefix),

and the one grammar's allowed symbols mask the result. The members must therefore share the
grammar, fitted the same way, and the target symbols in the same order: archives trained from
configs that differ only under ``model`` (seeds, encoders, sizes) on the same data.
"""

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from toolkit.archive import Archive, load_archive
from toolkit.data.example import Example
from toolkit.data.vocabulary import TARGET
from toolkit.decoding import Search
from toolkit.errors import ConfigurationError
from toolkit.grammars.grammar import State
from toolkit.models.model import Model
from toolkit.params import differences, show_differences

logger = logging.getLogger(__name__)
SHARED_CONFIG = ("grammar", "dataset_reader")  # what every member's config must agree on


@dataclass
class EnsembleContext:
    """The members' decoding contexts, in member order; a search reorders them all alike."""

    members: list[Any]

    def reorder(self, index: torch.Tensor, same_sources: bool = False) -> "EnsembleContext":
        return EnsembleContext([context.reorder(index, same_sources) for context in self.members])


class Ensemble(Model):
    """Parsers that decode together; the first member's grammar, search and symbols are everyone's
    (``--beam-size`` resizes that search, its checks kept).

    Build one from loaded archives with :func:`ensemble_archive`, which also checks that their
    configs agree; the constructor checks what the models alone can tell (they decode step by
    step, over the same symbols).
    """

    def __init__(self, members: Sequence[Model], names: Sequence[str] | None = None):
        super().__init__()
        names = list(names or (f"member {i + 1}" for i in range(len(members))))
        check_members(members, names)
        self.members = nn.ModuleList(members)
        first = members[0]
        self.vocab, self.grammar, self.search = first.vocab, first.grammar, first.search
        self.pad_index, self.bos_index = first.pad_index, first.bos_index
        self.log_size = math.log(len(members))

    @property
    def max_input_length(self) -> int | None:
        return min(filter(None, (member.max_input_length for member in self.members)), default=None)

    @property
    def max_output_length(self) -> int | None:
        return min(filter(None, (member.max_output_length for member in self.members)), default=None)

    def decoding_batch(self, examples: Sequence[Example]) -> dict[str, Any]:
        """Each member's own batch; ``source`` (the first's) tells the search the batch size and device."""
        batches = [member.decoding_batch(examples) for member in self.members]
        return {"source": batches[0]["source"], "members": batches}

    def start_decoding(self, batch: dict[str, Any], use_cache: bool) -> EnsembleContext:
        return EnsembleContext([member.start_decoding(own, use_cache) for member, own in zip(self.members, batch["members"])])

    def decode_step(self, prefix: torch.Tensor, context: EnsembleContext, states: Sequence[State]) -> tuple[torch.Tensor, EnsembleContext]:
        """The log of the members' mean next-symbol probabilities (N, V)."""
        steps = [member.decode_step(prefix, own, states) for member, own in zip(self.members, context.members)]
        log_probs = torch.stack([log_probs for log_probs, _ in steps]).logsumexp(dim=0) - self.log_size
        return log_probs, EnsembleContext([own for _, own in steps])

    def allowed_mask(self, states: Sequence[State]) -> torch.Tensor:
        return self.members[0].allowed_mask(states)

    def symbols(self, indices: Sequence[int]) -> list[str]:
        return self.members[0].symbols(indices)

    def predict(self, examples: Sequence[Example], search: Search | None = None) -> list[Any]:
        """The search's results; where they carry word tags, each tag is the members' most probable on average."""
        results = (search or self.search).results(self, examples)
        heads = getattr(self.members[0], "tag_heads", None)
        if heads is None:
            return results
        taken = [member.take_tag_distributions() for member in self.members]
        mean = {field: torch.stack([distributions[field] for distributions, _ in taken]).mean(0) for field in heads.tag_sets}
        return [self.grammar.with_tags(result, tags) for result, tags in zip(results, heads.best(mean, taken[0][1]))]


def check_members(members: Sequence[Model], names: Sequence[str]) -> None:
    """A :class:`ConfigurationError` naming the member that cannot decode with the first one."""
    if not members:
        raise ConfigurationError("an ensemble needs at least one model")
    for member, name in zip(members, names):
        if not hasattr(member, "decode_step"):
            raise ConfigurationError(f"{name} is a {type(member).__name__}, which does not decode step by step: only parsers with a search make an ensemble")
    symbols = members[0].vocab.tokens(TARGET)
    for member, name in zip(members[1:], names[1:]):
        theirs = member.vocab.tokens(TARGET)
        if theirs != symbols:
            at = next((i for i, (a, b) in enumerate(zip(symbols, theirs)) if a != b), min(len(symbols), len(theirs)))
            raise ConfigurationError(
                f"{name} predicts other symbols than {names[0]} ({len(theirs):,} against {len(symbols):,}, the first difference at "
                f"position {at}): the members of an ensemble are trained with the same grammar on the same data"
            )


def ensemble_archive(archives: Sequence[Archive], names: Sequence[str]) -> Archive:
    """One archive whose model decodes with every one of *archives* (the first's reader, metrics and search).

    Their configs must agree on the grammar (fitted values included) and the dataset reader, so
    every member reads the same input and the grammar's states and masks mean the same to all.
    """
    first = archives[0]
    for archive, name in zip(archives[1:], names[1:]):
        for key in SHARED_CONFIG:
            ours, theirs = first.config.get(key, {}), archive.config.get(key, {})
            if changed := differences(ours, theirs, f"{key}."):
                raise ConfigurationError(
                    f"{name} was trained with another {key} than {names[0]} ({show_differences(first.config, archive.config, changed, most=3)}): "
                    "the members of an ensemble share it, and differ only under model"
                )
    model = Ensemble([archive.model for archive in archives], names)
    plugins = list(dict.fromkeys(plugin for archive in archives for plugin in archive.plugins))
    return Archive(model, first.config, first.dataset_reader, first.metrics, first.training_metrics, plugins)


def load_ensemble(paths: Sequence[str | Path], device: str | torch.device = "cpu", quantize: str | None = None) -> Archive:
    """The archive at ``paths[0]``, decoding together with those at the others when there are any;
    each model quantized for the CPU with *quantize* (:mod:`toolkit.quantization`).
    """
    from toolkit.quantization import quantize as quantized

    archives = [load_archive(path, device) for path in paths]
    for archive in archives:
        quantized(archive.model, quantize)
    if len(archives) == 1:
        return archives[0]
    ensemble = ensemble_archive(archives, [str(path) for path in paths])
    logger.info("decoding with an ensemble of %d archives: %s", len(paths), ", ".join(map(str, paths)))
    return ensemble
