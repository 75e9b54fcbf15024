"""Ensembles against their members, side by side in one process: scores and decoding speed.

Each archive is decoded alone on DATA, then each ensemble of ``--groups`` (archive numbers from 1,
e.g. ``--groups 1,2 3,4 1,2,3,4``; by default the first two, three, ... archives), as
``toolkit evaluate FIRST DATA --ensemble SECOND ...`` decodes them: with the first archive's search,
resized by ``--beam-size`` with its other settings and checks kept. It prints every metric of the
archives, sentences/s, and the speed as a ratio to the first archive alone:

    python benchmarks/ensemble.py DATA ARCHIVE ARCHIVE [ARCHIVE ...] [--groups 1,2 ...] [--beam-size K] [--threads 1]

The archives must share their grammar and data (they differ under ``model``: seeds, encoders).
"""

import argparse
import time

import torch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data")
    parser.add_argument("archives", nargs="+")
    parser.add_argument("--groups", nargs="+", default=None, help="the ensembles to decode, each as archive numbers: 1,2 1,2,3")
    parser.add_argument("--beam-size", type=int, default=None)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    if len(args.archives) < 2:
        parser.error("give at least two archives")
    torch.set_num_threads(args.threads)

    from toolkit.archive import load_archive
    from toolkit.decoding import BeamSearch, search_with_beam
    from toolkit.evaluation import predict, score
    from toolkit.models.ensemble import ensemble_archive
    from toolkit.plugins import import_plugins

    BeamSearch.check_size(args.beam_size)  # before the archives load
    import_plugins()
    archives = [load_archive(path) for path in args.archives]
    examples = archives[0].dataset_reader.read(args.data, whole=True)
    runs = [(f"{number}. {path}", archive) for number, (path, archive) in enumerate(zip(args.archives, archives), start=1)]
    groups = (
        [[int(number) - 1 for number in group.split(",")] for group in args.groups] if args.groups else [list(range(k)) for k in range(2, len(archives) + 1)]
    )
    for group in groups:
        runs.append((f"ensemble of {', '.join(str(i + 1) for i in group)}", ensemble_archive([archives[i] for i in group], [args.archives[i] for i in group])))

    baseline = None
    for name, archive in runs:
        start = time.perf_counter()
        search = search_with_beam(archive.model.search, args.beam_size)
        metrics = score(predict(archive.model, examples, search=search), examples, archive.metrics)
        speed = len(examples) / (time.perf_counter() - start)
        if baseline is None:
            baseline = speed
            print(f"| archive | {' | '.join(metrics)} | sentences/s | speed ratio |\n|---|{'---|' * len(metrics)}---|---|")
        shown = " | ".join(f"{100 * value:.2f}" for value in metrics.values())
        print(f"| {name} | {shown} | {speed:,.1f} | {speed / baseline:.2f} |", flush=True)


if __name__ == "__main__":
    main()
