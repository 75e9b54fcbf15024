r"""A UD treebank's speed–accuracy frontier: our dependency parsers against spaCy's, scored and timed in one run.

Every parser is scored on the treebank's test split (``--treebank``, EWT by default) on the gold
words: LAS with full relations (subtypes compared: ``nmod:poss`` against ``nmod`` is wrong), every word
including punctuation (our ``attachment_scores`` metric); and universal LAS, which compares only the
universal part of a relation, as the CoNLL 2018 evaluation script does (0.1 to 0.25 higher on EWT;
also fair to a released pipeline trained on an older release, which may lack some subtypes), and UPOS and FEATS accuracy where
the parser tags them. It is timed on the dev sentences, one thread by default, all parsers
alternating in this one process (so a change of load hits them all alike; the ratios, to the
first spaCy row, are what to quote). The parsers:

- spaCy's pipeline trained on the treebank by its own efficiency recipe (``benchmarks/spacy_ud.py``:
  trained into ``--spacy`` on the first run and reused after; about 25 CPU minutes on EWT);
- released spaCy pipelines trained on the treebank, by name (``--spacy-model fr_core_news_sm``);
- on EWT, ``en_core_web_sm`` for its speed (it was trained on other data and other labels: not scored);
- each ``--archive``, greedy, and with ``--beam-size`` (``0``: greedy only); with ``--quantize``,
  also greedy with its Linear layers in int8 (``toolkit.quantization``).

The table goes to stdout, the points to ``--json``, and the plot (LAS against words/s, one point
per parser, the frontier drawn through the points no other beats on both) to ``--plot``. Needs the
spacy extra (the spaCy rows are skipped without it; ``ud-anchors`` adds the French pipelines) and
matplotlib for the plot:

    pip install "parsing-toolkit[spacy,viz]"
    python benchmarks/dependency_frontier.py --spacy runs/spacy_ewt \
        --archive runs/ewt_hashed_2l/model.tar.gz --archive runs/ewt_minilm/model.tar.gz \
        [--quantize] [--beam-size 5] [--threads 1] [--repeats 2] [--plot docs/images/ewt_frontier.png] [--json frontier.json]
    python benchmarks/dependency_frontier.py --treebank fr_sequoia --spacy-model fr_core_news_sm \
        --spacy-model fr_core_news_md --archive runs/ud_fr/model.tar.gz --quantize
"""

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path

import torch

import transition_systems  # noqa: F401  (registers the systems)
from toolkit.archive import load_archive
from toolkit.data.dataset_readers import DatasetReader
from toolkit.data.example import Example
from toolkit.data.ud_treebanks import find_treebank
from toolkit.decoding import BeamSearch, GreedySearch
from toolkit.evaluation import predict, score
from toolkit.extras import install_hint
from toolkit.grammars.tags import gold_tags
from toolkit.metrics.accuracy import TagAccuracy
from toolkit.metrics.attachment import AttachmentScores
from toolkit.params import data_root
from toolkit.quantization import quantize

Parse = Callable[[list[list[str]]], object]


def our_parsers(archive: str, beam_size: int, int8: bool, max_tokens: int) -> dict[str, Parse]:
    """The archive's parser greedy and with beam search, and with *int8* greedy with int8 Linear layers: name -> words -> trees."""
    name = Path(archive).parent.name
    greedy = GreedySearch(max_steps=2000)
    model = load_archive(archive, "cpu").model
    variants = [("greedy", model, greedy)]
    if beam_size > 1:
        variants.append((f"beam {beam_size}", model, BeamSearch(beam_size=beam_size, max_steps=2000)))
    if int8:
        variants.append(("int8, greedy", quantize(load_archive(archive, "cpu").model, "int8"), greedy))
    return {
        f"{name}, {label}": (lambda sentences, m=model, s=search: predict(m, [Example(words) for words in sentences], max_tokens, s))
        for label, model, search in variants
    }


def spacy_parsers(treebank: str, directory: Path | None, models: list[str]) -> tuple[dict[str, Parse], set[str], str | None]:
    """SpaCy's anchors: its recipe trained on *treebank* into *directory* (if given), the released
    pipelines *models*, and on EWT ``en_core_web_sm`` for its speed; the names to score; why any is missing.
    """
    from dependency_speed import SPACY_MODEL, spacy_parser
    from spacy_ud import load, train

    parsers, scored, missing = {}, set(), None
    if directory is not None:
        pipeline = "tagger,parser" if treebank == "en_ewt" else "morphologizer,parser"  # EWT's anchor as it was trained
        parsers[f"spaCy, {treebank}, efficiency recipe"] = load(train(directory, treebank, pipeline=pipeline))
    for model in models:
        try:
            parsers[f"spaCy {model}"] = load(model)
        except OSError:
            missing = f"the spaCy pipeline {model} is not installed (the French ones: {install_hint('ud-anchors')})"
    scored = set(parsers)
    if treebank == "en_ewt":
        small, missing = spacy_parser()
        if small is not None:
            parsers[f"spaCy {SPACY_MODEL} (not trained on EWT: speed only)"] = small
    return parsers, scored, missing


def universal(tree) -> dict[str, list]:
    """*tree*'s heads and relations without their subtypes (``nmod`` for ``nmod:poss``): the relations a
    pipeline trained on an older release of the treebank can all predict.
    """
    heads, deprels = (tree["heads"], tree["deprels"]) if isinstance(tree, dict) else (tree.heads, tree.deprels)
    return {"heads": list(heads), "deprels": [deprel.split(":")[0] for deprel in deprels]}


