"""What training with exploration costs beside the static oracle, per training step, on Python states and on the
transition systems' tensor states (issue 75: an exploration epoch cost 5.5 static ones on an H200, about 2 on a CPU).

The fast parser's config (``ud_ewt_state_mlp_explore.jsonnet``: arc-hybrid, state_mlp) is built with seeded random
weights, and the same ``--batches`` training batches run three ways: the static oracle's step (forward, backward,
optimizer), and the exploring step (the model's own path decoded first, then the same) with the path walked on Python
states and on tensor states. Rounds alternate; each figure is the median. Ratios are within this run only:

    python benchmarks/exploration_cost.py [--config ud_ewt_state_mlp_explore] [--batches 20] [--device cpu|cuda] [--threads 1]
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.decoding_speed import build
from toolkit.data.batching import TokenBudgetBatchSampler
from toolkit.decoding.exploration import Exploration
from toolkit.device import move_to_device


def seconds(model, batches, explore: bool, on_tensors: bool, device) -> float:
    """Wall seconds for one training step on each of *batches*."""
    model.train()
    model.exploration, model.exploring = Exploration(probability=0.9, tensor_states=on_tensors), explore
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    start = time.perf_counter()
    for batch in batches:
        optimizer.zero_grad(set_to_none=True)
        model(batch)["loss"].backward()
        optimizer.step()
    if device.type == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default="ud_ewt_state_mlp_explore")
    parser.add_argument("--batches", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)

    model, examples = build(args.config)
    model.exploration = model.exploration or Exploration(probability=0.9)  # index() keeps each example's dynamic oracle
    model.to(device)
    indexed = [model.index(example) for example in examples[: 40 * args.batches]]
    sampler = TokenBudgetBatchSampler([model.length(item) for item in indexed], 2048, shuffle=True, seed=0)
    batches = [move_to_device(model.collate([indexed[i] for i in rows]), device) for rows in list(sampler)[: args.batches]]
    tokens = sum(int((batch["target_out"] != model.pad_index).sum()) for batch in batches)
    ways = {"static oracle": (False, True), "exploring, Python states": (True, False), "exploring, tensor states": (True, True)}
    seconds(model, batches[:2], True, True, device)  # warm-up
    timings = {name: [] for name in ways}
    for _ in range(args.rounds):
        for name, (explore, on_tensors) in ways.items():
            timings[name].append(seconds(model, batches, explore, on_tensors, device))
    print(f"{args.config}: {len(batches)} batches ({tokens:,} gold actions), {args.device}, {args.threads} thread(s), median of {args.rounds} rounds\n")
    print("| training step | seconds | gold actions/s | against the static oracle |\n|---|---:|---:|---:|")
    static = statistics.median(timings["static oracle"])
    for name, measured in timings.items():
        median = statistics.median(measured)
        print(f"| {name} | {median:.2f} | {tokens / median:,.0f} | {median / static:.2f} |")


if __name__ == "__main__":
    main()
