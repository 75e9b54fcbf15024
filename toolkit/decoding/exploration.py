"""Training with exploration (Goldberg & Nivre, 2012): the parser walks its own path, and the dynamic
oracle says at every step what would have been best from there.

Teacher forcing trains a parser only on configurations the gold path passes through; once it errs
at test time it is somewhere it has never been. With exploration, each training batch is first
decoded greedily by the model itself, from the encoding the batch trains on (so the encoder runs
once), without gradients and with the decoder's dropout off: at every step the model's best
action is taken with probability *p*, else the best action the dynamic oracle calls optimal. The
target of every step is the optimal action the model scores highest (the "non-deterministic
oracle"), and the model then trains on that path and those targets by teacher forcing, with the
loss and the decoder it always has. spaCy's parser trains the same way, always following its own
predictions (``p = 1``).

The first epochs follow the static oracle (*after_epochs*; Goldberg & Nivre's *k*): a random
model's path teaches little. A grammar without a dynamic oracle (arc-standard, AMR) trains on its
static oracle, and the model says so when it is built.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from toolkit.from_params import FromParams, NonNegativeInt, Probability


class Exploration(FromParams):
    """When and how far training leaves the gold path (see the module docstring).

    Args:
        probability: how often a step takes the model's own prediction rather than the best optimal
            action (Goldberg & Nivre's *p*, 0.9; 1.0 is spaCy's).
        after_epochs: how many epochs train on the static oracle's path first (their *k*, 1).
        tensor_states: walk the paths on the grammar's tensor states where it has them (arc-hybrid with a
            decoder whose step features stack, such as ``state_mlp``); ``null`` (the default): only on a GPU.
            On the 2-core CPU an exploring step cost 1.82 static ones on tensors against 1.49 on Python states
            (``benchmarks/exploration_cost.py``), so the CPU keeps Python states.
    """

    def __init__(self, probability: Probability = 0.9, after_epochs: NonNegativeInt = 1, tensor_states: bool | None = None):
        self.probability, self.after_epochs, self.tensor_states = probability, after_epochs, tensor_states

    def active(self, epoch: int) -> bool:
        return epoch >= self.after_epochs


class ExploredPaths:
    """Each example's explored path: the symbols taken, the targets taught, and the state features before each step."""

    def __init__(self, size: int):
        self.taken: list[list[int]] = [[] for _ in range(size)]
        self.targets: list[list[int]] = [[] for _ in range(size)]
        self.features: list[list[Mapping[str, Any]]] = [[] for _ in range(size)]
        self.left_gold = 0  # steps whose taken action was not optimal


@dataclass
class ExploredTensors:
    """The explored paths of a batch decoded on tensor states, as the padded tensors teacher forcing reads."""

    taken: torch.Tensor  # (B, T): each path's symbols, padded
    target_in: torch.Tensor  # (B, T): the start symbol, then each path's symbols but its last
    target_out: torch.Tensor  # (B, T): each step's target
    features: torch.Tensor | None  # (B, T, ...): each step's state features, as the decoder reads them
    lengths: torch.Tensor  # (B,): each path's steps
    left_gold: int

    @property
    def steps(self) -> int:
        return int(self.lengths.sum())

    def as_paths(self) -> ExploredPaths:
        """The same paths as lists, as exploration on Python states gives them (features: each path's (T, ...) rows)."""
        paths = ExploredPaths(len(self.lengths))
        for row, length in enumerate(self.lengths.tolist()):
            paths.taken[row] = self.taken[row, :length].tolist()
            paths.targets[row] = self.target_out[row, :length].tolist()
            paths.features[row] = [] if self.features is None else self.features[row, :length]
        paths.left_gold = self.left_gold
        return paths


@torch.no_grad()
def explore(model: Any, batch: dict[str, Any], oracles: Sequence[Any], probability: float, encoded: Any = None) -> ExploredPaths:
    """Decode *batch* greedily from each oracle's start state, taking the model's best action with
    *probability* and else the best optimal one; record every step. *model* is an
    :class:`~toolkit.models.encoder_decoder.EncoderDecoder` (the search protocol, and ``allowed_row``);
    *encoded*, the batch's ``(memory, mask)`` if the caller has it (else it is encoded here).
    """
    was_training = model.training
    model.eval()
    try:
        if (on_tensors := tensor_exploration(model, oracles)) is not None:
            return _explore_tensors(model, batch, *on_tensors, probability, encoded)
        return _explore(model, batch, oracles, probability, encoded)
    finally:
        model.train(was_training)


