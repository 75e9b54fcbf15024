"""Trees per second through each tree codec: encode (oracle) and decode (replay the state machine).

    python benchmarks/tree_codec_speed.py [--data DATA_ROOT/atis/train.tsv] [--repeats 3]

The `bracketed` sequence grammar runs side by side as the baseline of the ratio column.
"""

import argparse
import time
from pathlib import Path

import tree_codecs  # noqa: F401  (registers the codecs)
from toolkit.data.dataset_readers import TsvReader
from toolkit.grammars import Grammar
from toolkit.params import data_root


def trees_per_second(grammar: Grammar, examples, repeats: int) -> float:
    start = time.perf_counter()
    for _ in range(repeats):
        for example in examples:
            symbols = grammar.oracle(example)
            state = grammar.initial_state(example)
            for symbol in symbols:
                state.features()
                state = state.apply(symbol)
            assert state.result() == grammar.gold(example)
    return repeats * len(examples) / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=str(Path(data_root()) / "atis" / "train.tsv"))
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    examples = TsvReader().read(args.data)
    grammars = {
        name: Grammar.from_params({"type": name, **extra})
        for name, extra in [("bracketed", {"max_length": 200}), ("lcrs_dfs", {}), ("lcrs_bfs", {}), ("nary_dfs", {"max_degree": 16})]
    }
    rates = {name: trees_per_second(grammar, examples, args.repeats) for name, grammar in grammars.items()}
    print(f"{args.data}: {len(examples)} logical forms, encode + decode (oracle, then replay with features), {args.repeats} passes\n")
    print("| grammar | trees/s | ratio to bracketed |\n|---|---|---|")
    for name, rate in rates.items():
        print(f"| {name} | {rate:,.0f} | {rate / rates['bracketed']:.2f} |")


if __name__ == "__main__":
    main()
