"""Registrable base of predictors: input lines in, one JSON object out per line, in order.

A predictor never drops or reorders input: a line it cannot read becomes ``{"error": ...}`` at
its place, and the rest of the batch is still decoded.
"""

import json
from collections.abc import Iterable, Iterator
from itertools import islice
from typing import Any, ClassVar, TypeVar

from toolkit.archive import Archive
from toolkit.data.example import Example
from toolkit.decoding import Search
from toolkit.errors import ConfigurationError, DataError
from toolkit.evaluation import predict
from toolkit.files import check_line, parse_json
from toolkit.limits import MAX_BATCH
from toolkit.registrable import Registrable

T = TypeVar("T")


class Predictor(Registrable):
    writes: ClassVar[str | None] = None  # the grammars' result_kind this predictor can write; None: any
    output_suffix: ClassVar[str] = ".jsonl"  # of the files predict_lines's output goes to (toolkit predict --engine)

    def __init__(self, archive: Archive, search: Search | None = None, max_tokens: int = 8192):
        self.archive, self.model, self.reader = archive, archive.model, archive.dataset_reader
        self.search, self.max_tokens = search, max_tokens
        self.check_grammar()

    def check_grammar(self) -> None:
        """Refuse an archive whose results this predictor cannot write (a dependency tree's ``repr`` as a
        logical form, a PENMAN string's characters as tags), naming the predictor that can.
        """
        grammar = self.model.grammar
        if self.writes is not None and grammar.result_kind != self.writes:
            raise ConfigurationError(
                f"the {self.registered_name()} predictor writes {self.writes}, and this archive's grammar ({type(grammar).__name__}) predicts "
                f"{grammar.result_kind}: use the {grammar.default_predictor} predictor (the archive's default)"
            )

    def to_example(self, line: str) -> Example:
        """Read one input line: a JSON object (see :meth:`json_to_text`) or plain text.

        An input longer than the encoder has positions for is a ``DataError`` for that line alone,
        rather than an exception that would lose the whole batch.
        """
        check_line(line)
        line = line.strip()
        if not line:
            raise DataError("empty input line")
        if line.startswith("{"):
            line = self.json_to_text(json_object(line))
        example = self.reader.text_to_example(line)
        self.model.check_length(example)
        return example

    def json_to_text(self, obj: dict[str, Any]) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def to_json(self, example: Example, prediction: Any) -> dict[str, Any]:  # pragma: no cover - abstract
        raise NotImplementedError

    def predict_batch(self, texts: Iterable[str]) -> list[dict[str, Any]]:
        """One output object per input text, in order; unreadable inputs give ``{"error": ...}``.

        *texts* is any iterable of strings; anything else (one string, bytes, ``None`` among
        them) is the caller's mistake, a ``TypeError`` that says which.
        """
        texts = checked_texts(texts)
        outputs: list[dict[str, Any] | None] = [None] * len(texts)
        readable: list[tuple[int, Example]] = []
        for i, text in enumerate(texts):
            try:
                readable.append((i, self.to_example(text)))
            except DataError as error:
                outputs[i] = {"error": str(error), "input": text.rstrip("\n")}
        predictions = predict(self.model, [example for _, example in readable], self.max_tokens, self.search)
        for (i, example), prediction in zip(readable, predictions):
            outputs[i] = self.to_json(example, prediction)
        return outputs  # type: ignore[return-value]

    def predict(self, text: str) -> dict[str, Any]:
        if not isinstance(text, str):
            raise TypeError(f"predict takes one text, a str, not {describe(text)}{BYTES_HINT if isinstance(text, bytes) else ''}")
        return self.predict_batch([text])[0]

    def tokens_to_example(self, tokens: list[str]) -> Example:
        """An example of words someone else tokenised (spaCy's, in the ``toolkit_parser`` component)."""
        return Example(list(tokens))

    def predict_tokens(self, sentences: list[list[str]]) -> list[Any]:
        """The model's own results (trees, graphs, logical forms) for pre-tokenised *sentences*, in order."""
        if isinstance(sentences, str) or any(isinstance(tokens, str) or not all(isinstance(token, str) for token in tokens) for tokens in sentences):
            raise TypeError("predict_tokens takes a list of sentences, each a list of str tokens")
        if empty := [i for i, tokens in enumerate(sentences) if not tokens]:
            raise DataError(f"predict_tokens: sentence {empty[0]} has no tokens, and an empty sentence has no parse")
        if blank := [(i, j) for i, tokens in enumerate(sentences) for j, token in enumerate(tokens) if not token.strip()]:
            raise DataError(f"predict_tokens: token {blank[0][1]} of sentence {blank[0][0]} is empty or whitespace, which is no word; leave it out")
        examples = [self.tokens_to_example(tokens) for tokens in sentences]
        return predict(self.model, examples, self.max_tokens, self.search) if examples else []

    def read_inputs(self, lines: Iterable[str], source: str = "<input>") -> Iterator[tuple[str, Example | DataError]]:
        """The inputs of *lines* as ``predict_lines`` reads them, blank lines left out: each with the
        number of its first line (``"7"``; ``"7.2"`` for a line's second sentence, where a predictor
        splits lines into sentences), and its example or why it cannot be parsed (``toolkit visualize``).
        """
        for number, line in enumerate(lines, start=1):
            if line.strip():
                try:
                    yield str(number), self.to_example(line)
                except DataError as error:
                    yield str(number), error

    def predict_lines(self, lines: Iterable[str], batch_size: int = 64, first_line: int = 1) -> Iterator[str]:
        """JSON lines for *lines*, decoded *batch_size* at a time so long inputs stream.

        *first_line* is the number of the first of *lines* in its file (a shard's, for ``toolkit
        predict --engine``), for the predictors whose outputs and messages name input lines.
        """
        check_stream(lines, batch_size)
        for chunk in chunks(lines, batch_size):
            yield from (json.dumps(output, ensure_ascii=False) for output in self.predict_batch(chunk))

    @staticmethod
    def is_error(output: str) -> bool:
        """Whether *output*, one of ``predict_lines``'s, is an error record rather than a prediction."""
        return output.startswith('{"error": ')


