"""Speed and scores of the exact Smatch scorer against `smatch` 1.0.4 (and smatchpp's ILP when present).

    python benchmarks/smatch_speed.py [--limit N] [--pairs perturbed|different|both|largest]
        [--smatchpp-python /tmp/smatchpp_venv/bin/python]

Pairs are built from the Little Prince AMR 3.0 graphs: ``perturbed`` pairs a seeded perturbation
of each graph (test) with the graph (gold); ``different`` pairs graph i (test) with graph i+1
(gold), where hill-climbing struggles; ``largest`` pairs the 10 largest graphs with each other
(90 pairs, the worst case for an exact search).
Both scorers read the same PENMAN strings and are timed in the same run, parsing included.

smatchpp is GPL-3.0, so it is never a dependency: it is run only when ``--smatchpp-python``
names a Python (a separate virtual environment) that has it, in a subprocess, with the ILP solver
and the generic standardizer. Its per-pair counts are compared with this scorer under both triple
semantics: ``smatch`` (this scorer's default, as smatch 1.0.4 reads triples) and ``smatchpp``
(as smatchpp's generic standardizer reads them), so that a difference in the first comparison is
shown to come from triple semantics when the second one agrees.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.penman_perturb import perturb
from toolkit.metrics.exact_smatch import f_score, read_graph, score_pair

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "amr-little-prince" / "amr-bank-struct-v3.0.txt"

SMATCHPP_WORKER = r"""
import json, sys, time
from smatchpp import Smatchpp, solvers
from smatchpp.formalism.generic import tools
pairs = json.load(open(sys.argv[1]))
measure = Smatchpp(alignmentsolver=solvers.ILP(), graph_standardizer=tools.GenericStandardizer())
start = time.perf_counter()
out = []
for test, gold in pairs:
    match, _status, _alignment = measure.process_pair(test, gold)
    out.append([float(v) for v in match["main"]])
