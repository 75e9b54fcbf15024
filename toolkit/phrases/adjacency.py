"""The node graph of attention over phrases (Eq. 4-6): words and hypernodes linked by inclusion.

Every node stands for a set of words: word i for ``{i}``, a hypernode for its indices. Two nodes
are adjacent when one's words are a subset of the other's. So a word is adjacent to the phrases
that contain it, a phrase to its words and to the phrases inside or around it, and two different
words never are. A node is adjacent to itself: inclusion is reflexive, and the self-loop keeps
every row of the phase-2 attention mask non-empty (a word in no phrase still attends to itself,
and a padding node attends only to itself instead of producing NaN).

Batches lay the nodes out as ``[words padded to N | hypernodes padded to M]``.
"""

from collections.abc import Sequence

import torch
import torch.nn.functional as F

from toolkit.phrases.phrase_generator import Hypernode


def hypernode_membership(hypernodes: Sequence[Sequence[Hypernode]], num_words: int) -> torch.Tensor:
    """(B, M, num_words) bool: hypernode j of sentence b contains word i; M is the most any sentence has.

    Padding hypernodes are empty rows. Models build one sentence's membership when indexing it and
    pad them per batch with :func:`pad_memberships`, which is much cheaper than this per batch.
    """
    width = max(map(len, hypernodes), default=0)
    rows, nodes, words = [], [], []
    for row, phrases in enumerate(hypernodes):
        for node, phrase in enumerate(phrases):
            rows.extend([row] * len(phrase))
            nodes.extend([node] * len(phrase))
            words.extend(phrase)
    membership = torch.zeros(len(hypernodes), width, num_words, dtype=torch.bool)
    membership[rows, nodes, words] = True
    return membership


def node_adjacency(membership: torch.Tensor, word_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The (B, K, K) adjacency of the K = N + M nodes, and their (B, K) validity.

    *membership* is (B, M, N) as :func:`hypernode_membership` makes it; *word_mask* (B, N) marks
    real words. Node a is adjacent to node b when ``|a ∩ b|`` equals ``|a|`` or ``|b|``, both
    are real nodes, or a is b. One batched product computes every intersection size.
    """
    batch, _, num_words = membership.shape
    words = torch.eye(num_words, dtype=torch.bool, device=membership.device).expand(batch, -1, -1)
    sets = torch.cat([words, membership], dim=1).float()  # (B, K, N): the words of each node
    valid = torch.cat([word_mask, membership.any(-1)], dim=1)  # (B, K)
    with torch.autocast(membership.device.type, enabled=False):  # counts stay exact in float32 under mixed precision
        overlap = sets @ sets.transpose(1, 2)  # (B, K, K): |a ∩ b|
    size = sets.sum(-1)  # (B, K)
    included = (overlap == size[:, :, None]) | (overlap == size[:, None, :])
    self_loops = torch.eye(sets.size(1), dtype=torch.bool, device=membership.device)
    return (included & valid[:, :, None] & valid[:, None, :]) | self_loops, valid


def pad_memberships(memberships: Sequence[torch.Tensor], num_words: int) -> torch.Tensor:
    """Stack per-sentence (M_b, n_b) memberships into (B, max M_b, num_words), padding with empty rows and absent words."""
    width = max((membership.size(0) for membership in memberships), default=0)
    return torch.stack([F.pad(membership, (0, num_words - membership.size(1), 0, width - membership.size(0))) for membership in memberships])
