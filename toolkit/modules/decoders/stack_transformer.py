"""The Stack-Transformer decoder (Astudillo et al., 2020): parser actions decoded by a Transformer
whose cross-attention heads can be tied to the parser state.

In the layers that use the masks, *stack heads* attend only to the source tokens on the parser's
stack and *buffer heads* only to those in its buffer; the other heads attend freely. The masks come
from the grammar state's ``features()`` (``{"stack": (s0, s1, ...), "buffer": (b0, b1, ...)}``,
0-based source positions nearest first, as the transition systems give them).

**Alignment.** Output position *t* predicts action *t*, so it must see the parser state *before*
action *t*: the features the oracle's derivation stores for step *t* (``Derivation.features[t]``)
and, in search, ``state.features()`` of each hypothesis as it is now. Unlike tree positions (which
describe the *input* symbol and so lag one step), the masks describe what the *query* may look at:
no shift, no state carried between steps, and nothing in ``DecoderCache.extra`` to reorder.

**Empty stack or buffer.** Each specialised head also attends to one learned *null* slot (a key
and a value per head and layer, appended to the source). It is always visible to stack and buffer
heads, never to free heads, so a head whose stack or buffer is empty (the first and the last
steps, padding) attends to the null slot alone instead of producing NaN; on the stack it also
plays the artificial root, which is never a source token.

**Position embeddings** (``position_embeddings: true``): a learned vector per head and layer for
each depth in the stack (0 = top) or position in the buffer (0 = front), the last one shared by
``max_position - 1`` and beyond, *added to the keys* of that head. Computed as
``q·(k + e) = q·k + q·e``, the second term gathered from ``q @ E^T`` (B, H, T, P), so the cached
source keys never change per step. Zero at initialisation: the heads start from the masks alone.

Training masks are built without Python loops over steps or tokens: each example's per-step
stack/buffer lists are flattened once when it is indexed (:meth:`StackTransformerDecoder.index_features`),
a batch concatenates them into coordinate lists (``batch_features``), and the forward pass scatters
those into dense (B, T, S) rank tensors.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any

import torch
from torch import nn

from toolkit.errors import ConfigurationError
from toolkit.from_params import Lazy, PositiveInt
from toolkit.modules.attention import padding_mask
from toolkit.modules.decoders.decoder import Decoder, DecoderCache, SelfAttentionCache
from toolkit.modules.decoders.transformer import TransformerDecoderLayer
from toolkit.modules.dropout import Dropout
from toolkit.modules.positional_encoding import PositionalEncoding
from toolkit.modules.transformer_settings import DEFAULT_SETTINGS, TransformerSettings

FREE, STACK, BUFFER = 0, 1, 2
KINDS = ("stack", "buffer")


@dataclass(frozen=True)
class StackBufferSteps:
    """One example's per-step stack and buffer contents, flattened once when the example is indexed.

    ``counts[k][t]`` is how many source tokens list *k* (0 stack, 1 buffer) holds before step *t*;
    ``nodes[k]`` concatenates their positions over the steps, nearest first. Not a list, so the
    token budget of a batch counts source and target only, as for a plain Transformer decoder.
    """

    counts: tuple[torch.Tensor, torch.Tensor]  # each (T,) int64
    nodes: tuple[torch.Tensor, torch.Tensor]  # each (n_k,) int16

    @classmethod
    def of(cls, steps: Sequence[Mapping[str, Any]]) -> "StackBufferSteps":
        counts = tuple(torch.tensor([len(step[kind]) for step in steps], dtype=torch.long) for kind in KINDS)
        nodes = tuple(torch.tensor(list(chain.from_iterable(step[kind] for step in steps)), dtype=torch.int16) for kind in KINDS)
        return cls(counts, nodes)  # type: ignore[arg-type]

    def __len__(self) -> int:
        return len(self.counts[0])


@dataclass(frozen=True)
class StackBufferIndex:
    """A batch's stack and buffer as coordinate lists: per kind a (4, n) tensor of (batch, step, token, rank)."""

    coordinates: tuple[torch.Tensor, torch.Tensor]

    @classmethod
    def of(cls, examples: Sequence[StackBufferSteps], device: torch.device) -> "StackBufferIndex":
        """Teacher forcing: every step of every example (step *t* of example *b* is row *b*, column *t*)."""
        lengths = torch.tensor([len(example) for example in examples], dtype=torch.long)
        step_batch = torch.repeat_interleave(torch.arange(len(examples)), lengths)
        step_time = torch.arange(int(lengths.sum())) - torch.repeat_interleave(torch.cumsum(lengths, 0) - lengths, lengths)
        counts = [torch.cat([example.counts[k] for example in examples]) for k in range(2)]
        nodes = [torch.cat([example.nodes[k] for example in examples]) for k in range(2)]
        return cls.from_steps(counts, nodes, step_batch, step_time, device)

    @classmethod
    def from_steps(cls, counts, nodes, step_batch: torch.Tensor, step_time: torch.Tensor, device: torch.device) -> "StackBufferIndex":
        """From per-step counts and concatenated positions (per kind), and each step's (batch, time) place."""
        coordinates = []
        for k in range(2):
            entry_step = torch.repeat_interleave(torch.arange(len(counts[k])), counts[k])  # the step each listed token belongs to
            rank = torch.arange(len(nodes[k])) - (torch.cumsum(counts[k], 0) - counts[k])[entry_step]  # depth / buffer position
            coordinates.append(torch.stack([step_batch[entry_step], step_time[entry_step], nodes[k].long(), rank]).to(device))
        return cls(tuple(coordinates))  # type: ignore[arg-type]

    def dense(self, batch: int, steps: int, length: int, device: torch.device) -> torch.Tensor:
        """(2, B, T, S) long: each token's stack depth (``[0]``) and buffer position (``[1]``), ``-1`` if absent."""
        ranks = torch.full((2, batch, steps, length), -1, dtype=torch.long, device=device)
        for k, (b, t, s, rank) in enumerate(self.coordinates):
            ranks[k].index_put_((b, t, s), rank)
        return ranks


