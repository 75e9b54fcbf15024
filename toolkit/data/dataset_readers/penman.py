"""A reader for AMR graphs in PENMAN notation (``"type": "penman"``), e.g. the AMR Bank releases.

Blocks are separated by blank lines; ``# ::key value`` metadata lines precede each graph. Tokens
come from ``# ::tok`` when present, else from ``# ::snt`` (split on whitespace, as in the AMR
Bank's tokenised sentences, or into English words: ``tokenizer: "spacy"``); a markup tag is one
token however many spaces it holds, as ISI's biomedical releases write ``<xref ref-type="fig" rid="F3">``
(:func:`~toolkit.data.tokenization.split_tokens`), so their alignments' token indices hold. Lemmas go to
``meta["lemmas"]``; words and lemmas are spaCy's when it is installed, else nearly the same from
nltk and simplemma (:mod:`toolkit.data.tokenization`). The target is the
``penman.Graph``. The AMR transition system (``transition_systems.amr``) copies and constrains
node labels by these lemmas. A graph that does not parse (unbalanced parentheses, text after the
graph, nesting too deep to read), a variable with two concepts, an ``# ::id`` already used in the
file, or a block without a sentence, is a :class:`DataError` naming the file and the line.
"""

import re
from collections.abc import Iterator
from pathlib import Path

import penman

from toolkit.data.dataset_readers.dataset_reader import DatasetReader
from toolkit.data.example import Example
from toolkit.data.tokenization import lemmatize, split_tokens, tokenize
from toolkit.errors import ConfigurationError, DataError
from toolkit.from_params import NonNegativeInt


def metadata(lines: list[str]) -> dict[str, str]:
    """``# ::id x ::snt y`` comment lines as ``{"id": "x", "snt": "y"}`` (a ``::snt`` value runs to the line's end)."""
    fields: dict[str, str] = {}
    for line in lines:
        text = line.lstrip("#").strip()
        if text.startswith(("::snt ", "::tok ")):
            fields[text[2:5]] = text[6:].strip()
            continue
        parts = re.split(r"(?:^|\s+)::(\S+)", text)
        for key, value in zip(parts[1::2], parts[2::2]):
            fields[key] = value.strip()
    return fields


def _bracket_problem(lines: list[tuple[int, str]]) -> tuple[int, str] | None:
    """The line and reason if the parentheses of a graph's *lines* (outside ``"strings"``) do not enclose exactly one graph.

    ``penman.decode`` reads the first graph and ignores what follows, so a stray ``)`` or a second
    graph in the block would otherwise be dropped silently; and a ``(`` left open is clearer said so.
    """
    depth, quoted, escaped, closed = 0, False, False, False
    for number, text in lines:
        for char in text:
            if quoted:
                escaped, quoted = (False, True) if escaped else (char == "\\", char != '"')
            elif closed and not char.isspace():
                return number, "an unbalanced ')'" if char == ")" else f"text after the graph ends ({char!r})"
            elif char == '"':
                quoted = True
            elif char == "(":
                depth += 1
            elif char == ")":
                depth -= 1
                closed = depth == 0
    if depth > 0 and not quoted:  # the graph's own '(' is among them: name its first line
        return lines[0][0], f"an unbalanced '(': {depth} still open at the end of the graph"
    return None


def _amr_problem(graph: penman.Graph) -> str | None:
    """What makes a graph that ``penman`` accepted (it only logs a warning) no AMR, or ``None``.

    A node without a concept or a role without a target (``(b :ARG0)``) would reach the oracle and
    Smatch as ``None``; a variable with two concepts is two nodes under one name.
    """
    variables: set[str] = set()
    for variable, _, concept in graph.instances():
        if concept is None:
            return f"node {variable!r} has no concept"
        if variable in variables:
            return f"variable {variable!r} has a second concept ({concept!r}): a variable is declared once"
        variables.add(variable)
    for source, role, target in graph.edges() + graph.attributes():
        if target is None:
            return f"the role {role} of {source!r} has no target"
    return None


