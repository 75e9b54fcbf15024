r"""Raw text in, a UD analysis out: a dependency parser's own tokenization, multiword tokens, tags and
trees scored against a treebank's test split by the CoNLL 2018 shared task's definitions
(:mod:`toolkit.metrics.ud_alignment`: Tokens, Sentences, Words, UPOS, UFeats and LAS F1).

The text is each test sentence's ``# text``, given two ways: one sentence per line (the sentences
are given; the words are the parser's), and every ``--joined`` sentences as one line (the parser
splits the sentences too). With ``--spacy-model``, spaCy's pipelines read the same text with their
own tokenizer, sentence splitter, tagger and parser (they keep a multiword token as one word).

    python benchmarks/ud_raw_text.py --treebank fr_sequoia --archive runs/ud_fr/model.tar.gz \
        [--spacy-model fr_core_news_sm] [--joined 10] [--beam-size 1] [--threads 1] [--output runs/ud_fr/raw_test.conllu]
"""

import argparse
import tempfile
import time
from pathlib import Path

import torch

from toolkit import load_predictor
from toolkit.data.conllu_format import blocks, parse_sentence
from toolkit.data.ud_treebanks import find_treebank
from toolkit.decoding import GreedySearch
from toolkit.metrics.ud_alignment import analysis, read_analysis, ud_scores
from toolkit.params import data_root

COLUMNS = ("Tokens", "Sentences", "Words", "UPOS", "UFeats", "LAS")


def test_texts(path: Path) -> list[str]:
    """Each sentence's ``# text``, in order."""
    with open(path, encoding="utf-8") as lines:
        return [parse_sentence(block.lines, str(path)).text or "" for block in blocks((n, line.rstrip("\n")) for n, line in enumerate(lines, 1))]


def ours(archive: str, lines: list[str], output: Path, beam_size: int) -> float:
    """Parse *lines* into *output* with the archive's predictor (greedy, or a beam); the seconds it took."""
    predictor = load_predictor(archive, device="cpu", beam_size=beam_size if beam_size > 1 else None)
    if beam_size <= 1:
        predictor.search = GreedySearch(max_steps=2000)
    start = time.perf_counter()
    with open(output, "w", encoding="utf-8") as out:
        out.writelines(block + "\n" for block in predictor.predict_lines(line + "\n" for line in lines))
    return time.perf_counter() - start


def spacy_pipeline(name: str, lines: list[str]):  # type: ignore[no-untyped-def]
    """*lines* read by a spaCy pipeline: its tokens as words, its sentences, tags and trees (as CoNLL-U sentences)."""
    import spacy

    from toolkit.data.conllu_format import Sentence, parse_row

    nlp = spacy.load(name, exclude=["lemmatizer", "ner"])
    sentences = []
    for doc in nlp.pipe(lines, batch_size=64):
        for span in doc.sents:
            rows = []
            for token in (t for t in span if not t.is_space):
                head = 0 if token.head.i == token.i else token.head.i - span.start + 1
                deprel = "root" if token.dep_ == "ROOT" else token.dep_
                fields = [str(token.i - span.start + 1), token.text, "_", token.pos_ or "_", "_", str(token.morph) or "_", str(head), deprel, "_", "_"]
                rows.append(parse_row("\t".join(fields), 0, name))
            sentences.append(Sentence(0, rows=rows))
    return analysis(sentences)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--treebank", default="fr_sequoia")
    parser.add_argument("--archive", action="append", default=[])
    parser.add_argument("--spacy-model", action="append", default=[])
    parser.add_argument("--joined", type=int, default=10, help="sentences per line in the second reading (0: leave it out)")
    parser.add_argument("--output", type=Path, default=None, help="where our first archive's CoNLL-U of the joined text goes")
    parser.add_argument("--beam-size", type=int, default=1, help="our parsers' search (1: greedy)")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    treebank = find_treebank(args.treebank, data_root())
    gold = read_analysis(treebank.test)
    texts = test_texts(treebank.test)
    readings = {"one sentence per line": texts}
    if args.joined:
        readings[f"{args.joined} sentences per line"] = [" ".join(texts[i : i + args.joined]) for i in range(0, len(texts), args.joined)]
    print(f"\n{treebank.test}: {len(gold.tokens):,} tokens, {len(gold.words):,} words, {len(gold.sentences):,} sentences\n")
    print(f"| parser | text | {' | '.join(COLUMNS)} | words/s |\n|{' --- |' * (len(COLUMNS) + 3)}")
    for archive in args.archive:
        for reading, lines in readings.items():
            with tempfile.TemporaryDirectory() as directory:
                output = args.output if args.output and archive == args.archive[0] else Path(directory) / "out.conllu"
                seconds = ours(archive, lines, output, args.beam_size)
                scores = ud_scores(gold, read_analysis(output))
            print(f"| {Path(archive).parent.name} | {reading} | {' | '.join(f'{100 * scores[c]:.2f}' for c in COLUMNS)} | {len(gold.words) / seconds:,.0f} |")
    for name in args.spacy_model:
        for reading, lines in readings.items():
            start = time.perf_counter()
            system = spacy_pipeline(name, lines)
            seconds = time.perf_counter() - start
            scores = ud_scores(gold, system)
            print(f"| spaCy {name} | {reading} | {' | '.join(f'{100 * scores[c]:.2f}' for c in COLUMNS)} | {len(gold.words) / seconds:,.0f} |")


if __name__ == "__main__":
    main()
