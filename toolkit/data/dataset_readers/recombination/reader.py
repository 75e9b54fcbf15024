"""The ``recombination`` reader: the originals of a base reader, then each strategy's new examples.

Kept apart from the strategies so that the reader decides only the order, the seeding, which
draws are kept (new to the set, and passing the ``check``) and the metadata of what is added;
what is drawn is each strategy's business.
"""

from __future__ import annotations

import logging
import random
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from toolkit.data.dataset_readers.dataset_reader import DatasetReader
from toolkit.data.dataset_readers.recombination.abstraction import misread
from toolkit.data.dataset_readers.recombination.check import ExampleCheck
from toolkit.data.dataset_readers.recombination.strategy import Candidate, Pair, RecombinationStrategy, pair_of
from toolkit.data.example import Example
from toolkit.entities.anonymizer import Anonymizer
from toolkit.errors import ConfigurationError
from toolkit.from_params import as_params
from toolkit.params import Params

logger = logging.getLogger(__name__)


@DatasetReader.register("recombination")
class RecombinationReader(DatasetReader):
    """Reads with *base_reader*, then appends each strategy's recombined examples (originals first, unchanged).

    *strategies* is an object of named strategies (``{templates: {type: ..., ratio: 0}}``), so that
    an override can switch one by its name (``dataset_reader.strategies.templates.ratio``), or a list.
    A strategy of ratio 0 is not run. Strategy *key* (its position in a list, its name in an
    object) draws with its own generator seeded by ``(seed, key)``, so adding a strategy leaves
    the others' samples as they were.

    When the base reader has an anonymizer (raw GEO: questions with entity names, Prolog queries),
    strategies draw raw questions and queries, and the base reader anonymizes each as it does a
    line of the file. A draw is dropped whose query names an entity that its question does not
    mention, as the anonymizer finds mentions, or reads a name otherwise than the anonymizer
    reads it first (*new york* as the city in "how many people live in new york"). *check* drops
    draws that the grammar cannot derive or that do not execute (:class:`~.check.ExampleCheck`).
    A draw that repeats an example (as the parser sees it: tokens and anonymized query) is always
    dropped.

    Augmented examples carry ``meta = {"path", "line": None, "recombination": name, "sources": lines
    of the originals}``; :attr:`report` holds, after :meth:`read`, each strategy's counts (wanted,
    added, dropped by reason).

    Registered as ``"recombination"``.
    """

    def __init__(self, base_reader: DatasetReader, strategies: dict[str, RecombinationStrategy], seed: int = 13, check: ExampleCheck | None = None) -> None:
        super().__init__(None)
        if not strategies:
            raise ConfigurationError("expected at least one strategy", key="strategies")
        self.base_reader, self.seed, self.check = base_reader, seed, check
        self.strategies = dict(strategies) if isinstance(strategies, dict) else {str(index): strategy for index, strategy in enumerate(strategies)}
        self.report: dict[str, dict[str, int]] = {}

    @classmethod
    def from_params(cls, params: Params | Mapping[str, Any], **extras: Any) -> RecombinationReader:
        """A list of strategies is read as an object keyed by position (``"0"``, ``"1"``), so that its
        errors name ``strategies.1.k`` and its seeds are the list's.
        """
        params = as_params(params)
        if isinstance(params.get("strategies"), list):
            params["strategies"] = {str(index): strategy for index, strategy in enumerate(params["strategies"])}
        return super().from_params(params, **extras)

    def read(self, path: str | Path, whole: bool = False) -> list[Example]:
        originals = self.base_reader.read(path, whole)
        anonymizer = getattr(self.base_reader, "anonymizer", None)
        known = {pair_of(example) for example in originals}
        augmented: list[Example] = []
        self.report = {}
        try:
            for key, strategy in self.strategies.items():
                count = round(strategy.ratio * len(originals))
                if count == 0:
                    continue
                rng = random.Random(f"recombination:{self.seed}:{key}")
                dropped: Counter[str] = Counter()
                added: list[Example] = []
                for candidate in strategy.draws(originals, count, rng, anonymizer):
                    example = self._example(candidate, path, strategy.name)
                    problem = self._problem(example, candidate, known, anonymizer)
                    if problem is not None:
                        dropped[problem] += 1
                        continue
                    known.add(pair_of(example))
                    added.append(example)
                    if len(added) == count:
                        break
                augmented += added
                self.report[key] = {"wanted": count, "added": len(added), **{f"dropped_{why}": n for why, n in sorted(dropped.items())}}
                drops = ", ".join(f"{n} {why}" for why, n in sorted(dropped.items())) or "none"
                logger.info("%s: %d new examples (%d wanted) added to %d originals; dropped: %s", strategy.name, len(added), count, len(originals), drops)
        finally:
            if self.check is not None:
                self.check.close()
        return originals + augmented

    def _example(self, candidate: Candidate, path: str | Path, name: str) -> Example:
        meta = {"path": str(path), "line": None, "recombination": name, "sources": list(candidate.sources)}
        example_of = getattr(self.base_reader, "example", None)
        if getattr(self.base_reader, "anonymizer", None) is not None and example_of is not None:
            return example_of(list(candidate.question), candidate.target, meta)
        return Example(list(candidate.question), candidate.target, meta)

    def _problem(self, example: Example, candidate: Candidate, known: set[Pair], anonymizer: Anonymizer | None) -> str | None:
        """Why a draw is not kept: ``repeat`` (the parser has this example already); on raw data
        ``unmatched`` (the query names an entity the question does not mention) or ``misread`` (the
        query reads a name otherwise than the anonymizer reads it first, :func:`~.abstraction.misread`);
        or the check's reason.
        """
        if pair_of(example) in known:
            return "repeat"
        if anonymizer is not None:
            anonymized = anonymizer.anonymize(list(candidate.question), candidate.target)
            if anonymized.unmatched:
                return "unmatched"
            if misread(anonymized, anonymizer):
                return "misread"
        return self.check.problem(example, candidate.forms) if self.check is not None else None

    def _read(self, path: Path) -> Iterator[Example]:
        return iter(self.read(path))

    def text_to_example(self, text: str) -> Example:
        return self.base_reader.text_to_example(text)
