"""Sentences in, CoNLL-U dependency trees out (``toolkit predict ARCHIVE INPUT --predictor dependency``).

Input is either format, recognised from its first line that is neither blank nor a comment:

- **CoNLL-U** (that line starts with a word ID and a tab): one sentence per block, parsed by
  :mod:`toolkit.data.conllu_format` with the rules the ``conllu`` reader uses. The words' FORM
  (and UPOS, when every word has one) is what is read; HEAD, DEPREL and DEPS may be ``_`` (and
  are replaced), so tokenizer output and treebank files both work. Comments and multiword-token
  lines (``3-4``) are copied through; empty nodes (``8.1``) are dropped, since their enhanced
  arcs are not predicted.
- **plain text**: one sentence per line (or a JSON object, ``{"sentence": "..."}`` or given
  ``{"tokens": [...]}``, as the other predictors read). A parser trained on a UD treebank named by
  its language (its reader records ``language`` and a ``text_tokenizer``) tokenizes as it learned
  from the treebank (:mod:`toolkit.data.ud_text`: spaCy's rules for the language, the treebank's
  corrections, multiword tokens expanded into their words under a range row ``3-4 du``) and splits
  each line into sentences (``# sent_id = 7.2`` for line 7's second). Others use spaCy's
  rule-based English tokenizer (``spacy.blank("en")``, no model needed) when spaCy is installed,
  else nltk's Treebank tokenizer made to split as spaCy does (:mod:`toolkit.data.tokenization`;
  :attr:`DependencyPredictor.tokenizer_name` says which). Each output sentence gets
  ``# sent_id`` (the input line number) and ``# text`` (tabs and runs of spaces made one space,
  so that the words and ``SpaceAfter=No`` in MISC spell it). A sentence written in a script
  none of the training words use is refused in its place (certainly not the model's language).

A parser that tags (``grammar.tags``) fills UPOS and FEATS, over CoNLL-U input's ``_`` only.

Output is one CoNLL-U sentence per input sentence, in order. An input that cannot be parsed (an
empty line or sentence, a malformed CoNLL-U line, a sentence longer than the model can decode)
becomes a comment-only block at its place, ``# error = <file>:<line>: <why>``, which the ``conllu``
library reads as a sentence without words; the message is also logged, and every other sentence
is still parsed.
"""

import logging
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

from predictors.predictor import Predictor, check_stream, chunks, given_tokens, json_object
from toolkit.archive import Archive
from toolkit.data.conllu_format import ROW_START, Block, Kind, blocks, parse_sentence
from toolkit.data.example import Example
from toolkit.data.language import Language
from toolkit.data.tokenization import spacy_installed, spacy_tokens, treebank_tokens
from toolkit.data.ud_text import TextTokenizer, Token
from toolkit.data.vocabulary import SOURCE
from toolkit.decoding import Search
from toolkit.errors import ConfigurationError, DataError
from toolkit.evaluation import predict
from toolkit.extras import install_hint
from toolkit.files import OverlongLine, check_line
from transition_systems.configuration import NO_LABEL

logger = logging.getLogger(__name__)

HEAD_LINES = 10_000  # lines read, at most, to tell CoNLL-U input from plain text
MAX_WORDS = 1_000  # the longest sentence parsed where the model itself sets no limit (EWT's longest has 159 words)


def without_ending(line: str) -> str:
    r"""*line* without its ``\n`` or ``\r\n`` (an :class:`OverlongLine` has none, and stays what it is)."""
    return line if isinstance(line, OverlongLine) else line.rstrip("\r\n")


Tokenizer = Callable[[str], list[tuple[str, bool]]]  # text -> (token, followed by a space?)


@dataclass
class Sentence:
    """One input sentence, or the error that replaces it in the output."""

    where: str  # "file:line" of its first line
    label: str = ""  # its line's number, and its place among the line's sentences where there are several ("7.2")
    tokens: list[str] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)
    rows: list[list[str] | None] = field(default_factory=list)  # CoNLL-U rows; None marks a word of plain text
    space_after: list[bool] = field(default_factory=list)  # per word of plain text (a multiword token's on its last word)
    multiword: dict[int, tuple[int, str]] = field(default_factory=dict)  # first word -> (last word, token form), 1-based
    error: str | None = None

    def take(self, tokens: Sequence[Token]) -> None:
        """Plain text's *tokens* as the sentence's words (multiword tokens expanded)."""
        for token in tokens:
            first = len(self.tokens) + 1
            self.tokens.extend(token.words)
            self.space_after.extend([False] * (len(token.words) - 1) + [token.space_after])
            if len(token.words) > 1:
                self.multiword[first] = (len(self.tokens), token.form)
        if self.space_after:
            self.space_after[-1] = True  # nothing said after the last token
        self.rows = [None] * len(self.tokens)


