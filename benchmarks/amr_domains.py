"""The AMR oracle per domain: a config's grammar fitted on its training data, replayed on each domain of its
validation and test data (``jsonnet_configs/amr_two_domains.jsonnet``: The Little Prince and Bio AMR).

For each part it prints the oracle's Smatch (the ceiling a parser trained on that data has there), the
graphs it relabelled (a label the fitted grammar does not allow), the gold names a mention's ``NAME``
makes with the right type (``amr_other_text.entity_types``: what any parser that takes mentions makes), and the share of label actions (``PRED``,
copies with a sense, ``ENTITY``, ``NAME``, ...) that the oracle fitted on the part itself makes and the
training oracle never does: labels no model trained on the config's data has a row for.

With ``--archive``, a trained parser is scored on each test part instead (its own reader, search and
metrics): how a parser trained on one domain does on another, beside one trained on both; and the
concepts with a sense it made that PropBank has no frame for (``--propbank-senses``: again with its
copies held to PropBank's frames).

    python benchmarks/amr_domains.py CONFIG [-o OVERRIDES] [--train-domains little_prince] [--archive MODEL.tar.gz [--propbank-senses]]
"""

import argparse
import logging
import re
from collections import Counter

import penman
from amr_other_text import entity_types

import transition_systems  # noqa: F401  (registers the amr grammar)
from toolkit.cli_options import config_params
from toolkit.data.dataset_readers import DatasetReader
from toolkit.grammars.grammar import Grammar
from toolkit.metrics.smatch import Smatch
from toolkit.oracle import replay_oracle
from toolkit.training.data_sources import data_sources, read_sources
from transition_systems.amr.actions import senses_of
from transition_systems.amr.lexicon import Lexicon

SENSE = re.compile(r"-\d\d$")
STRUCTURE = {"SHIFT", "REDUCE", "MERGE", "SWAP", "CLOSE", "LA", "RA", "DEPENDENT"}


def is_label(symbol: str) -> bool:
    """Whether *symbol* makes or names a concept (rather than moving or attaching): what a vocabulary can lack."""
    return symbol.partition(":")[0] not in STRUCTURE and not symbol.startswith(("LA(", "RA("))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("config")
    parser.add_argument("-o", "--overrides", action="append", default=[], help="as for toolkit train")
    parser.add_argument("--train-domains", default=None, help="fit on these training domains only (comma-separated): a book-only grammar")
    parser.add_argument("--archive", default=None, help="score this trained parser on each test part of CONFIG")
    parser.add_argument("--propbank-senses", action="store_true", help="with --archive: score it again with copies held to PropBank's frames")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    params = config_params(args.config, tuple(args.overrides))
    config = params.as_dict()
    if args.archive:
        return score_archive(args.archive, config, args.propbank_senses)
    reader = DatasetReader.of_unseen_data(params)
    train_sources = data_sources(config["train_data_path"], "train_data_path")
    if args.train_domains:
        train_sources = [source for source in train_sources if source.domain in args.train_domains.split(",")]
    train = read_sources(reader, train_sources)
    grammar = Grammar.from_params(params.pop_object("grammar", {}))
    grammar.fit(train)
    vocabulary = {symbol for example in train for symbol in grammar.oracle(example)}
    print(f"fitted on {len(train)} training graphs ({', '.join(sorted({s.domain or s.path for s in train_sources}))}); {len(vocabulary)} symbols\n")
    print("| part | graphs | oracle Smatch | relabelled | names NAME types right | label actions the training oracle never makes |")
    print("|---|---:|---:|---:|---:|---:|")
    for split in ("validation_data_path", "test_data_path"):
        for source in data_sources(config[split], split):
            examples = source.read(reader)
            report = replay_oracle(grammar, examples, [Smatch(getattr(grammar, "smatch_seed", 13))])
            itself = Grammar.from_params(config.get("grammar", {}))
            itself.fit(examples)
            labels = [symbol for example in examples for symbol in itself.oracle(example) if is_label(symbol)]
            missing = Counter(symbol for symbol in labels if symbol not in vocabulary)
            typed, names, _ = entity_types(grammar, examples)
            name = f"{split.removesuffix('_data_path')} {source.domain or source.path}"
            print(
                f"| {name} | {len(examples)} | {100 * report['smatch']:.1f} | {report.get('oracle_relabelled', 0)} | {typed} of {names} "
                f"| {sum(missing.values())} of {len(labels)} ({100 * sum(missing.values()) / max(len(labels), 1):.1f}%): {missing.most_common(6)} |"
            )


def score_archive(path: str, config: dict, propbank_senses: bool) -> None:
    """The parser at *path* on each test part of *config*, read by the archive's own reader: its Smatch and the
    concepts with a sense it made that are no PropBank frame; with *propbank_senses*, again with its copies held
    to PropBank's frames (``grammar.propbank_senses``, a mask at decoding: the model is the same).
    """
    from toolkit.archive import load_archive
    from toolkit.evaluation import predict, score

    frames = Lexicon.load(config.get("grammar", {}).get("dictionaries")).propbank_frames
    print(f"| {path} | copies held to PropBank's frames | graphs | Smatch | concepts with a sense that are no frame |\n|---|---|---:|---:|---:|")
    for held in (False, True) if propbank_senses else (False,):
        archive = load_archive(path)  # a grammar of its own: a state caches what a span allows per grammar
        if held:
            archive.model.grammar.propbank_senses, archive.model.grammar.senses = True, senses_of(frames)
        for source in data_sources(config["test_data_path"], "test_data_path"):
            examples = source.read(archive.dataset_reader)
            outputs = predict(archive.model, examples)
            scores = score(outputs, examples, archive.metrics)
            sensed = [concept for output in outputs for _, _, concept in penman.decode(output).instances() if concept and SENSE.search(concept)]
            invented = Counter(concept for concept in sensed if concept not in frames)
            print(
                f"| test {source.domain or source.path} | {'yes' if held else 'as trained'} | {len(examples)} | {100 * scores['smatch']:.1f} "
                f"| {sum(invented.values())} of {len(sensed)}: {invented.most_common(5)} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
