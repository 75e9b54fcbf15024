"""Greedy search: the most probable allowed symbol at every step."""

import torch

from toolkit.decoding.search import Search


@Search.register("greedy")
class GreedySearch(Search):
    """Decodes a batch step by step; finished sentences (and those at their step limit) leave the batch, so late steps run on few rows."""

    def search(self, model, batch, states, limits=None):
        states = list(states)
        limits = [self.max_steps] * len(states) if limits is None else limits
        context = model.start_decoding(batch, self.use_cache)
        active = list(range(len(states)))  # rows of the original batch still decoding
        prefix = torch.full((len(states), 1), model.bos_index, dtype=torch.long, device=batch["source"].device)
        for step in range(max(limits, default=0)):
            keep = [row for row, i in enumerate(active) if not states[i].is_final() and step < limits[i]]
            if not keep:
                break
            if len(keep) < len(active):  # drop finished sentences, and those at their limit, from the batch
                keep = fill_from_the_end(keep)
                index = torch.tensor(keep, device=prefix.device)
                context, prefix, active = context.reorder(index), prefix[index], [active[row] for row in keep]
            row_states = [states[i] for i in active]
            log_probs, context = model.decode_step(prefix, context, row_states)
            log_probs = log_probs.masked_fill(~model.allowed_mask(row_states), float("-inf"))
            best = log_probs.argmax(dim=-1)  # (N,)
            for i, symbol in zip(active, model.symbols(best.tolist())):
                states[i] = states[i].apply(symbol)
            prefix = torch.cat([prefix, best[:, None]], dim=1)
        return states


def fill_from_the_end(keep: list[int]) -> list[int]:
    """The rows *keep* (ascending) as a new batch whose finished rows are taken by the last ones.

    ``[0, 1, 3, 5, 6]`` becomes ``[0, 1, 6, 3, 5]``: row 2's place goes to row 6, and only one row of
    the caches moves instead of three, so dropping a finished sentence copies about as many rows
    as sentences finished. Rows are independent, so their order changes nothing but bookkeeping.
    """
    size, kept = len(keep), set(keep)
    movers = iter(row for row in reversed(keep) if row >= size)
    return [row if row in kept else next(movers) for row in range(size)]
