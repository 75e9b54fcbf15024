"""Packed against padded encoding on a trained archive: identical outputs, and the time each takes.

In inference the Transformer encoder runs its position-wise layers on the words alone and its
attention on groups of similar lengths (``Packing``), and a pretrained transformer embedder runs its
windows in the same groups. This decodes DATA with the archive's reader both ways (packing forced
off, the embedder's groups merged into one), greedy and with beam 5, and prints how many outputs are
identical and the seconds each way.

    python benchmarks/packed_encoding.py ARCHIVE DATA [--threads 1]
"""

import argparse
import time
from contextlib import contextmanager

import torch

from toolkit.archive import load_archive
from toolkit.decoding import BeamSearch, GreedySearch
from toolkit.evaluation import predict
from toolkit.modules.encoders.transformer import TransformerEncoderLayer
from toolkit.modules.token_embedders import pretrained_transformer


@contextmanager
def padded():
    """Encoding as before packing: every layer on the padded batch, a pretrained transformer's windows in one call."""
    packs, groups = TransformerEncoderLayer.packs, pretrained_transformer.length_groups
    TransformerEncoderLayer.packs = property(lambda layer: False)
    pretrained_transformer.length_groups = lambda lengths: [sorted(range(len(lengths)), key=lambda i: -lengths[i])]
    try:
        yield
    finally:
        TransformerEncoderLayer.packs, pretrained_transformer.length_groups = packs, groups


def timed(model, examples, search):
    start = time.perf_counter()
    outputs = predict(model, examples, search=search)
    return outputs, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("archive")
    parser.add_argument("data")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    archive = load_archive(args.archive)
    model = archive.model
    examples = archive.dataset_reader.read(args.data, whole=True)
    steps = model.search.max_steps
    print(f"{args.archive} on {args.data} ({len(examples)} examples, {args.threads} thread(s))\n")
    print("| search | identical outputs | padded, s | packed, s | ratio |\n|---|---:|---:|---:|---:|")
    for name, search in (("greedy", GreedySearch(max_steps=steps)), ("beam 5", BeamSearch(beam_size=5, max_steps=steps))):
        packed_outputs, packed_seconds = timed(model, examples, search)
        with padded():
            padded_outputs, padded_seconds = timed(model, examples, search)
        same = sum(a == b for a, b in zip(packed_outputs, padded_outputs))
        print(f"| {name} | {same} / {len(examples)} | {padded_seconds:.1f} | {packed_seconds:.1f} | {padded_seconds / packed_seconds:.2f} |")


if __name__ == "__main__":
    main()