def check_stream(lines: Iterable[str], batch_size: int) -> None:
    """The arguments of ``predict_lines``: one str would be read as its characters, one line each,
    and batches of 0 lines would read nothing at all.
    """
    if isinstance(lines, (str, bytes)):
        raise TypeError(f"predict_lines takes lines (an open file, a list of str), not one {type(lines).__name__}; for one text use predict(text)")
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or not 1 <= batch_size <= MAX_BATCH:
        raise ValueError(f"predict_lines: batch_size must be an int from 1 to {MAX_BATCH}, got {batch_size!r}")


BYTES_HINT = " (decode bytes first: data.decode('utf-8'))"


def describe(value: object) -> str:
    name = type(value).__name__
    return "None" if value is None else f"{'an' if name[0] in 'aeiou' else 'a'} {name}"


def checked_texts(texts: Iterable[str]) -> list[str]:
    """*texts* as a list, or a ``TypeError``: one str would otherwise be taken for its characters."""
    if isinstance(texts, (str, bytes)):
        raise TypeError(f"predict_batch takes a list of texts, not one {type(texts).__name__}; for one text use predict(text)")
    try:
        texts = list(texts)
    except TypeError:
        raise TypeError(f"predict_batch takes a list of texts, not {describe(texts)}") from None
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(f"predict_batch: input {i} is {describe(text)}, not a str{BYTES_HINT if isinstance(text, bytes) else ''}")
    return texts


def json_object(line: str) -> dict[str, Any]:
    """A JSON input line's object; a ``DataError`` for anything else."""
    try:
        value = parse_json(line)
    except ValueError as error:
        raise DataError(f"invalid JSON: {error}") from None
    if not isinstance(value, dict):
        raise DataError("a JSON input line must be an object")
    return value


def given_tokens(obj: dict[str, Any]) -> list[str] | None:
    """The ``"tokens"`` of a JSON input, when it is a non-empty list of strings without spaces (else ``None``)."""
    tokens = obj.get("tokens")
    if isinstance(tokens, list) and tokens and all(isinstance(token, str) and token.strip() and not any(c.isspace() for c in token) for token in tokens):
        return list(tokens)
    return None


def chunks(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """Consecutive lists of *size* items (the last may be shorter), read lazily so that input streams."""
    iterator = iter(items)
    while chunk := list(islice(iterator, size)):
        yield chunk
