"""A reader for ``source<TAB>target`` lines, the format of the GEO and ATIS semantic parsing data."""

from collections.abc import Iterator
from pathlib import Path

from toolkit.data.dataset_readers.dataset_reader import DatasetReader
from toolkit.data.example import Example
from toolkit.errors import DataError


@DatasetReader.register("tsv")
class TsvReader(DatasetReader):
    """Reads ``question<TAB>logical form`` lines: whitespace-tokenized source, target kept as a string.

    The target's whitespace is normalized (single spaces, stripped) so that the grammar and the
    metrics see one spelling. Blank lines are skipped. ``meta`` is ``{"path": ..., "line": n}``.

    Registered as ``"tsv"``.
    """

    def _read(self, path: Path) -> Iterator[Example]:
        for number, line in self._lines(path):
            if not line.strip():
                continue
            fields = line.split("\t")
            problem = _field_problem(fields)
            if problem:
                raise DataError(f"expected 'question<TAB>logical form', found {problem}", path=str(path), line=number)
            source, target = fields
            yield Example(source.split(), " ".join(target.split()), {"path": str(path), "line": number})

    def text_to_example(self, text: str) -> Example:
        """A plain sentence, or a ``source<TAB>target`` line whose target is then kept."""
        source, tab, target = text.rstrip("\r\n").partition("\t")
        example = super().text_to_example(source)
        if tab and target.strip():
            example.target = " ".join(target.split())
        return example


def _field_problem(fields: list[str]) -> str | None:
    """What is wrong with the tab-separated *fields* of a non-blank line, or ``None``."""
    if len(fields) == 1:
        return "no tab"
    if len(fields) > 2:
        return f"{len(fields) - 1} tabs"
    if not fields[0].strip():
        return "an empty question"
    if not fields[1].strip():
        return "an empty logical form"
    return None
