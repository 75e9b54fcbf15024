"""The English words and lemmas of toolkit.data.tokenization: the spaCy-free fallback (nltk's
Treebank tokenizer made to split as spaCy does, simplemma's lemmas) on hand-checked sentences,
and, where spaCy is installed, the fallback against spaCy itself.
"""

import re
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolkit.data import tokenization
from toolkit.data.tokenization import lemmatize, split_tokens, tokenize, treebank_tokens


@pytest.fixture
def no_spacy(monkeypatch):
    """As if spaCy were not installed, whether it is or not."""
    monkeypatch.setitem(sys.modules, "spacy", None)  # import spacy now raises ImportError
    monkeypatch.setattr(tokenization, "_pipeline", lambda: None)
    lemmatize.cache_clear()
    yield
    lemmatize.cache_clear()


def words(text: str) -> list[str]:
    return [word for word, _ in treebank_tokens(text)]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("The little prince looked at the stars.", "The little prince looked at the stars ."),
        ("I don't know, really.", "I do n't know , really ."),
        ("I do not like grown-ups.", "I do not like grown - ups ."),  # spaCy and the AMR Bank split hyphens inside words
        ("He smiled. Then he left!", "He smiled . Then he left !"),  # a sentence's period before the line ends
        ("It's 5 o'clock -- we can't stop...", "It 's 5 o'clock -- we ca n't stop ..."),
        ('He said "hello" (twice)?', 'He said " hello " ( twice ) ?'),  # the quotes as written, not Treebank's `` and ''
        ("Mr. Smith met Dr. Who at 5 p.m. in the U.S. in 1943.", "Mr. Smith met Dr. Who at 5 p.m. in the U.S. in 1943 ."),
        ("a 15-year-old, b/c and/or 3-4 COVID-19", "a 15 - year - old , b / c and/or 3 - 4 COVID-19"),
        ("I cannot draw, I'm gonna try.", "I can not draw , I 'm gon na try ."),
    ],
)
def test_the_fallback_tokenizer_splits_as_spacy_does(text, expected):
    assert words(text) == expected.split()


def test_the_fallback_says_which_words_are_followed_by_a_space():
    assert treebank_tokens("I don't  know.\n") == [("I", True), ("do", False), ("n't", True), ("know", False), (".", True)]
    assert treebank_tokens("") == [] and treebank_tokens(" \t\n") == []


@given(st.text(alphabet="ab A.,;:!?'\"`()-/$%—“”’0 \t\n", max_size=30) | st.text(max_size=30))
def test_the_fallback_keeps_every_character_but_whitespace_in_order(text):
    tokens = treebank_tokens(text)
    assert "".join(word for word, _ in tokens) == re.sub(r"\s", "", text)
    assert all(word and not re.search(r"\s", word) for word, _ in tokens)


def test_without_spacy_the_fallbacks_tokenize_and_lemmatize(no_spacy):
    assert tokenization.tokenizer_name() == "treebank" and tokenization.lemmatizer_name() == "simplemma"
    tokens = tokenize("The children saw the stars; they weren't drawing.")
    assert tokens == ["The", "children", "saw", "the", "stars", ";", "they", "were", "n't", "drawing", "."]
    # lowercased, one per token: plurals, past forms and contractions to their dictionary form
    assert lemmatize(tuple(tokens)) == ("the", "child", "see", "the", "star", ";", "they", "be", "not", "drawing", ".")
    assert lemmatize(("I", "smiled", "at", "Mice", "who", "ca", "n't", "fly")) == ("i", "smile", "at", "mouse", "who", "can", "not", "fly")
    assert lemmatize(()) == () and lemmatize(("",)) == ("",)


SENTENCES = [
    "The little prince looked at the stars.",
    'I do not like grown-ups, they said: "Draw me a sheep!"',
    "He smiled. Then he left, didn't he?",
    "Mr. Smith paid $5.50 for a 15-year-old boa constrictor (really).",
]


def test_the_fallbacks_agree_with_spacy(monkeypatch):
    pytest.importorskip("spacy", reason='spaCy is not installed (pip install "spacy>=3.8,<3.9")')
    for sentence in SENTENCES:
        assert treebank_tokens(sentence) == tokenization.spacy_tokens(sentence)
    if tokenization._pipeline() is None:
        pytest.skip("no spaCy English model")
    tokens = tuple(tokenize("The children saw sheep; the prince looked at the stars and smiled."))
    spacy_lemmas = lemmatize(tokens)
    monkeypatch.setattr(tokenization, "_pipeline", lambda: None)
    assert lemmatize.__wrapped__(tokens) == spacy_lemmas  # uncached: simplemma's


@given(st.lists(st.text(alphabet="ab.,=\"' >/", min_size=1, max_size=6), max_size=8))
def test_split_tokens_is_whitespace_splitting_where_no_tag_opens(words):
    text = " ".join(words)
    assert split_tokens(text) == text.split()  # no "<": nothing to keep whole


@pytest.mark.parametrize(
    "text, expected",
    [
        ('in <xref ref-type="fig" rid="F3"> Fig. 3 </xref> .', ["in", '<xref ref-type="fig" rid="F3">', "Fig.", "3", "</xref>", "."]),
        ("a < b > c", ["a", "<", "b", ">", "c"]),  # no tag: a < opens none
        ("<italic>BRAF</italic> and <br/>", ["<italic>BRAF</italic>", "and", "<br/>"]),  # text glued to a tag stays one token
        ("<a href='x y'>", ["<a href='x y'>"]),
    ],
)
def test_split_tokens_keeps_a_markup_tag_whole(text, expected):
    assert split_tokens(text) == expected
