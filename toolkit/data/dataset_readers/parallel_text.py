"""A reader for sentence-aligned parallel text: line i of ``PREFIX.src`` translates line i of ``PREFIX.tgt``.

This is how Multi30k, WMT and IWSLT data come: ``train.de`` and ``train.en``, raw and
untokenised. Both sides are tokenised with a sacreBLEU tokenizer (13a by default, the one BLEU
scores with), so that the target the decoder learns is tokenised exactly as the ``bleu`` metric
tokenises references, and the score of the decoder's output is the standard sacreBLEU score.
"""

from collections.abc import Iterator
from itertools import zip_longest
from pathlib import Path

from toolkit.data.dataset_readers.dataset_reader import DatasetReader
from toolkit.data.example import Example
from toolkit.data.tokenization import bleu_tokenizer
from toolkit.errors import ConfigurationError, DataError
from toolkit.from_params import NonNegativeInt


@DatasetReader.register("parallel_text")
class ParallelTextReader(DatasetReader):
    """Reads ``PATH.<source_language>`` and ``PATH.<target_language>`` line by line.

    A data path is the files' common prefix (``multi30k/train``) or the source file itself
    (``multi30k/train.de``). Tokens are the tokenizer's space-separated output; the target is kept
    as that tokenised string, which the ``sequence`` grammar splits on spaces. ``meta`` is
    ``{"path": source file, "line": n}``. Files of different lengths, or a line empty on one side
    only, are a :class:`DataError` naming the file and line; lines empty on both sides are skipped.

    # Parameters
    source_language, target_language : the file suffixes, e.g. ``"de"`` and ``"en"``.
    tokenize : the sacreBLEU tokenizer (``"13a"``, ``"intl"``, or ``"none"`` for whitespace).
    lowercase : lower-case both sides (then score with case-insensitive BLEU: the references are lower-cased too).

    Registered as ``"parallel_text"``.
    """

    def __init__(
        self, source_language: str, target_language: str, tokenize: str = "13a", lowercase: bool = False, max_examples: NonNegativeInt | None = None
    ) -> None:
        super().__init__(max_examples)
        for key, language in (("source_language", source_language), ("target_language", target_language)):
            if not language or "/" in language or language.startswith("."):
                raise ConfigurationError(f"must be a file suffix such as 'de', got {language!r}", key=key)
        if source_language == target_language:
            raise ConfigurationError(f"must differ from source_language, both are {source_language!r}", key="target_language")
        self.source_language, self.target_language = source_language, target_language
        self.tokenizer = bleu_tokenizer(tokenize)
        self.lowercase = lowercase

    def files(self, path: str | Path) -> tuple[Path, Path]:
        """The source and target files of a data path (a common prefix, or the source file)."""
        path = Path(path)
        prefix = path.with_suffix("") if path.suffix == f".{self.source_language}" else path
        return Path(f"{prefix}.{self.source_language}"), Path(f"{prefix}.{self.target_language}")

    def read(self, path: str | Path, whole: bool = False) -> list[Example]:
        for file in self.files(path):
            if not file.is_file():
                raise DataError("no such file" if not file.exists() else "not a file", path=str(file))
        return super().read(self.files(path)[0], whole)

    def tokens(self, text: str) -> list[str]:
        return self.tokenizer(text.lower() if self.lowercase else text).split()

    def _read(self, path: Path) -> Iterator[Example]:
        source_path, target_path = self.files(path)
        pairs = zip_longest(self._lines(source_path), self._lines(target_path))
        for source_line, target_line in pairs:
            if source_line is None or target_line is None:
                shorter, longer, (number, _) = (source_path, target_path, target_line) if source_line is None else (target_path, source_path, source_line)
                raise DataError(f"{longer.name} has a line {number}, but {shorter} ends before it: the files must be parallel", str(longer), number)
            (number, source), (_, target) = source_line, target_line
            source_tokens, target_tokens = self.tokens(source), self.tokens(target)
            if not source_tokens and not target_tokens:
                continue
            for tokens, file in ((source_tokens, source_path), (target_tokens, target_path)):
                if not tokens:
                    raise DataError("an empty sentence, whose translation is not empty", str(file), number)
            yield Example(source_tokens, " ".join(target_tokens), {"path": str(source_path), "line": number})

    def text_to_example(self, text: str) -> Example:
        """A raw source sentence, tokenised as training data is; ``source<TAB>target`` keeps the target."""
        source, tab, target = text.rstrip("\r\n").partition("\t")
        tokens = self.tokens(source)
        if not tokens:
            raise DataError("empty input: expected a sentence")
        target_tokens = self.tokens(target) if tab else []
        return Example(tokens, " ".join(target_tokens) if target_tokens else None)
