"""The English words and lemmas of toolkit.data.tokenization: the spaCy-free fallback (nltk's
Treebank tokenizer made to split as spaCy does, simplemma's lemmas) on hand-checked sentences,
and, where spaCy is installed, the fallback against spaCy itself.
"""

import re
import sys
from functools import lru_cache

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolkit.data import tokenization
from toolkit.data.tokenization import MARKUP_TAG, WORD_SPLITS, lemmatize, split_tokens, tokenize, treebank_tokens


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
    assert "".join(re.sub(r"\s", "", word) for word, _ in tokens) == re.sub(r"\s", "", text)
    assert all(word and (not re.search(r"\s", word) or MARKUP_TAG.fullmatch(word)) for word, _ in tokens)  # a tag may hold spaces


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


# ------------------------------------------------------------------ the same words from both tokenizers


@pytest.fixture(params=["spacy", "treebank"])
def english_tokens(request):
    """Each tokenizer's words with whether whitespace follows (spaCy's skipped where it is not installed)."""
    if request.param == "spacy":
        pytest.importorskip("spacy", reason='spaCy is not installed (pip install "spacy>=3.8,<3.9")')
        return tokenization.spacy_tokens
    return treebank_tokens


@pytest.mark.parametrize(
    "text, expected",
    [
        ("my id card", "my id card"),  # spaCy's rules made "i d" of it
        ("Wed night", "Wed night"),
        ("he cant go", "he cant go"),
        ("hes here , whats up ? Im fine", "hes here , whats up ? Im fine"),
        ("I dont know , ima go , we wont", "I dont know , ima go , we wont"),
        ("I can't , he'd go", "I ca n't , he 'd go"),  # with the apostrophe, split as ever
        (
            "I cannot go , gonna try , wanna come ? gotta go , Gimme that , LEMME see",
            "I can not go , gon na try , wan na come ? got ta go , Gim me that , LEM ME see",
        ),
    ],
)
def test_a_word_without_an_apostrophe_is_split_only_as_the_treebank_splits_it(english_tokens, text, expected):
    assert [word for word, _ in english_tokens(text)] == expected.split()


def test_spacy_splits_no_word_without_an_apostrophe_but_the_treebanks():
    pytest.importorskip("spacy", reason='spaCy is not installed (pip install "spacy>=3.8,<3.9")')
    rules = tokenization._spacy_tokenizer().rules
    assert {text.lower() for text, pieces in rules.items() if len(pieces) > 1 and text.isalpha()} == set(WORD_SPLITS)
    assert len(rules["10am"]) == 2  # a number and its unit, no word changed, split as before


@pytest.mark.parametrize(
    "text, expected",
    [
        ("<i>BRAF</i> mutations", ["<i>", "BRAF", "</i>", "mutations"]),  # a tag glued to a word
        ('see <xref ref-type="fig" rid="F3">the figure</xref>.', ["see", '<xref ref-type="fig" rid="F3">', "the", "figure", "</xref>", "."]),
        ("(<a href='x y'>link</a>)", ["(", "<a href='x y'>", "link", "</a>", ")"]),
        ("a < b", ["a", "<", "b"]),  # a < that opens no tag
        ("if x<y and y>z", ["if", "x", "<", "y", "and", "y", ">", "z"]),  # glued, with bare attributes: a comparison
        ("a <b and c> d", ["a", "<b and c>", "d"]),  # between spaces, as split_tokens keeps it
        ("line<br/>break", ["line", "<br/>", "break"]),
        ("<p><br/></p>", ["<p>", "<br/>", "</p>"]),  # a line of tags only
    ],
)
def test_both_tokenizers_keep_a_markup_tag_one_word(english_tokens, text, expected):
    assert [word for word, _ in english_tokens(text)] == expected
    assert split_tokens(" ".join(expected)) == expected  # written to # ::tok, read back the same


def test_a_tag_says_whether_whitespace_follows_it(english_tokens):
    assert english_tokens("<i>BRAF</i> is <b>") == [("<i>", False), ("BRAF", False), ("</i>", True), ("is", True), ("<b>", False)]


NO_SPACY = pytest.mark.skipif(not tokenization.spacy_installed(), reason='spaCy is not installed (pip install "spacy>=3.8,<3.9")')


@lru_cache(maxsize=1)
def spacy_as_it_was():  # type: ignore[no-untyped-def]
    """``spacy.blank("en")``'s tokenizer with all its special cases."""
    import spacy

    return spacy.blank("en").tokenizer


@NO_SPACY
@given(st.text(alphabet="abkxzABK.,;:!?'\"()-/$%0 >=\t\n", max_size=30))
def test_without_a_tag_or_a_word_split_spacy_splits_as_it_did(text):
    """No ``<``, and none of the letters that spell a removed special case: the words ``spacy.blank("en")`` makes."""
    before = [(token.text, bool(token.whitespace_)) for token in spacy_as_it_was()(text) if not token.is_space]
    assert tokenization.spacy_tokens(text) == before


@given(st.text(alphabet="ab<>/=\"' .i(", max_size=25))
def test_each_tokenizers_words_are_what_split_tokens_reads_back(text):
    text = " ".join(text.split())
    for tokens in [treebank_tokens] + ([tokenization.spacy_tokens] if tokenization.spacy_installed() else []):
        words = [word for word, _ in tokens(text)]
        assert split_tokens(" ".join(words)) == words and "".join(words).replace(" ", "") == text.replace(" ", "")
