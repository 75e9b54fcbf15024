"""Sequence tagging: one label per token, read off the encoder's states (UPOS tagging on UD, say).

The tag set comes from the output grammar ``"tags"``, whose oracle is the sentence's tags: the
trainer builds the ``symbols`` vocabulary from grammar oracles, so the tags land there without
a tagging-specific path through training, archives or ``toolkit oracle``.
"""

from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from toolkit.data.example import Example
from toolkit.data.vocabulary import SOURCE, TARGET, Vocabulary
from toolkit.device import move_to_device
from toolkit.errors import ConfigurationError
from toolkit.from_params import Probability
from toolkit.grammars.grammar import Grammar
from toolkit.grammars.tags import TagGrammar
from toolkit.models.encoder_decoder import pad
from toolkit.models.model import Model
from toolkit.modules.encoders import Seq2SeqEncoder
from toolkit.modules.token_embedders import TokenEmbedder, WordEmbedders


@Model.register("tagger")
class Tagger(Model):
    """An encoder and a linear layer over the tags, trained with cross-entropy per token.

    Needs the ``"tags"`` grammar. Whatever else the encoder reads of an example (the phrases of a
    ``hypernode_transformer``) is made once, when the example is indexed, and batched in ``collate``.

    # Parameters
    encoder : any ``Seq2SeqEncoder``.
    dropout : dropout on the encoder's states before the output layer.
    label_smoothing : the epsilon of label-smoothed cross-entropy.
    source_token_dropout : in training, replace each token by the unknown token with this
        probability, so that the unknown-word embedding is learned (tagging meets many unseen words).
    scale_embeddings : multiply embeddings by sqrt(d), as the Transformer does.
    token_embedders, word_embedding : as for the ``encoder_decoder`` model: named token embedders
        read beside (or, with ``word_embedding: false``, instead of) the word embedding.
    """

    def __init__(
        self,
        vocab: Vocabulary,
        grammar: Grammar,
        encoder: Seq2SeqEncoder,
        dropout: Probability = 0.0,
        label_smoothing: Probability = 0.0,
        source_token_dropout: Probability = 0.0,
        scale_embeddings: bool = True,
        token_embedders: dict[str, TokenEmbedder] | None = None,
        word_embedding: bool = True,
    ):
        super().__init__()
        if not word_embedding and not token_embedders:
            raise ConfigurationError("false needs token_embedders to read the words", key="word_embedding")
        if not isinstance(grammar, TagGrammar):
            raise ConfigurationError(f'model type \'tagger\' needs "grammar": {{"type": "tags"}}, got {type(grammar).__name__}')
        self.vocab, self.grammar, self.encoder = vocab, grammar, encoder
        dim = encoder.get_output_dim()
        self.label_smoothing, self.source_token_dropout = label_smoothing, source_token_dropout
        self.embedding_scale = dim**0.5 if scale_embeddings else 1.0
        self.pad_index = Vocabulary.PAD_INDEX
        self.embedding = nn.Embedding(vocab.size(SOURCE), dim, padding_idx=self.pad_index) if word_embedding else None
        self.dropout = nn.Dropout(dropout)
        self.output_projection = nn.Linear(dim, vocab.size(TARGET))
        self.tags = vocab.tokens(TARGET)
        # Padding, unknown, start and end are never predicted (a padded namespace starts with them).
        specials = torch.zeros(len(self.tags), dtype=torch.bool)
        specials[: len(Vocabulary.SPECIALS) if vocab.is_padded(TARGET) else 0] = True
        self.register_buffer("specials", specials, persistent=False)
        self.reset_parameters()  # before the token embedders: their weights are pretrained or their own
        self.token_embedders = WordEmbedders(token_embedders, dim if word_embedding else 0, dim) if token_embedders else None

    def reset_parameters(self) -> None:
        """Xavier-uniform matrices, embeddings N(0, 1/d), as in the encoder-decoder."""
        for name, parameter in self.named_parameters():
            if parameter.dim() > 1 and "embedding" not in name:
                nn.init.xavier_uniform_(parameter)
        if self.embedding is not None:
            nn.init.normal_(self.embedding.weight, std=self.embedding.embedding_dim**-0.5)
            with torch.no_grad():
                self.embedding.weight[self.pad_index].zero_()

    # ---------------------------------------------------------------- data

    @property
    def max_input_length(self) -> int | None:
        return self.encoder.max_length

    def index(self, example: Example) -> dict[str, Any]:
        self.check_length(example)
        indexed: dict[str, Any] = {"source": self.vocab.indices(example.tokens, SOURCE)}
        indexed["encoder_inputs"] = self.encoder.example_inputs(example)  # e.g. the phrases' (m, n) membership
        if self.token_embedders is not None:
            indexed["embedder_inputs"] = self.token_embedders.example_inputs(example)
        if example.target is not None:
            indexed["target"] = self.vocab.indices(self.grammar.oracle(example), TARGET)
        return indexed

    def length(self, indexed: dict[str, Any]) -> int:
        """Batches are budgeted in words, so every encoder sees the same batches."""
        return len(indexed["source"])

    def collate(self, indexed: Sequence[dict[str, Any]]) -> dict[str, Any]:
        source = pad([item["source"] for item in indexed], self.pad_index)
        batch: dict[str, Any] = {"source": source}
        batch["encoder_inputs"] = self.encoder.batch_inputs([item.get("encoder_inputs", {}) for item in indexed], source.size(1))
        if self.token_embedders is not None:
            batch["embedder_inputs"] = self.token_embedders.batch_inputs([item["embedder_inputs"] for item in indexed], source.size(1))
        if all("target" in item for item in indexed):
            batch["target"] = pad([item["target"] for item in indexed], self.pad_index)
        return batch

    # ---------------------------------------------------------------- training and prediction

    def logits(self, batch: dict[str, Any]) -> torch.Tensor:
        """(B, N, tags) scores of every tag at every token."""
        source = batch["source"]
        mask = source != self.pad_index
        if self.training and self.source_token_dropout > 0:
            drop = (torch.rand(source.shape, device=source.device) < self.source_token_dropout) & mask
            source = source.masked_fill(drop, Vocabulary.UNK_INDEX)
        embedded = None if self.embedding is None else self.embedding(source) * self.embedding_scale
        if self.token_embedders is not None:
            embedded = self.token_embedders(embedded, source, mask, batch["embedder_inputs"])
        return self.output_projection(self.dropout(self.encoder(embedded, mask, **batch.get("encoder_inputs", {}))))

    def forward(self, batch: dict[str, Any]) -> dict[str, torch.Tensor]:
        logits = self.logits(batch)
        target = batch["target"]
        loss = F.cross_entropy(logits.flatten(0, 1).float(), target.flatten(), ignore_index=self.pad_index, label_smoothing=self.label_smoothing)
        mask = target != self.pad_index
        correct = ((logits.argmax(-1) == target) & mask).sum()
        return {"loss": loss, "correct_tokens": correct, "num_tokens": mask.sum()}

    @torch.no_grad()
    def predict(self, examples: Sequence[Example], search: Any = None) -> list[tuple[str, ...]]:
        """The best tag of every token (never a special symbol), per example; *search* is not used."""
        batch = self.collate([self.index(Example(example.tokens, meta=example.meta)) for example in examples])
        batch = move_to_device(batch, self.device)
        best = self.logits(batch).masked_fill(self.specials, float("-inf")).argmax(-1).tolist()
        return [tuple(self.tags[i] for i in row[: len(example.tokens)]) for row, example in zip(best, examples)]