def script(character: str) -> str:
    """The script of a letter, as Unicode names it first (``LATIN``, ``GREEK``, ``CYRILLIC``, ``CJK``)."""
    return unicodedata.name(character, "UNKNOWN").split()[0]


def scripts_of(words: Iterable[str]) -> frozenset[str]:
    """The scripts the letters of *words* are written in."""
    return frozenset(script(c) for word in words for c in set(word) if c.isalpha())


def foreign_script(words: Sequence[str], known: frozenset[str]) -> str | None:
    """The script most of *words*' letters are written in, where at least 80% of them (and 5 or more)
    are in scripts outside *known*; ``None`` where the text could be the model's language.
    """
    letters = [script(c) for word in words for c in word if c.isalpha()]
    unknown = [name for name in letters if name not in known]
    if not known or len(unknown) < 5 or len(unknown) < 0.8 * len(letters):
        return None
    return Counter(unknown).most_common(1)[0][0].title()


def misc_of(space_after: bool) -> str:
    return "_" if space_after else "SpaceAfter=No"


def spell(tokens: Sequence[Token]) -> str:
    """The text *tokens* spell, spaces where they say."""
    return "".join(token.form + " " * token.space_after for token in tokens).rstrip()


def whitespace_tokenizer(text: str) -> list[tuple[str, bool]]:
    return [(token, True) for token in text.split()]


def make_tokenizer(name: str) -> tuple[Tokenizer, str]:
    """``"auto"``: spaCy's English tokenizer if spaCy is installed, else the Treebank fallback; or one by name."""
    if name not in ("auto", "spacy", "treebank", "whitespace"):
        raise ConfigurationError(f"tokenizer must be 'auto', 'spacy', 'treebank' or 'whitespace', got {name!r}")
    if name == "whitespace":
        return whitespace_tokenizer, "whitespace"
    if name == "treebank" or (name == "auto" and not spacy_installed()):
        return treebank_tokens, "treebank"
    if not spacy_installed():
        raise ConfigurationError(f"the spaCy tokenizer needs spaCy: {install_hint('spacy')}")
    return spacy_tokens, "spacy"


