"""Raw text to UD words, learned from a treebank: spaCy's rule-based tokenizer for the language,
corrected where the treebank segments otherwise, and multiword tokens expanded as the treebank does.

UD parses *syntactic words*, which are not always the tokens of the text: French ``du`` is the
two words ``de le``, Greek ``στο`` is ``σε το``, Turkish ``vardı`` is ``var dı``. A treebank says so
with range lines (``3-4 du``), and its ``# text`` comments give the text its tokens come from. Fitted
on the training sentences (:func:`fit_text_tokenizer`, which ``toolkit train`` calls through the
``conllu`` reader and records in the run's config), a :class:`TextTokenizer` holds:

- **exceptions**: strings that ``spacy.blank(language)`` splits otherwise than the treebank does
  (``là-bas`` whole, ``l'on`` as ``l'`` ``on``), each kept when the treebank splits it one way at
  least 90% of the times it differs from spaCy; they become spaCy special cases;
- **multiword tokens**: each surface form the treebank expands, with its words (lower-cased; the
  first word takes the form's case: ``Au`` is ``À le``), how often it is expanded and how often it
  is a word of its own, and the previous words after which the less frequent reading wins (French
  ``des`` is ``de les`` 516 times in Sequoia's training sentences and the determiner ``des`` 266
  times). A form the treebank never expands is never expanded: 65% of Turkish test multiword
  tokens are forms its training sentences lack, so Turkish raw text keeps most of them whole.

Sentences are split inside each line by spaCy's ``sentencizer`` (punctuation rules); a line break
always ends a sentence.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import pairwise
from typing import Any

from toolkit.data.example import Example
from toolkit.data.language import Language
from toolkit.data.tokenization import spacy_installed
from toolkit.errors import ConfigurationError
from toolkit.extras import install_hint

AGREEMENT = 0.9  # how consistently the treebank must split a string for it to become an exception
MIN_CONTEXT = 2  # how often a previous word must precede a form before it can overrule the form's majority


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
    """A language's tokenizer with a treebank's exceptions and multiword tokens (see the module doc).

    ``multiword`` maps a lower-cased form to ``{"words": [...], "split": n, "whole": m, "flip": [previous
    words]}``: expanded when ``split >= whole``, unless the previous word (lower-cased) is in ``flip``.
    """

    language: str
    exceptions: dict[str, list[str]] = field(default_factory=dict)
    multiword: dict[str, dict[str, Any]] = field(default_factory=dict)

    def config(self) -> dict[str, Any]:
        return {"exceptions": self.exceptions, "multiword": self.multiword}

    @cached_property
    def nlp(self):  # type: ignore[no-untyped-def]
        nlp = spacy_blank(self.language)
        for string, pieces in self.exceptions.items():
            nlp.tokenizer.add_special_case(string, [{"ORTH": piece} for piece in pieces])
        return nlp

    def sentences(self, text: str) -> list[list[Token]]:
        """*text* (one line) as sentences of tokens, each with its words."""
        sentences = []
        for span in self.nlp(text).sents:
            tokens = [token for token in span if not token.is_space]
            forms = [token.text for token in tokens]
            sentences.append([Token(t.text, bool(t.whitespace_), self.words(forms, i)) for i, t in enumerate(tokens)])
        return [sentence for sentence in sentences if sentence]

    def tokens(self, text: str) -> list[tuple[str, bool]]:
        """*text*'s tokens as one sentence, each with whether a space follows it (no multiword expansion)."""
        return [(token.form, token.space_after) for sentence in self.sentences(text) for token in sentence]

    def words(self, forms: Sequence[str], i: int) -> tuple[str, ...]:
        """The syntactic words of the *i*-th token of *forms*: the token itself, or its expansion."""
        form = forms[i]
        lower = Language(self.language).lower(form)
        entry = self.multiword.get(lower)
        if entry is None:
            return (form,)
        previous = Language(self.language).lower(forms[i - 1]) if i else ""
        split = (entry["split"] >= entry["whole"]) != (previous in entry.get("flip", ()))
        if not split:
            return (form,)
        words = entry["words"]
        return (with_case_of(form, words[0], Language(self.language)), *words[1:])


