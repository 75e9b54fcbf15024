"""Greedy search: the most probable allowed symbol at every step."""

import torch

from toolkit.decoding.search import Search, as_rows
from toolkit.from_params import PositiveInt


@Search.register("greedy")
class GreedySearch(Search):
    """Decodes a batch step by step; finished sentences (and those at their step limit) leave the batch, so late steps run on few rows.

    Where the grammar has a tensor form of its states (:meth:`~toolkit.grammars.grammar.Grammar.tensor_states`: the
    dependency transition systems) and the decoder reads it, the step loop runs on it: masks, features and transitions
    for the whole batch are tensor operations on the model's device, and the host learns only which rows go on.
    *tensor_states* ``false`` decodes on the Python states instead (the same trees; for comparison).
    """

    def __init__(self, max_steps: PositiveInt | None = None, use_cache: bool = True, tensor_states: bool = True):
        super().__init__(max_steps, use_cache)
        self.on_tensors = tensor_states

    searches_tensors = True

    def search(self, model, batch, states, limits=None):
        states = as_rows(model, states)
        device = batch["source"].device
        limits = torch.tensor([self.max_steps] * len(states) if limits is None else limits, device=device)
        context = model.start_decoding(batch, self.use_cache)
        every, live = states, torch.arange(len(states), device=device)  # all rows; the original row of each row decoding
        prefix = torch.full((len(states), 1), model.bos_index, dtype=torch.long, device=device)
        for step in range(int(limits.max()) if len(states) else 0):
            keep = (~states.finished().to(device) & (limits[live] > step)).nonzero().flatten().tolist()  # what the host reads
            if not keep:
                break
            if len(keep) < len(live):  # drop finished sentences, and those at their limit, from the batch
                every = every.with_rows(live, states)
                index = torch.tensor(fill_from_the_end(keep), device=device)
                context, prefix, live, states = context.reorder(index), prefix[index], live[index], states.select(index)
            log_probs, context = model.decode_step(prefix, context, states)
            best = log_probs.masked_fill(~states.allowed_mask(), float("-inf")).argmax(dim=-1)  # (N,)
            states = states.apply(best)
            prefix = torch.cat([prefix, best[:, None]], dim=1)
        return every.with_rows(live, states).rows()


def fill_from_the_end(keep: list[int]) -> list[int]:
    """The rows *keep* (ascending) as a new batch whose finished rows are taken by the last ones.

    ``[0, 1, 3, 5, 6]`` becomes ``[0, 1, 6, 3, 5]``: row 2's place goes to row 6, and only one row of
    the caches moves instead of three, so dropping a finished sentence copies about as many rows
    as sentences finished. Rows are independent, so their order changes nothing but bookkeeping.
    """
    size, kept = len(keep), set(keep)
    movers = iter(row for row in reversed(keep) if row >= size)
    return [row if row in kept else next(movers) for row in range(size)]
