"""Sequence tagging: one label per token, read off the encoder's states (UPOS tagging on UD, say).

The tag set comes from the output grammar ``"tags"``, whose oracle is the sentence's tags: the
trainer builds the ``symbols`` vocabulary from grammar oracles, so the tags land there without
a tagging-specific path through training, archives or ``toolkit oracle``.
"""

from collections.abc import Sequence
from typing import Any

import torch
from torch import nn

from toolkit.data.example import Example
from toolkit.data.vocabulary import TARGET, Vocabulary
from toolkit.device import move_to_device
from toolkit.errors import ConfigurationError
from toolkit.from_params import Probability
from toolkit.grammars.grammar import Grammar
from toolkit.grammars.tags import TagGrammar
from toolkit.models.model import Model
from toolkit.models.word_model import WordModel, pad, token_loss
from toolkit.modules.dropout import Dropout
from toolkit.modules.encoders import Seq2SeqEncoder


@Model.register("tagger")
class Tagger(WordModel):
    """An encoder and a linear layer over the tags, trained with cross-entropy per token.

    Needs the ``"tags"`` grammar. Whatever else the encoder reads of an example (the phrases of a
    ``hypernode_transformer``) is made once, when the example is indexed, and batched in ``collate``.

    # Parameters
    encoder : any ``Seq2SeqEncoder``.
    dropout : dropout on the encoder's states before the output layer.
    label_smoothing : the epsilon of label-smoothed cross-entropy.
    source_token_dropout, scale_embeddings, token_embedders, word_embedding : how the words are
        read, as for every :class:`~toolkit.models.word_model.WordModel` (token dropout matters
        here: tagging meets many unseen words).
    """

    def __init__(
        self,
        vocab: Vocabulary,
        grammar: Grammar,
        encoder: Seq2SeqEncoder,
        dropout: Probability = 0.0,
        label_smoothing: Probability = 0.0,
        **words: Any,
    ):
        super().__init__(vocab, encoder, **words)
        if not isinstance(grammar, TagGrammar):
            raise ConfigurationError(f'model type \'tagger\' needs "grammar": {{"type": "tags"}}, got {type(grammar).__name__}')
        self.grammar, self.label_smoothing = grammar, label_smoothing
        self.source_embedding = self.word_table()
        self.dropout = Dropout(dropout)
        self.output_projection = nn.Linear(self.dim, vocab.size(TARGET))
        self.tags = vocab.tokens(TARGET)
        # Padding, unknown, start and end are never predicted (a padded namespace starts with them).
        specials = torch.zeros(len(self.tags), dtype=torch.bool)
        specials[: len(Vocabulary.SPECIALS) if vocab.is_padded(TARGET) else 0] = True
        self.register_buffer("specials", specials, persistent=False)
        self.reset_parameters()
        self.token_embedders = self.word_embedders()

    # ---------------------------------------------------------------- data

    def index(self, example: Example) -> dict[str, Any]:
        indexed = self.index_words(example)
        if example.target is not None:
            indexed["target"] = self.vocab.indices(self.grammar.oracle(example), TARGET)
        return indexed

    def length(self, indexed: dict[str, Any]) -> int:
        """Batches are budgeted in words, so every encoder sees the same batches."""
        return len(indexed["source"])

    def collate(self, indexed: Sequence[dict[str, Any]]) -> dict[str, Any]:
        batch = self.collate_words(indexed)
        if all("target" in item for item in indexed):
            batch["target"] = pad([item["target"] for item in indexed], self.pad_index)
        return batch

    # ---------------------------------------------------------------- training and prediction

    def logits(self, batch: dict[str, Any]) -> torch.Tensor:
        """(B, N, tags) scores of every tag at every token."""
        states, _ = self.encode(self.drop_words(batch["source"]), batch)
        return self.output_projection(self.dropout(states))

    def forward(self, batch: dict[str, Any]) -> dict[str, torch.Tensor]:
        return token_loss(self.logits(batch), batch["target"], self.label_smoothing)

    @torch.no_grad()
    def predict(self, examples: Sequence[Example], search: Any = None) -> list[tuple[str, ...]]:
        """The best tag of every token (never a special symbol), per example; *search* is not used."""
        batch = self.collate([self.index(Example(example.tokens, meta=example.meta)) for example in examples])
        batch = move_to_device(batch, self.device)
        best = self.logits(batch).masked_fill(self.specials, float("-inf")).argmax(-1).tolist()
        return [tuple(self.tags[i] for i in row[: len(example.tokens)]) for row, example in zip(best, examples)]
