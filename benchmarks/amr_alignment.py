"""AMR alignment and oracle quality on The Little Prince: what the aligner reaches, and what the oracle rebuilds.

1. Per split: concept and constant nodes, the share aligned by rules, force-aligned (no rule
   reached them) and dependent (leaves made with their parent).
2. Oracle Smatch per split (seeded smatch), with and without force-alignment, the grammar's
   PRED label restriction fitted on the split itself (what ``toolkit oracle CONFIG DATA``
   reports: the ceiling the transition system and the aligner set) and fitted on the training
   split (the ceiling a trained parser really has). Fitted on train, a gold label is lost when
   the fitted grammar does not allow the action the oracle makes it with: a PRED label never
   seen with its lemma in training (nor allowed otherwise, as ``more`` is at a comparative and ``-`` at a negated word), or
   a copy whose sense or particle training never copied. The table splits those into labels
   that training never saw at all (no parser trained on it can produce them) and labels seen
   only with other lemmas.
3. The aligner against hand-made gold alignments (``tests/fixtures/amr_gold_alignments.txt``,
   23 test sentences, 155 concept nodes; ``amr_gold_alignments_entities.txt``, 20 sentences of
   news- and biography-style text with names and dates, 117 concept nodes; ``amr_gold_alignments_isi.txt``,
   8 sentences in the style of ISI's biomedical release, markup tags in ``# ::tok`` and a name's strings
   aligned, 47 concept nodes, scored by ISI's conventions): precision, recall
   and F1 on concept nodes, rules only and with force-alignment.

Each with and without USC/ISI's dictionaries (``--dictionaries``, default DATA_ROOT/amr-dictionaries).

Smatch's hill climbing takes most of the time on long sentences, and grows with about the fourth
power of a graph's size, while aligning and the oracle grow linearly: The Little Prince's graphs
joined into inputs of about 90 tokens took 7 times as long as the same text as sentences (under
cProfile), 80% of it in hill climbing. The replays of different grammars mostly rebuild the same
graphs, so each (result, gold) pair is scored once per run (its score is seeded, so always the
same), the training split is replayed once (fitted on itself is fitted on train), and the
alignment counts come from the replays.

    python benchmarks/amr_alignment.py [--data DATA_ROOT/amr-little-prince] [--dictionaries DIR] [--gold FILE ...] [--mentions auto|spacy|rules|none]
        [--held-out FILE]
"""

import argparse
from collections import Counter
from dataclasses import replace
from pathlib import Path

import transition_systems  # noqa: F401  (registers the amr grammar)
from toolkit.data.dataset_readers import DatasetReader
from toolkit.metrics.smatch import Smatch, one_line
from toolkit.oracle import replay_oracle
from toolkit.params import data_root
from transition_systems.amr import AmrTransitionSystem
from transition_systems.amr.gold_alignments import read_gold_alignments, score_aligner
from transition_systems.amr.state import PRED, SENSED_COPIES

SPLITS = ("train", "dev", "test")
REPOSITORY = Path(__file__).absolute().parents[1]


