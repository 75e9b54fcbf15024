"""What the transformer embedder reads off a subword tokenizer: the special tokens around an input, and whole words for stems."""

from collections.abc import Mapping
from typing import Any


def unstemmed_words(vocabulary: Mapping[str, int]) -> dict[str, str]:
    """Porter stem -> the vocabulary's most frequent (lowest-id) whole word with that stem, for stems the vocabulary lacks as words.

    Whole words are the alphabetic entries, less a BPE or SentencePiece word-start mark (``Ġ``,
    ``▁``); WordPiece's continuations (``##ing``) are none.
    """
    from nltk.stem.porter import PorterStemmer  # imported here: only configs with unstem need it

    stem = PorterStemmer().stem
    words: dict[str, int] = {}
    for entry, index in vocabulary.items():
        word = entry.lstrip("Ġ▁")
        if word.isalpha() and index < words.get(word, index + 1):
            words[word] = index
    best: dict[str, tuple[int, str]] = {}
    for word, index in words.items():
        key = stem(word)
        if key not in words and (key not in best or index < best[key][0]):
            best[key] = (index, word)
    return {key: word for key, (_, word) in best.items()}


def special_tokens(tokenizer: Any) -> tuple[list[int], list[int]]:
    """The ids a tokenizer puts before and after a single sequence (``[CLS]`` and ``[SEP]`` for BERT).

    Read off the tokenizer's own answer for a one-word input, which works for every tokenizer.
    """
    plain = list(tokenizer("a", add_special_tokens=False)["input_ids"])
    full = list(tokenizer("a", add_special_tokens=True)["input_ids"])
    for start in range(len(full) - len(plain) + 1):
        if plain and full[start : start + len(plain)] == plain:
            return full[:start], full[start + len(plain) :]
    return [tokenizer.cls_token_id] if tokenizer.cls_token_id is not None else [], [tokenizer.sep_token_id] if tokenizer.sep_token_id is not None else []


def first_id(tokenizer: Any, *names: str) -> int:
    """The first of the tokenizer's special token ids *names* that it has (0 if none)."""
    return next((int(getattr(tokenizer, name)) for name in names if getattr(tokenizer, name, None) is not None), 0)
