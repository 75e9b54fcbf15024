"""Decoding speed of untrained parsers built from the shipped configs, and their outputs, for comparing code versions.

For each config: the grammar (fitted), vocabulary and model are built as ``toolkit train`` builds
them, with seeded random weights, and the first ``--sentences`` training sentences are decoded in
length-sorted batches (``predict``, ``--max-tokens`` source tokens each) by each search. It prints
sentences/s and words/s, and with ``--out`` writes every output, one per line, so two checkouts
can be compared: their outputs must be identical and their speeds are comparable when measured back
to back on the same machine. The script only uses interfaces older versions have too:

    git worktree add /tmp/before <commit>
    PYTHONPATH=/tmp/before python benchmarks/decoding_speed.py --out /tmp/before.txt
    python benchmarks/decoding_speed.py --out /tmp/after.txt && cmp /tmp/before.txt /tmp/after.txt

Untrained models run to their grammars' limits (``max_nodes``, the AMR action budget), so these are
the speeds of long outputs; a transition system takes 2n actions whatever its weights.
"""

import argparse
import time
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]
RUNS = {  # config: searches and sentences (AMR's untrained outputs are long: fewer sentences)
    "ud_ewt_stack_transformer": (["greedy", "beam 5"], 200),
    "geo_seq2tree": (["greedy", "beam 5"], 100),
    "geo_transformer": (["greedy", "greedy, no cache", "beam 5"], 200),
    "amr_stack_transformer": (["greedy", "beam 5"], 20),
}


def build(config: str):
    """The untrained model of *config* (seeded) and its training examples."""
    from toolkit.data.dataset_readers import DatasetReader
    from toolkit.from_params import construct
    from toolkit.grammars.grammar import Grammar
    from toolkit.models.model import Model
    from toolkit.params import Params
    from toolkit.plugins import import_plugins
    from toolkit.training.train import build_vocabulary, drop_skipped

    import_plugins()
    params = Params.from_file(REPO / "jsonnet_configs" / f"{config}.jsonnet")
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    grammar = Grammar.from_params(params.pop("grammar", {}))
    examples = reader.read(params.pop("train_data_path"))
    grammar.fit(examples)
    examples = drop_skipped(grammar, examples, "training")
    vocab = construct(build_vocabulary, params.pop("vocabulary", {}), examples=examples, grammar=grammar)
    torch.manual_seed(13)
    return Model.from_params(params.pop("model"), vocab=vocab, grammar=grammar).eval(), examples


def search_named(name: str, max_steps: int):
    from toolkit.decoding import BeamSearch, GreedySearch

    if name.startswith("beam"):
        return BeamSearch(beam_size=int(name.split()[1]), max_steps=max_steps)
    return GreedySearch(max_steps=max_steps, use_cache="no cache" not in name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--configs", nargs="+", default=list(RUNS), choices=list(RUNS))
    parser.add_argument("--sentences", type=int, default=None, help="sentences per config (default: the config's own)")
    parser.add_argument("--max-tokens", type=int, default=8192)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", default=None, help="write every output here, one per line")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    from toolkit.evaluation import predict

    outputs = []
    print("| config | search | sentences | sentences/s | words/s |\n|---|---|---|---|---|")
    for config in args.configs:
        names, count = RUNS[config]
        model, examples = build(config)
        sentences = examples[: args.sentences or count]
        words = sum(len(example.tokens) for example in sentences)
        for name in names:
            search = search_named(name, model.search.max_steps)
            predict(model, sentences[:2], args.max_tokens, search)  # warm-up
            start = time.perf_counter()
            results = predict(model, sentences, args.max_tokens, search)
            seconds = time.perf_counter() - start
            print(f"| {config} | {name} | {len(sentences)} | {len(sentences) / seconds:,.2f} | {words / seconds:,.0f} |", flush=True)
            outputs += [f"{config}\t{name}\t{result}" for result in results]
    if args.out:
        Path(args.out).write_text("\n".join(outputs) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
