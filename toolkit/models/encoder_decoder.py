"""The generic grammar-driven encoder-decoder: one model for every output grammar.

The encoder reads source tokens; the decoder emits the grammar's symbols. Training is teacher
forcing on the oracle's symbols; prediction runs a :class:`~toolkit.decoding.Search` over the
grammar's state machine, so outputs are always well-formed.
"""

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from toolkit.data.example import Example
from toolkit.data.vocabulary import SOURCE, TARGET, Vocabulary
from toolkit.decoding import GreedySearch, Search
from toolkit.device import move_to_device
from toolkit.errors import ConfigurationError
from toolkit.from_params import Probability
from toolkit.grammars.grammar import Allowed, Grammar, State, SymbolTable
from toolkit.models.model import Model
from toolkit.modules.decoders import Decoder, DecoderCache
from toolkit.modules.encoders import Seq2SeqEncoder
from toolkit.modules.token_embedders import TokenEmbedder, WordEmbedders


@dataclass
class EncoderDecoderContext:
    """What a search carries between steps: the encoded source, and the decoder cache if any."""

    memory: torch.Tensor  # (N, S, D)
    memory_mask: torch.Tensor  # (N, S)
    cache: DecoderCache | None

    def reorder(self, index: torch.Tensor, same_sources: bool = False) -> "EncoderDecoderContext":
        cache = None if self.cache is None else self.cache.reorder(index, same_sources)
        if same_sources:
            return EncoderDecoderContext(self.memory, self.memory_mask, cache)
        return EncoderDecoderContext(self.memory.index_select(0, index), self.memory_mask.index_select(0, index), cache)


def pad(sequences: Sequence[Sequence[int]], value: int = 0) -> torch.Tensor:
    """A (B, max length) tensor of right-padded integer sequences."""
    out = torch.full((len(sequences), max(map(len, sequences), default=0)), value, dtype=torch.long)
    for row, sequence in enumerate(sequences):
        out[row, : len(sequence)] = torch.tensor(sequence, dtype=torch.long)
    return out


