"""Training speed with the toolkit's CPU dropout (``toolkit/modules/dropout.py``) against torch's ``nn.Dropout``.

Builds a config's model as ``toolkit train`` does and trains it on the same token-budget batches
of its first ``--examples`` training examples, alternating the two dropouts in halves (every
dropout module of the model switched between ``toolkit.modules.dropout.Dropout`` and
``nn.Dropout``) so that machine noise hits both alike, in one process. Prints training tokens/s
(source plus target tokens, padding left out) of each and their ratio, then the same for the
dropout op alone, forward and backward, on a (64, 32, 1024) tensor.

    python benchmarks/dropout_speed.py [--config jsonnet_configs/geo_transformer.jsonnet] [--steps 20] [--threads 2]
"""

import argparse
import time
from pathlib import Path

import torch
from torch import nn

from toolkit.data.batching import TokenBudgetBatchSampler
from toolkit.data.dataset_readers import DatasetReader
from toolkit.from_params import construct
from toolkit.grammars.grammar import Grammar
from toolkit.models.model import Model
from toolkit.modules.dropout import Dropout
from toolkit.params import Params
from toolkit.training.train import build_vocabulary
from toolkit.training.trainer import Trainer, seed_everything

REPO = Path(__file__).resolve().parents[1]


def use(model: nn.Module, kind: type) -> None:
    """Switch every dropout module of *model* to *kind* (both are ``nn.Dropout``s with the same state)."""
    for module in model.modules():
        if isinstance(module, nn.Dropout):
            module.__class__ = kind


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default=str(REPO / "jsonnet_configs" / "geo_transformer.jsonnet"))
    parser.add_argument("--examples", type=int, default=500)
    parser.add_argument("--steps", type=int, default=20, help="optimizer steps per dropout (after 3 warm-up steps each)")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    params = Params.from_file(args.config)
    seed_everything(params.pop_int("random_seed", 13))
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    examples = reader.read(params.pop("train_data_path"))
    grammar = Grammar.from_params(params.pop("grammar", {}))
    grammar.fit(examples)
    vocab = construct(build_vocabulary, params.pop("vocabulary", {}), examples=examples, grammar=grammar)
    model = Model.from_params(params.pop("model"), vocab=vocab, grammar=grammar).train()
    trainer = Trainer.from_params(params.pop("trainer", {}))
    indexed = [model.index(example) for example in examples[: args.examples]]
    batches = list(TokenBudgetBatchSampler([model.length(item) for item in indexed], trainer.max_tokens, trainer.max_examples, shuffle=True, seed=13))
    optimizer = trainer.optimizer.construct(model_parameters=[p for p in model.parameters() if p.requires_grad])
    dropouts = sum(isinstance(module, nn.Dropout) for module in model.modules())

    def train(first: int, count: int) -> tuple[float, int]:
        tokens, start = 0, time.perf_counter()
        for step in range(first, first + count):
            items = [indexed[i] for i in batches[step % len(batches)]]
            loss = model(model.collate(items))["loss"]
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            if trainer.grad_norm is not None:
                torch.nn.utils.clip_grad_norm_(model.parameters(), trainer.grad_norm)
            optimizer.step()
            loss.item()
            tokens += sum(len(item["source"]) + len(item.get("target", [])) for item in items)
        return time.perf_counter() - start, tokens

    kinds = {"torch nn.Dropout": nn.Dropout, "toolkit Dropout": Dropout}
    totals = {name: [0.0, 0] for name in kinds}
    for kind in kinds.values():
        use(model, kind)
        train(0, 3)
    first = 3
    for half in (args.steps // 2, args.steps - args.steps // 2):
        for name, kind in kinds.items():
            use(model, kind)
            seconds, tokens = train(first, half)
            totals[name][0] += seconds
            totals[name][1] += tokens
        first += half
    rates = {name: tokens / seconds for name, (seconds, tokens) in totals.items()}
    print(f"{Path(args.config).name}: {dropouts} dropout modules, {args.steps} steps each, {args.threads} threads\n")
    print("| dropout | training tokens/s | ratio |\n|---|---:|---:|")
    for name, rate in rates.items():
        print(f"| {name} | {rate:,.0f} | {rate / rates['torch nn.Dropout']:.2f} |")

    x = torch.randn(64, 32, 1024, requires_grad=True)
    grad = torch.randn_like(x)
    op_seconds = {}
    for name, kind in kinds.items():
        module = kind(0.1).train()
        for repeat in range(23):
            if repeat == 3:
                start = time.perf_counter()
            module(x).backward(grad)
            x.grad = None
        op_seconds[name] = (time.perf_counter() - start) / 20
    print("\n| dropout op, (64, 32, 1024), forward and backward | ms | ratio |\n|---|---:|---:|")
    for name, seconds in op_seconds.items():
        print(f"| {name} | {1000 * seconds:.2f} | {op_seconds['torch nn.Dropout'] / seconds:.2f} |")


if __name__ == "__main__":
    main()