class SmatchOnce(Smatch):
    """Smatch that scores each (result, gold) pair once per run and adds the counts it found again where the pair recurs."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.scored: dict[tuple[str, str], dict[str, float]] = {}

    def __call__(self, predictions, golds) -> None:
        for prediction, gold in zip(predictions, golds):
            key = (str(prediction), one_line(gold))
            if key in self.scored:
                for name, count in self.scored[key].items():
                    self._counts[name] += count
            else:
                before = self.state()
                super().__call__([prediction], [gold])
                self.scored[key] = {name: self._counts[name] - before[name] for name in self.count_names}


def lost_labels(fitted: AmrTransitionSystem, examples: list) -> Counter:
    """Gold PRED labels and copies the grammar fitted on train does not allow where the oracle needs them, by why.

    The oracle is replayed as training replays it, from ``derivation_state``: a parse's span guards (``initial_state``)
    would cut a span the gold graph needs (six ``figure`` nodes from ``Figures 1A-1F``) and refuse its next action.
    """
    free = AmrTransitionSystem(force_align=fitted.force_align, dictionaries=fitted.dictionaries, frames=fitted.frames, mentions=fitted.mentions)
    seen = {label for labels in (fitted.pred_labels or {}).values() for label in labels}
    counts: Counter = Counter()
    for example in examples:
        state = free.derivation_state(example)
        for action in free.oracle(example):
            kind, _, label = action.partition(":")
            if (kind == PRED or kind in SENSED_COPIES) and action not in replace(state, system=fitted).allowed():
                # a copy's sense or particle no training copy had is never in training, like an unseen PRED label
                counts["never in training" if kind != PRED or label not in seen else "seen with other lemmas"] += 1
            state = state.apply(action)
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=None, help="the amr-little-prince folder (default: DATA_ROOT/amr-little-prince)")
    parser.add_argument("--dictionaries", default=str(Path(data_root()) / "amr-dictionaries"))
    parser.add_argument("--mentions", default="auto", choices=("auto", "spacy", "rules", "none"), help="the grammar's NAME and DATE mentions")
    parser.add_argument("--held-out", type=Path, default=None, help="a PENMAN file scored as one more split (e.g. tests/fixtures/amr_entities_heldout.txt)")
    fixtures = REPOSITORY / "tests" / "fixtures"
    gold_files = ("amr_gold_alignments.txt", "amr_gold_alignments_entities.txt", "amr_gold_alignments_isi.txt")
    parser.add_argument("--gold", type=Path, nargs="+", default=[fixtures / name for name in gold_files])
    args = parser.parse_args()
    folder = args.data or Path(data_root()) / "amr-little-prince"
    reader = DatasetReader.by_name("penman")()
    data = {split: reader.read(folder / f"amr-bank-struct-v3.0-{split}.txt") for split in SPLITS}
    if args.held_out:  # another corpus, scored like a split (fitted on itself, and on The Little Prince's train)
        data[args.held_out.stem] = reader.read(args.held_out)
    gold = {path.name: read_gold_alignments(path) for path in args.gold}
    metric = SmatchOnce(AmrTransitionSystem().smatch_seed)  # the grammar's oracle metric, each pair scored once

    for dictionaries in (args.dictionaries, None):
        print(f"\n# dictionaries: {dictionaries or 'none'}\n")
        counts, rows = {}, []  # the alignment counts of each split (the aligner's alone: the same for every grammar here)
        for force in (True, False):
            on_train = AmrTransitionSystem(force_align=force, dictionaries=dictionaries, mentions=args.mentions)
            on_train.fit(data["train"])
            for split in data:
                itself = on_train
                if split != "train":
                    itself = AmrTransitionSystem(force_align=force, dictionaries=dictionaries, mentions=args.mentions)
                    itself.fit(data[split])
                report = replay_oracle(itself, data[split], [metric])
                counts.setdefault(split, report)
                smatch = {"itself": 100 * report["smatch"]}
                smatch["train"] = 100 * replay_oracle(on_train, data[split], [metric])["smatch"] if split != "train" else smatch["itself"]
                lost = lost_labels(on_train, data[split]) if split != "train" else Counter()
                rows.append(
                    f"| {split} | {'yes' if force else 'no'} | {smatch['itself']:.2f} | {smatch['train']:.2f} "
                    f"| {lost['never in training']} / {lost['seen with other lemmas']} |"
                )
        print("| split | nodes | rule-aligned | force-aligned | dependent |\n|---|---:|---:|---:|---:|")
        for split in data:
            report = counts[split]
            nodes = report["nodes"]
            print(
                f"| {split} | {nodes:,} | {report['rule_aligned_nodes']:,} ({100 * report['rule_aligned_nodes'] / nodes:.1f}%) "
                f"| {report['force_aligned_nodes']} | {report['dependent_nodes']} |"
            )
        print(
            "\n| split | force-aligned | Smatch, fitted on itself | Smatch, fitted on train | gold labels lost fitted on train: never in training / seen with other lemmas |"
        )
        print("|---|---|---:|---:|---:|")
        print("\n".join(rows))
        print("\n| gold alignments | aligner | correct | predicted | gold | precision | recall | F1 |\n|---|---|---:|---:|---:|---:|---:|---:|")
        for name, graphs in gold.items():
            for forced in (False, True):
                score = score_aligner(AmrTransitionSystem(dictionaries=dictionaries), graphs, forced=forced)
                aligner = "rules and force-alignment" if forced else "rules"
                print(
                    f"| {name} | {aligner} | {score.correct} | {score.predicted} | {score.gold} | {score.precision:.3f} | {score.recall:.3f} | {score.f1:.3f} |"
                )


if __name__ == "__main__":
    main()
