"""Raw text to UD words, learned from a treebank: spaCy's rule-based tokenizer for the language,
corrected where the treebank segments otherwise, and multiword tokens expanded as the treebank does.

UD parses *syntactic words*, which are not always the tokens of the text: French ``du`` is the
two words ``de le``, Greek ``στο`` is ``σε το``, Turkish ``vardı`` is ``var dı``. A treebank says so
with range lines (``3-4 du``), and its ``# text`` comments give the text its tokens come from. Fitted
on the training sentences (:func:`fit_text_tokenizer`, which ``toolkit train`` calls through the
``conllu`` reader and records in the run's config), a :class:`TextTokenizer` holds:

- **corrections**: runs of tokens that ``spacy.blank(language)`` segments otherwise than the
  treebank does, each with the treebank's segmentation (``là - bas`` is ``là-bas``, ``-t -il`` is
  ``-t-il``, ``l'on`` is ``l'`` ``on``, ``50 000`` is one token). A run is keyed by its tokens with
  every digit written ``0`` (so ``14h30`` teaches ``18h15``) and the spaces between them, and is
  corrected only where the treebank segments it so more often than spaCy's way;
- **multiword tokens**: each surface form the treebank expands, with its words (lower-cased; the
  first word takes the form's case: ``Au`` is ``À le``) and how often it is expanded or a word of
  its own. Where both are frequent (French ``des``: ``de les`` 516 times in Sequoia's training
  sentences, the determiner ``des`` 266 times), an averaged perceptron over the neighbouring words
  and their endings decides. A form the treebank never expands is never expanded: 65% of Turkish
  test multiword tokens are forms its training sentences lack, so Turkish raw text keeps most of
  them whole.

Sentences are split inside each line by spaCy's ``sentencizer`` (punctuation rules); a line break
always ends a sentence.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import pairwise
from typing import Any

from toolkit.data.example import Example
from toolkit.data.language import Language
from toolkit.data.tokenization import spacy_installed
from toolkit.errors import ConfigurationError, DataError
from toolkit.extras import install_hint
from toolkit.files import MAX_LINE_CHARS

AGREEMENT = 0.9  # how consistently the treebank must segment a run of tokens one way for it to become a correction
AMBIGUOUS = 5  # a form both expanded and whole at least this often is decided in context
LONGEST_RUN = 5  # the most spaCy tokens a correction spans
EPOCHS = 10  # of the perceptron


@dataclass(frozen=True)
class Token:
    """A surface token of the text: its form, whether a space follows it, and its syntactic words."""

    form: str
    space_after: bool
    words: tuple[str, ...]


def spacy_blank(language: str):  # type: ignore[no-untyped-def]
    """``spacy.blank(language)`` with a sentencizer; a clear error without spaCy or the language."""
    try:
        import spacy
    except ImportError:
        raise ConfigurationError(f"tokenizing {language!r} text needs spaCy: {install_hint('spacy')}") from None
    try:
        nlp = spacy.blank(language)
    except ImportError:
        raise ConfigurationError(f"spaCy has no tokenizer for language {language!r}") from None
    nlp.add_pipe("sentencizer")
    nlp.max_length = max(nlp.max_length, MAX_LINE_CHARS)  # what predict reads: no line it accepts is spaCy's E088
    return nlp


def with_case_of(form: str, word: str, language: Language) -> str:
    """*word* in the case *form* is written in: ``DE`` for ``DU``, ``De`` for ``Du``."""
    if form.isupper() and len(form) > 1:
        return word.upper() if language.code not in ("tr", "az") else word.replace("i", "İ").upper()
    if form[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


@dataclass
class TextTokenizer:
    """A language's tokenizer with a treebank's corrections and multiword tokens (see the module doc).

    ``corrections`` are ``[tokens, spaces, pieces]``: spaCy's tokens (digits as ``0``), whether a space
    follows each but the last, and the treebank's tokens as character offsets into the run.
    ``multiword`` maps a lower-cased form to ``{"words": [...], "split": n, "whole": m}``, and for an
    ambiguous form the perceptron's ``"weights"`` (positive: expand).
    """

    language: str
    corrections: list[list] = field(default_factory=list)
    multiword: dict[str, dict[str, Any]] = field(default_factory=dict)

    def config(self) -> dict[str, Any]:
        return {"corrections": self.corrections, "multiword": self.multiword}

    @cached_property
    def nlp(self):  # type: ignore[no-untyped-def]
        return spacy_blank(self.language)

    @cached_property
    def rules(self) -> dict[tuple, list[list[int]]]:
        return {(tuple(tokens), tuple(spaces)): pieces for tokens, spaces, pieces in self.corrections}

    @cached_property
    def lang(self) -> Language:
        return Language(self.language)

    def sentences(self, text: str) -> list[list[Token]]:
        """*text* (one line) as sentences of tokens, each with its words."""
        if len(text) > self.nlp.max_length:
            raise DataError(f"a text of {len(text):,} characters is longer than the tokenizer reads ({self.nlp.max_length:,} at most)")
        doc = self.nlp(text)
        sentence_of = {token.i: number for number, span in enumerate(doc.sents) for token in span}
        sentences: dict[int, list[tuple[str, bool]]] = defaultdict(list)
        for start, end, number in corrected(text, [t for t in doc if not t.is_space], self.rules, sentence_of):
            sentences[number].append((text[start:end], end < len(text) and text[end].isspace()))
        result = []
        for number in sorted(sentences):
            forms = [form for form, _ in sentences[number]]
            result.append([Token(form, space, self.words(forms, i)) for i, (form, space) in enumerate(sentences[number])])
        return result

    def tokens(self, text: str) -> list[tuple[str, bool]]:
        """*text*'s tokens as one sentence, each with whether a space follows it (no multiword expansion)."""
        return [(token.form, token.space_after) for sentence in self.sentences(text) for token in sentence]

    def words(self, forms: Sequence[str], i: int) -> tuple[str, ...]:
        """The syntactic words of the *i*-th token of *forms*: the token itself, or its expansion."""
        form = forms[i]
        entry = self.multiword.get(self.lang.lower(form))
        if entry is None:
            return (form,)
        if "weights" in entry:
            weights = entry["weights"]
            split = sum(weights.get(feature, 0.0) for feature in context(forms, i, self.lang)) > 0
        else:
            split = entry["split"] >= entry["whole"]
        if not split:
            return (form,)
        words = entry["words"]
        return (with_case_of(form, words[0], self.lang), *words[1:])


