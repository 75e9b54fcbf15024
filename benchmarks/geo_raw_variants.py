"""Denotation accuracy and exact match of raw-GEO test predictions (``toolkit predict`` output, one
JSON record per test question, in order), against the gold queries' answers from SWI-Prolog.

For predictions made where ``swipl`` is missing (``benchmarks/geo_raw_variants.sh`` on a GPU machine)::

    python benchmarks/geo_raw_variants.py runs/variants/*.jsonl [--test $DATA_ROOT/geo-raw/geo_prolog_test.tsv]
"""

import argparse
import json
from pathlib import Path

from toolkit.execution.prolog import GeoQueryProlog
from toolkit.params import data_root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("predictions", nargs="+", type=Path)
    parser.add_argument("--test", type=Path, default=Path(data_root()) / "geo-raw" / "geo_prolog_test.tsv")
    args = parser.parse_args()
    gold = [line.rstrip("\n").split("\t")[1] for line in args.test.read_text(encoding="utf-8").splitlines() if line.strip()]
    with GeoQueryProlog(str(args.test.parent), workers=2) as executor:
        answers = executor.execute(gold)
        print("| predictions | denotation | exact | queries that fail |\n| --- | ---: | ---: | ---: |")
        for path in args.predictions:
            forms = [json.loads(line).get("logical_form") or "" for line in path.read_text(encoding="utf-8").splitlines()]
            if len(forms) != len(gold):
                raise SystemExit(f"{path}: {len(forms)} records for {len(gold)} test questions")
            predicted = executor.execute(forms)
            right = sum(truth.ok and guess == truth for truth, guess in zip(answers, predicted))
            exact = sum(form == query for form, query in zip(forms, gold))
            failed = sum(not guess.ok for guess in predicted)
            print(f"| {path.stem} | {100 * right / len(gold):.1f} | {100 * exact / len(gold):.1f} | {failed} |")


if __name__ == "__main__":
    main()
