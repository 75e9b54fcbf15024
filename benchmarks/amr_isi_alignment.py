"""The AMR aligner against ISI's gold alignments of Bio AMR (``../shared``: 610 graphs), by ISI's conventions.

The graphs of the Bio split's test part (``jsonnet_configs/splits/amr_bio.json``: the article
``a_pmid_2256_9000``, 96 graphs) are held apart for the final figure; the others are where the
aligner is developed. Precision, recall and F1 on concept nodes (``score_aligner``: a name's
strings count for its ``name`` node, an entity whose type the gold leaves unaligned is not scored),
rules alone and with force-alignment, and the commonest misses on the development part.

    python benchmarks/amr_isi_alignment.py [--dictionaries DIR] [--held-out]
"""

import argparse
import json
import logging
from collections import Counter
from pathlib import Path

import transition_systems  # noqa: F401  (registers the amr grammar)
from toolkit.data.tokenization import lemmatize
from toolkit.params import data_root
from transition_systems.amr import AmrTransitionSystem
from transition_systems.amr.gold_alignments import isi_type_cues, read_gold_alignments, score_aligner
from transition_systems.amr.graph import GoldGraph
from transition_systems.amr.sentence import Sentence

REPOSITORY = Path(__file__).absolute().parents[1]
GOLD = "amr-bio-partial/alignment-release-training-bio-first610.txt"


def misses(grammar: AmrTransitionSystem, graphs) -> Counter:
    """Gold-aligned concepts the rules leave unaligned or put elsewhere: their labels."""
    missed: Counter = Counter()
    for item in graphs:
        gold_graph = GoldGraph.of(item.graph)
        alignment = grammar.align(gold_graph, Sentence(item.tokens, lemmatize(item.tokens)))
        cues = isi_type_cues(gold_graph, alignment, lemmatize(item.tokens))
        for node, tokens in item.gold.items():
            if node in gold_graph.constants:
                continue
            ours = cues.get(node, alignment.tokens.get(node)) if node not in alignment.forced else None
            if ours not in tokens:
                missed[gold_graph.labels[node]] += 1
    return missed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dictionaries", default=str(Path(data_root()) / "amr-dictionaries"))
    parser.add_argument("--held-out", action="store_true", help="score the held-apart test part too (for the final figure only)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    test_ids = set(json.loads((REPOSITORY / "jsonnet_configs" / "splits" / "amr_bio.json").read_text())["test"])
    graphs = read_gold_alignments(Path(data_root()) / GOLD)
    parts = {"development": [g for g in graphs if g.graph.metadata.get("id") not in test_ids]}
    if args.held_out:
        parts["held apart (test)"] = [g for g in graphs if g.graph.metadata.get("id") in test_ids]
    grammar = AmrTransitionSystem(dictionaries=args.dictionaries, mentions="none")
    print("| part | graphs | rules: P / R / F1 | with force-alignment: P / R / F1 |\n|---|---:|---:|---:|")
    for name, part in parts.items():
        rules, forced = score_aligner(grammar, part), score_aligner(grammar, part, forced=True)
        print(
            f"| {name} | {len(part)} | {rules.precision:.3f} / {rules.recall:.3f} / {rules.f1:.3f} "
            f"| {forced.precision:.3f} / {forced.recall:.3f} / {forced.f1:.3f} |"
        )
    print("\ncommonest misses (development):", misses(grammar, parts["development"]).most_common(15))


if __name__ == "__main__":
    main()