def normal(token: str) -> str:
    """A token as corrections key it: every digit ``0``."""
    return DIGIT.sub("0", token)


DIGIT = re.compile(r"\d")


def corrected(text: str, tokens: Sequence[Any], rules: dict[tuple, list[list[int]]], sentence_of: dict[int, int]) -> Iterator[tuple[int, int, int]]:
    """Each token's (start, end) in *text* and its sentence, after the *rules* (see :class:`TextTokenizer`)."""
    lengths = sorted({len(key[0]) for key in rules}, reverse=True)
    i = 0
    while i < len(tokens):
        for length in lengths:
            run = tokens[i : i + length]
            if len(run) < length:
                continue
            spaces = tuple(run[k].whitespace_ == " " for k in range(length - 1))
            if any(run[k].whitespace_ not in ("", " ") or run[k + 1].idx != run[k].idx + len(run[k].text) + spaces[k] for k in range(length - 1)):
                continue
            pieces = rules.get((tuple(normal(t.text) for t in run), spaces))
            if pieces is not None:
                start = run[0].idx
                yield from ((start + a, start + b, sentence_of[run[0].i]) for a, b in pieces)
                i += length
                break
        else:
            yield tokens[i].idx, tokens[i].idx + len(tokens[i].text), sentence_of[tokens[i].i]
            i += 1


def context(forms: Sequence[str], i: int, language: Language) -> list[str]:
    """What the perceptron reads of the *i*-th token's neighbours."""
    previous = language.lower(forms[i - 1]) if i else "<s>"
    following = language.lower(forms[i + 1]) if i + 1 < len(forms) else "</s>"
    return [
        "bias",
        f"p={previous}",
        f"p1={previous[-1:]}",
        f"p2={previous[-2:]}",
        f"p3={previous[-3:]}",
        f"n={following}",
        f"n3={following[-3:]}",
        f"pn={previous[-2:]}|{following[-2:]}",
    ]


def train_perceptron(cases: Sequence[tuple[list[str], bool]]) -> dict[str, float]:
    """An averaged perceptron's weights for *cases* (features, expanded?), in a fixed order."""
    weights: dict[str, float] = defaultdict(float)
    totals: dict[str, float] = defaultdict(float)
    stamps: dict[str, int] = defaultdict(int)
    step = 0
    for _ in range(EPOCHS):
        for features, split in cases:
            step += 1
            if (sum(weights[f] for f in features) > 0) != split:
                change = 1.0 if split else -1.0
                for feature in features:
                    totals[feature] += (step - stamps[feature]) * weights[feature]
                    stamps[feature] = step
                    weights[feature] += change
    averaged = {f: (totals[f] + (step - stamps[f]) * weights[f]) / step for f in weights}
    return {f: round(w, 4) for f, w in averaged.items() if round(w, 4)}


def text_tokenizer_of(language: str, config: dict[str, Any]) -> TextTokenizer:
    """The :class:`TextTokenizer` a reader's ``text_tokenizer`` config describes."""
    if not isinstance(config, dict) or set(config) - {"corrections", "multiword"}:
        raise ConfigurationError(f"expected {{'corrections': ..., 'multiword': ...}} as training records it, got {str(config)[:80]}", key="text_tokenizer")
    return TextTokenizer(language, list(config.get("corrections", [])), dict(config.get("multiword", {})))


