"""The generic grammar-driven encoder-decoder: one model for every output grammar.

The encoder reads source tokens; the decoder emits the grammar's symbols. Training is teacher
forcing on the oracle's symbols; prediction runs a :class:`~toolkit.decoding.Search` over the
grammar's state machine, so outputs are always well-formed.
"""

import logging
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from toolkit.data.example import Example
from toolkit.data.vocabulary import SOURCE, TARGET, Vocabulary
from toolkit.decoding import GreedySearch, Search
from toolkit.decoding.exploration import Exploration, ExploredTensors, explore
from toolkit.device import move_to_device
from toolkit.errors import ConfigurationError
from toolkit.from_params import NonNegativeFloat, Probability
from toolkit.grammars.grammar import Allowed, Grammar, State, SymbolTable
from toolkit.models.model import Model
from toolkit.models.word_model import WordModel, pad, token_loss
from toolkit.modules.decoders import Decoder, DecoderCache
from toolkit.modules.encoders import Seq2SeqEncoder
from toolkit.modules.tag_heads import IGNORED, TagHeads

logger = logging.getLogger(__name__)


@dataclass
class EncoderDecoderContext:
    """What a search carries between steps: the decoder cache, or without one the encoded source."""

    memory: torch.Tensor | None  # (N, S, D); None with a cache, which holds what the decoder reads of it
    memory_mask: torch.Tensor | None  # (N, S); None with a cache
    cache: DecoderCache | None

    def reorder(self, index: torch.Tensor, same_sources: bool = False) -> "EncoderDecoderContext":
        if self.cache is not None:
            return EncoderDecoderContext(None, None, self.cache.reorder(index, same_sources))
        if same_sources:
            return EncoderDecoderContext(self.memory[: len(index)], self.memory_mask[: len(index)], None)
        return EncoderDecoderContext(self.memory.index_select(0, index), self.memory_mask.index_select(0, index), None)


