r"""What a frozen transformer's word-vector cache costs in memory, kept in full or half precision.

A frozen ``pretrained_transformer`` embedder keeps every training sentence's per-layer word vectors
after the first epoch (``cache``). This fills that cache for the first ``--sentences`` of EWT's
training split once per ``cache_dtype`` (as computed, ``float16``, ``bfloat16``) and reports the
bytes it holds, per word and scaled to the whole split (204,577 words), and how far the
half-precision vectors, mixed as the model mixes them, are from the full ones (relative to their
norm). All in this one process; the transformer's weights are loaded once per row.

    python benchmarks/frozen_cache.py [--model-name $MINILM] [--layers all] [--sentences 2000]
    python benchmarks/frozen_cache.py --model-name ~/.cache/toolkit-models/all-mpnet-base-v2 --layers 0,2,4,6,8,10,12
"""

import argparse
import gc
import time

import torch

from toolkit.data.dataset_readers import DatasetReader
from toolkit.data.ud_treebanks import find_treebank
from toolkit.modules.token_embedders import TokenEmbedder
from toolkit.params import PACKAGED_MODELS, data_root, packaged_model

EWT_TRAIN_WORDS = 204_577


def fill(model_name: str, layers, dtype: str | None, sentences: list[list[str]], batch_size: int):
    """A frozen embedder with its cache filled for *sentences* (in training mode); the vectors of the first batch, mixed."""
    from toolkit.data.example import Example

    embedder = TokenEmbedder.from_params(
        {"type": "pretrained_transformer", "model_name": model_name, "layers": layers, "pooling": "mean", "cache_dtype": dtype}
    )
    embedder.train()
    first = None
    with torch.no_grad():
        for start in range(0, len(sentences), batch_size):
            batch = sentences[start : start + batch_size]
            inputs = [embedder.example_inputs(Example(words)) for words in batch]
            width = max(map(len, batch))
            mask = torch.tensor([[i < len(words) for i in range(width)] for words in batch])
            vectors = embedder(torch.zeros(mask.shape, dtype=torch.long), mask, **embedder.batch_inputs(inputs, width))
            if first is None:
                first = embedder(torch.zeros(mask.shape, dtype=torch.long), mask, **embedder.batch_inputs(inputs, width))[mask]  # read back from the cache
            del vectors
    return embedder, first


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model-name", default=packaged_model(*PACKAGED_MODELS["MINILM"]))
    parser.add_argument("--layers", default="all", help="'all', 'last', or comma-separated hidden-state indices")
    parser.add_argument("--sentences", type=int, default=2000)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    layers = args.layers if args.layers in ("all", "last") else [int(i) for i in args.layers.split(",")]

    train = find_treebank("en_ewt", data_root()).train
    sentences = [example.tokens for example in DatasetReader.by_name("conllu")().read(train, whole=True)][: args.sentences]
    words = sum(map(len, sentences))
    print(f"{args.model_name}, layers {args.layers}: the first {len(sentences):,} EWT training sentences ({words:,} words), {args.threads} thread(s)\n")
    print("| cache_dtype | cache MiB | bytes/word | whole EWT train, GiB | fill s | vector error (max, relative) |\n| --- | --- | --- | --- | --- | --- |")
    reference = None
    for dtype in (None, "float16", "bfloat16"):
        gc.collect()
        start = time.perf_counter()
        embedder, vectors = fill(args.model_name, layers, dtype, sentences, args.batch_size)
        seconds = time.perf_counter() - start
        size = sum(t.numel() * t.element_size() for t in embedder.cache.values())
        if reference is None:
            reference, error = vectors, 0.0
        else:
            error = float(((vectors - reference).norm(dim=-1) / reference.norm(dim=-1).clamp(min=1e-9)).max())
        print(
            f"| {dtype or 'as computed (float32)'} | {size / 2**20:,.1f} | {size / words:,.0f} | {size / words * EWT_TRAIN_WORDS / 2**30:.2f} "
            f"| {seconds:.1f} | {error:.2e} |",
            flush=True,
        )
        del embedder, vectors


if __name__ == "__main__":
    main()