def _explore(model: Any, batch: dict[str, Any], oracles: Sequence[Any], probability: float, encoded: Any) -> ExploredPaths:
    states = [oracle.start for oracle in oracles]
    paths = ExploredPaths(len(states))
    device = batch["source"].device
    context = model.start_decoding(batch, True, encoded)
    active = list(range(len(states)))
    prefix = torch.full((len(states), 1), model.bos_index, dtype=torch.long, device=device)
    limit = 4 * batch["target_out"].size(1) + 8  # a transition system's parses take 2n steps; this bounds any other
    for _ in range(limit):
        keep = [row for row, i in enumerate(active) if not states[i].is_final()]
        if not keep:
            break
        if len(keep) < len(active):
            index = torch.tensor(keep, device=device)
            context, prefix, active = context.reorder(index), prefix[index], [active[row] for row in keep]
        row_states = [states[i] for i in active]
        log_probs, context = model.decode_step(prefix, context, row_states)
        allowed = model.allowed_mask(row_states)
        optimal = torch.stack([model.allowed_row(oracles[i].optimal(states[i])) for i in active]).to(device) & allowed
        optimal |= allowed & ~optimal.any(dim=-1, keepdim=True)  # no optimal symbol in the vocabulary: any allowed one
        scores = log_probs.masked_fill(~allowed, float("-inf"))
        predicted, target = scores.argmax(dim=-1), scores.masked_fill(~optimal, float("-inf")).argmax(dim=-1)
        follow = torch.rand(len(active)) < probability
        chosen = torch.where(follow.to(device), predicted, target)
        paths.left_gold += int((~optimal.gather(1, chosen[:, None])).sum())
        for i, state, symbol, chosen_id, target_id in zip(active, row_states, model.symbols(chosen.tolist()), chosen.tolist(), target.tolist()):
            paths.features[i].append(state.features())
            paths.taken[i].append(chosen_id)
            paths.targets[i].append(target_id)
            states[i] = state.apply(symbol)
        prefix = torch.cat([prefix, chosen[:, None]], dim=1)
    return paths


def tensor_exploration(model: Any, oracles: Sequence[Any]) -> tuple[Any, Any] | None:
    """The oracles' start states and gold trees as tensors (:mod:`toolkit.decoding.tensor_oracle`), where the grammar,
    its dynamic oracle and the decoder's features have a tensor form; else ``None`` (exploration on Python states).
    """
    decoder, grammar = model.decoder, model.grammar
    wanted = getattr(model.exploration, "tensor_states", None)
    if not (wanted if wanted is not None else model.device.type != "cpu"):
        return None
    if decoder.uses_features and not decoder.tensor_features_stack:
        return None
    from toolkit.decoding.tensor_configurations import TransitionSystem, tensor_configurations
    from toolkit.decoding.tensor_oracle import TensorDynamicOracle

    if not isinstance(grammar, TransitionSystem):
        return None
    states = tensor_configurations(grammar, [oracle.start for oracle in oracles], model.target_tokens, model.device)
    if states is None:
        return None

    gold = TensorDynamicOracle.of(oracles, states)
    return None if gold is None else (states, gold)


def _explore_tensors(model: Any, batch: dict[str, Any], states: Any, gold: Any, probability: float, encoded: Any) -> ExploredTensors:
    """:func:`_explore` on tensor states: the same paths (the same random draws, row for row), kept in tensors."""
    rows, device = len(states), batch["source"].device
    context = model.start_decoding(batch, True, encoded)
    limit = 4 * batch["target_out"].size(1) + 8
    taken = torch.full((rows, limit), model.pad_index, dtype=torch.long, device=device)
    targets, features = taken.clone(), None
    steps, left_gold = torch.zeros(rows, dtype=torch.long, device=device), torch.zeros((), dtype=torch.long, device=device)
    live = torch.arange(rows, device=device)
    prefix = torch.full((rows, 1), model.bos_index, dtype=torch.long, device=device)
    for step in range(limit):
        keep = (~states.finished()).nonzero().flatten()
        if len(keep) == 0:
            break
        if len(keep) < len(live):
            context, prefix, live, states, gold = context.reorder(keep), prefix[keep], live[keep], states.select(keep), gold.select(keep)
        log_probs, context = model.decode_step(prefix, context, states)
        allowed = states.allowed_mask()
        optimal = gold.optimal_mask(states, allowed)
        optimal |= allowed & ~optimal.any(dim=-1, keepdim=True)  # no optimal symbol in the vocabulary: any allowed one
        scores = log_probs.masked_fill(~allowed, float("-inf"))
        predicted, target = scores.argmax(dim=-1), scores.masked_fill(~optimal, float("-inf")).argmax(dim=-1)
        chosen = torch.where((torch.rand(len(live)) < probability).to(device), predicted, target)
        left_gold += (~optimal.gather(1, chosen[:, None])).sum()
        if model.decoder.uses_features:
            now = model.decoder.tensor_step_features(states)[:, 0]
            features = now.new_full((rows, limit, *now.shape[1:]), -1) if features is None else features
            features[live, step] = now
        taken[live, step], targets[live, step] = chosen, target
        steps[live] += 1
        states = states.apply(chosen)
        prefix = torch.cat([prefix, chosen[:, None]], dim=1)
    length = int(steps.max()) if rows else 0
    taken, targets = taken[:, :length], targets[:, :length]
    first = torch.full((rows, 1), model.bos_index, dtype=torch.long, device=device)
    target_in = torch.cat([first, taken[:, :-1]], dim=1)[:, :length].masked_fill(torch.arange(length, device=device) >= steps[:, None], model.pad_index)
    return ExploredTensors(taken, target_in, targets, None if features is None else features[:, :length], steps, int(left_gold))
