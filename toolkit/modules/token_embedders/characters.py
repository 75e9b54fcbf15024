"""Word vectors from the word's characters (Kim et al., 2016; Ling et al., 2015): no vocabulary, no unknown words."""

from collections.abc import Sequence
from typing import Any, Literal

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence

from toolkit.data.example import Example
from toolkit.errors import ConfigurationError
from toolkit.from_params import PositiveInt, Probability
from toolkit.modules.dropout import Dropout
from toolkit.modules.token_embedders.token_embedder import TokenEmbedder, pad_lists

PADDING, BEGIN_WORD, END_WORD = 0, 1, 2
BYTE_OFFSET = 3  # UTF-8 byte b has id b + 3
NUM_CHARACTER_IDS = 256 + BYTE_OFFSET


def character_ids(word: str, max_word_length: int) -> list[int]:
    """A word's character ids: begin-of-word, its UTF-8 bytes + 3 (the first ``max_word_length - 2``), end-of-word.

    Bytes need no vocabulary, so every word of every script is readable; the markers give even an
    empty word two characters, and let the filters see where a word starts and ends.
    """
    return [BEGIN_WORD, *(byte + BYTE_OFFSET for byte in word.encode("utf-8")[: max_word_length - 2]), END_WORD]


@TokenEmbedder.register("characters")
class CharacterEmbedder(TokenEmbedder):
    """One vector per word from its characters, by a CNN or a BiLSTM, over every word of the batch at once.

    # Parameters
    encoder : ``"cnn"``: filters of each width in *widths* (``num_filters`` of each), max-pooled over
        the word and concatenated (Kim et al., 2016); ``"lstm"``: the final states of a BiLSTM of
        ``hidden_dim`` per direction (Ling et al., 2015).
    embedding_dim : the width of a character embedding.
    max_word_length : the most characters read of a word, the two markers included.
    projection_dim : a linear projection of the word vectors to this width (None: the encoder's width).
    dropout : dropout on the character embeddings and on the word vectors.

    Characters are UTF-8 bytes (see :func:`character_ids`). A word's vector depends on that word
    alone: padding never reaches a filter's maximum or the LSTM, so batching changes nothing.
    """

    def __init__(
        self,
        encoder: Literal["cnn", "lstm"] = "cnn",
        embedding_dim: PositiveInt = 16,
        widths: Sequence[int] = (2, 3, 4, 5),
        num_filters: PositiveInt = 64,
        hidden_dim: PositiveInt = 64,
        max_word_length: int = 50,
        projection_dim: PositiveInt | None = None,
        dropout: Probability = 0.0,
    ):
        super().__init__()
        if encoder not in ("cnn", "lstm"):
            raise ConfigurationError(f"must be 'cnn' or 'lstm', got {encoder!r}", key="encoder")
        if max_word_length < 3:
            raise ConfigurationError(f"must be at least 3, got {max_word_length}", key="max_word_length")
        self.encoder, self.max_word_length = encoder, max_word_length
        self.embedding = nn.Embedding(NUM_CHARACTER_IDS, embedding_dim, padding_idx=PADDING)
        if encoder == "cnn":
            if not widths or min(widths) < 1:
                raise ConfigurationError(f"must be positive filter widths, got {list(widths)}", key="widths")
            # Full convolutions: output t covers characters t-w+1..t, so even a word shorter than w gets one.
            self.convolutions = nn.ModuleList(nn.Conv1d(embedding_dim, num_filters, width, padding=width - 1) for width in widths)
            encoded_dim = num_filters * len(widths)
        else:
            self.lstm = nn.LSTM(embedding_dim, hidden_dim, batch_first=True, bidirectional=True)
            encoded_dim = 2 * hidden_dim
        self.projection = nn.Linear(encoded_dim, projection_dim) if projection_dim else None
        self.dropout = Dropout(dropout)
        self.output_dim = projection_dim or encoded_dim

    def example_inputs(self, example: Example) -> dict[str, Any]:
        """``characters``: each word's character ids (:func:`character_ids`)."""
        return {"characters": [character_ids(word, self.max_word_length) for word in example.tokens]}

    def batch_inputs(self, inputs, num_tokens):
        """``characters``: (B, S, C) ids, padded with 0 (padded words have no characters)."""
        words = [item["characters"][:num_tokens] + [[]] * (num_tokens - len(item["characters"])) for item in inputs]
        characters = pad_lists([word for sentence in words for word in sentence])
        return {"characters": characters.view(len(inputs), num_tokens, -1)}

    def forward(self, token_ids: torch.Tensor, mask: torch.Tensor, characters: torch.Tensor) -> torch.Tensor:
        """(B, S, D) word vectors; the words of *mask* are encoded together as one (N, C) batch."""
        words = characters[mask]  # (N, C): real words only
        lengths = (words != PADDING).sum(-1)
        out = torch.zeros(*mask.shape, self.output_dim, device=characters.device, dtype=self.embedding.weight.dtype)
        if words.size(0) == 0:
            return out
        embedded = self.dropout(self.embedding(words))  # (N, C, E); padding embeds to zero
        encoded = self.encode_cnn(embedded, lengths) if self.encoder == "cnn" else self.encode_lstm(embedded, lengths)
        if self.projection is not None:
            encoded = self.projection(encoded)
        out[mask] = self.dropout(encoded).to(out.dtype)
        return out

    def encode_cnn(self, embedded: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """(N, F·len(widths)): each filter's maximum over the positions that overlap the word, through tanh."""
        x = embedded.transpose(1, 2)  # (N, E, C)
        pooled = []
        for convolution in self.convolutions:  # one per width: a handful, each over all words at once
            y = convolution(x)  # (N, F, C + w - 1)
            width = convolution.kernel_size[0]
            overlaps = torch.arange(y.size(-1), device=y.device) <= (lengths + width - 2).unsqueeze(1)  # starts before the word ends
            pooled.append(y.masked_fill(~overlaps.unsqueeze(1), float("-inf")).amax(-1))
        return torch.tanh(torch.cat(pooled, -1))

    def encode_lstm(self, embedded: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """(N, 2H): the forward LSTM's state after the last character and the backward one's after the first."""
        packed = pack_padded_sequence(embedded, lengths.cpu(), batch_first=True, enforce_sorted=False)
        _, (final, _) = self.lstm(packed)  # (2, N, H), in the words' original order
        return torch.cat([final[0], final[1]], -1)

    def get_output_dim(self) -> int:
        return self.output_dim