@Model.register("encoder_decoder")
class EncoderDecoder(WordModel):
    """Encoder-decoder over an output grammar.

    # Parameters
    encoder, decoder : the source encoder and the symbol decoder; their dimensions must match.
    search : greedy (default) or beam search, used by ``predict`` and validation.
    share_embeddings : one embedding table for source tokens and target symbols; the vocabulary
        must alias the two namespaces (``"namespace_aliases": {"symbols": "tokens"}``).
    tie_output_embeddings : the output projection reuses the target embedding matrix.
    label_smoothing : the epsilon of label-smoothed cross-entropy (Szegedy et al., 2016).
    exploration : train on the model's own paths, taught by the grammar's dynamic oracle
        (:mod:`toolkit.decoding.exploration`; Goldberg & Nivre, 2012); a grammar without one trains
        on its static oracle, with a warning.
    tag_weight, tag_dropout : where the grammar's results carry word tags (a parser's
        ``grammar.tags``), the weight of their classifiers' loss beside the symbols' and the dropout
        before them (:mod:`toolkit.modules.tag_heads`); the tags come from the encoding the search
        starts from, so predicting them costs one small matrix product per word.
    alias_inputs : read each symbol the grammar gives an alias (:meth:`~toolkit.grammars.grammar.Grammar.input_aliases`)
        as its own embedding plus its alias's, on the decoder's input only: a rare symbol shares what the
        decoder learned after a common one that makes the same node (AMR's ``DATE`` and ``PRED:date-entity``).
    source_token_dropout, scale_embeddings, token_embedders, word_embedding : how the source words
        are read, as for every :class:`~toolkit.models.word_model.WordModel`.
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
        tag_weight: NonNegativeFloat = 1.0,
        tag_dropout: Probability = 0.2,
        exploration: Exploration | None = None,
        alias_inputs: bool = False,
        **words: Any,
    ):
        super().__init__(vocab, encoder, **words)
        dim = self.dim
        if share_embeddings and not self.has_word_embedding:
            raise ConfigurationError("false leaves no source embedding for share_embeddings to share", key="word_embedding")
        if decoder.input_dim != dim:
            raise ConfigurationError(f"{decoder.input_dim} must equal the encoder's output dimension, {dim}", key="decoder.input_dim")
        if share_embeddings and vocab.canonical(SOURCE) != vocab.canonical(TARGET):
            raise ConfigurationError(
                f'needs one vocabulary for {SOURCE!r} and {TARGET!r}: set "vocabulary": {{"namespace_aliases": {{"{TARGET}": "{SOURCE}"}}}}',
                key="share_embeddings",
            )
        check_features(grammar, decoder)
        self.grammar, self.decoder = grammar, decoder
        self.search = search or GreedySearch()
        self.label_smoothing, self.bos_index = label_smoothing, Vocabulary.BOS_INDEX

        self.source_embedding = self.word_table()
        self.target_embedding = self.source_embedding if share_embeddings else nn.Embedding(vocab.size(TARGET), dim, padding_idx=self.pad_index)
        self.output_projection = nn.Linear(dim, vocab.size(TARGET), bias=False)
        self.reset_parameters()
        self.token_embedders = self.word_embedders()
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
        self.register_buffer("input_alias", self.alias_table(grammar) if alias_inputs else None, persistent=False)
        tag_sets = getattr(grammar, "tag_sets", None)
        self.tag_heads = TagHeads(tag_sets, dim, tag_dropout) if tag_sets else None
        self.tag_weight = tag_weight
        self.encoded_tags: tuple[dict[str, torch.Tensor], torch.Tensor] | None = None  # see take_tag_distributions
        if exploration is not None and not grammar.has_dynamic_oracle:
            logger.warning(
                "grammar %r has no dynamic oracle: model.exploration is off, and training follows its static oracle", type(grammar).registered_name()
            )
            exploration = None
        self.exploration, self.exploring = exploration, False
        self.explored_steps = self.steps_off_gold = 0  # this epoch's, for the log

    def alias_table(self, grammar: Grammar) -> torch.Tensor | None:
        """(V,) each symbol's alias id, -1 for none; ``None`` where the grammar names no alias the vocabulary holds."""
        table = torch.full((len(self.target_tokens),), -1)
        for symbol, alias in grammar.input_aliases(self.target_tokens).items():
            if symbol in self.target_ids and alias in self.target_ids:
                table[self.target_ids[symbol]] = self.target_ids[alias]
        return table if (table >= 0).any() else None

    def embed_symbols(self, symbols: torch.Tensor) -> torch.Tensor:
        """The decoder's input for *symbols* (any shape of ids): their embeddings, plus their aliases' where they have one."""
        embedded = self.target_embedding(symbols)
        if self.input_alias is not None:
            alias = self.input_alias[symbols]
            embedded = embedded + self.target_embedding(alias.clamp(min=0)) * (alias >= 0).unsqueeze(-1)
        return embedded * self.embedding_scale

    def embedding_tables(self) -> list[nn.Embedding]:
        return list({id(e): e for e in (self.source_embedding, self.target_embedding) if e is not None}.values())

    # ---------------------------------------------------------------- data

    def index(self, example: Example) -> dict[str, Any]:
        indexed = self.index_words(example)
        if example.target is not None:
            derivation = self.grammar.derive(example)
            indexed["target"] = self.vocab.indices(derivation.symbols, TARGET)
            if self.decoder.uses_features:
                indexed["features"] = self.decoder.index_features(derivation.features)
            if self.exploration is not None:
                indexed["oracle"] = self.grammar.dynamic_oracle(example)
            if self.tag_heads is not None:
                indexed["tags"] = self.tag_heads.index({field: self.grammar.word_tags(example, field) for field in self.tag_heads.tag_sets})
        return indexed

    def collate(self, indexed: Sequence[dict[str, Any]]) -> dict[str, Any]:
        batch = self.collate_words(indexed)
        if all("target" in item for item in indexed):
            batch["target_in"] = pad([[self.bos_index] + item["target"][:-1] for item in indexed], self.pad_index)
            batch["target_out"] = pad([item["target"] for item in indexed], self.pad_index)
            if self.decoder.uses_features:
                batch["features"] = [item["features"] for item in indexed]
            if all("oracle" in item for item in indexed):
                batch["oracles"] = [item["oracle"] for item in indexed]
            if self.tag_heads is not None:
                batch["tags"] = {field: pad([item["tags"][field] for item in indexed], IGNORED) for field in self.tag_heads.tag_sets}
        return batch

    # ---------------------------------------------------------------- training

    def start_epoch(self, epoch: int) -> None:
        if self.explored_steps:
            share = self.steps_off_gold / self.explored_steps
            logger.info("exploration: %d steps on the model's own paths, %.1f%% of them off the optimal ones", self.explored_steps, 100 * share)
        self.explored_steps = self.steps_off_gold = 0
        self.exploring = self.exploration is not None and self.exploration.active(epoch)

    def forward(self, batch: dict[str, Any]) -> dict[str, torch.Tensor]:
        """Teacher-forced loss (on the model's own path when exploring); also the counts behind token accuracy."""
        memory, memory_mask = self.encode(self.drop_words(batch["source"]), batch)
        if self.training and self.exploring and "oracles" in batch:
            batch = self.explored(batch, (memory.detach(), memory_mask))
        features = self.decoder.batch_features(batch["features"], memory.device) if self.decoder.uses_features else None
        hidden = self.decoder(self.embed_symbols(batch["target_in"]), memory, memory_mask, features)
        output = token_loss(self.output_projection(hidden), batch["target_out"], self.label_smoothing)
        if self.tag_heads is not None:
            output["loss"] = output["loss"] + self.tag_weight * self.tag_heads.loss(memory, batch["tags"])
        return output

    def explored(self, batch: dict[str, Any], encoded: tuple[torch.Tensor, torch.Tensor]) -> dict[str, Any]:
        """*batch* with the path the model itself takes from its *encoded* source and the dynamic oracle's
        targets along it, in place of the static oracle's.
        """
        paths = explore(self, batch, batch["oracles"], self.exploration.probability, encoded)
        device = batch["target_out"].device
        explored = dict(batch)
        if isinstance(paths, ExploredTensors):  # explored on tensor states: already padded, on the device
            explored.update(target_in=paths.target_in, target_out=paths.target_out)
            if self.decoder.uses_features:
                explored["features"] = paths.features
            self.explored_steps += paths.steps
            self.steps_off_gold += paths.left_gold
            return explored
        explored["target_in"] = pad([[self.bos_index] + taken[:-1] for taken in paths.taken], self.pad_index).to(device)
        explored["target_out"] = pad(paths.targets, self.pad_index).to(device)
        if self.decoder.uses_features:
            explored["features"] = [self.decoder.index_features(steps) for steps in paths.features]
        self.explored_steps += sum(map(len, paths.taken))
        self.steps_off_gold += paths.left_gold
        return explored

    # ---------------------------------------------------------------- decoding (the IncrementalModel protocol)

    def start_decoding(self, batch: dict[str, Any], use_cache: bool, encoded: tuple[torch.Tensor, torch.Tensor] | None = None) -> EncoderDecoderContext:
        """The search's context for *batch*: its source encoded here, or *encoded* already (exploration's, during training)."""
        memory, mask = encoded or self.encode(batch["source"], batch)
        if self.tag_heads is not None and encoded is None:
            self.encoded_tags = self.tag_heads.distributions(memory), mask
        if use_cache:  # the cache holds what the decoder reads of the source: reorders need not copy the memory too
            return EncoderDecoderContext(None, None, self.decoder.start(memory, mask))
        return EncoderDecoderContext(memory, mask, None)

    def decode_step(self, prefix: torch.Tensor, context: EncoderDecoderContext, states: Sequence[State]) -> tuple[torch.Tensor, EncoderDecoderContext]:
        """Next-symbol log-probabilities (N, V); without a cache the whole prefix is decoded again."""
        features = None
        if self.decoder.uses_features:
            if context.cache is None:
                raise ConfigurationError("decoders that read grammar features need the key/value cache (search.use_cache: true)")
            if isinstance(states, Sequence):
                features = self.decoder.step_features([state.features() for state in states], prefix.device)
            else:  # a grammar's tensor states (Grammar.tensor_states)
                features = self.decoder.tensor_step_features(states)
        if context.cache is None:
            embedded = self.embed_symbols(prefix)
            hidden = self.decoder(embedded, context.memory, context.memory_mask, features)[:, -1]
        else:
            embedded = self.embed_symbols(prefix[:, -1:])
            hidden, cache = self.decoder.step(embedded, context.cache, features)
            hidden, context = hidden[:, -1], EncoderDecoderContext(None, None, cache)
        return F.log_softmax(self.output_projection(hidden).float(), dim=-1), context

    def tensor_states(self, examples: Sequence[Example]) -> Any | None:
        """*examples*' initial states as one batch of tensors on this model's device, where the grammar has a tensor
        form and the decoder reads it (:func:`toolkit.decoding.tensor_configurations.tensor_states`); else ``None``.
        """
        if not self.decoder.reads_stack_buffer_tensors():
            return None
        from toolkit.decoding.tensor_configurations import tensor_states  # torch-side forms of the grammars' rules

        return tensor_states(self.grammar, examples, self.target_tokens, self.device)

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

    @property
    def max_output_length(self) -> int | None:
        """The most symbols the decoder can emit (``None``: any); a decoder with a position table says its size."""
        return self.decoder.max_length

    def decoding_batch(self, examples: Sequence[Example]) -> dict[str, Any]:
        """The batch ``start_decoding`` reads for *examples*, on the model's device (their targets left out)."""
        unlabelled = [Example(e.tokens, meta=e.meta, token_paths=e.token_paths) for e in examples]
        return move_to_device(self.collate([self.index(e) for e in unlabelled]), self.device)

    def predict(self, examples: Sequence[Example], search: Search | None = None) -> list[Any]:
        """Decode *examples* (one batch) and return each final state's result, with its words' tags
        where the grammar's results carry them (read off the encoding the search started from).
        """
        results = (search or self.search).results(self, examples)
        if self.tag_heads is None:
            return results
        tags = self.tag_heads.best(*self.take_tag_distributions())
        return [self.grammar.with_tags(result, tagged) for result, tagged in zip(results, tags)]

    def take_tag_distributions(self) -> tuple[dict[str, torch.Tensor], torch.Tensor]:
        """The word tags' distributions (and the word mask) of the batch ``start_decoding`` encoded last:
        the search encodes once, and the tags are read off that encoding rather than a second one.
        """
        taken, self.encoded_tags = self.encoded_tags, None
        if taken is None:
            raise RuntimeError("no batch was encoded for its tags: start_decoding comes first")
        return taken


def check_features(grammar: Grammar, decoder: Decoder) -> None:
    """Refuse a decoder that reads state features the grammar's states do not give (a Stack-Transformer over
    logical forms), in one line naming the grammars that give them, before anything trains.
    """
    given = type(grammar).declared_state_features()
    if given is None or not (missing := decoder.features_read - given):
        return
    givers = [name for name in Grammar.list_available() if (features := Grammar.resolve_class_name(name)[0].declared_state_features()) and missing <= features]
    raise ConfigurationError(
        f"the {type(decoder).registered_name()!r} decoder reads the grammar state's {' and '.join(sorted(missing))}, which grammar "
        f"{type(grammar).registered_name()!r} does not give; grammars that do: {', '.join(givers)}",
        key="decoder.type",
    )