elapsed = time.perf_counter() - start
json.dump({"seconds": elapsed, "counts": out}, open(sys.argv[2], "w"))
"""


def read_graphs(path: Path) -> list[str]:
    graphs = []
    for block in path.read_text(encoding="utf-8").split("\n\n"):
        lines = [line.strip() for line in block.splitlines() if line.strip() and not line.startswith("#")]
        if lines:
            graphs.append(" ".join(lines))
    return graphs


def run_smatch(pairs: list[tuple[str, str]]) -> tuple[float, list[tuple[int, int, int]]]:
    import smatch

    start = time.perf_counter()
    counts = []
    for test, gold in pairs:
        counts.append(tuple(smatch.get_amr_match(test, gold)))
        smatch.match_triple_dict.clear()  # as smatch's own corpus loop does between pairs
    return time.perf_counter() - start, counts


def run_exact(pairs: list[tuple[str, str]], semantics: str = "smatch"):
    start = time.perf_counter()
    scores = [score_pair(test, gold, semantics) for test, gold in pairs]
    return time.perf_counter() - start, scores


def run_smatchpp(python: str, pairs: list[tuple[str, str]]):
    with tempfile.TemporaryDirectory() as tmp:
        pairs_file, out_file = os.path.join(tmp, "pairs.json"), os.path.join(tmp, "out.json")
        worker = os.path.join(tmp, "worker.py")
        Path(pairs_file).write_text(json.dumps(pairs))
        Path(worker).write_text(SMATCHPP_WORKER)
        subprocess.run([python, worker, pairs_file, out_file], check=True, cwd=tmp)
        result = json.loads(Path(out_file).read_text())
    return result["seconds"], result["counts"]


def semantic_differences(test: str, gold: str) -> list[str]:
    """The documented smatch/smatchpp triple-semantics differences that occur in a pair."""
    reasons = set()
    for text in (test, gold):
        a, b = read_graph(text, "smatch"), read_graph(text, "smatchpp")
        if any(name == "domain" for name, _, _ in a.relations) and ":mod" in text:
            reasons.add(":mod read as inverted :domain by smatch only")
        if ":consist-of" in text or ":prep-on-behalf-of" in text or ":prep-out-of" in text:
            reasons.add("-of exceptions (consist-of...) kept by smatch only")
        if len(a.attributes) != len(b.attributes):
            reasons.add("inverted edge to a constant: dropped by smatch only")
        if any(re.search(r"\s", quoted) for quoted in re.findall(r'"[^"]*"', text)):
            reasons.add("quoted constant with spaces: smatch keeps the first word only")
        for graph in (a, b):
            triples = [("a",) + t for t in graph.attributes] + [("r",) + t for t in graph.relations]
            if len(set(triples)) != len(triples):
                reasons.add("duplicate triples: smatch counts products of copies, smatchpp min of copies")
    return sorted(reasons)


def report(name: str, pairs, args) -> None:
    n = len(pairs)
    print(f"\n== {name}: {n} pairs ==")
    # warm up imports (penman, scipy.optimize, smatch) outside the timed loops
    score_pair(pairs[0][0], pairs[0][1])
    run_smatch(pairs[:1])
    smatch_seconds, smatch_counts = run_smatch(pairs)
    exact_seconds, exact = run_exact(pairs)
    print(f"smatch 1.0.4 : {n / smatch_seconds:8.1f} pairs/s  ({smatch_seconds:.2f} s)")
    print(f"exact_smatch : {n / exact_seconds:8.1f} pairs/s  ({exact_seconds:.2f} s)")
    totals = [sum(c[k] for c in smatch_counts) for k in range(3)]
    exact_totals = [sum(getattr(s, k) for s in exact) for k in ("matched", "test", "gold")]
    print(f"corpus F1: smatch {100 * f_score(*totals):.3f}  exact {100 * f_score(*exact_totals):.3f}")
    higher = sum(s.matched > c[0] for s, c in zip(exact, smatch_counts))
    lower = [k for k, (s, c) in enumerate(zip(exact, smatch_counts)) if s.matched < c[0]]
    count_mismatch = sum((s.test, s.gold) != (c[1], c[2]) for s, c in zip(exact, smatch_counts))
    print(f"exact > smatch on {higher} pairs, exact < smatch on {len(lower)} pairs {lower[:10]}, triple totals differ on {count_mismatch} pairs")
    proofs = {}
    for s in exact:
        proofs[s.proof] = proofs.get(s.proof, 0) + 1
    print("optimality proved by: " + ", ".join(f"{name} {count}" for name, count in sorted(proofs.items())))
    if not args.smatchpp_python:
        return
    if not os.path.exists(args.smatchpp_python):
        print(f"smatchpp: {args.smatchpp_python} not found, comparison skipped")
        return
    spp_seconds, spp = run_smatchpp(args.smatchpp_python, pairs)
    print(f"smatchpp ILP : {n / spp_seconds:8.1f} pairs/s  ({spp_seconds:.2f} s, its own process)")
    spp_totals = [sum(c[0] for c in spp), sum(c[2] for c in spp), sum(c[3] for c in spp)]
    print(f"corpus F1: smatchpp {100 * f_score(*spp_totals):.3f}")
    _, exact_pp = run_exact(pairs, "smatchpp")
    same_pp = [k for k in range(n) if (exact_pp[k].matched, exact_pp[k].test, exact_pp[k].gold) == (spp[k][0], spp[k][2], spp[k][3])]
    print(f"exact (smatchpp semantics) == smatchpp ILP (matched, test, gold) on {len(same_pp)}/{n} pairs")
    for k in sorted(set(range(n)) - set(same_pp))[:5]:
        print(
            f"  differs on pair {k}: exact {exact_pp[k].matched, exact_pp[k].test, exact_pp[k].gold}, smatchpp {spp[k]}; "
            f"{semantic_differences(*pairs[k]) or 'no known semantic difference'}"
        )
    same = [k for k in range(n) if abs(f_score(exact[k].matched, exact[k].test, exact[k].gold) - f_score(spp[k][0], spp[k][2], spp[k][3])) < 1e-12]
    print(f"exact (smatch semantics) F1 == smatchpp ILP F1 on {len(same)}/{n} pairs")
    unexplained = []
    reasons_count: dict[str, int] = {}
    for k in sorted(set(range(n)) - set(same)):
        reasons = semantic_differences(*pairs[k])
        for reason in reasons:
            reasons_count[reason] = reasons_count.get(reason, 0) + 1
        if not reasons:
            unexplained.append(k)
    for reason, count in sorted(reasons_count.items()):
        print(f"  {count:5d} differing pairs have: {reason}")
    print(f"  differing pairs with no documented semantic difference: {len(unexplained)} {unexplained[:10]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--pairs", choices=["perturbed", "different", "both", "largest"], default="both")
    parser.add_argument("--seed", type=int, default=0)
    default_spp = "/tmp/smatchpp_venv/bin/python"
    parser.add_argument("--smatchpp-python", default=default_spp if os.path.exists(default_spp) else None)
    args = parser.parse_args()
    graphs = read_graphs(args.data)[: args.limit]
    if args.pairs in ("perturbed", "both"):
        perturbed = [" ".join(perturb(g, seed=args.seed * 100003 + k).split()) for k, g in enumerate(graphs)]
        report("perturbed (perturbation vs gold)", list(zip(perturbed, graphs)), args)
    if args.pairs == "largest":  # the worst case: every ordered pair of the 10 largest graphs
        largest = sorted(graphs, key=lambda g: -len(read_graph(g).concepts))[:10]
        report("largest (10 largest graphs, all ordered pairs)", [(a, b) for a in largest for b in largest if a is not b], args)
    if args.pairs in ("different", "both"):
        report("different (gold i vs gold i+1)", [(graphs[k], graphs[(k + 1) % len(graphs)]) for k in range(len(graphs))], args)


if __name__ == "__main__":
    main()
