r"""Sentences in, AMR graphs in PENMAN out (``toolkit predict ARCHIVE INPUT --predictor amr``).

Each input line is one sentence: plain text, or a JSON object with ``"sentence"`` (or ``"snt"``,
``"text"``) or pre-tokenised ``"tokens"``. Text is split into English words and lemmatised as the
training data was, by :mod:`toolkit.data.tokenization` (spaCy when it is installed, else nltk's
Treebank tokenizer and simplemma, which nearly agree with it).

The output is one PENMAN graph per input line, in input order, each preceded by ``# ::id`` (the
input line number), ``# ::snt`` and ``# ::tok``, and followed by a blank line. Metadata values are
written so that penman's metadata parser reads each back whole: whitespace runs are one space, and
``::`` inside a value is written ``:\:`` (backslashes before a ``:`` doubled;
:func:`~transition_systems.amr.penman_text.read_metadata_value` undoes it), since penman starts a
new key at every ``::``.

An empty or unreadable line (bad JSON, ``"tokens"`` with a space inside one, a sentence longer
than the model can decode) gets a one-node placeholder graph ``(a / amr-empty)`` with a
``# ::error`` comment, and a warning is logged, so line numbers stay aligned and no output is lost. Every graph written is read back by
``penman.decode``: a parse that ran out of steps is completed by the state machine (a top is
chosen and loose components are attached), and anything penman cannot read is replaced by the
placeholder.
"""

import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import penman

from predictors.predictor import Predictor, check_stream, chunks, given_tokens, json_object
from toolkit.archive import Archive
from toolkit.data.example import Example
from toolkit.data.tokenization import lemmatize, tokenize
from toolkit.decoding import Search
from toolkit.errors import DataError
from toolkit.evaluation import predict
from toolkit.files import check_line
from transition_systems.amr.graph import PLACEHOLDER
from transition_systems.amr.penman_text import metadata_value

logger = logging.getLogger(__name__)


@dataclass
class AmrInput:
    """One input line: its number, text and tokens, or the error that replaces its graph."""

    number: int
    text: str
    tokens: list[str] = field(default_factory=list)
    error: str | None = None


def penman_block(number: int, text: str, tokens: list[str], graph: str, error: str | None = None) -> str:
    """A graph with its ``# ::`` metadata, as written to the output (no trailing newline); each value is one that
    penman's metadata parser reads back whole (:func:`~transition_systems.amr.penman_text.metadata_value`).
    """
    lines = [f"# ::id {number}", f"# ::snt {metadata_value(text)}", f"# ::tok {metadata_value(' '.join(tokens))}"]
    if error:
        lines.append(f"# ::error {metadata_value(error)}")
    return "\n".join(lines) + "\n" + graph + "\n"


def readable(graph: Any) -> str:
    """*graph* (a PENMAN string) laid out on several lines, or the placeholder if penman cannot read it."""
    try:
        return penman.encode(penman.decode(str(graph)), indent=6)
    except Exception:  # noqa: BLE001 - whatever penman rejects becomes the placeholder
        return PLACEHOLDER


@Predictor.register("amr")
class AmrPredictor(Predictor):
    """An AMR parser's predictor (see the module docstring)."""

    writes = "AMR graphs"
    output_suffix = ".penman"

    def __init__(self, archive: Archive, search: Search | None = None, max_tokens: int = 8192):
        super().__init__(archive, search, max_tokens)
        self.max_words = min(filter(None, [(self.search or self.model.search).max_steps // 2, self.model.max_input_length]))

    # ------------------------------------------------------------ reading

    def read_line(self, number: int, line: str, source: str) -> AmrInput:
        text = line.strip()
        item = AmrInput(number, text)
        try:
            check_line(line)
            if text.startswith("{"):
                obj = json_object(text)
                if isinstance(obj.get("tokens"), list):  # as they are: each a word of ``# ::tok``, so no spaces in one
                    if (tokens := given_tokens(obj)) is None:
                        raise DataError('"tokens" must be a list of strings, none empty or with spaces in it')
                    item.tokens, item.text = tokens, " ".join(tokens)
                else:
                    value = next((obj[key] for key in ("sentence", "snt", "text") if isinstance(obj.get(key), str)), None)
                    if value is None:
                        raise DataError('a JSON input line needs a "sentence" string or a "tokens" list')
                    item.text = value.strip()
                    item.tokens = tokenize(item.text)
            else:
                item.tokens = tokenize(text)
            if not item.tokens:
                raise DataError("an empty sentence (no words to parse)")
            if len(item.tokens) > self.max_words:
                raise DataError(f"a sentence of {len(item.tokens)} words is longer than this model can parse ({self.max_words} words)")
        except DataError as error:
            item.error = f"{source}:{number}: {error}"
            logger.warning("%s", item.error)
        return item

    # ------------------------------------------------------------ parsing and writing

    def predict_lines(self, lines: Iterable[str], batch_size: int = 64, first_line: int = 1) -> Iterator[str]:
        """One PENMAN block (metadata, graph, blank line) per input line, parsed *batch_size* lines at a time."""
        check_stream(lines, batch_size)
        source = str(getattr(lines, "name", None) or "<input>")
        items = (self.read_line(number, line, source) for number, line in enumerate(lines, start=first_line))
        for chunk in chunks(items, batch_size):
            yield from self.parse(chunk)

    @staticmethod
    def is_error(output: str) -> bool:
        return "\n# ::error " in output

    def parse(self, items: list[AmrInput]) -> Iterator[str]:
        good = [item for item in items if item.error is None]
        examples = [Example(item.tokens, meta={"lemmas": lemmatize(tuple(item.tokens))}) for item in good]
        graphs = predict(self.model, examples, self.max_tokens, self.search) if examples else []
        parsed = {id(item): graph for item, graph in zip(good, graphs)}
        for item in items:
            if item.error is not None:
                yield penman_block(item.number, item.text, item.tokens, PLACEHOLDER, item.error)
                continue
            graph = readable(parsed.get(id(item)))
            yield penman_block(item.number, item.text, item.tokens, graph)

    # ------------------------------------------------------------ the JSON interface of Predictor.predict

    def to_example(self, line: str) -> Example:
        item = self.read_line(0, line, "<input>")
        if item.error is not None:
            raise DataError(item.error.split(": ", 1)[-1])
        return Example(item.tokens, meta={"snt": item.text, "lemmas": lemmatize(tuple(item.tokens))})

    def tokens_to_example(self, tokens: list[str]) -> Example:
        return Example(list(tokens), meta={"lemmas": lemmatize(tuple(tokens))})

    def to_json(self, example: Example, prediction: Any) -> dict[str, Any]:
        return {"snt": example.meta.get("snt", " ".join(example.tokens)), "tokens": example.tokens, "graph": readable(prediction)}
