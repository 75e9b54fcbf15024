"""Where a decoding step's time goes: the model, the allowed mask, the state update, and the host's reads, on Python
states and on the transition systems' tensor states (issue 75), greedy and beam.

Each config's parser is built as ``toolkit train`` builds it, with seeded random weights (a transition system takes
its 2n actions whatever the weights), and the first ``--sentences`` sentences of its training data are decoded in length-sorted batches of ``--batch`` sentences. The search runs on
proxies of the model and of the states that time each call:

- *encoder*: ``start_decoding`` (the source read once per batch);
- *model*: ``decode_step`` (embedding the last symbols, reading the state's features, the decoder, the softmax);
- *mask*: the allowed symbols (``allowed_mask``);
- *update*: applying the chosen symbols, and reordering rows (``apply``, ``select``, ``with_rows``);
- *host*: what the search reads back to decide whether to stop (``finished``) and the results (``rows``);
- *search*: the rest (top-k, the prefix, dropping finished rows).

On CUDA every timed call ends with a synchronisation, so the split is exact and the total a little slower than
the search alone. Ratios are within this run only:

    python benchmarks/decoding_steps.py [--configs ud_ewt_state_mlp_explore ...] [--device cpu|cuda]
        [--sentences 1000] [--batch 256] [--searches greedy "beam 5"] [--threads 1]
"""

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.decoding_speed import build

PARTS = ("encoder", "model", "mask", "update", "host", "search")


class Clock:
    """Seconds per part; on CUDA each timed call is synchronised, so a part is charged what it launched."""

    def __init__(self, device: torch.device):
        self.seconds: Counter = Counter()
        self.cuda = device.type == "cuda"

    def timed(self, part: str, call, *args, **kwargs):
        start = time.perf_counter()
        result = call(*args, **kwargs)
        if self.cuda:
            torch.cuda.synchronize()
        self.seconds[part] += time.perf_counter() - start
        return result


class TimedStates:
    """A search's states (a ``StateList`` or tensor states) with every call the search makes timed."""

    def __init__(self, inner, clock: Clock):
        self.inner, self.clock = inner, clock

    def __len__(self) -> int:
        return len(self.inner)

    def _wrap(self, part: str, name: str, *args, **kwargs) -> "TimedStates":
        return TimedStates(self.clock.timed(part, getattr(self.inner, name), *args, **kwargs), self.clock)

    def allowed_mask(self):
        return self.clock.timed("mask", self.inner.allowed_mask)

    def finished(self):
        return self.clock.timed("host", self.inner.finished)

    def apply(self, symbols, moving=None):
        return self._wrap("update", "apply", symbols, moving)

    def select(self, index):
        return self._wrap("update", "select", index)

    def with_rows(self, index, other):
        return self._wrap("update", "with_rows", index, other.inner)

    def rows(self):
        return self.clock.timed("host", self.inner.rows)


class TimedModel:
    """The model, its encoder and decoder steps timed; everything else passes through."""

    def __init__(self, model, clock: Clock):
        self.model, self.clock = model, clock

    def __getattr__(self, name):
        return getattr(self.model, name)

    def start_decoding(self, batch, use_cache, encoded=None):
        return self.clock.timed("encoder", self.model.start_decoding, batch, use_cache)

    def decode_step(self, prefix, context, states):
        return self.clock.timed("model", self.model.decode_step, prefix, context, states.inner)


def decode(model, search, examples, batch_size: int, on_tensors: bool, device: torch.device) -> tuple[Counter, float, list]:
    """Decode *examples* with every part timed: (seconds per part, wall seconds, results)."""
    from toolkit.decoding.search import StateList

    clock, results = Clock(device), []
    ordered = sorted(examples, key=lambda example: len(example.tokens))
    start = time.perf_counter()
    with torch.no_grad():
        for i in range(0, len(ordered), batch_size):
            chunk = ordered[i : i + batch_size]
            batch, limits = model.decoding_batch(chunk), search.step_limits(model, chunk)
            states = model.tensor_states(chunk) if on_tensors else None
            states = states if states is not None else StateList([model.grammar.initial_state(e) for e in chunk], model)
            final = search.search(TimedModel(model, clock), batch, TimedStates(states, clock), limits)
            results += clock.timed("host", lambda: [state.result() for state in final])  # noqa: B023 (called at once)
    wall = time.perf_counter() - start
    clock.seconds["search"] = wall - sum(clock.seconds.values())
    return clock.seconds, wall, results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--configs", nargs="+", default=["ud_ewt_state_mlp_explore", "ud_ewt_state_mlp_minilm", "ud_ewt_state_mlp_mpnet"])
    parser.add_argument("--searches", nargs="+", default=["greedy", "beam 5"])
    parser.add_argument("--sentences", type=int, default=1000)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)

    from toolkit.decoding import BeamSearch, GreedySearch

    print(f"{args.sentences} sentences per config, batches of {args.batch}, {args.device}, {args.threads} thread(s); seconds per part\n")
    print(f"| parser | search | states | sentences/s | {' | '.join(PARTS)} | same trees |")
    print("|---|---|---|---:|" + "---:|" * len(PARTS) + "---|")
    for config in args.configs:
        model, examples = build(config)
        model.to(device)
        examples = examples[: args.sentences]
        for name in args.searches:
            beam = name.startswith("beam")
            search = BeamSearch(beam_size=int(name.split()[1])) if beam else GreedySearch()
            decode(model, search, examples[:8], args.batch, True, device)  # warm-up
            reference = None
            for on_tensors in (False, True):
                if on_tensors and model.tensor_states(examples[:1]) is None:
                    continue
                seconds, wall, results = decode(model, search, examples, args.batch, on_tensors, device)
                same = "" if reference is None else ("yes" if results == reference else "NO")
                reference = results if reference is None else reference
                parts = " | ".join(f"{seconds[part]:.2f}" for part in PARTS)
                print(
                    f"| {Path(config).stem} | {name} | {'tensors' if on_tensors else 'Python'} | {len(examples) / wall:,.0f} | {parts} | {same} |", flush=True
                )


if __name__ == "__main__":
    main()
