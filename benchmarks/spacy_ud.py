"""SpaCy's pipelines as the anchors of a UD treebank's frontier: trained on the treebank by spaCy's
own recipe, or released ones (``fr_core_news_sm``, trained on UD French Sequoia), read alike.

``train`` converts the treebank's train and dev CoNLL-U with ``spacy convert``, writes the
efficiency config (``spacy init config --lang LANG --pipeline morphologizer,parser --optimize
efficiency``: a CNN tok2vec over hashed NORM, PREFIX, SUFFIX and SHAPE features, no pretrained input)
and trains it, one thread, with ``spacy train``. ``load`` gives a pipeline (a folder or an installed
package's name) as a function from gold words to each sentence's heads, relations, UPOS and FEATS,
which ``benchmarks/dependency_frontier.py`` scores and times beside ours. Needs the spacy extra:

    pip install "parsing-toolkit[spacy]"
    python benchmarks/spacy_ud.py --treebank tr_imst --output runs/spacy_tr_imst [--recipe efficiency] [--epochs 7]

EWT's anchor (``runs/spacy_ewt``) was trained with ``--treebank en_ewt --pipeline tagger,parser``.
"""

import argparse
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from toolkit.data.ud_treebanks import find_treebank
from toolkit.params import data_root

Parse = Callable[[list[list[str]]], list[dict[str, list]]]


def train(
    output: Path,
    treebank: str = "en_ewt",
    recipe: str = "efficiency",
    epochs: int = 7,
    pipeline: str = "morphologizer,parser",
    split: tuple[Path, Path] | None = None,
) -> Path:
    """Train spaCy's *pipeline* on *treebank* (or on the train and dev files of *split*, in the treebank's
    language) into *output* (kept: a second call returns at once); the best model's folder.
    """
    best = output / "model-best"
    if (best / "meta.json").exists():
        return best
    found = find_treebank(treebank, data_root())
    if split is not None:
        found = replace(found, train=split[0], dev=split[1])
    corpus = output / "corpus"
    corpus.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    spacy = [sys.executable, "-m", "spacy"]
    for path in (found.train, found.dev):
        subprocess.run([*spacy, "convert", str(path), str(corpus), "--converter", "conllu", "--n-sents", "10"], check=True, env=env)
    config = output / "config.cfg"
    subprocess.run(
        [*spacy, "init", "config", str(config), "--lang", found.language, "--pipeline", pipeline, "--optimize", recipe, "--force"], check=True, env=env
    )
    subprocess.run(
        [*spacy, "train", str(config), "--output", str(output),
         "--paths.train", str(corpus / f"{found.train.stem}.spacy"), "--paths.dev", str(corpus / f"{found.dev.stem}.spacy"),
         "--training.max_epochs", str(epochs)],
        check=True, env=env,
    )  # fmt: skip
    return best


def load(model: Path | str) -> Parse:
    """A pipeline over gold words (no tokenizer, no lemmatizer): each sentence's ``heads`` (1-based, 0: root),
    ``deprels``, and ``upos`` and ``feats`` where the pipeline tags them.
    """
    import spacy
    from spacy.tokens import Doc

    nlp = spacy.load(model, exclude=["tagger", "lemmatizer", "attribute_ruler", "senter", "ner"])  # the parser and morphologizer read tok2vec alone
    tags = "morphologizer" in nlp.pipe_names

    def parse(sentences: list[list[str]]) -> list[dict[str, list]]:
        trees = []
        for doc in nlp.pipe((Doc(nlp.vocab, words=words) for words in sentences), batch_size=256):
            tree = {
                "heads": [0 if token.head.i == token.i else token.head.i + 1 for token in doc],
                "deprels": ["root" if token.dep_ == "ROOT" else token.dep_ for token in doc],
            }
            if tags:
                tree |= {"upos": [token.pos_ for token in doc], "feats": [str(token.morph) or "_" for token in doc]}
            trees.append(tree)  # what attachment_scores and tag_accuracy read
        return trees

    return parse


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--treebank", default="en_ewt")
    parser.add_argument("--output", type=Path, default=None, help="default: runs/spacy_TREEBANK")
    parser.add_argument("--recipe", choices=["efficiency", "accuracy"], default="efficiency")
    parser.add_argument("--pipeline", default="morphologizer,parser")
    parser.add_argument("--epochs", type=int, default=7)
    args = parser.parse_args()
    print(train(args.output or Path(f"runs/spacy_{args.treebank}"), args.treebank, args.recipe, args.epochs, args.pipeline))


if __name__ == "__main__":
    main()
