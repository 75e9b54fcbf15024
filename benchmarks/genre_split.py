r"""How far a parser falls off its domain: EWT without one of its genres, tested on that genre.

UD English-EWT mixes five genres, named by each sentence's ``sent_id`` prefix: ``weblog``,
``newsgroup``, ``email``, ``reviews`` and ``answers``. ``--hold-out GENRE`` writes train and dev
without that genre, and two test files: the held-out genre's test sentences (out of domain) and the
other genres' (in domain). Each ``--config`` is trained on the split (``toolkit train``, its test
file the held-out genre's, with ``--minutes`` as ``trainer.max_minutes``) and spaCy's efficiency
recipe too (``benchmarks/spacy_ud.py``, as EWT's frontier anchor is trained); then every parser is
scored on both test files (gold words; LAS with full relations, punctuation included) and the
table gives the drop. ``--variant NAME=JSON`` trains every config once more with those overrides
(``--variant dropout30='{"model.source_token_dropout": 0.3}'``), into ``CONFIG_NAME``: the way to
measure a lever against its baseline. A trained parser or pipeline already in the output folder is reused.

    pip install "parsing-toolkit[spacy]"
    python benchmarks/genre_split.py --hold-out reviews --output runs/genre_reviews \
        --config jsonnet_configs/ud_ewt_state_mlp_explore.jsonnet [--config ...] [--minutes 20] [--no-spacy] [--json drop.json]
"""

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import torch
from dependency_frontier import our_parsers, scores

from toolkit.data.dataset_readers import DatasetReader
from toolkit.data.ud_treebanks import find_treebank
from toolkit.params import data_root

GENRES = ("weblog", "newsgroup", "email", "reviews", "answers")


def sentences(path: Path) -> list[str]:
    """The CoNLL-U blocks of *path*, each with its trailing blank line."""
    return [block.strip("\n") + "\n\n" for block in path.read_text(encoding="utf-8").split("\n\n") if block.strip()]


def genre(block: str) -> str:
    sent_id = next(line for line in block.splitlines() if line.startswith("# sent_id"))
    return sent_id.split("=", 1)[1].strip().split("-", 1)[0]


def split(hold_out: str, folder: Path) -> dict[str, Path]:
    """Write ``train``, ``dev`` (without *hold_out*), ``test_in`` (other genres) and ``test_out`` (*hold_out*) into *folder*."""
    treebank = find_treebank("en_ewt", data_root())
    folder.mkdir(parents=True, exist_ok=True)
    parts = {
        "train": [b for b in sentences(treebank.train) if genre(b) != hold_out],
        "dev": [b for b in sentences(treebank.dev) if genre(b) != hold_out],
        "test_in": [b for b in sentences(treebank.test) if genre(b) != hold_out],
        "test_out": [b for b in sentences(treebank.test) if genre(b) == hold_out],
    }
    paths = {}
    for name, blocks in parts.items():
        paths[name] = folder / f"{name}.conllu"
        paths[name].write_text("".join(blocks), encoding="utf-8")
    print(", ".join(f"{name}: {len(blocks):,} sentences" for name, blocks in parts.items()), flush=True)
    return paths


def train_ours(config: Path, output: Path, files: dict[str, Path], minutes: float, variant: dict | None = None) -> Path:
    archive = output / "model.tar.gz"
    if not archive.exists():
        overrides = {
            **(variant or {}),
            "train_data_path": str(files["train"]),
            "validation_data_path": str(files["dev"]),
            "test_data_path": str(files["test_out"]),
            "trainer.max_minutes": minutes,
        }
        command = [sys.executable, "-m", "toolkit", "train", str(config), "-s", str(output), "-f", "-o", json.dumps(overrides)]
        subprocess.run(command, check=True, env=dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1"))
    return archive


def variant(text: str) -> tuple[str, dict]:
    """``NAME=JSON`` -> (name, overrides)."""
    name, _, overrides = text.partition("=")
    try:
        value = json.loads(overrides)
    except json.JSONDecodeError as error:
        raise argparse.ArgumentTypeError(f"--variant {text!r}: not NAME=JSON ({error})") from None
    if not name or not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"--variant {text!r}: not NAME=JSON with a JSON object")
    return name, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hold-out", choices=GENRES, required=True)
    parser.add_argument("--output", type=Path, required=True)
    parser.add_argument("--config", type=Path, action="append", default=[])
    parser.add_argument("--minutes", type=float, default=20.0, help="each config's trainer.max_minutes")
    parser.add_argument("--no-spacy", action="store_true")
    parser.add_argument("--beam-size", type=int, default=5)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--variant", action="append", default=[], type=variant, help="NAME=JSON: every config again with these overrides")
    parser.add_argument("--only-variants", action="store_true", help="train and score only the variants (baselines scored before)")
    args = parser.parse_args()
    torch.set_num_threads(1)

    files = split(args.hold_out, args.output / "data")
    parsers = {}
    for config in args.config:
        runs = [] if args.only_variants else [(config.stem, None)]
        runs += [(f"{config.stem}_{name}", overrides) for name, overrides in args.variant]
        for run, overrides in runs:
            parsers.update(our_parsers(str(train_ours(config, args.output / run, files, args.minutes, overrides)), args.beam_size, False, 8192))
    if not args.no_spacy:
        from spacy_ud import load, train

        parsers["spaCy, efficiency recipe"] = load(train(args.output / "spacy", "en_ewt", pipeline="tagger,parser", split=(files["train"], files["dev"])))

    reader = DatasetReader.by_name("conllu")()
    tests = {name: reader.read(files[name], whole=True) for name in ("test_in", "test_out")}
    results = {}
    for name, parse in parsers.items():
        results[name] = {test: scores(list(parse([e.tokens for e in examples])), examples)["LAS"] for test, examples in tests.items()}
    print(f"\nheld out: {args.hold_out}; test LAS on gold words, full relations\n")
    print(f"| parser | other genres | {args.hold_out} | drop |\n| --- | --- | --- | --- |")
    for name, las in results.items():
        print(f"| {name} | {las['test_in']:.2f} | {las['test_out']:.2f} | {las['test_out'] - las['test_in']:+.2f} |")
    if args.json:
        args.json.write_text(json.dumps({"hold_out": args.hold_out, "las": results}, indent=2))


if __name__ == "__main__":
    main()
