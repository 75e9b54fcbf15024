r"""Raw English sentences of several genres for a teacher to parse: the text a distilled parser learns from.

Sequence-level distillation (Kim & Rush, 2016) wants text the teacher parses and the student
learns from; the more genres, the less the student leans on EWT's. This writes, one sentence per
line, every English sentence the shared data sets hold outside the treebanks, deduplicated:

- Multi30k's English side, every split (image captions: Flickr30k and MS COCO);
- The Little Prince's sentences, from its AMR file (narrative fiction and dialogue);
- GeoQuery's raw questions (lowercased questions about US geography).

ATIS, GEO and JOBS in their ``question<TAB>logical form`` form are stemmed and anonymized, so
they are left out. EWT's own text is left out too: its test sentences must stay unseen.

    python benchmarks/unlabeled_english.py runs/silver/english.txt
    toolkit predict runs/ewt_mpnet/model.tar.gz runs/silver/english.txt --beam-size 1 -o runs/silver/english_mpnet.conllu
"""

import argparse
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from toolkit.params import data_root


def multi30k(root: Path) -> Iterator[str]:
    for path in sorted((root / "multi30k").glob("*.en")):
        yield from path.read_text(encoding="utf-8").splitlines()


def little_prince(root: Path) -> Iterator[str]:
    text = (root / "amr-little-prince" / "amr-bank-struct-v3.0.txt").read_text(encoding="utf-8")
    yield from (line.split("::snt", 1)[1] for line in text.splitlines() if line.startswith("# ::snt "))


def geo_questions(root: Path) -> Iterator[str]:
    for name in ("geo_prolog_train.tsv", "geo_prolog_test.tsv"):
        yield from (line.split("\t", 1)[0] for line in (root / "geo-raw" / name).read_text(encoding="utf-8").splitlines())


SOURCES = {"Multi30k captions": multi30k, "The Little Prince": little_prince, "GeoQuery questions": geo_questions}


def sentences(root: Path) -> tuple[list[str], Counter]:
    """Every source's sentences, stripped, empty and repeated ones dropped; how many each source gave."""
    seen, kept, counts = set(), [], Counter()
    for name, source in SOURCES.items():
        for sentence in map(str.strip, source(root)):
            if sentence and sentence not in seen:
                seen.add(sentence)
                kept.append(sentence)
                counts[name] += 1
    return kept, counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("output", type=Path)
    args = parser.parse_args()
    kept, counts = sentences(Path(data_root()))
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text("".join(f"{sentence}\n" for sentence in kept), encoding="utf-8")
    words = sum(len(sentence.split()) for sentence in kept)
    print(f"{len(kept):,} sentences, about {words:,} words, into {args.output}: " + ", ".join(f"{name} {n:,}" for name, n in counts.items()))


if __name__ == "__main__":
    main()
