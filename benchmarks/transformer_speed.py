"""Speed of the toolkit's Transformer parser, as ratios against baselines run side by side.

1. Training tokens/sec of the toolkit's encoder-decoder against ``torch.nn.Transformer`` of the
   same size (same embeddings, output layer, loss, optimizer and batches), alternating the two.
2. Greedy decoding sentences/sec with the key/value cache against re-decoding the whole prefix.

    python benchmarks/transformer_speed.py [--data DATA_ROOT/geo/train.txt] [--steps 60]

Prints a table; speed is only ever compared within this one process.
"""

import argparse
import time
import warnings
from collections import Counter
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from toolkit.data.batching import TokenBudgetBatchSampler
from toolkit.data.dataset_readers import TsvReader
from toolkit.data.vocabulary import Vocabulary
from toolkit.decoding import GreedySearch
from toolkit.grammars import SequenceGrammar
from toolkit.models import EncoderDecoder
from toolkit.modules.decoders import TransformerDecoder
from toolkit.modules.encoders import TransformerEncoder
from toolkit.modules.positional_encoding import SinusoidalPositionalEncoding
from toolkit.modules.transformer_settings import TransformerSettings
from toolkit.params import data_root


class TorchTransformerParser(nn.Module):
    """The baseline: ``nn.Transformer`` with the same embeddings, positions and tied output layer."""

    def __init__(self, source_vocab: int, target_vocab: int, dim: int, heads: int, layers: int, ff_dim: int, dropout: float):
        super().__init__()
        self.source_embedding, self.target_embedding = nn.Embedding(source_vocab, dim, padding_idx=0), nn.Embedding(target_vocab, dim, padding_idx=0)
        self.positions = SinusoidalPositionalEncoding(dim)
        with warnings.catch_warnings():  # "enable_nested_tensor is True, but ... norm_first was True": harmless
            warnings.simplefilter("ignore", UserWarning)
            self.transformer = nn.Transformer(dim, heads, layers, layers, ff_dim, dropout, batch_first=True, norm_first=True)
        self.output = nn.Linear(dim, target_vocab, bias=False)
        self.output.weight = self.target_embedding.weight
        self.scale = dim**0.5

    def forward(self, batch):
        source, target_in, target_out = batch["source"], batch["target_in"], batch["target_out"]
        causal = nn.Transformer.generate_square_subsequent_mask(target_in.size(1), dtype=torch.bool)
        hidden = self.transformer(
            self.positions(self.source_embedding(source) * self.scale),
            self.positions(self.target_embedding(target_in) * self.scale),
            tgt_mask=causal,
            src_key_padding_mask=source == 0,
            memory_key_padding_mask=source == 0,
            tgt_is_causal=True,
        )
        logits = self.output(hidden)
        return {"loss": F.cross_entropy(logits.flatten(0, 1), target_out.flatten(), ignore_index=0, label_smoothing=0.1)}


def train_steps(model, batches, steps: int) -> tuple[float, int]:
    """Seconds for *steps* optimizer steps over *batches*, and the target+source tokens they held."""
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    model.train()
    tokens, start = 0, time.perf_counter()
    for step in range(steps):
        batch = batches[step % len(batches)]
        loss = model(batch)["loss"]
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        tokens += int((batch["source"] != 0).sum() + (batch["target_out"] != 0).sum())
    return time.perf_counter() - start, tokens


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=str(Path(data_root()) / "geo" / "train.txt"))
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--dim", type=int, default=256)
    parser.add_argument("--layers", type=int, default=3)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--max-tokens", type=int, default=2048)
    parser.add_argument("--decode-sentences", type=int, default=200)
    args = parser.parse_args()

    torch.manual_seed(0)
    examples = TsvReader().read(args.data)
    grammar = SequenceGrammar()
    vocab = Vocabulary({"tokens": Counter(t for e in examples for t in e.tokens), "symbols": Counter(s for e in examples for s in grammar.oracle(e))})
    ff_dim = 4 * args.dim
    ours = EncoderDecoder(
        vocab,
        grammar,
        TransformerEncoder(args.dim, TransformerSettings(args.layers, args.heads, ff_dim, dropout=0.1)),
        TransformerDecoder(args.dim, TransformerSettings(args.layers, args.heads, ff_dim, dropout=0.1)),
    )
    baseline = TorchTransformerParser(vocab.size("tokens"), vocab.size("symbols"), args.dim, args.heads, args.layers, ff_dim, 0.1)
    indexed = [ours.index(e) for e in examples]
    sampler = TokenBudgetBatchSampler([ours.length(i) for i in indexed], args.max_tokens, seed=0)
    batches = [ours.collate([indexed[i] for i in batch]) for batch in sampler]

    print(
        f"data: {args.data} ({len(examples)} examples, {len(batches)} batches of <= {args.max_tokens} tokens); "
        f"model: d={args.dim}, {args.layers}+{args.layers} layers, {args.heads} heads; torch {torch.__version__}, {torch.get_num_threads()} threads"
    )
    train_steps(ours, batches, 5), train_steps(baseline, batches, 5)  # warm up both
    timings = {"toolkit": [0.0, 0], "torch.nn.Transformer": [0.0, 0]}
    for _ in range(2):  # alternate, so that machine noise hits both alike
        for name, model in (("toolkit", ours), ("torch.nn.Transformer", baseline)):
            seconds, tokens = train_steps(model, batches, args.steps // 2)
            timings[name][0] += seconds
            timings[name][1] += tokens
    rate = {name: tokens / seconds for name, (seconds, tokens) in timings.items()}
    print("\n| training | tokens/s | ratio |\n|---|---|---|")
    for name in timings:
        print(f"| {name} | {rate[name]:,.0f} | {rate[name] / rate['torch.nn.Transformer']:.2f} |")

    ours.eval()
    sentences = examples[: args.decode_sentences]
    results = {}
    for use_cache in (True, False):
        start = time.perf_counter()
        predictions = []
        for i in range(0, len(sentences), 64):
            predictions += ours.predict(sentences[i : i + 64], GreedySearch(max_steps=60, use_cache=use_cache))
        results[use_cache] = (len(sentences) / (time.perf_counter() - start), predictions)
    assert results[True][1] == results[False][1], "the cache changed the predictions"
    print("\n| greedy decoding (untrained model, <= 60 steps) | sentences/s | ratio |\n|---|---|---|")
    print(f"| with key/value cache | {results[True][0]:.1f} | {results[True][0] / results[False][0]:.2f} |")
    print(f"| without cache | {results[False][0]:.1f} | 1.00 |")


if __name__ == "__main__":
    main()
