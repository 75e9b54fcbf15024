"""Data recombination (Jia & Liang 2016): a reader that adds new, recombined training examples.

``"type": "recombination"`` (:mod:`.reader`) wraps a ``base_reader`` (the ``tsv`` reader of GEO
and ATIS) and a list (or named object) of ``strategies``; each strategy samples
``round(ratio * N)`` new examples from the N originals, which are always kept, first and
unchanged. Sampling is driven by ``seed`` only (same seed, same output; another seed, another
sample), and an example never repeats one already in the set. The paper samples a fresh
recombinant set every epoch; this reader fixes one set per run. Strategies draw independently
from the originals (CONCAT never concatenates AE outputs).

Put the wrapper in ``dataset_reader`` and the plain reader in ``validation_dataset_reader``:
validation and test data must never be augmented.

Our GEO and ATIS copies have their entities already anonymized to typed, numbered placeholders
(``s0`` state, ``ci1`` city, numbered in order of appearance), which shapes what each strategy
can do. Raw GEO (a ``tsv`` reader with the ``geo_prolog`` anonymizer: entity names, Prolog
queries) is recombined with its entities taken out and put back (:mod:`.abstraction`), and a
``check`` (:mod:`.check`) keeps only draws the grammar derives and Geobase answers. The
strategies, each in its own module with its limits documented there: ``abs_entities``
(ABSENTITIES, :mod:`.entities`), ``abs_whole_phrases`` (ABSWHOLEPHRASES, :mod:`.whole_phrases`),
``concat`` (CONCAT-k, :mod:`.concat`) and ``geo_templates`` (questions written from Geobase's
schema, :mod:`.templates`); what they share is in :mod:`.strategy`. Importing this package
registers all of them and the reader.
"""

from toolkit.data.dataset_readers.recombination.check import ExampleCheck
from toolkit.data.dataset_readers.recombination.concat import Concat
from toolkit.data.dataset_readers.recombination.entities import AbsEntities
from toolkit.data.dataset_readers.recombination.reader import RecombinationReader
from toolkit.data.dataset_readers.recombination.strategy import Candidate, EnumeratedStrategy, RecombinationStrategy, pair_of, unique
from toolkit.data.dataset_readers.recombination.templates import GeoTemplates, Template, read_templates
from toolkit.data.dataset_readers.recombination.whole_phrases import AbsWholePhrases

__all__ = [
    "AbsEntities",
    "AbsWholePhrases",
    "Candidate",
    "Concat",
    "EnumeratedStrategy",
    "ExampleCheck",
    "GeoTemplates",
    "RecombinationReader",
    "RecombinationStrategy",
    "Template",
    "pair_of",
    "read_templates",
    "unique",
]