def fit_text_tokenizer(examples: Iterable[Example], language: str) -> TextTokenizer:
    """A :class:`TextTokenizer` for *language* learned from treebank sentences (their ``# text``,
    multiword ranges and words, as the ``conllu`` reader keeps them in ``meta``).
    """
    lang = Language(language)
    sentences = [(example.meta["text"], surface_tokens(example)) for example in examples if "text" in example.meta]
    corrections = fit_corrections(sentences, spacy_blank(language).tokenizer) if spacy_installed() else []
    expansions: dict[str, Counter] = defaultdict(Counter)
    cases: dict[str, list[tuple[list[str], bool]]] = defaultdict(list)
    for _, tokens in sentences:
        forms = [form for form, _ in tokens]
        for i, (form, words) in enumerate(tokens):
            lower = lang.lower(form)
            cases[lower].append((context(forms, i, lang), len(words) > 1))
            if len(words) > 1:
                expansions[lower][tuple(lang.lower(word) for word in words)] += 1
    multiword = {}
    for form, counts in sorted(expansions.items()):
        split = sum(counts.values())
        whole = len(cases[form]) - split
        multiword[form] = {"words": list(counts.most_common(1)[0][0]), "split": split, "whole": whole}
        if min(split, whole) >= AMBIGUOUS:
            multiword[form]["weights"] = train_perceptron(cases[form])
    return TextTokenizer(language, corrections, multiword)


def fit_corrections(sentences: Sequence[tuple[str, list[tuple[str, tuple[str, ...]]]]], tokenizer: Any) -> list[list]:
    """The runs of spaCy tokens the treebank segments otherwise, more often than not (see :class:`TextTokenizer`)."""
    differ: dict[tuple, Counter] = defaultdict(Counter)
    predicted = []
    for text, tokens in sentences:
        doc = [token for token in tokenizer(text) if not token.is_space]
        predicted.append(doc)
        for start, end, pieces in disagreements(text, [form for form, _ in tokens], [token.text for token in doc]):
            run = [token for token in doc if start <= token.idx < end]
            if 0 < len(run) <= LONGEST_RUN:
                key = (tuple(normal(token.text) for token in run), tuple(bool(token.whitespace_) for token in run[:-1]))
                differ[key][pieces] += 1
    seen = Counter()  # how often each run occurs in spaCy's tokens at all
    lengths = {len(tokens) for tokens, _ in differ}
    for doc in predicted:
        for length in lengths:
            for i in range(len(doc) - length + 1):
                run = doc[i : i + length]
                key = (tuple(normal(token.text) for token in run), tuple(bool(token.whitespace_) for token in run[:-1]))
                if key in differ:
                    seen[key] += 1
    corrections = []
    for key, counts in differ.items():
        pieces, count = counts.most_common(1)[0]
        if count >= AGREEMENT * counts.total() and 2 * count > seen[key]:
            corrections.append([list(key[0]), list(key[1]), [list(piece) for piece in pieces]])
    return sorted(corrections)


def surface_tokens(example: Example) -> list[tuple[str, tuple[str, ...]]]:
    """The sentence's surface tokens and their words: a multiword range (``meta["multiword"]``) is one token."""
    ranges = {start: (end, form) for start, end, form in example.meta.get("multiword", ())}
    tokens, word = [], 1
    while word <= len(example.tokens):
        if word in ranges:
            end, form = ranges[word]
            tokens.append((form, tuple(example.tokens[word - 1 : end])))
            word = end + 1
        else:
            tokens.append((example.tokens[word - 1], (example.tokens[word - 1],)))
            word += 1
    return tokens


def disagreements(text: str, gold: Sequence[str], predicted: Sequence[str]) -> Iterator[tuple[int, int, tuple[tuple[int, int], ...]]]:
    """Where the *predicted* tokens of *text* segment a stretch otherwise than the *gold* ones: each such
    stretch's start and end, and the gold tokens' offsets into it. Both token lists must spell *text*
    in order (else nothing).
    """
    gold_spans, predicted_spans = spans(text, gold), spans(text, predicted)
    if gold_spans is None or predicted_spans is None:
        return
    gold_starts, predicted_starts = {start for start, _ in gold_spans}, {start for start, _ in predicted_spans}
    gold_ends, predicted_ends = {end for _, end in gold_spans}, {end for _, end in predicted_spans}
    shared = sorted((gold_starts & predicted_starts) | (gold_ends & predicted_ends))
    for start, end in pairwise(shared):
        if start not in gold_starts or start not in predicted_starts or end not in gold_ends or end not in predicted_ends:
            continue
        inside_gold = [(s, e) for s, e in gold_spans if start <= s and e <= end]
        inside_predicted = [(s, e) for s, e in predicted_spans if start <= s and e <= end]
        if inside_gold != inside_predicted:
            yield start, end, tuple((s - start, e - start) for s, e in inside_gold)


def spans(text: str, tokens: Sequence[str]) -> list[tuple[int, int]] | None:
    """Each token's (start, end) in *text*, found left to right; ``None`` if they do not spell it."""
    found, at = [], 0
    for token in tokens:
        start = text.find(token, at)
        if start < 0 or text[at:start].strip():
            return None
        found.append((start, start + len(token)))
        at = start + len(token)
    return found