def text_tokenizer_of(language: str, config: dict[str, Any]) -> TextTokenizer:
    """The :class:`TextTokenizer` a reader's ``text_tokenizer`` config describes."""
    if not isinstance(config, dict) or set(config) - {"exceptions", "multiword"}:
        raise ConfigurationError(f"expected {{'exceptions': ..., 'multiword': ...}} as training records it, got {str(config)[:80]}", key="text_tokenizer")
    return TextTokenizer(language, dict(config.get("exceptions", {})), dict(config.get("multiword", {})))


def fit_text_tokenizer(examples: Iterable[Example], language: str) -> TextTokenizer:
    """A :class:`TextTokenizer` for *language* learned from treebank sentences (their ``# text``,
    multiword ranges and words, as the ``conllu`` reader keeps them in ``meta``).
    """
    lang = Language(language)
    base = spacy_blank(language).tokenizer if spacy_installed() else None  # without spaCy, no exceptions to learn
    differ: dict[str, Counter] = defaultdict(Counter)
    expansions: dict[str, Counter] = defaultdict(Counter)
    readings: dict[str, Counter] = defaultdict(Counter)  # form -> {"split": n, "whole": m}
    contexts: dict[str, dict[str, Counter]] = defaultdict(lambda: defaultdict(Counter))
    sentences = [(example.meta["text"], surface_tokens(example)) for example in examples if "text" in example.meta]
    for text, tokens in sentences:
        forms = [form for form, _ in tokens]
        for i, (form, words) in enumerate(tokens):
            lower = lang.lower(form)
            reading = "split" if len(words) > 1 else "whole"
            readings[lower][reading] += 1
            contexts[lower][lang.lower(forms[i - 1]) if i else ""][reading] += 1
            if len(words) > 1:
                expansions[lower][tuple(lang.lower(word) for word in words)] += 1
        for chunk, pieces in disagreements(text, forms, [token.text for token in base(text)] if base else forms):
            differ[chunk][pieces] += 1
    exceptions = {}
    for chunk, counts in differ.items():
        pieces, count = counts.most_common(1)[0]
        if count >= AGREEMENT * sum(counts.values()):
            exceptions[chunk] = list(pieces)
    multiword = {}
    for form, counts in expansions.items():
        words = list(counts.most_common(1)[0][0])
        split, whole = readings[form]["split"], readings[form]["whole"]
        majority = split >= whole
        flip = sorted(
            previous
            for previous, seen in contexts[form].items()
            if seen.total() >= MIN_CONTEXT and (seen["split"] > seen["whole"]) != majority and seen["split"] != seen["whole"]
        )
        multiword[form] = {"words": words, "split": split, "whole": whole, **({"flip": flip} if flip else {})}
    return TextTokenizer(language, exceptions, multiword)


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


def disagreements(text: str, gold: Sequence[str], predicted: Sequence[str]) -> Iterable[tuple[str, tuple[str, ...]]]:
    """Where the *predicted* tokens of *text* segment a stretch without spaces otherwise than the *gold* ones:
    each such stretch and its gold pieces. Both token lists must spell *text* in order (else nothing).
    """
    gold_spans, predicted_spans = spans(text, gold), spans(text, predicted)
    if gold_spans is None or predicted_spans is None:
        return
    gold_ends, predicted_ends = {end for _, end in gold_spans}, {end for _, end in predicted_spans}
    gold_starts, predicted_starts = {start for start, _ in gold_spans}, {start for start, _ in predicted_spans}
    shared = sorted((gold_starts & predicted_starts) | (gold_ends & predicted_ends))
    for start, end in pairwise(shared):
        if start not in gold_starts or start not in predicted_starts or end not in gold_ends or end not in predicted_ends:
            continue
        inside_gold = [(s, e) for s, e in gold_spans if start <= s and e <= end]
        inside_predicted = [(s, e) for s, e in predicted_spans if start <= s and e <= end]
        chunk = text[start:end]
        if inside_gold != inside_predicted and not any(c.isspace() for c in chunk):
            yield chunk, tuple(text[s:e] for s, e in inside_gold)


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
