"""The CoNLL-U format, parsed in one place so that the ``conllu`` reader and the dependency predictor agree.

A file is a sequence of sentences, each a *block* of non-blank lines between blank ones (a
line of spaces is blank). In a block:

- comment lines start with ``#`` and come before the first row (the UD rule: a comment among the
  rows would have no place in the output the predictor writes);
- every other line is a row of exactly ``COLUMNS`` tab-separated fields, none of them empty
  (``_`` is the empty value);
- ID is a syntactic word (``1``, ``2``, ... in order, from 1), a multiword-token range (``3-4``)
  or an empty node (``8.1``);
- HEAD is ``_`` or a word id (``0`` for the root);
- a multiword token spans two words or more, its line comes right before its first word, it
  ends at a word of the sentence and overlaps no other; it gives only FORM, FEATS and MISC
  (its words carry the rest);
- an empty node ``i.k`` comes right after word ``i`` (``0.k`` before the first word) and
  ``i.1`` ... ``i.(k-1)``; its HEAD and DEPREL are ``_`` (it is not in the basic tree);
- there is at least one word.

These are the rules of the UD format (https://universaldependencies.org/format.html) and of UD's
validator for IDs; the ``conllu`` library reads such ranges without checking them, so a range
``2-5`` in a 2-word sentence used to be accepted, scored and copied into the predictor's output.

Anything else is a :class:`DataError` naming the file and the line. Whatever a consumer needs
beyond the format (gold heads and relations for training, a well-formed tree) it checks itself.
Lines too long to be read whole (:class:`~toolkit.files.OverlongLine`) are errors at their place.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import Enum

from conllu.parser import parse_comment_line

from toolkit.errors import DataError
from toolkit.files import OverlongLine, check_line

COLUMNS = 10  # ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL DEPS MISC
WORD_ID = re.compile(r"0|[1-9][0-9]*")
COLUMN_NAMES = ("ID", "FORM", "LEMMA", "UPOS", "XPOS", "FEATS", "HEAD", "DEPREL", "DEPS", "MISC")
RANGE_ID = re.compile(r"([1-9][0-9]*)-([1-9][0-9]*)")
EMPTY_NODE_ID = re.compile(r"(0|[1-9][0-9]*)\.([1-9][0-9]*)")
ONLY_WORDS = {  # the columns a multiword token or an empty node leaves to the words: _ there
    "multiword": ("LEMMA", "UPOS", "XPOS", "HEAD", "DEPREL", "DEPS"),
    "empty": ("HEAD", "DEPREL"),
}
ROW_START = re.compile(r"^\d+(?:-\d+|\.\d+)?\t")  # how a row starts, to tell CoNLL-U from plain text

Line = tuple[int, str]  # (line number from 1, text without its line ending)


class Kind(Enum):
    """What a row stands for: only words belong to the basic dependency tree."""

    WORD = "word"
    MULTIWORD = "multiword"  # a surface token over words (3-4 "don't" = "do" + "n't")
    EMPTY = "empty"  # an empty node of the enhanced graph (8.1)


@dataclass(frozen=True)
class Row:
    """One non-comment line: its *fields* as written, what its ID says it is, and its HEAD parsed."""

    line: int
    fields: tuple[str, ...]
    kind: Kind
    head: int | None  # None for "_"

    @property
    def form(self) -> str:
        return self.fields[1]

    @property
    def upos(self) -> str:
        return self.fields[3]

    @property
    def feats(self) -> str:
        return self.fields[5]

    @property
    def deprel(self) -> str:
        return self.fields[7]

    @property
    def span(self) -> tuple[int, int]:
        """A multiword token's first and last word."""
        start, end = self.fields[0].split("-")
        return int(start), int(end)


@dataclass
class Sentence:
    """One parsed block: its comments (verbatim) and its rows in order, multiword tokens and empty nodes included."""

    line: int  # the block's first line
    comments: list[str] = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)

    @property
    def words(self) -> list[Row]:
        """The syntactic words, the nodes of the basic tree."""
        return [row for row in self.rows if row.kind is Kind.WORD]

    @property
    def sent_id(self) -> str | None:
        """The ``# sent_id = ...`` comment's value (the last one if several)."""
        return self.comment("sent_id")

    @property
    def text(self) -> str | None:
        """The ``# text = ...`` comment's value: the sentence as written, tokens and spaces."""
        return self.comment("text")

    def comment(self, name: str) -> str | None:
        """The value of the last ``# name = value`` comment, or ``None``."""
        found = None
        for comment in self.comments:
            for key, value in parse_comment_line(comment):
                if key == name:
                    found = value
        return found

    @property
    def multiword_tokens(self) -> tuple[tuple[int, int, str], ...]:
        """Each multiword token's first and last word and its surface form: ``(3, 4, "du")`` for "du" = "de le"."""
        return tuple((*row.span, row.form) for row in self.rows if row.kind is Kind.MULTIWORD)


@dataclass
class Block:
    """The non-blank lines of one sentence, of which the last *dropped* were not kept (see :func:`blocks`)."""

    lines: list[Line]
    dropped: int = 0

    @property
    def line(self) -> int:
        """The block's first line number."""
        return self.lines[0][0]

    @property
    def comments(self) -> list[str]:
        """The comment lines before the first row: what a record of the sentence keeps when it does not parse."""
        comments = []
        for _, text in self.lines:
            if isinstance(text, OverlongLine) or not text.startswith("#"):
                break
            comments.append(text)
        return comments