@DatasetReader.register("penman")
class PenmanReader(DatasetReader):
    """AMR graphs with their sentences (see the module docstring).

    ``meta`` is ``{"path", "line", "id", "lemmas", "snt"}``.

    Args:
        tokenizer: how ``# ::snt`` is split when there is no ``# ::tok``: ``"whitespace"`` (default) or ``"spacy"``
            (English words: spaCy's, or the nltk fallback's without spaCy).
        lemmas: compute lemmas (``true``, default) or leave them to the grammar.
        max_examples: stop after this many graphs.
    """

    def __init__(self, tokenizer: str = "whitespace", lemmas: bool = True, max_examples: NonNegativeInt | None = None) -> None:
        super().__init__(max_examples)
        if tokenizer not in ("whitespace", "spacy"):
            raise ConfigurationError(f"must be 'whitespace' or 'spacy', got {tokenizer!r}", key="tokenizer")
        self.tokenizer, self.lemmas = tokenizer, lemmas

    def tokenize(self, text: str) -> list[str]:
        return tokenize(text) if self.tokenizer == "spacy" else split_tokens(text)

    def _read(self, path: Path) -> Iterator[Example]:
        block: list[tuple[int, str]] = []
        seen: dict[str, int] = {}  # ::id -> the line of the block that has it
        for number, line in list(self._lines(path)) + [(0, "")]:
            if line.strip():
                block.append((number, line))
                continue
            if block and any(not text.lstrip().startswith("#") for _, text in block):
                example = self.example(block, path)
                graph_id, first = example.meta["id"], example.meta["line"]
                if graph_id is not None:
                    if graph_id in seen:
                        raise DataError(f"duplicate '# ::id {graph_id}': the graph at line {seen[graph_id]} has it too", str(path), first)
                    seen[graph_id] = first
                yield example
            block = []

    def example(self, block: list[tuple[int, str]], path: Path) -> Example:
        first = block[0][0]
        comments = [text for _, text in block if text.lstrip().startswith("#")]
        fields = metadata(comments)
        graph_block = [(number, text) for number, text in block if not text.lstrip().startswith("#")]
        graph_line = graph_block[0][0]
        if problem := _bracket_problem(graph_block):
            number, why = problem
            raise DataError(f"not a PENMAN graph: {why}", str(path), number)
        try:
            graph = penman.decode("\n".join(text for _, text in graph_block))
        except penman.DecodeError as error:
            lineno, offset = getattr(error, "lineno", None), getattr(error, "offset", None)
            if isinstance(lineno, int) and 1 <= lineno <= len(graph_block) and isinstance(offset, int):
                raise DataError(f"not a PENMAN graph: {error.message} at column {offset + 1}", str(path), graph_block[lineno - 1][0]) from None
            raise DataError(f"not a PENMAN graph: {' '.join(str(error).split())}", str(path), graph_line) from None
        except penman.exceptions.PenmanError as error:
            raise DataError(f"not a PENMAN graph: {' '.join(str(error).split())}", str(path), graph_line) from None
        except RecursionError:
            raise DataError("not a PENMAN graph this reader can read: nested too deeply", str(path), graph_line) from None
        if problem := _amr_problem(graph):
            raise DataError(f"not an AMR: {problem}", str(path), graph_line)
        if "tok" in fields:
            tokens = split_tokens(fields["tok"])
        elif "snt" in fields:
            tokens = self.tokenize(fields["snt"])
        else:
            raise DataError("an AMR without '# ::tok' or '# ::snt'", str(path), first)
        if not tokens:
            raise DataError("an AMR with an empty sentence", str(path), first)
        meta = {"path": str(path), "line": first, "id": fields.get("id"), "snt": fields.get("snt", " ".join(tokens))}
        if self.lemmas:
            meta["lemmas"] = lemmatize(tuple(tokens))
        return Example(tokens, graph, meta)

    def text_to_example(self, text: str) -> Example:
        tokens = tokenize(text)
        if not tokens:
            raise DataError("empty input: expected a sentence")
        return Example(tokens, meta={"snt": text.strip(), "lemmas": lemmatize(tuple(tokens))})
