"""SpaCy's own parser trained on UD English EWT by spaCy's standard recipe: the anchor of the EWT frontier.

``train`` converts EWT's train and dev CoNLL-U with ``spacy convert``, writes the efficiency
config (``spacy init config --lang en --pipeline tagger,parser --optimize efficiency``: a CNN
tok2vec over hashed NORM, PREFIX, SUFFIX and SHAPE features, no pretrained input) and trains it
for 7 epochs, one thread, with ``spacy train``. ``load`` gives the trained pipeline's parser as a
function from gold words to trees (heads and relations), which ``benchmarks/dependency_frontier.py`` scores
and times beside ours. Needs the spacy extra:

    pip install "parsing-toolkit[spacy]"
    python benchmarks/spacy_ewt.py --output runs/spacy_ewt [--recipe efficiency] [--epochs 7]
"""

import argparse
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from toolkit.params import data_root

Parse = Callable[[list[list[str]]], list[dict[str, list]]]


def train(output: Path, recipe: str = "efficiency", epochs: int = 7, data: Path | None = None) -> Path:
    """Train spaCy's tagger and parser on EWT into *output* (kept: a second call returns at once); the best model's folder."""
    best = output / "model-best"
    if (best / "meta.json").exists():
        return best
    data = data or Path(data_root()) / "ud-english-ewt"
    corpus = output / "corpus"
    corpus.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    spacy = [sys.executable, "-m", "spacy"]
    for split in ("train", "dev"):
        subprocess.run(
            [*spacy, "convert", str(data / f"en_ewt-ud-{split}.conllu"), str(corpus), "--converter", "conllu", "--n-sents", "10"], check=True, env=env
        )
    config = output / "config.cfg"
    subprocess.run([*spacy, "init", "config", str(config), "--lang", "en", "--pipeline", "tagger,parser", "--optimize", recipe, "--force"], check=True, env=env)
    subprocess.run(
        [*spacy, "train", str(config), "--output", str(output),
         "--paths.train", str(corpus / "en_ewt-ud-train.spacy"), "--paths.dev", str(corpus / "en_ewt-ud-dev.spacy"),
         "--training.max_epochs", str(epochs)],
        check=True, env=env,
    )  # fmt: skip
    return best


def load(model: Path) -> Parse:
    """The pipeline's tok2vec and parser over gold words: each sentence's ``heads`` (1-based, 0: root) and ``deprels``."""
    import spacy
    from spacy.tokens import Doc

    nlp = spacy.load(model, exclude=["tagger"])  # the parser reads tok2vec alone

    def parse(sentences: list[list[str]]) -> list[dict[str, list]]:
        trees = []
        for doc in nlp.pipe((Doc(nlp.vocab, words=words) for words in sentences), batch_size=256):
            heads = [0 if token.head.i == token.i else token.head.i + 1 for token in doc]
            labels = ["root" if token.dep_ == "ROOT" else token.dep_ for token in doc]
            trees.append({"heads": heads, "deprels": labels})  # what attachment_scores reads
        return trees

    return parse


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--output", type=Path, default=Path("runs/spacy_ewt"))
    parser.add_argument("--recipe", choices=["efficiency", "accuracy"], default="efficiency")
    parser.add_argument("--epochs", type=int, default=7)
    args = parser.parse_args()
    print(train(args.output, args.recipe, args.epochs))


if __name__ == "__main__":
    main()
