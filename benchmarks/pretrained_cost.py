"""What reading through a pretrained transformer costs: training tokens/s and parsing words/s, as ratios.

Models of one config, side by side in this process, on the same batches of real data: the
config as it is (word embedding only), and for each pretrained transformer named, the config with it
frozen beside the word embedding, and with it fine-tuned. Training speed is timed over the same batches (forward,
backward, optimizer step), in tokens (source words and target symbols) per second; reading speed
is the same models in eval mode, without gradients, scoring the test questions against their
gold logical forms (encoding plus a decode of gold length), in source words per second. (Greedy
search is not timed: untrained models decode to ``max_steps``, each to a different length, which
would time the search rather than the encoder.) Rounds alternate between the models, and each
rate is the median over the rounds.

    python benchmarks/pretrained_cost.py [--config jsonnet_configs/geo_transformer.jsonnet]
        [--model-name $MINILM [--model-name $MPNET ...]] [--batches 20] [--sentences 200] [--rounds 3] [--threads 2]

Speeds are only ever compared within this one run.
"""

import argparse
import statistics
import time
from pathlib import Path

import torch

import transition_systems  # noqa: F401  (registers the transition systems)
import tree_codecs  # noqa: F401  (registers the tree codecs)
from toolkit.data.batching import TokenBudgetBatchSampler
from toolkit.data.dataset_readers import DatasetReader
from toolkit.data.vocabulary import Vocabulary
from toolkit.from_params import construct
from toolkit.grammars.grammar import Grammar
from toolkit.models.model import Model
from toolkit.params import Params, default_ext_vars
from toolkit.training.optimizers import AdamOptimizer, parameter_groups
from toolkit.training.train import build_vocabulary


def build(config: dict, vocab: Vocabulary, grammar: Grammar, embedder: dict | None) -> Model:
    params = dict(config["model"])
    if embedder is not None:
        params["token_embedders"] = {"pretrained": embedder}
    torch.manual_seed(0)
    return Model.from_params(Params(params), vocab=vocab, grammar=grammar)


def train_rate(model: Model, batches: list[dict], tokens: int) -> float:
    model.train()
    optimizer = AdamOptimizer(parameter_groups(model), lr=1e-4)
    start = time.perf_counter()
    for batch in batches:
        optimizer.zero_grad(set_to_none=True)
        model(batch)["loss"].backward()
        optimizer.step()
    return tokens / (time.perf_counter() - start)


@torch.no_grad()
def read_rate(model: Model, batches: list[dict], words: int) -> float:
    model.eval()
    start = time.perf_counter()
    for batch in batches:
        model(batch)
    return words / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default="jsonnet_configs/geo_transformer.jsonnet")
    parser.add_argument("--model-name", action="append", help="a pretrained transformer (repeatable; default $MINILM)")
    parser.add_argument("--batches", type=int, default=20)
    parser.add_argument("--sentences", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    config = Params.from_file(args.config).as_dict()
    reader = DatasetReader.from_params(Params(config["dataset_reader"]))
    train = reader.read(config["train_data_path"], whole=True)
    test = reader.read(config["test_data_path"], whole=True)[: args.sentences]
    grammar = Grammar.from_params(Params(config.get("grammar", {})))
    if hasattr(grammar, "fit"):
        grammar.fit(train)
    vocab = construct(build_vocabulary, Params(config.get("vocabulary", {})), examples=train, grammar=grammar)
    names = args.model_name or [default_ext_vars()["MINILM"]]
    models = {"word embedding only": build(config, vocab, grammar, None)}
    for name in names:
        embedder = {"type": "pretrained_transformer", "model_name": name, "pooling": "mean", "layers": "all"}
        short = "/".join(Path(name).parts[-2:]) if len(names) > 1 else "transformer"  # MiniLM's package keeps it in .../model
        models[f"+ frozen {short}"] = build(config, vocab, grammar, {**embedder, "freeze": True})
        models[f"+ fine-tuned {short}"] = build(config, vocab, grammar, {**embedder, "freeze": False})

    base = models["word embedding only"]
    indexed = [base.index(example) for example in train]
    sampler = TokenBudgetBatchSampler([base.length(item) for item in indexed], config["trainer"].get("max_tokens", 2048), shuffle=True, seed=0)
    batch_indices = list(sampler)[: args.batches]
    batches = {name: [model.collate([model.index(train[i]) for i in indices]) for indices in batch_indices] for name, model in models.items()}
    tokens = sum(base.length(indexed[i]) for indices in batch_indices for i in indices)
    test_batches = {name: [model.collate([model.index(e) for e in test[i : i + 32]]) for i in range(0, len(test), 32)] for name, model in models.items()}
    words = sum(len(e.tokens) for e in test)

    for name, model in models.items():  # warm up: first calls allocate and pick kernels
        read_rate(model, test_batches[name][:1], 0)
    rates: dict[str, list[tuple[float, float]]] = {name: [] for name in models}
    for _ in range(args.rounds):
        for name, model in models.items():
            rates[name].append((train_rate(model, batches[name], tokens), read_rate(model, test_batches[name], words)))

    print(
        f"{args.config}: {len(batch_indices)} training batches ({tokens:,} tokens), {len(test)} test sentences, "
        f"{args.threads} threads, median of {args.rounds} rounds; pretrained: {', '.join(names)}\n"
    )
    print("| model | training tokens/s | ratio | reading words/s (eval, gold-length decode) | ratio |")
    print("| --- | ---: | ---: | ---: | ---: |")
    base_train = statistics.median(r[0] for r in rates["word embedding only"])
    base_parse = statistics.median(r[1] for r in rates["word embedding only"])
    for name, measured in rates.items():
        train_speed, parse_speed = statistics.median(r[0] for r in measured), statistics.median(r[1] for r in measured)
        print(f"| {name} | {train_speed:,.0f} | {train_speed / base_train:.2f} | {parse_speed:,.0f} | {parse_speed / base_parse:.2f} |")


if __name__ == "__main__":
    main()
