"""Word vectors from hashed spelling features (spaCy's ``MultiHashEmbed``): no vocabulary, no unknown words.

A word is read as a few strings: its lower-cased form, its first letters, its last letters and its
shape (``Xxxxx``, ``dd``, ``xx'x``). Each string is hashed into a fixed table of its own, a few times
with different seeds, and those rows are summed (a hash embedding: two strings that collide in one
hash rarely collide in the others). The features' vectors are concatenated; the model projects them
with the other embedders'. A word never seen in training still has its suffix and shape, which
is most of what a parser needs of it.

Hashes are CRC-32 (``zlib``), the same in every process, so an archive's rows mean the same after loading.
"""

import zlib
from collections.abc import Mapping, Sequence
from typing import Any

import torch
from torch import nn

from toolkit.data.example import Example
from toolkit.data.language import Language
from toolkit.errors import ConfigurationError
from toolkit.from_params import PositiveInt, Probability
from toolkit.modules.dropout import Dropout
from toolkit.modules.token_embedders.token_embedder import TokenEmbedder, pad_lists

UNKNOWN = Language()  # the data does not say: Python's own lower-casing
FEATURES = ("norm", "prefix", "suffix", "shape")


def word_shape(word: str, longest_run: int = 4) -> str:
    """``Xxxxx`` for "Paris", ``dddd`` for "2019", ``X.X.`` for "U.S."; a run of one kind is cut at *longest_run*.

    >>> word_shape("Washington"), word_shape("can't"), word_shape("COVID-19")
    ('Xxxxx', "xxx'x", 'XXXX-dd')
    """
    shape, last, run = [], "", 0
    for character in word:
        kind = "X" if character.isupper() else "x" if character.isalpha() else "d" if character.isdigit() else character
        run = run + 1 if kind == last else 1
        last = kind
        if run <= longest_run:
            shape.append(kind)
    return "".join(shape)


def spelling_features(word: str, prefix: int, suffix: int, language: Language = UNKNOWN) -> dict[str, str]:
    """The strings :class:`HashedFeaturesEmbedder` hashes for *word*, lower-cased by *language*'s rules."""
    lower = language.lower(word)
    return {"norm": lower, "prefix": lower[:prefix], "suffix": lower[-suffix:], "shape": word_shape(word)}


@TokenEmbedder.register("hashed_features")
class HashedFeaturesEmbedder(TokenEmbedder):
    """One vector per word: its spelling features' hash embeddings, concatenated (see the module doc).

    # Parameters
    rows : table size per feature (``norm``, ``prefix``, ``suffix``, ``shape``; spaCy's efficiency
        defaults); a feature left out is not read.
    width : the width of each feature's vector; the output is ``width × len(rows)``.
    hashes : how many rows (seeds) a string sums.
    prefix, suffix : how many first and last letters the ``prefix`` and ``suffix`` features keep.
    dropout : on the output vectors.
    language : given by training and archives (the data's, see :mod:`toolkit.data.language`), not by
        the config: how words are lower-cased (Turkish ``I`` is ``ı``).
    """

    def __init__(
        self,
        rows: Mapping[str, int] | None = None,
        width: PositiveInt = 64,
        hashes: PositiveInt = 2,
        prefix: PositiveInt = 1,
        suffix: PositiveInt = 3,
        dropout: Probability = 0.0,
        language: Language | None = None,
    ):
        super().__init__()
        rows = dict(rows if rows is not None else {"norm": 5000, "prefix": 1000, "suffix": 2500, "shape": 2500})
        if unknown := sorted(set(rows) - set(FEATURES)):
            raise ConfigurationError(f"unknown features {unknown}; known: {list(FEATURES)}", key="rows")
        if not rows or min(rows.values()) < 1:
            raise ConfigurationError(f"needs at least one feature with at least one row, got {rows}", key="rows")
        self.features = [name for name in FEATURES if name in rows]
        self.sizes = [rows[name] for name in self.features]
        self.hashes, self.prefix, self.suffix, self.width = hashes, prefix, suffix, width
        self.language = language or Language()
        offsets = torch.tensor([0, *self.sizes[:-1]]).cumsum(0)
        self.register_buffer("offsets", offsets.repeat_interleave(hashes), persistent=False)  # (F·H,): each feature's table start
        self.embedding = nn.Embedding(sum(self.sizes), width)
        nn.init.normal_(self.embedding.weight, std=width**-0.5)
        self.dropout = Dropout(dropout)

    def word_rows(self, word: str) -> list[int]:
        """*word*'s row in each feature's table, ``hashes`` per feature (before the tables' offsets)."""
        strings = spelling_features(word, self.prefix, self.suffix, self.language)
        return [zlib.crc32(strings[name].encode("utf-8"), seed) % size for name, size in zip(self.features, self.sizes) for seed in range(self.hashes)]

    def example_inputs(self, example: Example) -> dict[str, Any]:
        """``feature_rows``: each word's rows (:meth:`word_rows`)."""
        return {"feature_rows": [self.word_rows(word) for word in example.tokens]}

    def batch_inputs(self, inputs: Sequence[Mapping[str, Any]], num_tokens: int) -> dict[str, torch.Tensor]:
        """``feature_rows``: (B, S, F·H) rows, padded words all 0 (masked in :meth:`forward`)."""
        per_word = len(self.features) * self.hashes
        words = [row for item in inputs for row in item["feature_rows"][:num_tokens] + [[0] * per_word] * (num_tokens - len(item["feature_rows"]))]
        return {"feature_rows": pad_lists(words, per_word).view(len(inputs), num_tokens, per_word)}

    def forward(self, token_ids: torch.Tensor, mask: torch.Tensor, feature_rows: torch.Tensor) -> torch.Tensor:
        """(B, S, F·width): per feature, the sum of its hashed rows; padded words zero."""
        vectors = self.embedding(feature_rows + self.offsets)  # (B, S, F·H, W)
        vectors = vectors.view(*feature_rows.shape[:2], len(self.features), self.hashes, self.width).sum(3)
        return self.dropout(vectors.flatten(2) * mask.unsqueeze(-1).to(vectors.dtype))

    def get_output_dim(self) -> int:
        return self.width * len(self.features)