@dataclass(frozen=True)
class StackBufferRanks:
    """One search step's stacks and buffers from tensor states: (N, width) source positions each, nearest first, ``-1`` padded."""

    positions: tuple[torch.Tensor, torch.Tensor]

    def dense(self, batch: int, steps: int, length: int, device: torch.device) -> torch.Tensor:
        """(2, N, 1, S) long, as :meth:`StackBufferIndex.dense` gives for one step: each token's rank, ``-1`` if absent."""
        ranks = torch.full((2, batch, length + 1), -1, dtype=torch.long, device=device)
        for k, positions in enumerate(self.positions):
            column = torch.where(positions >= 0, positions, length)  # the absent go to a spare column, cut below
            ranks[k].scatter_(1, column, torch.arange(positions.size(1), device=device).expand_as(positions).contiguous())
        return ranks[..., :length].unsqueeze(2)


@dataclass
class AttentionGuide:
    """What a masked layer's cross-attention needs: per-head visibility and the tokens' ranks."""

    mask: torch.Tensor  # (B, H, T, S + 1) bool; the last slot is the null slot
    ranks: torch.Tensor  # (2, B, T, S) long, clamped to the position embeddings' range


class StackTransformerDecoderLayer(TransformerDecoderLayer):
    """A Transformer decoder layer whose cross-attention follows an :class:`AttentionGuide`.

    *head_kinds* gives each head's kind (free, stack or buffer); the layer owns the null slot's
    keys/values and, with *num_positions*, the position embeddings of its specialised heads.
    """

    def __init__(self, dim: int, settings: TransformerSettings, head_kinds: list[int], num_positions: int):
        super().__init__(dim, settings)
        num_heads = settings.num_heads
        head_dim = dim // num_heads
        self.scale = head_dim**-0.5
        self.null_key_value = nn.Parameter(torch.randn(2, num_heads, head_dim) * head_dim**-0.5)
        special = [head for head, kind in enumerate(head_kinds) if kind != FREE]
        self.register_buffer("special_heads", torch.tensor(special, dtype=torch.long), persistent=False)
        self.register_buffer("special_kinds", torch.tensor([head_kinds[h] - 1 for h in special], dtype=torch.long), persistent=False)
        self.position_embedding = nn.Parameter(torch.zeros(len(special), num_positions, head_dim)) if num_positions else None

    def extend(self, memory_kv: tuple[torch.Tensor, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        """The source keys/values (B, H, S, d) with the null slot appended: (B, H, S + 1, d)."""
        keys, values = memory_kv
        null = self.null_key_value.to(keys.dtype)[:, None, :, None, :].expand(-1, keys.size(0), -1, 1, -1)  # (2, B, H, 1, d)
        return torch.cat([keys, null[0]], dim=2), torch.cat([values, null[1]], dim=2)

    def cross_attend(self, h, memory_kv, guide: AttentionGuide):
        """*memory_kv* already holds the null slot (:meth:`extend`)."""
        attention = self.cross_attention
        q = attention.split_heads(attention.query(h))  # (B, H, T, d)
        if self.position_embedding is None:
            return attention.attend_heads(q, *memory_kv, mask=guide.mask)
        # q·(k + e_rank) = q·k + q·e_rank: score every rank once, then pick each token's.
        special = q.index_select(1, self.special_heads)  # (B, h, T, d)
        scores = torch.einsum("bhtd,hpd->bhtp", special, self.position_embedding.to(q.dtype)) * self.scale
        ranks = guide.ranks.index_select(0, self.special_kinds).transpose(0, 1)  # (B, h, T, S)
        bias = nn.functional.pad(scores.gather(-1, ranks), (0, 1))  # the null slot gets none
        mask = torch.zeros(guide.mask.shape, dtype=q.dtype, device=q.device).index_copy(1, self.special_heads, bias)
        return attention.attend_heads(q, *memory_kv, mask=mask.masked_fill(~guide.mask, float("-inf")))


@Decoder.register("stack_transformer")
class StackTransformerDecoder(Decoder):
    """A Transformer decoder over parser actions with stack and buffer attention heads (see the module docstring).

    Args:
        input_dim, layers: as for the ``transformer`` decoder.
        positional_encoding: positions over the action sequence (default sinusoidal); a tree
            encoding has no tree to read here and is refused.
        stack_heads: the cross-attention heads that see only the stack (default ``[0]``).
        buffer_heads: the heads that see only the buffer (default ``[1]``). Either may be empty;
            with both empty the decoder is the plain Transformer (and reads no features).
        masked_layers: the layers whose specialised heads are masked (default ``null``: all); in
            the others every head is free.
        position_embeddings: add a learned embedding of each token's stack depth / buffer
            position to the specialised heads' keys (default ``true``).
        max_position: how many depths/positions get their own embedding; deeper ones share the last.

    Registered as ``"stack_transformer"``; the grammar must be a transition system (its states'
    ``features()`` give the stack and buffer).
    """

    def __init__(
        self,
        input_dim: PositiveInt,
        layers: TransformerSettings = DEFAULT_SETTINGS,
        positional_encoding: Lazy[PositionalEncoding] = Lazy(PositionalEncoding),
        stack_heads: list[int] = (0,),  # type: ignore[assignment]
        buffer_heads: list[int] = (1,),  # type: ignore[assignment]
        masked_layers: list[int] | None = None,
        position_embeddings: bool = True,
        max_position: PositiveInt = 32,
    ):
        super().__init__()
        num_heads, num_layers = layers.num_heads, layers.num_layers
        stack_heads, buffer_heads = list(stack_heads), list(buffer_heads)
        for key, heads in (("stack_heads", stack_heads), ("buffer_heads", buffer_heads)):
            if bad := [head for head in heads if not 0 <= head < num_heads]:
                raise ConfigurationError(f"heads {bad} do not exist (layers.num_heads is {num_heads}, heads count from 0)", key=key)
            if len(set(heads)) != len(heads):
                raise ConfigurationError(f"lists a head twice: {heads}", key=key)
        if both := sorted(set(stack_heads) & set(buffer_heads)):
            raise ConfigurationError(f"heads {both} are in both stack_heads and buffer_heads", key="buffer_heads")
        masked = list(range(num_layers)) if masked_layers is None else list(masked_layers)
        if bad := [layer for layer in masked if not 0 <= layer < num_layers]:
            raise ConfigurationError(f"layers {bad} do not exist (layers.num_layers is {num_layers}, layers count from 0)", key="masked_layers")

        head_kinds = [FREE] * num_heads
        for head in stack_heads:
            head_kinds[head] = STACK
        for head in buffer_heads:
            head_kinds[head] = BUFFER
        self.input_dim, self.max_position = input_dim, max_position
        self.uses_features = bool(masked) and any(head_kinds)
        self.features_read = frozenset(KINDS) if self.uses_features else frozenset()
        self.guided_layers = [self.uses_features and layer in masked for layer in range(num_layers)]
        self.register_buffer("head_kinds", torch.tensor(head_kinds, dtype=torch.long), persistent=False)
        self.positions: PositionalEncoding = positional_encoding.construct(dim=input_dim)
        if self.positions.reads_trees:
            raise ConfigurationError("a tree encoding has no tree to read in a parser's action sequence: use 'sinusoidal'", key="positional_encoding.type")
        self.max_length = self.positions.max_length
        self.dropout = Dropout(layers.dropout)
        num_positions = max_position if position_embeddings else 0
        self.layers = nn.ModuleList(
            StackTransformerDecoderLayer(input_dim, layers, head_kinds, num_positions) if guided else TransformerDecoderLayer(input_dim, layers)
            for guided in self.guided_layers
        )
        self.final_norm = nn.LayerNorm(input_dim) if layers.norm_first else nn.Identity()

    # ------------------------------------------------------------ features

    def index_features(self, steps: Sequence[Mapping[str, Any]]) -> StackBufferSteps:
        """Flatten one example's oracle features once, before training (called by ``EncoderDecoder.index``)."""
        return StackBufferSteps.of(steps)

    def batch_features(self, features: Sequence[StackBufferSteps | Sequence[Mapping[str, Any]]], device) -> StackBufferIndex:
        """Teacher forcing: output *t* sees the state before action *t*, i.e. the derivation's ``features[t]``."""
        examples = [item if isinstance(item, StackBufferSteps) else StackBufferSteps.of(item) for item in features]
        return StackBufferIndex.of(examples, device)

    def step_features(self, features: Sequence[Mapping[str, Any]], device) -> StackBufferIndex:
        """Search: each hypothesis's current state, the one its next action is taken in."""
        steps = StackBufferSteps.of(features)  # one step per hypothesis: hypothesis n is row n, at time 0
        return StackBufferIndex.from_steps(steps.counts, steps.nodes, torch.arange(len(features)), torch.zeros(len(features), dtype=torch.long), device)

    def tensor_step_features(self, states) -> StackBufferRanks:
        """Search on tensor states: each hypothesis's whole stack and buffer, as :meth:`step_features` reads them."""
        return StackBufferRanks(states.positions())

    def guide(self, index: StackBufferIndex | StackBufferRanks, memory_mask: torch.Tensor, steps: int) -> AttentionGuide:
        """Visibility (B, H, T, S + 1) of every source token and the null slot to every head and step."""
        batch, length = memory_mask.shape
        ranks = index.dense(batch, steps, length, memory_mask.device)
        present = ranks >= 0
        choices = torch.stack([memory_mask[:, None, :].expand(batch, steps, length), present[0], present[1]], dim=1)  # (B, 3, T, S)
        null = (self.head_kinds != FREE).view(1, -1, 1, 1).expand(batch, -1, steps, 1)
        mask = torch.cat([choices.index_select(1, self.head_kinds), null], dim=-1)
        return AttentionGuide(mask, ranks.clamp(0, self.max_position - 1))

    # ------------------------------------------------------------ decoding

    def memory_keys_values(self, memory: torch.Tensor) -> list[tuple[torch.Tensor, torch.Tensor]]:
        kvs = [layer.cross_attention.project_keys_values(memory) for layer in self.layers]
        return [layer.extend(kv) if guided else kv for layer, kv, guided in zip(self.layers, kvs, self.guided_layers)]

    def run_layers(self, x, memory_kvs, memory_mask, index, cache: SelfAttentionCache | None = None):
        padding = padding_mask(memory_mask)
        guide = self.guide(index, memory_mask, x.size(1)) if self.uses_features and index is not None else None
        if self.uses_features and guide is None:
            raise ValueError("the stack_transformer decoder needs the grammar state's features (stack and buffer)")
        for i, (layer, memory_kv) in enumerate(zip(self.layers, memory_kvs)):
            x = layer(x, memory_kv, guide if self.guided_layers[i] else padding, cache, i)
        return self.final_norm(x)

    def forward(self, embedded, memory, memory_mask, features=None):
        x = self.dropout(self.positions(embedded))
        return self.run_layers(x, self.memory_keys_values(memory), memory_mask, features)

    def start(self, memory, memory_mask):
        return DecoderCache(memory_mask, self.memory_keys_values(memory), SelfAttentionCache(len(self.layers)))

    def step(self, embedded, cache, features=None):
        x = self.dropout(self.positions(embedded, offset=cache.step))
        x = self.run_layers(x, cache.memory_keys_values, cache.memory_mask, features, cache.self_attention)
        return x, cache.advanced(x.size(1))
