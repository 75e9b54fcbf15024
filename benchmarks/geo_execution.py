"""Executing GEO's gold Prolog forms over Geobase: how many run, how many answer something, how fast.

For each of ``geo_prolog_{train,test,test_fixed}.tsv`` under ``DATA_ROOT/geo-raw``: the gold
forms that execute, that give a non-empty answer, that fail with an error or are stopped by a limit
(``timeout``: time or Prolog calls; ``memory``: the stack or the answer's length), and the wall
time per query (mean, median, max over the forms no limit stopped) with one SWI-Prolog
worker, one form a call, memo off (repeated forms are timed again; start-up is reported apart). ``--show`` lists the forms that fail and why.

    python benchmarks/geo_execution.py [--data DATA_ROOT/geo-raw] [--timeout 60] [--max-inferences 300000000] [--show]
"""

import argparse
import time
from pathlib import Path

from toolkit.execution import GeoQueryProlog
from toolkit.params import data_root

SPLITS = ("train", "test", "test_fixed")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(Path(data_root()) / "geo-raw"), help="the folder holding the tsv files, geobase.pl and geoquery.pl")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds a query may run (the executor's default)")
    parser.add_argument("--max-inferences", type=int, default=300_000_000, help="Prolog calls a query may make (the executor's default)")
    parser.add_argument("--show", action="store_true", help="list every gold form that does not execute")
    args = parser.parse_args()
    data = Path(args.data)
    with GeoQueryProlog(str(data), workers=1, timeout_seconds=args.timeout, cache_size=0, max_inferences=args.max_inferences) as executor:
        start = time.perf_counter()
        executor.execute(["answer(A, state(A))"])
        print(f"worker start-up and first query: {time.perf_counter() - start:.2f} s")
        print(
            f"{'split':<11} {'forms':>5} {'execute':>7} {'non-empty':>9} {'error':>5} {'timeout':>7} {'memory':>6} {'mean ms':>8} {'median':>7} {'max ms':>7}  (times: forms that ran)"
        )
        for split in SPLITS:
            path = data / f"geo_prolog_{split}.tsv"
            forms = [line.split("\t")[1] for line in path.read_text().splitlines() if "\t" in line]
            denotations, seconds = [], []
            for form in forms:
                start = time.perf_counter()
                denotations.extend(executor.execute([form]))
                seconds.append(time.perf_counter() - start)
            executed = sum(denotation.ok for denotation in denotations)
            non_empty = sum(denotation.ok and bool(denotation.answers) for denotation in denotations)
            errors = sum(denotation.failure == "error" for denotation in denotations)
            timeouts = sum(denotation.failure == "timeout" for denotation in denotations)
            memory = sum(denotation.failure == "memory" for denotation in denotations)
            ran = sorted(1000 * elapsed for elapsed, denotation in zip(seconds, denotations) if denotation.failure not in ("timeout", "memory"))
            mean, median, longest = sum(ran) / len(ran), ran[len(ran) // 2], ran[-1]
            print(f"{split:<11} {len(forms):>5} {executed:>7} {non_empty:>9} {errors:>5} {timeouts:>7} {memory:>6} {mean:>8.1f} {median:>7.2f} {longest:>7.0f}")
            if args.show:
                for number, (form, denotation) in enumerate(zip(forms, denotations), 1):
                    if not denotation.ok or not denotation.answers:
                        print(f"  {path.name}:{number}: {denotation} {form}")


if __name__ == "__main__":
    main()