def blocks(lines: Iterable[Line], max_lines: int | None = None) -> Iterator[Block]:
    """The blocks of *lines*, lazily: each is yielded at the blank line (or the end) that closes it.

    With *max_lines*, a block keeps at most that many lines and counts the rest in ``dropped``, so
    that a stream without blank lines holds bounded memory and still yields one block at its place.
    """
    block: list[Line] = []
    dropped = 0
    for number, text in lines:
        if text.strip():
            if max_lines is None or len(block) < max_lines:
                block.append((number, text))
            else:
                dropped += 1
        elif block:
            yield Block(block, dropped)
            block, dropped = [], 0
    if block:
        yield Block(block, dropped)


def parse_sentence(lines: Sequence[Line], path: str) -> Sentence:
    """One sentence from its block's *lines*; the first line that breaks a rule is a :class:`DataError`."""
    sentence = Sentence(lines[0][0])
    words = 0  # words so far
    previous: Row | None = None  # the row before
    last_range: Row | None = None  # the last multiword token
    for number, text in lines:
        try:
            check_line(text, bounded=False)  # a treebank's lines have no limit; predict's input was cut when read
        except DataError as error:
            raise DataError(str(error), path, number) from None
        if text.startswith("#"):
            if sentence.rows:
                raise DataError("a comment line after the sentence's first row: comments come before the rows", path, number)
            sentence.comments.append(text)
            continue
        row = parse_row(text, number, path)
        word_id = row.fields[0]
        if row.kind is Kind.WORD:
            if int(word_id) != words + 1:
                raise DataError(f"word ids must run 1, 2, 3, ...: expected {words + 1}, found {word_id}", path, number)
            words += 1
        elif row.kind is Kind.MULTIWORD:
            start, _ = row.span
            if start != words + 1:
                raise DataError(
                    f"multiword token {word_id} is out of place: its line comes right before its first word {start}, and the next word here is {words + 1}",
                    path,
                    number,
                )
            if last_range is not None and start <= last_range.span[1]:
                raise DataError(f"multiword tokens {last_range.fields[0]} and {word_id} overlap", path, number)
            last_range = row
        elif not _follows(row, previous):
            raise DataError(f"empty node {word_id} is out of place: empty node i.k comes right after word i (k = 1) or after empty node i.(k-1)", path, number)
        sentence.rows.append(row)
        previous = row
    if not words:
        raise DataError("a sentence without words (only comments, multiword tokens or empty nodes)", path, sentence.line)
    if last_range is not None and last_range.span[1] > words:
        raise DataError(f"multiword token {last_range.fields[0]} ends past the sentence's last word ({words})", path, last_range.line)
    return sentence


def _follows(node: Row, previous: Row | None) -> bool:
    """Whether empty node *node* (``i.k``) has its place after *previous*: word ``i`` (the start for ``0``) when ``k`` is 1, else ``i.(k-1)``."""
    word, k = map(int, node.fields[0].split("."))
    if k > 1:
        return previous is not None and previous.kind is Kind.EMPTY and previous.fields[0] == f"{word}.{k - 1}"
    if previous is None:
        return word == 0
    return previous.kind is Kind.WORD and int(previous.fields[0]) == word


def parse_row(text: str, number: int, path: str) -> Row:
    """One row: ten fields, none empty, a valid ID and a valid HEAD; a multiword token or an empty node leaves the tree's columns ``_``."""
    fields = tuple(text.split("\t"))
    if len(fields) != COLUMNS:
        raise DataError(f"expected {COLUMNS} tab-separated columns, found {len(fields)}", path, number)
    if "" in fields:
        raise DataError(f"malformed CoNLL-U line: column {COLUMN_NAMES[fields.index('')]} is empty (_ stands for no value)", path, number)
    word_id, head = fields[0], fields[6]
    if WORD_ID.fullmatch(word_id):
        kind = Kind.WORD
    elif span := RANGE_ID.fullmatch(word_id):
        if int(span[1]) >= int(span[2]):
            raise DataError(f"malformed CoNLL-U line: multiword token {word_id} must span two words or more (3-4: its start before its end)", path, number)
        kind = Kind.MULTIWORD
    elif EMPTY_NODE_ID.fullmatch(word_id):
        kind = Kind.EMPTY
    else:
        raise DataError(f"malformed CoNLL-U line: {word_id!r} is not a valid ID (a word 1, 2, ..., a range 3-4 or an empty node 8.1)", path, number)
    if head != "_" and not WORD_ID.fullmatch(head):
        raise DataError(f"malformed CoNLL-U line: HEAD {head!r} is not a word id (0 for the root, else 1, 2, ...)", path, number)
    for column in ONLY_WORDS.get(kind.value, ()):
        if (value := fields[COLUMN_NAMES.index(column)]) != "_":
            what = "multiword token" if kind is Kind.MULTIWORD else "empty node"
            raise DataError(f"malformed CoNLL-U line: {what} {word_id} has {column} {value!r}: only words have one (write _)", path, number)
    return Row(number, fields, kind, None if head == "_" else int(head))
