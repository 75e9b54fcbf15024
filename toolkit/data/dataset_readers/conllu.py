"""A reader for CoNLL-U dependency treebanks (Universal Dependencies), and the tree it yields.

Each sentence becomes one :class:`Example` whose tokens are the syntactic words' forms and whose
target is a :class:`DependencyTree` (heads, relations, UPOS tags), the structure transition systems
produce and attachment metrics score. Multiword-token ranges (``3-4``) and empty nodes (``8.1``)
are not syntactic words of the basic tree, so they are skipped. The ``conllu`` library parses the
ID and HEAD fields and the comment lines; splitting into sentences is done here, so every error
can name its file and line.
"""

from collections.abc import Iterator, Sequence
from pathlib import Path

from conllu.parser import ParseException, parse_comment_line, parse_id_value, parse_int_value

from toolkit.data.dataset_readers.dataset_reader import DatasetReader
from toolkit.data.dependency_tree import DependencyTree
from toolkit.data.example import Example
from toolkit.errors import DataError

COLUMNS = 10  # ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL DEPS MISC


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
    (comments included). A malformed line, a missing or out-of-range head, a cycle, a sentence
    without words, or a ``sent_id`` already used in the file is a :class:`DataError` naming the
    file and the offending line.

    Args:
        universal_deprels: keep only the universal relation (``nmod`` for ``nmod:poss``).
        max_examples: stop after this many sentences.

    Registered as ``"conllu"``.
    """

    def __init__(self, universal_deprels: bool = False, max_examples: int | None = None) -> None:
        super().__init__(max_examples)
        self.universal_deprels = universal_deprels

    def _read(self, path: Path) -> Iterator[Example]:
        seen: dict[str, int] = {}  # sent_id -> the line of the sentence that has it
        for block in self._blocks(path):
            example = self._sentence(block, str(path))
            sent_id, line = example.meta.get("sent_id"), example.meta["line"]
            if sent_id is not None:
                if sent_id in seen:
                    raise DataError(f"duplicate sent_id {sent_id!r}: the sentence at line {seen[sent_id]} has it too", str(path), line)
                seen[sent_id] = line
            yield example

    def _blocks(self, path: Path) -> Iterator[list[tuple[int, str]]]:
        """The non-blank ``(line number, text)`` lines of each sentence."""
        block: list[tuple[int, str]] = []
        for number, line in self._lines(path):
            if line.strip():
                block.append((number, line))
            elif block:
                yield block
                block = []
        if block:
            yield block

    def _sentence(self, block: list[tuple[int, str]], path: str) -> Example:
        """One sentence from its non-blank ``(line number, text)`` lines."""
        start = block[0][0]
        sent_id = None
        forms, heads, deprels, upos, lines = [], [], [], [], []
        for number, line in block:
            if line.startswith("#"):
                for key, value in parse_comment_line(line):
                    if key == "sent_id":
                        sent_id = value
                continue
            fields = line.split("\t")
            if len(fields) != COLUMNS:
                raise DataError(f"expected {COLUMNS} tab-separated columns, found {len(fields)}", path, number)
            try:
                word_id = parse_id_value(fields[0])
            except ParseException:
                raise DataError(
                    f"malformed CoNLL-U line: {fields[0]!r} is not a valid ID (a word 1, 2, ..., a range 3-4 or an empty node 8.1)", path, number
                ) from None
            try:
                head = parse_int_value(fields[6])
            except ParseException:
                raise DataError(f"malformed CoNLL-U line: HEAD {fields[6]!r} is not a word id (0 for the root, else 1, 2, ...)", path, number) from None
            if isinstance(word_id, tuple):
                continue  # a multiword-token range (3-4) or an empty node (8.1): not a word of the basic tree
            if word_id != len(forms) + 1:
                raise DataError(f"word ids must run 1, 2, 3, ...: expected {len(forms) + 1}, found {fields[0]}", path, number)
            if head is None:
                raise DataError(f"word {word_id} has no head", path, number)
            deprel = fields[7]
            if deprel in ("", "_"):
                raise DataError(f"word {word_id} has no dependency relation", path, number)
            forms.append(fields[1])
            heads.append(head)
            deprels.append(deprel.split(":")[0] if self.universal_deprels else deprel)
            upos.append(fields[3])
            lines.append(number)
        if not forms:
            raise DataError("a sentence without words (only comments, multiword tokens or empty nodes)", path, start)
        if problem := tree_problem(heads):
            word, why = problem
            raise DataError(f"not a dependency tree: {why}", path, lines[word - 1])
        meta = {"path": path, "line": start, "sent_id": sent_id} if sent_id else {"path": path, "line": start}
        meta["upos"] = tuple(upos)  # kept when the target is not (prediction): an input feature (the ``upos`` token embedder)
        return Example(forms, DependencyTree(tuple(heads), tuple(deprels), tuple(upos)), meta)