@Predictor.register("dependency")
class DependencyPredictor(Predictor):
    """A dependency parser's predictor: plain text or CoNLL-U in, CoNLL-U out (see the module docstring).

    Args:
        tokenizer: ``"auto"`` (default: spaCy if installed, else ``"treebank"``), ``"spacy"``, ``"treebank"`` or ``"whitespace"``.
    """

    writes = "dependency trees"
    output_suffix = ".conllu"

    def __init__(self, archive: Archive, search: Search | None = None, max_tokens: int = 8192, tokenizer: str = "auto"):
        super().__init__(archive, search, max_tokens)
        self.language = Language.of(self.reader).code
        self.text_tokenizer: TextTokenizer | None = None
        learned = getattr(self.reader, "text_tokenizer", None)  # a UD treebank's (toolkit.data.ud_text)
        if (tokenizer in ("auto", "spacy") and self.language not in (None, "en")) or (tokenizer == "auto" and learned):
            self.text_tokenizer = learned or TextTokenizer(self.language)
            self.text_tokenizer.nlp  # noqa: B018 - loaded now: a missing spaCy or language is refused before any input is read
            self.tokenize, self.tokenizer_name = self.text_tokenizer.tokens, f"spacy ({self.language}, with the treebank's tokens)"
        elif self.language not in (None, "en") and tokenizer == "treebank":
            raise ConfigurationError(f"the Treebank tokenizer is English; this model parses {self.language!r}: use 'auto' or 'whitespace'")
        else:
            self.tokenize, self.tokenizer_name = make_tokenizer(tokenizer)
        self.scripts = scripts_of(self.model.vocab.tokens(SOURCE))
        self.max_words = self.word_limit()

    def word_limit(self) -> int:
        """The longest sentence the model can decode (:meth:`~toolkit.models.model.Model.max_decodable_words`),
        or ``MAX_WORDS`` where it knows no limit, so that reading a sentence holds bounded memory.
        """
        return self.model.max_decodable_words(self.search) or MAX_WORDS

    # ------------------------------------------------------------ reading

    def sentences(self, lines: Iterable[str], source: str, first_line: int = 1) -> Iterator[Sentence]:
        """The input sentences in order, each carrying its error if it cannot be parsed.

        The format is told from the first line that is neither blank nor a comment, looked for in at
        most ``HEAD_LINES`` lines, so that memory stays bounded on any input.
        """
        numbered = ((number, without_ending(line)) for number, line in enumerate(lines, start=first_line))
        head: list[tuple[int, str]] = []
        conllu = False
        for number, line in numbered:
            head.append((number, line))
            if (line.strip() and not line.startswith("#")) or len(head) == HEAD_LINES:
                conllu = bool(ROW_START.match(line))
                break
        rest = chain(head, numbered)
        yield from (self.conllu_sentences(rest, source) if conllu else self.text_sentences(rest, source))

    def text_sentences(self, lines: Iterable[tuple[int, str]], source: str) -> Iterator[Sentence]:
        """Each line's sentences: one, or with a treebank's tokenizer as many as it finds (``# sent_id = 7.2``)."""
        for number, line in lines:
            where = f"{source}:{number}"
            try:
                check_line(line)
                text, sentences = self.read_text(line)
            except DataError as error:
                yield self.fail(Sentence(where, str(number), comments=[f"# sent_id = {number}"]), f"{where}: {error}")
                continue
            for part, tokens in enumerate(sentences, start=1):
                label = str(number) if len(sentences) == 1 else f"{number}.{part}"
                sentence = Sentence(where, label, comments=[f"# sent_id = {label}"])
                spelled = text if len(sentences) == 1 else spell(tokens)
                if spelled:
                    sentence.comments.append(f"# text = {spelled}")
                sentence.take(tokens)
                yield self.check(sentence)

    def read_text(self, line: str) -> tuple[str, list[list[Token]]]:
        """The text of a plain-text input line and its sentences of tokens (one sentence, possibly empty,
        unless the tokenizer splits sentences).

        A line that is a JSON object gives ``"tokens"`` as they are (spaces between them, one sentence)
        or a ``"sentence"`` (or ``"text"``) to tokenise, as in the other predictors.
        """
        text = " ".join(line.split())  # tabs and runs of spaces as one space, as SpaceAfter can say
        if text.startswith("{"):
            obj = json_object(text)
            if (given := given_tokens(obj)) is not None:
                return " ".join(given), [[Token(token, True, (token,)) for token in given]]
            sentence = next((obj[key] for key in ("sentence", "text") if isinstance(obj.get(key), str)), None)
            if sentence is None:
                raise DataError('a JSON input line needs a "sentence" string or a "tokens" list of tokens without spaces')
            text = " ".join(sentence.split())
        if self.text_tokenizer is not None:
            return text, self.text_tokenizer.sentences(text) or [[]]
        return text, [[Token(token, space, (token,)) for token, space in self.tokenize(text)]]

    def conllu_sentences(self, lines: Iterable[tuple[int, str]], source: str) -> Iterator[Sentence]:
        """One sentence per block of lines between blank lines; a block is held up to a bounded length."""
        most = self.max_words + HEAD_LINES  # words, plus room for comments and multiword rows
        for block in blocks(lines, max_lines=most):
            yield self.conllu_sentence(block, source)

    def conllu_sentence(self, block: Block, source: str) -> Sentence:
        """The words and rows of one block, or the error that replaces it (keeping its comments)."""
        sentence = Sentence(f"{source}:{block.line}", str(block.line))
        if block.dropped:
            length = len(block.lines) + block.dropped
            return self.fail(sentence, f"{sentence.where}: a sentence of {length:,} lines is longer than this model can parse ({self.max_words} words)")
        try:
            parsed = parse_sentence(block.lines, source)
        except DataError as error:
            sentence.comments = block.comments
            return self.fail(sentence, str(error))
        sentence.comments = parsed.comments
        sentence.rows = [list(row.fields) for row in parsed.rows if row.kind is not Kind.EMPTY]
        sentence.tokens = [row.form for row in parsed.words]
        return self.check(sentence)

    def check(self, sentence: Sentence) -> Sentence:
        """Mark a sentence the model cannot parse: no words, more than it can decode, or written in a
        script the training sentences never use (certainly not the model's language).
        """
        if sentence.error is None:
            if not sentence.tokens:  # recorded, not logged: blank lines between paragraphs are no mistake
                sentence.error = f"{sentence.where}: an empty sentence (no words to parse)"
            elif foreign := foreign_script(sentence.tokens, self.scripts):
                language = f"{self.language!r} " if self.language else ""
                self.fail(sentence, f"{sentence.where}: the sentence is written in {foreign} script, which none of this {language}model's training words use")
            elif len(sentence.tokens) > self.max_words:
                self.fail(
                    sentence,
                    f"{sentence.where}: a sentence of {len(sentence.tokens)} words is longer than this model can parse "
                    f"({self.max_words} words: search max_steps and decoder positions)",
                )
        return sentence

    @staticmethod
    def fail(sentence: Sentence, message: str) -> Sentence:
        sentence.error = message
        logger.warning("%s", message)
        return sentence

    # ------------------------------------------------------------ parsing and writing

    def predict_lines(self, lines: Iterable[str], batch_size: int = 64, first_line: int = 1) -> Iterator[str]:
        """One CoNLL-U block (ending in a newline) per input sentence, parsed *batch_size* at a time."""
        check_stream(lines, batch_size)
        source = getattr(lines, "name", None) or "<input>"
        for chunk in chunks(self.sentences(lines, str(source), first_line), batch_size):
            yield from self.parse(chunk)

    @staticmethod
    def is_error(output: str) -> bool:
        return output.startswith("# error = ") or "\n# error = " in output

    def parse(self, sentences: list[Sentence]) -> Iterator[str]:
        readable = [sentence for sentence in sentences if sentence.error is None]
        trees = predict(self.model, [self.example(sentence) for sentence in readable], self.max_tokens, self.search)
        parsed = {id(sentence): tree for sentence, tree in zip(readable, trees)}
        for sentence in sentences:
            tree = parsed.get(id(sentence))
            if tree is not None and NO_LABEL in tree.deprels:  # the search stopped before every word was attached
                self.fail(sentence, f"{sentence.where}: decoding stopped after max_steps before the parse was complete")
            yield self.conllu(sentence, None if sentence.error else tree)

    @staticmethod
    def example(sentence: Sentence) -> Example:
        """The words to parse; with CoNLL-U input that has a UPOS column, its tags too (for the ``upos`` token embedder)."""
        upos = [row[3] for row in sentence.rows if row is not None and "-" not in row[0]]
        tagged = len(upos) == len(sentence.tokens) and "_" not in upos
        return Example(sentence.tokens, meta={"upos": tuple(upos)} if tagged else {})

    @staticmethod
    def conllu(sentence: Sentence, tree: Any) -> str:
        comments = [line for line in sentence.comments if not line.startswith("# error")]
        if tree is None:
            return "\n".join(comments + [f"# error = {' '.join(str(sentence.error).split())}"]) + "\n"
        lines, word, inside = list(comments), 0, 0  # inside: the last word of the multiword token being written
        upos, feats = getattr(tree, "upos", None), getattr(tree, "feats", None)
        for row in sentence.rows:
            if row is not None and "-" in row[0]:
                lines.append("\t".join(row))
                continue
            head, deprel = str(tree.heads[word]), tree.deprels[word]
            if row is None:
                if word + 1 in sentence.multiword:
                    inside, form = sentence.multiword[word + 1]
                    lines.append("\t".join([f"{word + 1}-{inside}", form, "_", "_", "_", "_", "_", "_", "_", misc_of(sentence.space_after[inside - 1])]))
                misc = "_" if word < inside else misc_of(sentence.space_after[word])
                fields = [str(word + 1), sentence.tokens[word], "_", upos[word] if upos else "_", "_", feats[word] if feats else "_", head, deprel, "_", misc]
            else:
                given = row[:6]
                if upos and given[3] == "_":
                    given[3] = upos[word]
                if feats and given[5] == "_":
                    given[5] = feats[word]
                fields = given + [head, deprel, "_", row[9]]
            lines.append("\t".join(fields))
            word += 1
        return "\n".join(lines) + "\n"

    def read_inputs(self, lines: Iterable[str], source: str = "<input>") -> Iterator[tuple[str, Example | DataError]]:
        """As ``predict_lines`` reads them: plain text (a line's sentences ``"7.1"``, ``"7.2"``), JSON lines or CoNLL-U blocks."""
        for sentence in self.sentences(lines, source):
            if sentence.error is None:
                yield sentence.label, Example(sentence.tokens)
            elif sentence.tokens or sentence.rows:  # else a blank line of plain text
                yield sentence.label, DataError(sentence.error.removeprefix(f"{sentence.where}: "))

    # ------------------------------------------------------------ the JSON interface of Predictor.predict

    def to_example(self, line: str) -> Example:
        """One sentence: plain text, or ``{"tokens": [...]}`` (taken as they are) or ``{"sentence": "..."}`` (tokenised)."""
        check_line(line)
        tokens = [word for sentence in self.read_text(line)[1] for token in sentence for word in token.words]
        if not tokens:
            raise DataError("empty input line")
        if len(tokens) > self.max_words:
            raise DataError(f"a sentence of {len(tokens)} words is longer than this model can parse ({self.max_words} words)")
        return Example(tokens)

    def to_json(self, example: Example, prediction: Any) -> dict[str, Any]:
        tags = {field: list(value) for field in ("upos", "feats") if (value := getattr(prediction, field, None)) is not None}
        return {"tokens": example.tokens, "heads": list(prediction.heads), "deprels": list(prediction.deprels), **tags}
