"""The ``recombination`` reader: the originals of a base reader, then each strategy's new examples.

Kept apart from the strategies so that the reader decides only the order, the seeding and the
metadata of what is added; what is added is each strategy's business.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Iterator
from pathlib import Path

from toolkit.data.dataset_readers.dataset_reader import DatasetReader
from toolkit.data.dataset_readers.recombination.strategy import RecombinationStrategy, pair_of
from toolkit.data.example import Example
from toolkit.errors import ConfigurationError

logger = logging.getLogger(__name__)


@DatasetReader.register("recombination")
class RecombinationReader(DatasetReader):
    """Reads with *base_reader*, then appends each strategy's recombined examples (originals first, unchanged).

    Strategy *i* draws with its own generator seeded by ``(seed, i)``, so adding a strategy at the
    end leaves the earlier ones' samples as they were. Augmented examples carry
    ``meta = {"path", "line": None, "recombination": name, "sources": lines of the originals}``.

    Registered as ``"recombination"``.
    """

    def __init__(self, base_reader: DatasetReader, strategies: list[RecombinationStrategy], seed: int = 13) -> None:
        super().__init__(None)
        if not strategies:
            raise ConfigurationError("expected at least one strategy", key="strategies")
        self.base_reader, self.strategies, self.seed = base_reader, strategies, seed

    def read(self, path: str | Path, whole: bool = False) -> list[Example]:
        originals = self.base_reader.read(path, whole)
        known = {pair_of(example) for example in originals}
        augmented: list[Example] = []
        for index, strategy in enumerate(self.strategies):
            rng = random.Random(f"recombination:{self.seed}:{index}")
            count = round(strategy.ratio * len(originals))
            sampled = strategy.sample(originals, count, rng, known)
            known.update(candidate.pair for candidate in sampled)
            meta = {"path": str(path), "line": None, "recombination": strategy.name}
            augmented += [Example(list(c.question), c.target, {**meta, "sources": list(c.sources)}) for c in sampled]
            logger.info("%s: %d new examples (%d wanted) added to %d originals", strategy.name, len(sampled), count, len(originals))
        return originals + augmented

    def _read(self, path: Path) -> Iterator[Example]:
        return iter(self.read(path))

    def text_to_example(self, text: str) -> Example:
        return self.base_reader.text_to_example(text)
