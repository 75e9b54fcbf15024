"""The base class of every dataset reader: file handling and errors that name file and line."""

import itertools
import logging
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from toolkit.data.example import Example
from toolkit.errors import ConfigurationError, DataError
from toolkit.files import binary_lines, check_encoding, not_text
from toolkit.from_params import NonNegativeInt
from toolkit.params import Params
from toolkit.registrable import Registrable

logger = logging.getLogger(__name__)


class DatasetReader(Registrable, ABC):
    """Reads a data file into examples; subclasses parse one format in :meth:`_read`.

    Args:
        max_examples: stop after this many examples (for quick runs on a slice of the data).
    """

    def __init__(self, max_examples: NonNegativeInt | None = None) -> None:
        if max_examples is not None and max_examples < 0:
            raise ConfigurationError(f"max_examples must be >= 0, got {max_examples}")
        self.max_examples = max_examples

    @classmethod
    def of_unseen_data(cls, params: Params) -> "DatasetReader":
        """Pop both readers of a run's config and build the one for data it did not train on: the
        ``validation_dataset_reader`` if there is one (training's may augment, as data recombination
        does), else the ``dataset_reader``.
        """
        validation = params.pop_object("validation_dataset_reader", None)
        training = params.pop_object("dataset_reader")
        return cls.from_params(validation if validation is not None else training)

    def fit(self, examples: Sequence[Example]) -> dict[str, Any]:
        """Learn from the training *examples* what reading new inputs needs (a treebank's tokenizer).

        Returns the config entries (under ``dataset_reader``) that rebuild the fitted reader; ``toolkit
        train`` records them in the run's config, so an archive reads raw text as training taught it.
        """
        return {}

    def read(self, path: str | Path, whole: bool = False) -> list[Example]:
        """All examples of *path* (at most ``max_examples``); ``DataError`` if missing, malformed or without examples.

        A file with no example at all (empty, or only blank lines and comments) is an error rather
        than an empty list: training or scoring on nothing is always a mistake (``max_examples: 0`` excepted).
        A file cut short by ``max_examples`` is logged. *whole* ignores ``max_examples``: a command
        that scores the file the user named (``evaluate``, ``oracle``) reads all of it.
        """
        path = Path(path)
        if not path.is_file():
            raise DataError("no such file" if not path.exists() else "not a file", path=str(path))
        limit = None if whole else self.max_examples
        remaining = self._read(path)
        examples = list(itertools.islice(remaining, limit))
        if limit is not None and self._continues(remaining):
            logger.warning("read only the first %d examples of %s (the reader's max_examples)", limit, path)
        if not examples and limit != 0:
            raise DataError("no examples: the file is empty (or holds only blank lines and comments)", path=str(path))
        return examples

    @staticmethod
    def _continues(remaining: Iterator[Example]) -> bool:
        """Whether a file goes on after the examples read (a bad line there counts: it is not read)."""
        try:
            return next(remaining, None) is not None
        except DataError:
            return True

    @abstractmethod
    def _read(self, path: Path) -> Iterator[Example]:
        """Yield the examples of the existing file *path*, lazily, so ``max_examples`` stops early."""

    def text_to_example(self, text: str) -> Example:
        """One line of raw input (for predictors) as an unlabelled example: whitespace tokens."""
        tokens = text.split()
        if not tokens:
            raise DataError("empty input: expected a sentence")
        return Example(tokens)

    @staticmethod
    def _lines(path: Path) -> Iterator[tuple[int, str]]:
        r"""Yield ``(line number, text without line ending)`` from 1, decoding UTF-8 line by line.

        Decoding per line (not per file) lets invalid bytes be reported with their line number.
        A leading UTF-8 byte order mark is dropped; a UTF-16 or UTF-32 one is refused, naming the
        encoding, as is a NUL byte; ``\r\n`` endings are accepted, and ``\r`` alone where every line ends
        so (:func:`~toolkit.files.line_end`).
        """
        with open(path, "rb") as file:
            for number, raw in enumerate(binary_lines(file), start=1):
                if number == 1:
                    check_encoding(raw[:4], path)
                    raw = raw.removeprefix(b"\xef\xbb\xbf")
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as error:
                    raise DataError(
                        f"invalid UTF-8 at byte {error.start} of the line: {raw[error.start : error.start + 4]!r}",
                        path=str(path),
                        line=number,
                    ) from None
                if why := not_text(text):
                    raise DataError(why, path=str(path), line=number)
                yield number, text.rstrip("\r\n")
