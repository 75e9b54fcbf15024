"""A feed-forward decoder over the words the parser state points at (Chen & Manning, 2014;
Kiperwasser & Goldberg, 2016).

Each action is scored from a few source words: the top ``stack`` words of the stack and the first
``buffer`` words of the buffer (Kiperwasser & Goldberg's s0, s1, s2 and b0 by default), as the
encoder read them, and the action just taken. One hidden layer over their concatenation:

    h_t = tanh(Σ_j W_j m[slot_j(t)] + U e(a_{t-1}) + b),    output_t = V h_t

where ``m`` is the encoder's output, ``slot_j(t)`` the position slot *j* holds before action *t*
and ``e(a_{t-1})`` the embedded previous action (the decoder's input). There is no attention and no
history beyond that action: a step costs a few gathers and two small products whatever the
sentence's length or the derivation's, where the Stack-Transformer runs its whole decoder, self-
and cross-attention over every layer, per action. The encoder does the reading.

**Precomputed hidden layer** (Chen & Manning, 2014, section 3.2; spaCy's parser does the same):
``W_j m[i]`` is computed once per source word and slot when decoding starts, a (words + 1, slots,
D) table of the batch's words without their padding, so a step only sums rows of it (one
``embedding_bag``). Each hypothesis keeps the offset of its sentence's first word in the table, so
a beam reorder moves offsets, never table rows. The last row holds each slot's learned *null*
contribution, used where the stack or buffer holds fewer words; the artificial root is never a
source word, so a root below the stack's words reads as null, as with the Stack-Transformer's null
slot.

Features come from the grammar state's ``features()`` (``{"stack": (...), "buffer": (...)}``,
0-based source positions nearest first), as for ``stack_transformer``: every dependency transition
system and ``amr`` give them.
"""

from collections.abc import Mapping, Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pad_sequence

from toolkit.errors import ConfigurationError
from toolkit.from_params import PositiveInt, Probability
from toolkit.modules.decoders.decoder import Decoder, DecoderCache, SelfAttentionCache
from toolkit.modules.dropout import Dropout

ABSENT = -1  # a slot with no word: the stack or buffer is shorter


@Decoder.register("state_mlp")
class StateMlpDecoder(Decoder):
    """Scores each action from the encoded words on top of the stack and at the front of the buffer (see the module docstring).

    Args:
        input_dim: the model width: the encoder's output, the action embeddings and the hidden layer.
        stack: how many words from the top of the stack (default 3: s0, s1, s2).
        buffer: how many words from the front of the buffer (default 1: b0).
        dropout: on the encoded words and on the hidden layer.

    Registered as ``"state_mlp"``; the grammar must be a transition system (its states'
    ``features()`` give the stack and buffer).
    """

    uses_features = True
    features_read = frozenset({"stack", "buffer"})
    tensor_features_stack = True

    def __init__(self, input_dim: PositiveInt, stack: int = 3, buffer: int = 1, dropout: Probability = 0.2):
        super().__init__()
        if stack < 0 or buffer < 0 or stack + buffer == 0:
            raise ConfigurationError(f"stack and buffer must be >= 0 and name at least one word, got stack={stack}, buffer={buffer}", key="stack")
        self.input_dim, self.stack, self.buffer, self.slots = input_dim, stack, buffer, stack + buffer
        self.absent = ((ABSENT,) * stack, (ABSENT,) * buffer)
        self.slot_projection = nn.Linear(input_dim, self.slots * input_dim, bias=False)  # W_1 ... W_slots, stacked
        self.null = nn.Parameter(torch.zeros(self.slots, input_dim))  # each slot's contribution when it holds no word
        self.previous = nn.Linear(input_dim, input_dim)  # U and the bias b
        self.dropout = Dropout(dropout)

    # ------------------------------------------------------------ features

    def slot_positions(self, steps: Sequence[Mapping[str, Any]]) -> torch.Tensor:
        """(T, slots) int64: before each step, the source positions of the stack's top words and the buffer's front ones, ``-1`` where there are fewer."""
        k, m = self.stack, self.buffer
        no_stack, no_buffer = self.absent
        rows = [(*step["stack"][:k], *no_stack)[:k] + (*step["buffer"][:m], *no_buffer)[:m] for step in steps]
        return torch.tensor(rows, dtype=torch.long).view(len(rows), self.slots)

    def index_features(self, steps):
        """One example's slots per step, once at indexing (a tensor, so token budgets count source and target only)."""
        return self.slot_positions(steps)

    def batch_features(self, features, device) -> torch.Tensor:
        """(B, T, slots) long, padded steps ``-1``; exploration on tensor states gives that already."""
        if isinstance(features, torch.Tensor):
            return features.to(device)
        steps = [item if isinstance(item, torch.Tensor) else self.slot_positions(item) for item in features]
        return pad_sequence(steps, batch_first=True, padding_value=ABSENT).to(device)

    def step_features(self, features, device) -> torch.Tensor:
        """(N, 1, slots): each hypothesis's current state, the one its next action is taken in."""
        return self.slot_positions(features).unsqueeze(1).to(device)

    def tensor_step_features(self, states) -> torch.Tensor:
        """(N, 1, slots) from tensor states: the top ``stack`` words and the first ``buffer`` ones, as :meth:`step_features`."""
        return torch.cat(states.positions(self.stack, self.buffer), dim=1).unsqueeze(1)

    # ------------------------------------------------------------ the network

    def slot_table(self, memory: torch.Tensor, memory_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The (W + 1, slots, D) table of every word's contribution in every slot, the null row last; and each sentence's first row (B,)."""
        words = memory[memory_mask]  # (W, D): the words, sentence after sentence, without padding
        table = self.slot_projection(self.dropout(words)).view(len(words), self.slots, -1)
        lengths = memory_mask.sum(dim=1)
        return torch.cat([table, self.null.to(table.dtype)[None]]), torch.cumsum(lengths, 0) - lengths

    def hidden(self, table: torch.Tensor, offsets: torch.Tensor, positions: torch.Tensor, embedded: torch.Tensor) -> torch.Tensor:
        """The hidden layer (B, T, D) for *positions* (B, T, k) in the sentences starting at table rows *offsets* (B,), after the actions *embedded* (B, T, D)."""
        null, k = len(table) - 1, self.slots
        rows = torch.where(positions < 0, null, offsets.view(-1, 1, 1) + positions)
        index = rows * k + torch.arange(k, device=table.device)  # rows of the flattened (·, D) table
        summed = F.embedding_bag(index.view(-1, k), table.view(-1, table.size(-1)), mode="sum").view(embedded.shape)
        return self.dropout(torch.tanh(summed + self.previous(embedded)))

    def forward(self, embedded, memory, memory_mask, features=None):
        if features is None:
            raise ValueError("the state_mlp decoder needs the grammar state's features (stack and buffer)")
        return self.hidden(*self.slot_table(memory, memory_mask), features, embedded)

    def start(self, memory, memory_mask):
        """The slot table is computed here, once per batch; steps only sum its rows."""
        table, offsets = self.slot_table(memory, memory_mask)
        return DecoderCache(memory_mask, [], SelfAttentionCache(0), extra={"offsets": offsets}, shared={"slots": table})

    def step(self, embedded, cache, features=None):
        offsets = cache.extra["offsets"]
        return self.hidden(cache.shared["slots"], offsets, features, embedded), cache.advanced(embedded.size(1), {"offsets": offsets})
