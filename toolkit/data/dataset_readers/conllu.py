"""A reader for CoNLL-U dependency treebanks (Universal Dependencies), and the tree it yields.

Each sentence becomes one :class:`Example` whose tokens are the syntactic words' forms and whose
target is a :class:`DependencyTree` (heads, relations, UPOS tags), the structure transition systems
produce and attachment metrics score. The format itself (blocks, comments, IDs, multiword-token
ranges ``3-4`` and empty nodes ``8.1``, which are not words of the basic tree) is parsed by
:mod:`toolkit.data.conllu_format`, which the dependency predictor shares; this reader adds what
training needs: every word has a head and a relation, and the heads form a tree.
"""

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from toolkit.data.conllu_format import blocks, parse_sentence
from toolkit.data.dataset_readers.dataset_reader import DatasetReader
from toolkit.data.dependency_tree import DependencyTree
from toolkit.data.example import Example
from toolkit.data.language import Language
from toolkit.data.ud_text import fit_text_tokenizer, text_tokenizer_of
from toolkit.errors import ConfigurationError, DataError
from toolkit.from_params import NonNegativeInt


def tree_problem(heads: Sequence[int]) -> tuple[int, str] | None:
    """The first word (1-based) whose head is out of range or lies on a cycle, and why; ``None`` if a tree.

    >>> tree_problem([2, 0, 2])
    >>> tree_problem([2, 3, 1])
    (1, 'cycle 1 -> 2 -> 3 -> 1')
    """
    n = len(heads)
    for word, head in enumerate(heads, start=1):
        if not 0 <= head <= n:
            return word, f"head {head} of word {word} is out of range 0..{n}"
    reaches_root = [False] * (n + 1)
    reaches_root[0] = True
    for word in range(1, n + 1):
        path, node = [], word
        while not reaches_root[node] and node not in path:
            path.append(node)
            node = heads[node - 1]
        if not reaches_root[node]:
            cycle = path[path.index(node) :] + [node]
            return min(cycle), "cycle " + " -> ".join(map(str, cycle))
        for visited in path:
            reaches_root[visited] = True
    return None


@DatasetReader.register("conllu")
class ConlluReader(DatasetReader):
    """Reads CoNLL-U: tokens are word forms, the target is a :class:`DependencyTree`.

    ``meta`` is ``{"path", "line", "sent_id"}`` with the line of the sentence's first line
    (comments included). A malformed line (a multiword-token range or an empty node out of its
    place included: see :mod:`toolkit.data.conllu_format`), a missing or out-of-range head, a
    cycle, a sentence without words, or a ``sent_id`` already used in the file is a
    :class:`DataError` naming the file and the offending line.

    Args:
        universal_deprels: keep only the universal relation (``nmod`` for ``nmod:poss``).
        language: the treebank's ISO 639 code (``fr``), filled in from a config's ``treebank``
            (:mod:`toolkit.data.ud_treebanks`): how the model lower-cases words and how the
            dependency predictor tokenizes raw text (:mod:`toolkit.data.language`). Unset, English.
        text_tokenizer: with a language, what :meth:`fit` learned of the treebank's tokens and
            multiword tokens (:mod:`toolkit.data.ud_text`), for the predictor's raw text; training
            records it.
        max_examples: stop after this many sentences.

    Registered as ``"conllu"``.
    """

    def __init__(
        self,
        universal_deprels: bool = False,
        language: str | None = None,
        text_tokenizer: dict[str, Any] | None = None,
        max_examples: NonNegativeInt | None = None,
    ) -> None:
        super().__init__(max_examples)
        self.universal_deprels = universal_deprels
        self.language = Language(language).code
        if text_tokenizer is not None and self.language is None:
            raise ConfigurationError("is learned for a language: set dataset_reader.language", key="text_tokenizer")
        self.text_tokenizer = None if text_tokenizer is None else text_tokenizer_of(self.language, text_tokenizer)

    def fit(self, examples: Sequence[Example]) -> dict[str, Any]:
        """With a language, learn the treebank's tokenization from its sentences' text (see :mod:`toolkit.data.ud_text`)."""
        if self.language is None or self.text_tokenizer is not None:
            return {}
        self.text_tokenizer = fit_text_tokenizer(examples, self.language)
        return {"text_tokenizer": self.text_tokenizer.config()}

    def _read(self, path: Path) -> Iterator[Example]:
        seen: dict[str, int] = {}  # sent_id -> the line of the sentence that has it
        for block in blocks(self._lines(path)):
            example = self._sentence(block.lines, str(path))
            sent_id, line = example.meta.get("sent_id"), example.meta["line"]
            if sent_id is not None:
                if sent_id in seen:
                    raise DataError(f"duplicate sent_id {sent_id!r}: the sentence at line {seen[sent_id]} has it too", str(path), line)
                seen[sent_id] = line
            yield example

    def _sentence(self, lines: Sequence[tuple[int, str]], path: str) -> Example:
        """One sentence from its non-blank ``(line number, text)`` lines."""
        sentence = parse_sentence(lines, path)
        words = sentence.words
        for word, row in enumerate(words, start=1):
            if row.head is None:
                raise DataError(f"word {word} has no head", path, row.line)
            if row.deprel in ("", "_"):
                raise DataError(f"word {word} has no dependency relation", path, row.line)
        heads = tuple(row.head for row in words)
        if problem := tree_problem(heads):
            word, why = problem
            raise DataError(f"not a dependency tree: {why}", path, words[word - 1].line)
        deprels = tuple(row.deprel.split(":")[0] if self.universal_deprels else row.deprel for row in words)
        upos, feats = tuple(row.upos for row in words), tuple(row.feats for row in words)
        sent_id = sentence.sent_id
        meta = {"path": path, "line": sentence.line, "sent_id": sent_id} if sent_id else {"path": path, "line": sentence.line}
        meta["upos"] = upos  # kept when the target is not (prediction): an input feature (the ``upos`` token embedder)
        if multiword := sentence.multiword_tokens:  # the surface tokens over words ("du" = "de le"), for a tokenizer to learn
            meta["multiword"] = multiword
        if (text := sentence.text) is not None:
            meta["text"] = text
        return Example([row.form for row in words], DependencyTree(heads, deprels, upos, feats), meta)
