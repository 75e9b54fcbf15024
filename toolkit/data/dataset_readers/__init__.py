"""Dataset readers: turn data files into :class:`~toolkit.data.example.Example` lists.

Importing this package registers the built-in readers (``"tsv"``, ``"conllu"``, ``"parallel_text"``, ``"penman"``).
"""

from toolkit.data.dataset_readers.conllu import ConlluReader, DependencyTree
from toolkit.data.dataset_readers.dataset_reader import DatasetReader
from toolkit.data.dataset_readers.parallel_text import ParallelTextReader
from toolkit.data.dataset_readers.penman import PenmanReader
from toolkit.data.dataset_readers.recombination import RecombinationReader  # noqa: F401 (registers "recombination")
from toolkit.data.dataset_readers.tsv import TsvReader

__all__ = ["ConlluReader", "DatasetReader", "DependencyTree", "ParallelTextReader", "PenmanReader", "TsvReader"]
