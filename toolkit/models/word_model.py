"""What every built-in model shares on its input side: words in, through an encoder.

The ``encoder_decoder`` and ``tagger`` models both read a sentence of words: word ids through an
embedding table, token embedders (a pretrained transformer, spaCy vectors, characters, UPOS tags)
beside or instead of it, token dropout in training, and an encoder over the result. That part,
with its four config keys, lives here once; each model adds what it puts on top.
"""

import math
from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from toolkit.data.example import Example
from toolkit.data.vocabulary import SOURCE, Vocabulary
from toolkit.errors import ConfigurationError
from toolkit.from_params import Probability
from toolkit.models.model import Model
from toolkit.modules.encoders import Seq2SeqEncoder
from toolkit.modules.token_embedders import TokenEmbedder, WordEmbedders


def pad(sequences: Sequence[Sequence[int]], value: int = 0) -> torch.Tensor:
    """A (B, max length) tensor of right-padded integer sequences."""
    out = torch.full((len(sequences), max(map(len, sequences), default=0)), value, dtype=torch.long)
    for row, sequence in enumerate(sequences):
        out[row, : len(sequence)] = torch.tensor(sequence, dtype=torch.long)
    return out


def token_loss(logits: torch.Tensor, target: torch.Tensor, label_smoothing: float) -> dict[str, torch.Tensor]:
    """Label-smoothed cross-entropy over the (B, T) non-padding *target* ids, and the counts behind token accuracy."""
    pad_index = Vocabulary.PAD_INDEX
    loss = F.cross_entropy(logits.flatten(0, 1).float(), target.flatten(), ignore_index=pad_index, label_smoothing=label_smoothing)
    mask = target != pad_index
    correct = ((logits.argmax(-1) == target) & mask).sum()
    return {"loss": loss, "correct_tokens": correct, "num_tokens": mask.sum()}


class WordModel(Model):
    """A model that reads a sentence of words through *encoder*.

    A subclass's constructor takes ``**words`` and passes them on with its *vocab* and *encoder*;
    it then makes ``self.source_embedding = self.word_table()`` among its own modules, runs its
    ``reset_parameters()``, and last ``self.token_embedders = self.word_embedders()`` (their weights
    are pretrained or their own, so the model's initialisation must not touch them).

    # Parameters
    source_token_dropout : in training, replace each word by the unknown word with this
        probability, so that the unknown-word embedding is learned for the words unseen in training.
    scale_embeddings : multiply embeddings by sqrt(d), as the Transformer does.
    token_embedders : named :class:`~toolkit.modules.token_embedders.TokenEmbedder` s (a pretrained
        transformer, spaCy vectors, characters, UPOS tags) read beside the word embedding: their
        vectors and the word embedding's are concatenated and projected to the model's width.
    word_embedding : whether the words have an embedding table of their own; ``false`` reads the
        token embedders alone (and needs at least one).
    """

    def __init__(
        self,
        vocab: Vocabulary,
        encoder: Seq2SeqEncoder,
        source_token_dropout: Probability = 0.0,
        scale_embeddings: bool = True,
        token_embedders: dict[str, TokenEmbedder] | None = None,
        word_embedding: bool = True,
    ):
        super().__init__()
        if not word_embedding and not token_embedders:
            raise ConfigurationError("false needs token_embedders to read the words", key="word_embedding")
        self.vocab, self.encoder = vocab, encoder
        self.dim = encoder.get_output_dim()
        self.source_token_dropout = source_token_dropout
        self.embedding_scale = math.sqrt(self.dim) if scale_embeddings else 1.0
        self.pad_index = Vocabulary.PAD_INDEX
        self.has_word_embedding, self.embedder_options = word_embedding, dict(token_embedders or {})

    def word_table(self) -> nn.Embedding | None:
        """The words' own embedding table, or ``None`` with ``word_embedding: false``."""
        return nn.Embedding(self.vocab.size(SOURCE), self.dim, padding_idx=self.pad_index) if self.has_word_embedding else None

    def word_embedders(self) -> WordEmbedders | None:
        """The token embedders and their projection to the model's width, or ``None`` without any."""
        embedders, self.embedder_options = self.embedder_options, {}
        return WordEmbedders(embedders, self.dim if self.has_word_embedding else 0, self.dim) if embedders else None

    def embedding_tables(self) -> list[nn.Embedding]:
        """The tables ``reset_parameters`` draws from N(0, 1/d), each once."""
        return [self.source_embedding] if self.source_embedding is not None else []

    def reset_parameters(self) -> None:
        """Xavier-uniform matrices (Glorot & Bengio, 2010); embeddings N(0, 1/d), as in the Transformer."""
        for name, parameter in self.named_parameters():
            if parameter.dim() > 1 and "embedding" not in name:
                nn.init.xavier_uniform_(parameter)
        for embedding in self.embedding_tables():
            nn.init.normal_(embedding.weight, std=embedding.embedding_dim**-0.5)
            with torch.no_grad():
                embedding.weight[self.pad_index].zero_()

    # ---------------------------------------------------------------- data

    @property
    def max_input_length(self) -> int | None:
        return self.encoder.max_length

    def index_words(self, example: Example) -> dict[str, Any]:
        """The word ids of *example* and what the encoder and token embedders read of it."""
        self.check_length(example)
        indexed: dict[str, Any] = {"source": self.vocab.indices(example.tokens, SOURCE)}
        indexed["encoder_inputs"] = self.encoder.example_inputs(example)  # e.g. the phrases' (m, n) membership
        if self.token_embedders is not None:
            indexed["embedder_inputs"] = self.token_embedders.example_inputs(example)
        return indexed

    def collate_words(self, indexed: Sequence[dict[str, Any]]) -> dict[str, Any]:
        """The padded (B, S) word ids of *indexed* examples and their encoder and token-embedder inputs."""
        source = pad([item["source"] for item in indexed], self.pad_index)
        batch: dict[str, Any] = {"source": source}
        batch["encoder_inputs"] = self.encoder.batch_inputs([item.get("encoder_inputs", {}) for item in indexed], source.size(1))
        if self.token_embedders is not None:
            batch["embedder_inputs"] = self.token_embedders.batch_inputs([item["embedder_inputs"] for item in indexed], source.size(1))
        return batch

    # ---------------------------------------------------------------- encoding

    def drop_words(self, source: torch.Tensor) -> torch.Tensor:
        """In training, *source* with each word replaced by the unknown word with probability ``source_token_dropout``."""
        if not self.training or self.source_token_dropout <= 0:
            return source
        drop = (torch.rand(source.shape, device=source.device) < self.source_token_dropout) & (source != self.pad_index)
        return source.masked_fill(drop, Vocabulary.UNK_INDEX)

    def encode(self, source: torch.Tensor, batch: dict[str, Any] | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Encoder states (B, S, D) and the word mask of *source* (the batch's, or a word-dropped copy).

        *batch* supplies what the encoder and the token embedders read besides the word ids.
        """
        batch = batch or {}
        mask = source != self.pad_index  # (B, S)
        words = None if self.source_embedding is None else self.source_embedding(source) * self.embedding_scale
        if self.token_embedders is not None:
            words = self.token_embedders(words, source, mask, batch["embedder_inputs"])
        return self.encoder(words, mask, **batch.get("encoder_inputs", {})), mask
