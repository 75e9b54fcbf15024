"""Multi-head attention on ``scaled_dot_product_attention``, with an explicit key/value cache.

Shapes: B batch, H heads, T query length, S key length, D model size, d = D / H.
Masks are boolean and broadcast to (B, H, T, S); ``True`` means "may attend".

The fused kernel never materialises the attention probabilities. To look at them (``toolkit
visualize``), set a module's :attr:`MultiHeadAttention.recorder`: every call then also computes
the (B, H, T, S) probabilities explicitly and hands them to it. Unset, the forward path is the
fused kernel alone, unchanged.
"""

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

from toolkit.data.batching import length_groups

PREFIX_STEP = 16  # incremental attention reads a cache's block up to its length rounded up to this


class MultiHeadAttention(nn.Module):
    recorder: Callable[["MultiHeadAttention", torch.Tensor], None] | None = None  # set per module to see its probabilities

    def __init__(self, dim: int, num_heads: int, dropout: float = 0.0):
        super().__init__()
        if dim % num_heads:
            raise ValueError(f"model dimension {dim} is not divisible by num_heads {num_heads}")
        self.num_heads, self.dropout = num_heads, dropout
        self.query = nn.Linear(dim, dim)
        self.key_value = nn.Linear(dim, 2 * dim)
        self.output = nn.Linear(dim, dim)

    def split_heads(self, x: torch.Tensor) -> torch.Tensor:
        batch, length, dim = x.shape
        return x.view(batch, length, self.num_heads, dim // self.num_heads).transpose(1, 2)  # (B, H, L, d)

    def merge_heads(self, heads: torch.Tensor) -> torch.Tensor:
        """The heads' outputs (B, H, T, d), concatenated and projected: (B, T, D)."""
        batch, _, length, _ = heads.shape
        return self.output(heads.transpose(1, 2).reshape(batch, length, -1))

    def project_keys_values(self, source: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Keys and values of *source* (B, S, D), each (B, H, S, d): computed once per sentence for cross-attention."""
        keys, values = self.key_value(source).chunk(2, dim=-1)
        return self.split_heads(keys), self.split_heads(values)

    def attend(
        self,
        query: torch.Tensor,
        keys: torch.Tensor,
        values: torch.Tensor,
        mask: torch.Tensor | None = None,
        causal: bool = False,
    ) -> torch.Tensor:
        """Attention of *query* (B, T, D) over projected *keys*/*values* (B, H, S, d); returns (B, T, D)."""
        return self.attend_heads(self.split_heads(self.query(query)), keys, values, mask, causal)

    def attend_heads(self, q: torch.Tensor, keys: torch.Tensor, values: torch.Tensor, mask: torch.Tensor | None = None, causal: bool = False) -> torch.Tensor:
        """Attention of projected queries *q* (B, H, T, d); returns the merged, projected heads (B, T, D)."""
        if self.recorder is not None:
            self.recorder(self, attention_probabilities(q, keys, mask, causal))
        dropout = self.dropout if self.training else 0.0
        return self.merge_heads(F.scaled_dot_product_attention(q, keys, values, attn_mask=mask, dropout_p=dropout, is_causal=causal))

    def attend_prefix(self, query: torch.Tensor, keys: torch.Tensor, values: torch.Tensor, length: int) -> torch.Tensor:
        """Attention of *query* (B, T, D) over the first *length* of the contiguous (B, H, C, d) *keys*/*values* of a cache.

        Positions from *length* on get zero weight; their values must be finite (the cache keeps them
        so). Two batched products beat the fused kernel, which copies a strided slice first; the
        products read the block only up to *length* rounded up to :data:`PREFIX_STEP` positions (each
        row's (C', d) keys stay one contiguous matrix), not the whole capacity, which doubles as the
        cache grows.
        """
        q = self.split_heads(self.query(query))
        if self.recorder is not None:
            return self.attend_heads(q, keys[:, :, :length], values[:, :, :length])
        read = min(keys.size(2), -(-length // PREFIX_STEP) * PREFIX_STEP)
        keys, values = keys[:, :, :read], values[:, :, :read]
        scores = torch.matmul(q * q.size(-1) ** -0.5, keys.transpose(-1, -2))  # (B, H, T, C')
        scores[..., length:] = float("-inf")
        probs = F.dropout(scores.softmax(dim=-1), self.dropout, self.training)
        return self.merge_heads(torch.matmul(probs, values))

    def forward(self, query: torch.Tensor, source: torch.Tensor, mask: torch.Tensor | None = None, causal: bool = False) -> torch.Tensor:
        keys, values = self.project_keys_values(source)
        return self.attend(query, keys, values, mask, causal)

    def attend_packed(self, x: torch.Tensor, packing: "Packing") -> torch.Tensor:
        """Self-attention over the packed words *x* (T, D) of a padded batch; returns (T, D).

        The projections run on the words alone; attention runs per group of similar lengths
        (:class:`Packing`), each padded to its longest, its padding keys masked.
        """
        queries, keys_values = self.query(x), self.key_value(x)
        heads = queries.new_empty(x.shape)  # in the projections' dtype: bf16 under CUDA's autocast, where x stays float32
        batch, length = packing.shape
        recorded = None if self.recorder is None else x.new_zeros(batch, self.num_heads, length, length)  # (B, H, S, S), as unpacked
        for rows, gather, inside, words in packing.groups:
            q = self.split_heads(queries[gather])
            keys, values = map(self.split_heads, keys_values[gather].chunk(2, dim=-1))
            mask = None if bool(inside.all()) else inside[:, None, None, :]
            if recorded is not None:
                recorded[rows, :, : q.size(2), : q.size(2)] = attention_probabilities(q, keys, mask).to(recorded.dtype)
            attended = F.scaled_dot_product_attention(q, keys, values, attn_mask=mask)
            heads[words] = attended.transpose(1, 2).flatten(2)[inside].to(heads.dtype)  # an index put casts nothing: autocast may return either
        if recorded is not None:
            self.recorder(self, recorded)
        return self.output(heads)


def attention_probabilities(q: torch.Tensor, keys: torch.Tensor, mask: torch.Tensor | None = None, causal: bool = False) -> torch.Tensor:
    """The (B, H, T, S) probabilities ``scaled_dot_product_attention`` weighs the values with (no dropout).

    *mask* is boolean (``True``: may attend) or additive, as the kernel takes it. A query that may
    attend to nothing gets a row of zeros where the kernel would give NaN.
    """
    scores = (q @ keys.transpose(-1, -2)).float() * q.size(-1) ** -0.5
    if causal:
        scores = scores.masked_fill(~torch.ones(scores.shape[-2:], dtype=torch.bool, device=q.device).tril(), float("-inf"))
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf")) if mask.dtype == torch.bool else scores + mask.float()
    return scores.softmax(dim=-1).nan_to_num(0.0)


class Packing:
    """The words of a padded batch without its padding: position-wise layers then compute words only.

    A batch of sentences sorted by length still pads most of them to its longest (predicting 200
    EWT sentences, half the encoder's positions were padding), and the projections and
    feed-forward blocks that are most of an encoder's arithmetic are position-wise. Packed, they
    run on the T words alone. Attention, whose cost grows with the padded length squared, runs on
    groups of sentences of similar length (:func:`~toolkit.data.batching.length_groups`), each
    padded to its own longest.
    """

    def __init__(self, mask: torch.Tensor):
        self.shape = mask.shape  # (B, S)
        self.index = mask.flatten().nonzero().flatten()  # (T,): the words' places in the flattened batch
        lengths = mask.sum(dim=1)
        starts = torch.cumsum(lengths, 0) - lengths  # each sentence's first word among the T
        self.groups = []  # per group: its sentences (g,), gather (g, L) into the T words, its word mask (g, L), the T-rows its words fill
        for rows in length_groups(lengths.tolist()):
            rows = torch.tensor(rows, device=mask.device)
            words = torch.arange(int(lengths[rows[0]]), device=mask.device)
            inside = words < lengths[rows, None]
            gather = (starts[rows, None] + words).masked_fill(~inside, 0)  # a padding position reads word 0: finite, masked
            self.groups.append((rows, gather, inside, gather[inside]))

    def pack(self, x: torch.Tensor) -> torch.Tensor:
        """(B, S, ...) -> (T, ...): the words only."""
        return x.flatten(0, 1).index_select(0, self.index)

    def unpack(self, x: torch.Tensor) -> torch.Tensor:
        """(T, ...) -> (B, S, ...), zeros at the padding."""
        padded = x.new_zeros(self.shape.numel(), *x.shape[1:]).index_copy_(0, self.index, x)
        return padded.view(*self.shape, *x.shape[1:])


def padding_mask(mask: torch.Tensor) -> torch.Tensor:
    """A (B, S) token mask as an attention mask (B, 1, 1, S) over keys."""
    return mask[:, None, None, :]
