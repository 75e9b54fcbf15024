r"""What a frozen transformer's word-vector cache costs in memory: its precision, and where it lives.

A frozen ``pretrained_transformer`` embedder keeps every training sentence's per-layer word vectors
after the first epoch (``cache``). This fills that cache for the first ``--sentences`` of EWT's
training split once per row, each row in a fresh process so that the memory it reports is its own:

- one tensor per sentence, as the cache kept them before (the baseline);
- :class:`~toolkit.modules.token_embedders.word_vector_cache.WordVectorCache` blocks in memory,
  as computed (float32), ``float16`` and ``bfloat16`` (``cache_dtype``);
- the same blocks as memory-mapped files (``cache_dir``), float32 and float16.

For each it reports the bytes the cache holds (per word, and scaled to the whole split's 204,577
words), how much the process grew while filling it (all resident memory, and the anonymous part,
which the kernel cannot page out to a file), the fill time, and how far the mixed vectors are from
the full-precision ones (relative to their norm; read back from the cache).

    python benchmarks/frozen_cache.py [--model-name $MINILM] [--layers all] [--sentences 3000]
    python benchmarks/frozen_cache.py --model-name ~/.cache/toolkit-models/all-mpnet-base-v2 --layers 0,2,4,6,8,10,12
"""

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

from toolkit.data.dataset_readers import DatasetReader
from toolkit.data.example import Example
from toolkit.data.ud_treebanks import find_treebank
from toolkit.modules.token_embedders import TokenEmbedder
from toolkit.params import PACKAGED_MODELS, data_root, packaged_model

EWT_TRAIN_WORDS = 204_577
ROWS = {  # name -> (cache_dtype, in memory-mapped files, one tensor per sentence)
    "one tensor per sentence, float32": (None, False, True),
    "blocks, float32": (None, False, False),
    "blocks, float16": ("float16", False, False),
    "blocks, bfloat16": ("bfloat16", False, False),
    "memory-mapped blocks, float32": (None, True, False),
    "memory-mapped blocks, float16": ("float16", True, False),
}


class PerSentence(dict):
    """The cache as it was: a copy of each sentence's vectors, one allocation each."""

    def __init__(self, dtype: torch.dtype | None):
        super().__init__()
        self.dtype = dtype

    def __setitem__(self, key, rows: torch.Tensor) -> None:
        super().__setitem__(key, rows.to(self.dtype or rows.dtype, copy=True))

    @property
    def nbytes(self) -> int:
        return sum(t.nbytes for t in self.values())


def resident_mib() -> dict[str, float]:
    """This process's resident memory, all and anonymous, in MiB (Linux)."""
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
    return {name: int(fields[field].split()[0]) / 1024 for name, field in (("all", "VmRSS"), ("anonymous", "RssAnon"))}


def fill(args: argparse.Namespace, row: str) -> dict:
    """One row, in this process: fill the cache for the sentences and measure it."""
    dtype, mapped, per_sentence = ROWS[row]
    torch.set_num_threads(args.threads)
    layers = args.layers if args.layers in ("all", "last") else [int(i) for i in args.layers.split(",")]
    sentences = [example.tokens for example in DatasetReader.by_name("conllu")().read(find_treebank("en_ewt", data_root()).train, whole=True)]
    sentences = sentences[: args.sentences]
    with tempfile.TemporaryDirectory(dir=args.cache_dir) as folder:
        params = {"type": "pretrained_transformer", "model_name": args.model_name, "layers": layers, "pooling": "mean", "cache_dtype": dtype}
        embedder = TokenEmbedder.from_params({**params, "cache_dir": folder if mapped else None}).train()
        if per_sentence:
            embedder.cache = PerSentence(embedder.cache_dtype)
        before, start, first = resident_mib(), time.perf_counter(), None
        with torch.no_grad():
            for begin in range(0, len(sentences), args.batch_size):
                batch = sentences[begin : begin + args.batch_size]
                inputs = [embedder.example_inputs(Example(words)) for words in batch]
                mask = torch.tensor([[i < len(words) for i in range(max(map(len, batch)))] for words in batch])
                vectors = embedder(torch.zeros(mask.shape, dtype=torch.long), mask, **embedder.batch_inputs(inputs, mask.size(1)))
                if first is None:  # read back from the cache
                    first = embedder(torch.zeros(mask.shape, dtype=torch.long), mask, **embedder.batch_inputs(inputs, mask.size(1)))[mask]
                del vectors
        seconds, after = time.perf_counter() - start, resident_mib()
        return {
            "words": sum(map(len, sentences)),
            "cache_bytes": embedder.cache.nbytes,
            "grew_mib": after["all"] - before["all"],
            "grew_anonymous_mib": after["anonymous"] - before["anonymous"],
            "seconds": seconds,
            "first_batch": first.tolist(),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model-name", default=packaged_model(*PACKAGED_MODELS["MINILM"]))
    parser.add_argument("--layers", default="all", help="'all', 'last', or comma-separated hidden-state indices")
    parser.add_argument("--sentences", type=int, default=3000)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--cache-dir", default=None, help="where the memory-mapped rows keep their files (default: the temporary folder)")
    parser.add_argument("--row", choices=ROWS, help=argparse.SUPPRESS)  # one row, in this process: what the parent runs
    args = parser.parse_args()
    if args.row:
        print(json.dumps(fill(args, args.row)))
        return

    print(f"{args.model_name}, layers {args.layers}: the first {args.sentences:,} EWT training sentences, {args.threads} thread(s), one process per row\n")
    print(
        "| cache | cache MiB | bytes/word | whole EWT train, GiB | process grew, MiB (anonymous) | fill s | vector error (max, relative) |\n"
        "| --- | --- | --- | --- | --- | --- | --- |"
    )
    reference = None
    for row in ROWS:
        command = [sys.executable, __file__, *sys.argv[1:], "--row", row]
        result = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout.splitlines()[-1])
        vectors = torch.tensor(result["first_batch"])
        if reference is None:
            reference = vectors
        error = float(((vectors - reference).norm(dim=-1) / reference.norm(dim=-1).clamp(min=1e-9)).max())
        size, words = result["cache_bytes"], result["words"]
        print(
            f"| {row} | {size / 2**20:,.1f} | {size / words:,.0f} | {size / words * EWT_TRAIN_WORDS / 2**30:.2f} "
            f"| {result['grew_mib']:,.0f} ({result['grew_anonymous_mib']:,.0f}) | {result['seconds']:.1f} | {error:.2e} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
