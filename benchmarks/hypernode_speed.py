"""Cost of attention over phrases: the hypernode encoder against the plain Transformer encoder, by sentence length.

For each sentence length n, a batch of B sentences of exactly n words goes through a training
step (forward and backward) of three encoders of the same size, built once and alternated in
this one process: the plain ``transformer``, and ``hypernode_transformer`` with n-gram phrases of
2..k words for k = 2 and 3 (m = (k - 1) n - k (k - 1) / 2 hypernodes, so n + m nodes). Printed per
encoder and n:

- ms/batch: the median wall time of a training step, and its ratio to the plain encoder;
- activation MiB: the bytes of the tensors autograd saves for the backward pass (each storage
  once, parameters excluded), which is what grows with the batch and the O((n + m)^2) attention.
  It is counted exactly with ``torch.autograd.graph.saved_tensors_hooks``, so it is the same on any
  machine; CPU allocators keep no peak statistic to report instead. On a GPU the CUDA allocator's
  peak for the step (``torch.cuda.max_memory_allocated``, parameters included) is printed too;
- collate ms: padding the per-example (m, n) phrase memberships, built once when examples are
  indexed, into the batch's (B, M, n) tensor, as the tagger's ``collate`` does every batch
  (outside the timed step).

    python benchmarks/hypernode_speed.py [--lengths 10 20 40 60 80 100] [--batch-size 16] [--device cpu]
"""

import argparse
import statistics
import time

import torch

from toolkit.modules.encoders import HypernodeTransformerEncoder, TransformerEncoder
from toolkit.modules.transformer_settings import TransformerSettings
from toolkit.phrases import NgramPhrases


def saved_activation_bytes(step, parameters: set[int]) -> int:
    """Run *step* (a forward pass) and count the bytes of the storages autograd saves for backward."""
    storages: dict[int, int] = {}

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        storage = tensor.untyped_storage()
        if storage.data_ptr() not in parameters:
            storages[storage.data_ptr()] = storage.nbytes()
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        output = step()
    return output, sum(storages.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lengths", type=int, nargs="+", default=[10, 20, 40, 60, 80, 100])
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--dim", type=int, default=256)
    parser.add_argument("--layers", type=int, default=3)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = parser.parse_args()
    device = torch.device(args.device)
    torch.manual_seed(0)
    size = dict(layers=TransformerSettings(num_layers=args.layers, num_heads=args.heads, ff_dim=4 * args.dim, dropout=0.1))
    encoders = {
        "transformer": TransformerEncoder(args.dim, **size),
        "hypernode k=2": HypernodeTransformerEncoder(args.dim, NgramPhrases(2), **size),
        "hypernode k=3": HypernodeTransformerEncoder(args.dim, NgramPhrases(3), **size),
    }
    for encoder in encoders.values():
        encoder.to(device).train()
    parameters = {p.untyped_storage().data_ptr() for encoder in encoders.values() for p in encoder.parameters()}
    cuda = device.type == "cuda"
    print(
        f"device {device}, torch {torch.__version__}, {torch.get_num_threads()} threads; batch {args.batch_size} sentences, "
        f"d {args.dim}, {args.layers} layers, {args.heads} heads; median of {args.repeats} training steps (forward + backward)\n"
    )
    header = "| n | encoder | nodes n+m | ms/batch | ratio | activation MiB | ratio | collate ms |" + (" CUDA peak MiB |" if cuda else "")
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    for n in args.lengths:
        x = torch.randn(args.batch_size, n, args.dim, device=device)
        mask = torch.ones(args.batch_size, n, dtype=torch.bool, device=device)
        inputs, collate_ms = {}, {}
        for name, encoder in encoders.items():
            if isinstance(encoder, HypernodeTransformerEncoder):
                indexed = [encoder.hypernodes(["w"] * n) for _ in range(args.batch_size)]  # index time
                start = time.perf_counter()
                membership = encoder.batch_hypernodes(indexed, n)
                collate_ms[name] = 1000 * (time.perf_counter() - start)
                inputs[name] = {"hypernodes": membership.to(device)}
            else:
                inputs[name] = {}
        times: dict[str, list[float]] = {name: [] for name in encoders}
        memory, peaks = {}, {}
        for repeat in range(args.repeats + 1):  # the first round warms up
            for name, encoder in encoders.items():
                encoder.zero_grad(set_to_none=True)
                if cuda:
                    torch.cuda.synchronize()
                    torch.cuda.reset_peak_memory_stats()
                start = time.perf_counter()
                output, saved = saved_activation_bytes(lambda encoder=encoder, kwargs=inputs[name], x=x, mask=mask: encoder(x, mask, **kwargs), parameters)
                output.square().mean().backward()
                if cuda:
                    torch.cuda.synchronize()
                    peaks[name] = torch.cuda.max_memory_allocated() / 2**20
                if repeat:
                    times[name].append(1000 * (time.perf_counter() - start))
                memory[name] = saved / 2**20
        base_time, base_memory = statistics.median(times["transformer"]), memory["transformer"]
        for name in encoders:
            phrases = inputs[name]["hypernodes"].size(1) if inputs[name] else 0
            median = statistics.median(times[name])
            row = (
                f"| {n} | {name} | {n + phrases} | {median:.1f} | {median / base_time:.2f} | {memory[name]:.1f} | "
                f"{memory[name] / base_memory:.2f} | {collate_ms.get(name, 0.0):.2f} |"
            )
            print(row + (f" {peaks[name]:.0f} |" if cuda else ""))


if __name__ == "__main__":
    main()