@Model.register("encoder_decoder")
class EncoderDecoder(Model):
    """Encoder-decoder over an output grammar.

    # Parameters
    encoder, decoder : the source encoder and the symbol decoder; their dimensions must match.
    search : greedy (default) or beam search, used by ``predict`` and validation.
    share_embeddings : one embedding table for source tokens and target symbols; the vocabulary
        must alias the two namespaces (``"namespace_aliases": {"symbols": "tokens"}``).
    tie_output_embeddings : the output projection reuses the target embedding matrix.
    label_smoothing : the epsilon of label-smoothed cross-entropy (Szegedy et al., 2016).
    source_token_dropout : in training, replace each source token by the unknown token with this
        probability, so that the unknown-word embedding is learned for the words unseen in training.
    scale_embeddings : multiply embeddings by sqrt(d), as the Transformer does.
    token_embedders : named :class:`~toolkit.modules.token_embedders.TokenEmbedder` s (a pretrained
        transformer, spaCy vectors, characters, UPOS tags) read beside the word embedding: their
        vectors and the word embedding's are concatenated and projected to the model's width.
    word_embedding : whether the source words have an embedding table of their own; ``false``
        reads the token embedders alone (and needs at least one).
    """

    def __init__(
        self,
        vocab: Vocabulary,
        grammar: Grammar,
        encoder: Seq2SeqEncoder,
        decoder: Decoder,
        search: Search | None = None,
        share_embeddings: bool = False,
        tie_output_embeddings: bool = True,
        label_smoothing: Probability = 0.1,
        source_token_dropout: Probability = 0.0,
        scale_embeddings: bool = True,
        token_embedders: dict[str, TokenEmbedder] | None = None,
        word_embedding: bool = True,
    ):
        super().__init__()
        dim = encoder.get_output_dim()
        if not word_embedding and (share_embeddings or not token_embedders):
            raise ConfigurationError("false needs token_embedders to read the words, and no share_embeddings", key="word_embedding")
        if decoder.input_dim != dim:
            raise ConfigurationError(f"{decoder.input_dim} must equal the encoder's output dimension, {dim}", key="decoder.input_dim")
        if share_embeddings and vocab.canonical(SOURCE) != vocab.canonical(TARGET):
            raise ConfigurationError(
                f'needs one vocabulary for {SOURCE!r} and {TARGET!r}: set "vocabulary": {{"namespace_aliases": {{"{TARGET}": "{SOURCE}"}}}}',
                key="share_embeddings",
            )
        self.vocab, self.grammar = vocab, grammar
        self.encoder, self.decoder = encoder, decoder
        self.search = search or GreedySearch()
        self.label_smoothing, self.source_token_dropout = label_smoothing, source_token_dropout
        self.embedding_scale = math.sqrt(dim) if scale_embeddings else 1.0
        self.pad_index, self.bos_index = Vocabulary.PAD_INDEX, Vocabulary.BOS_INDEX

        self.source_embedding = nn.Embedding(vocab.size(SOURCE), dim, padding_idx=self.pad_index) if word_embedding else None
        self.target_embedding = self.source_embedding if share_embeddings else nn.Embedding(vocab.size(TARGET), dim, padding_idx=self.pad_index)
        self.output_projection = nn.Linear(dim, vocab.size(TARGET), bias=False)
        self.reset_parameters()  # before the token embedders: their weights are pretrained or their own
        self.token_embedders = WordEmbedders(token_embedders, dim if word_embedding else 0, dim) if token_embedders else None
        if tie_output_embeddings:
            self.output_projection.weight = self.target_embedding.weight

        self.target_tokens = vocab.tokens(TARGET)
        self.symbol_table = SymbolTable(self.target_tokens)
        self.target_ids = self.symbol_table.ids
        # Padding, unknown and start are never predicted. The mask is built on the CPU, row by row,
        # and moved to the model's device once per step.
        self.default_allowed = torch.ones(len(self.target_tokens), dtype=torch.bool)
        self.default_allowed[[Vocabulary.PAD_INDEX, Vocabulary.UNK_INDEX, Vocabulary.BOS_INDEX]] = False
        self.final_row = torch.zeros_like(self.default_allowed)
        self.final_row[self.pad_index] = True
        self.row_cache: dict[Any, torch.Tensor] = {}

    def reset_parameters(self) -> None:
        """Xavier-uniform matrices (Glorot & Bengio, 2010); embeddings N(0, 1/d), as in the Transformer."""
        for name, parameter in self.named_parameters():
            if parameter.dim() > 1 and "embedding" not in name:
                nn.init.xavier_uniform_(parameter)
        for embedding in {id(e): e for e in (self.source_embedding, self.target_embedding) if e is not None}.values():
            nn.init.normal_(embedding.weight, std=embedding.embedding_dim**-0.5)
            with torch.no_grad():
                embedding.weight[self.pad_index].zero_()

    # ---------------------------------------------------------------- data

    @property
    def max_input_length(self) -> int | None:
        return self.encoder.max_length

    def index(self, example: Example) -> dict[str, Any]:
        self.check_length(example)
        indexed: dict[str, Any] = {"source": self.vocab.indices(example.tokens, SOURCE)}
        indexed["encoder_inputs"] = self.encoder.example_inputs(example)
        if self.token_embedders is not None:
            indexed["embedder_inputs"] = self.token_embedders.example_inputs(example)
        if example.target is not None:
            derivation = self.grammar.derive(example)
            indexed["target"] = self.vocab.indices(derivation.symbols, TARGET)
            if self.decoder.uses_features:
                indexed["features"] = self.decoder.index_features(derivation.features)
        return indexed

    def collate(self, indexed: Sequence[dict[str, Any]]) -> dict[str, Any]:
        batch: dict[str, Any] = {"source": pad([item["source"] for item in indexed], self.pad_index)}
        batch["encoder_inputs"] = self.encoder.batch_inputs([item.get("encoder_inputs", {}) for item in indexed], batch["source"].size(1))
        if self.token_embedders is not None:
            batch["embedder_inputs"] = self.token_embedders.batch_inputs([item["embedder_inputs"] for item in indexed], batch["source"].size(1))
        if all("target" in item for item in indexed):
            batch["target_in"] = pad([[self.bos_index] + item["target"][:-1] for item in indexed], self.pad_index)
            batch["target_out"] = pad([item["target"] for item in indexed], self.pad_index)
            if self.decoder.uses_features:
                batch["features"] = [item["features"] for item in indexed]
        return batch

    # ---------------------------------------------------------------- training

    def encode(self, source: torch.Tensor, batch: dict[str, Any] | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Encoder states (B, S, D) and the token mask of *source* (the batch's, or a token-dropped copy).

        *batch* supplies what the encoder and the token embedders read besides the word ids.
        """
        batch = batch or {}
        mask = source != self.pad_index  # (B, S)
        words = None if self.source_embedding is None else self.source_embedding(source) * self.embedding_scale
        if self.token_embedders is not None:
            words = self.token_embedders(words, source, mask, batch["embedder_inputs"])
        return self.encoder(words, mask, **batch.get("encoder_inputs", {})), mask

    def forward(self, batch: dict[str, Any]) -> dict[str, torch.Tensor]:
        """Teacher-forced loss; also the counts behind token accuracy."""
        source = batch["source"]
        if self.training and self.source_token_dropout > 0:
            drop = (torch.rand(source.shape, device=source.device) < self.source_token_dropout) & (source != self.pad_index)
            source = source.masked_fill(drop, Vocabulary.UNK_INDEX)
        memory, memory_mask = self.encode(source, batch)
        features = self.decoder.batch_features(batch["features"], memory.device) if self.decoder.uses_features else None
        hidden = self.decoder(self.target_embedding(batch["target_in"]) * self.embedding_scale, memory, memory_mask, features)
        logits = self.output_projection(hidden)  # (B, T, V)
        target = batch["target_out"]
        loss = F.cross_entropy(logits.flatten(0, 1).float(), target.flatten(), ignore_index=self.pad_index, label_smoothing=self.label_smoothing)
        mask = target != self.pad_index
        correct = ((logits.argmax(-1) == target) & mask).sum()
        return {"loss": loss, "correct_tokens": correct, "num_tokens": mask.sum()}

    # ---------------------------------------------------------------- decoding (the IncrementalModel protocol)

    def start_decoding(self, batch: dict[str, Any], use_cache: bool) -> EncoderDecoderContext:
        memory, mask = self.encode(batch["source"], batch)
        return EncoderDecoderContext(memory, mask, self.decoder.start(memory, mask) if use_cache else None)

    def decode_step(self, prefix: torch.Tensor, context: EncoderDecoderContext, states: Sequence[State]) -> tuple[torch.Tensor, EncoderDecoderContext]:
        """Next-symbol log-probabilities (N, V); without a cache the whole prefix is decoded again."""
        features = None
        if self.decoder.uses_features:
            if context.cache is None:
                raise ConfigurationError("decoders that read grammar features need the key/value cache (search.use_cache: true)")
            features = self.decoder.step_features([state.features() for state in states], prefix.device)
        if context.cache is None:
            embedded = self.target_embedding(prefix) * self.embedding_scale
            hidden = self.decoder(embedded, context.memory, context.memory_mask, features)[:, -1]
        else:
            embedded = self.target_embedding(prefix[:, -1:]) * self.embedding_scale
            hidden, cache = self.decoder.step(embedded, context.cache, features)
            hidden, context = hidden[:, -1], EncoderDecoderContext(context.memory, context.memory_mask, cache)
        return F.log_softmax(self.output_projection(hidden).float(), dim=-1), context

    def allowed_mask(self, states: Sequence[State]) -> torch.Tensor:
        """(N, V) bool on the model's device; a final state allows only padding."""
        rows = [self.final_row if state.is_final() else self.allowed_row(state.allowed()) for state in states]
        return torch.stack(rows).to(self.device, non_blocking=True)

    def allowed_row(self, allowed: Allowed) -> torch.Tensor:
        """The vocabulary mask of one ``State.allowed()`` answer, memoised when the answer is hashable.

        A collection is looked up symbol by symbol, an answer with ``symbol_ids`` gives its ids
        (see :class:`~toolkit.grammars.grammar.SymbolTable`); anything else (``AllExcept``, a tree
        codec's arity bound, ...) is asked ``symbol in allowed`` once per vocabulary symbol. Grammars
        repeat a few answers over and over, so the memo makes most steps a dictionary lookup.
        """
        if allowed is None:
            return self.default_allowed
        try:
            return self.row_cache[allowed]
        except KeyError:
            pass
        except TypeError:  # unhashable (a set): no memo
            return self.collection_row(allowed)
        if isinstance(allowed, Collection):
            row = self.collection_row(allowed)
        elif hasattr(allowed, "symbol_ids"):
            row = torch.zeros_like(self.default_allowed)
            row[list(allowed.symbol_ids(self.symbol_table))] = True
            row &= self.default_allowed
        else:
            row = self.default_allowed & torch.tensor([symbol in allowed for symbol in self.target_tokens])
        if len(self.row_cache) >= 4096:
            self.row_cache.clear()
        self.row_cache[allowed] = row
        return row

    def collection_row(self, allowed: Collection[str]) -> torch.Tensor:
        row = torch.zeros_like(self.default_allowed)
        row[[self.target_ids[symbol] for symbol in allowed if symbol in self.target_ids]] = True
        return row

    def symbols(self, indices: Sequence[int]) -> list[str]:
        return [self.target_tokens[i] for i in indices]

    @torch.no_grad()
    def predict(self, examples: Sequence[Example], search: Search | None = None) -> list[Any]:
        """Decode *examples* (one batch) and return each final state's result."""
        unlabelled = [Example(e.tokens, meta=e.meta, token_paths=e.token_paths) for e in examples]
        batch = move_to_device(self.collate([self.index(e) for e in unlabelled]), self.device)
        states = [self.grammar.initial_state(example) for example in examples]
        return [state.result() for state in (search or self.search).search(self, batch, states)]
