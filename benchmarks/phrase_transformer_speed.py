"""Training speed of PhraseTransformer encoders, as ratios against the Transformer, side by side.

Every model is the same GEO parser (bracketed grammar, Transformer decoder) with a different
encoder: the Transformer with 8 word heads, and the PhraseTransformer with gram sizes
[0, 0, 2, 2, 3, 3, 4, 4] in every layer (n-gram BiLSTM, with the residual gate, and the Sum
variant). The models take turns on the same batches, so machine noise hits all alike.

    python benchmarks/phrase_transformer_speed.py [--data DATA_ROOT/geo/train.txt] [--steps 40]
"""

import argparse
from collections import Counter
from dataclasses import replace
from pathlib import Path

import torch
from transformer_speed import train_steps

from toolkit.data.batching import TokenBudgetBatchSampler
from toolkit.data.dataset_readers import TsvReader
from toolkit.data.vocabulary import Vocabulary
from toolkit.grammars import BracketedGrammar
from toolkit.models import EncoderDecoder
from toolkit.modules.decoders import TransformerDecoder
from toolkit.modules.encoders import PhraseTransformerEncoder
from toolkit.modules.transformer_settings import TransformerSettings
from toolkit.params import data_root

GRAMS = [0, 0, 2, 2, 3, 3, 4, 4]
ENCODERS = {
    "Transformer (8 word heads)": {"gram_sizes": [0] * 8},
    "PhraseTransformer, LSTM": {"gram_sizes": GRAMS},
    "PhraseTransformer, LSTM + gate": {"gram_sizes": GRAMS, "residual_gate": True},
    "PhraseTransformer, LSTM, compiled": {"gram_sizes": GRAMS, "compile": True},
    "PhraseTransformer, Sum": {"gram_sizes": GRAMS, "composition": "sum"},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=str(Path(data_root()) / "geo" / "train.txt"))
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--dim", type=int, default=256)
    parser.add_argument("--layers", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=2048)
    args = parser.parse_args()

    examples = TsvReader().read(args.data)
    grammar = BracketedGrammar()
    vocab = Vocabulary({"tokens": Counter(t for e in examples for t in e.tokens), "symbols": Counter(s for e in examples for s in grammar.oracle(e))})
    models = {}
    for name, options in ENCODERS.items():
        torch.manual_seed(0)
        layers = TransformerSettings(num_layers=args.layers, num_heads=4, ff_dim=4 * args.dim, dropout=0.1)
        encoder = PhraseTransformerEncoder(args.dim, layers=replace(layers, num_heads=len(options["gram_sizes"])), **options)
        decoder = TransformerDecoder(args.dim, layers)
        models[name] = EncoderDecoder(vocab, grammar, encoder, decoder)
    first = next(iter(models.values()))
    indexed = [first.index(e) for e in examples]
    sampler = TokenBudgetBatchSampler([first.length(i) for i in indexed], args.max_tokens, seed=0)
    batches = [first.collate([indexed[i] for i in batch]) for batch in sampler]

    print(
        f"data: {args.data} ({len(examples)} examples, {len(batches)} batches of <= {args.max_tokens} tokens); "
        f"d={args.dim}, {args.layers}+{args.layers} layers; torch {torch.__version__}, {torch.get_num_threads()} threads"
    )
    for model in models.values():
        train_steps(model, batches, 3)  # warm up
    timings = {name: [0.0, 0] for name in models}
    for _ in range(2):
        for name, model in models.items():
            seconds, tokens = train_steps(model, batches, args.steps // 2)
            timings[name][0] += seconds
            timings[name][1] += tokens
    rate = {name: tokens / seconds for name, (seconds, tokens) in timings.items()}
    baseline = next(iter(rate.values()))
    print("\n| encoder | parameters | training tokens/s | ratio |\n|---|---|---|---|")
    for name, model in models.items():
        parameters = sum(p.numel() for p in model.encoder.parameters())
        print(f"| {name} | {parameters:,} | {rate[name]:,.0f} | {rate[name] / baseline:.2f} |")


if __name__ == "__main__":
    main()