def scores(predictions: list, test: list[Example]) -> dict[str, float]:
    """LAS (full and universal relations), and UPOS and FEATS accuracy where the parser tags them."""
    golds = [example.target for example in test]
    result = {"LAS": score(predictions, test, [AttachmentScores()])["las"]}
    result["universal LAS"] = score([universal(tree) for tree in predictions], [Example(e.tokens, universal(e.target)) for e in test], [AttachmentScores()])[
        "las"
    ]
    for field in ("upos", "feats"):
        if all(gold_tags(tree, field) is not None for tree in predictions) and all(gold_tags(gold, field) is not None for gold in golds):
            result[field.upper()] = score(predictions, test, [TagAccuracy(field)])["tag_accuracy"]
    return {name: 100 * value for name, value in result.items()}


def frontier(points: dict[str, tuple[float, float]]) -> list[str]:
    """The names of the points (words/s, LAS) that no other point beats on both, fastest first."""
    best = [name for name, (speed, las) in points.items() if not any(s >= speed and a >= las and (s, a) != (speed, las) for s, a in points.values())]
    return sorted(best, key=lambda name: -points[name][0])


def plot(points: dict[str, tuple[float, float]], path: Path, title: str) -> None:
    """LAS against words/s (log scale), spaCy's points and ours apart, the frontier drawn through its points."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    figure, axes = pyplot.subplots(figsize=(8, 5))
    for name, (speed, las) in points.items():
        ours = not name.startswith("spaCy")
        axes.scatter(speed, las, marker="o" if ours else "s", color="tab:blue" if ours else "tab:orange", zorder=3)
        axes.annotate(name, (speed, las), textcoords="offset points", xytext=(4, 4), fontsize=7)
    line = frontier(points)
    axes.plot([points[name][0] for name in line], [points[name][1] for name in line], color="grey", linestyle="--", zorder=2)
    axes.set_xscale("log")
    axes.set_xlabel("words/s (log scale)")
    axes.set_ylabel("test LAS")
    axes.set_title(title, fontsize=9)
    axes.grid(True, which="both", alpha=0.3)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--treebank", default="en_ewt", help="a UD treebank under DATA_ROOT, by name: scored on its test split, timed on its dev split")
    parser.add_argument("--sentences", type=int, default=None, help="time on only the first N dev sentences")
    parser.add_argument("--archive", action="append", default=[], help="a trained dependency parser (repeatable)")
    parser.add_argument(
        "--spacy", type=Path, default=None, help="spaCy's recipe trained on the treebank, in this folder (trained there if empty; omit to leave it out)"
    )
    parser.add_argument(
        "--spacy-model", action="append", default=[], help="a released spaCy pipeline trained on the treebank, by name, e.g. fr_core_news_sm (repeatable)"
    )
    parser.add_argument("--beam-size", type=int, default=5)
    parser.add_argument("--quantize", action="store_true", help="also run each archive with int8 Linear layers")
    parser.add_argument("--max-tokens", type=int, default=8192)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--plot", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    treebank = find_treebank(args.treebank, data_root())
    reader = DatasetReader.by_name("conllu")()
    test = reader.read(treebank.test, whole=True)
    timing = [example.tokens for example in reader.read(treebank.dev, whole=True)][: args.sentences]
    from dependency_speed import words_per_second  # beside this file

    parsers: dict[str, Parse] = {}
    for archive in args.archive:
        parsers.update(our_parsers(archive, args.beam_size, args.quantize, args.max_tokens))
    try:
        spacy, scored, missing = spacy_parsers(args.treebank, args.spacy, args.spacy_model)
    except ImportError:
        spacy, scored, missing = {}, set(), f"spaCy is not installed: {install_hint('spacy')}"
    parsers.update(spacy)
    scored |= {name for name in parsers if not name.startswith("spaCy")}

    results = {name: scores(list(parsers[name]([example.tokens for example in test])), test) for name in parsers if name in scored}
    speed = words_per_second(parsers, timing, args.repeats)
    anchor_name = next((name for name in speed if name.startswith("spaCy") and name in scored), None)
    anchor = speed[anchor_name] if anchor_name else None
    words = sum(map(len, timing))
    print(
        f"\ntest: {treebank.test} ({sum(len(e.tokens) for e in test):,} words); timed on {len(timing):,} dev sentences ({words:,} words) x {args.repeats}, {args.threads} thread(s)\n"
    )
    columns = ["LAS", "universal LAS", "UPOS", "FEATS"]
    print(f"| parser | test {' | '.join(columns)} | words/s | ratio to {anchor_name or 'spaCy'} |\n|{' --- |' * (len(columns) + 3)}")
    for name in parsers:
        ratio = f"{speed[name] / anchor:.2f}" if anchor else "n/a"
        cells = [f"{results[name][column]:.2f}" if column in results.get(name, {}) else "–" for column in columns]
        print(f"| {name} | {' | '.join(cells)} | {speed[name]:,.0f} | {ratio} |")
    if missing:
        print(f"\nspaCy rows skipped: {missing}")
    points = {name: (speed[name], results[name]["LAS"]) for name in results}
    print("\nfrontier (fastest first): " + "; ".join(frontier(points)))
    if args.json:
        args.json.write_text(json.dumps({name: {"words_per_second": speed[name], **results[name]} for name in results}, indent=1) + "\n")
    if args.plot:
        plot(points, args.plot, f"UD {args.treebank} test, words/s on {len(timing):,} dev sentences, {args.threads} CPU thread(s), {time.strftime('%Y-%m-%d')}")
        print(f"plot: {args.plot}")


if __name__ == "__main__":
    main()
