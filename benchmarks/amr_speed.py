"""AMR speed on The Little Prince: the oracle, Smatch scoring, and (with an archive) parsing.

(Oracle quality, alignment and Smatch ceilings are in ``benchmarks/amr_alignment.py``.)

1. Oracle sentences/sec on the training split: the static oracle alone (alignment included), and
   ``Grammar.derive`` (oracle, then the state machine replaying it with stack/buffer features, as
   indexing for training does).
2. Smatch pairs/sec of the seeded ``smatch`` metric: identical pairs (each gold against its
   oracle replay) and unrelated pairs (each graph against the next one), where hill climbing works harder.
3. With ``--archive``: parse sentences/sec on the CPU (greedy and beam) on the test split, with Smatch.

    python benchmarks/amr_speed.py [--data DATA_ROOT/amr-little-prince] [--archive runs/amr/model.tar.gz]
        [--threads 2] [--repeats 1]

Speeds are only ever compared within this one run.
"""

import argparse
import time
from pathlib import Path

import transition_systems  # noqa: F401  (registers the amr grammar)
from toolkit.data.dataset_readers import DatasetReader
from toolkit.metrics.smatch import Smatch
from toolkit.params import data_root
from transition_systems.amr import AmrTransitionSystem

SPLITS = ("train", "dev", "test")


def rate(count: int, seconds: float) -> str:
    per_second = count / seconds
    return f"{per_second:,.0f}/s" if per_second >= 10 else f"{per_second:.2f}/s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=None, help="the amr-little-prince folder (default: DATA_ROOT/amr-little-prince)")
    parser.add_argument("--archive", default=None, help="a trained AMR parser, for parse speed")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    folder = args.data or Path(data_root()) / "amr-little-prince"
    reader = DatasetReader.by_name("penman")()
    data = {split: reader.read(folder / f"amr-bank-struct-v3.0-{split}.txt") for split in SPLITS}

    print("## Oracle speed (train split)\n")
    grammar = AmrTransitionSystem()
    grammar.fit(data["train"])
    examples = data["train"]
    start = time.perf_counter()
    for _ in range(args.repeats):
        for example in examples:
            grammar.oracle(example)
    oracle_seconds = time.perf_counter() - start
    start = time.perf_counter()
    for _ in range(args.repeats):
        for example in examples:
            grammar.derive(example)
    derive_seconds = time.perf_counter() - start
    print("| what | sentences/sec |\n|---|---:|")
    print(f"| oracle (alignment + actions) | {rate(args.repeats * len(examples), oracle_seconds)} |")
    print(f"| derive (oracle + replay with features) | {rate(args.repeats * len(examples), derive_seconds)} |")

    print("\n## Smatch speed (dev + test)\n")
    golds = [example.target for split in ("dev", "test") for example in data[split]]
    replays = [grammar.replay(example).result() for split in ("dev", "test") for example in data[split]]
    print("| pairs | count | pairs/sec | Smatch |\n|---|---:|---:|---:|")
    for name, predictions in (("oracle replay (fitted on train) vs gold", replays), ("next graph vs gold", golds[1:] + golds[:1])):
        metric = Smatch(seed=13)
        start = time.perf_counter()
        for _ in range(args.repeats):
            metric.reset()
            metric(predictions, golds)
        seconds = time.perf_counter() - start
        print(f"| {name} | {len(golds)} | {rate(args.repeats * len(golds), seconds)} | {100 * metric.get_metric()['smatch']:.2f} |")

    if args.archive:
        import torch

        from toolkit.archive import load_archive
        from toolkit.decoding import BeamSearch, GreedySearch
        from toolkit.evaluation import predict

        torch.set_num_threads(args.threads)
        model = load_archive(args.archive, "cpu").model
        test = data["test"]
        print("\n## Parse speed on the CPU (test split)\n")
        print("| search | sentences/sec | Smatch |\n|---|---:|---:|")
        max_steps = model.search.max_steps
        for name, search in (("greedy", GreedySearch(max_steps=max_steps)), ("beam 5", BeamSearch(beam_size=5, max_steps=max_steps))):
            start = time.perf_counter()
            graphs = predict(model, test, 8192, search)
            seconds = time.perf_counter() - start
            metric = Smatch(seed=13)
            metric(graphs, [example.target for example in test])
            print(f"| {name} | {rate(len(test), seconds)} | {100 * metric.get_metric()['smatch']:.2f} |")


if __name__ == "__main__":
    main()
