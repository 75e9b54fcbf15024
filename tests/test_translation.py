"""Translation: the parallel-text reader, corpus BLEU against sacreBLEU and by hand, and `toolkit train` on Multi30k."""

import json
import sys

import pytest
import sacrebleu

from tests.conftest import data_root
from toolkit.cli import main
from toolkit.data.dataset_readers import DatasetReader, ParallelTextReader
from toolkit.errors import ConfigurationError, DataError
from toolkit.metrics import Bleu, Metric

MULTI30K = data_root() / "multi30k"


def test_bleu_of_a_hand_checked_pair():
    """Matches 5/6, 3/5, 2/4, 1/3 of the 1- to 4-grams, equal lengths: (1/12) ** (1/4) = 0.5373."""
    metric = Metric.from_params({"type": "bleu"})
    metric(["the cat sat on the mat"], ["the cat sat on a mat"])
    assert metric.get_metric()["bleu"] == pytest.approx((5 / 6 * 3 / 5 * 2 / 4 * 1 / 3) ** 0.25, abs=1e-6)
    assert metric.get_metric()["bleu"] * 100 == pytest.approx(sacrebleu.corpus_bleu(["the cat sat on the mat"], [["the cat sat on a mat"]]).score)


def test_bleu_brevity_penalty_by_hand():
    """Every n-gram right, 5 words for 8: BLEU = exp(1 - 8/5)."""
    metric = Bleu()
    metric([["a", "b", "c", "d", "e"]], ["a b c d e f g h"])  # token lists are joined
    assert metric.get_metric(reset=True)["bleu"] == pytest.approx(0.548812, abs=1e-6)
    metric([None], ["a b"])  # no output at all: nothing matches
    assert metric.get_metric()["bleu"] == 0.0


def test_bleu_sums_batches_and_processes_like_one_corpus():
    hypotheses = ["Two dogs run in the park.", "A man rides a bike!", "The girl, smiling, holds a red ball.", "Nothing."]
    references = ["Two dogs are running in a park.", "A man is riding a bicycle.", "A smiling girl holds a red ball.", "A cat sleeps."]
    expected = sacrebleu.corpus_bleu(hypotheses, [references]).score / 100
    first, second = Bleu(), Bleu()
    first(hypotheses[:1], references[:1])
    first(hypotheses[1:2], references[1:2])
    second(hypotheses[2:], references[2:])
    merged = Bleu()
    merged.load_state({name: first.state()[name] + second.state()[name] for name in Bleu.count_names})
    assert merged.get_metric()["bleu"] == pytest.approx(expected, abs=1e-9)
    lowercase = Bleu(lowercase=True)
    lowercase(hypotheses, references)
    assert lowercase.get_metric()["bleu"] == pytest.approx(sacrebleu.corpus_bleu(hypotheses, [references], lowercase=True).score / 100)


def test_bleu_options_are_checked():
    with pytest.raises(ConfigurationError, match=r"^tokenize: unknown sacreBLEU tokenizer 'moses'; available: none, zh, 13a"):
        Bleu(tokenize="moses")
    with pytest.raises(ConfigurationError, match=r"^smooth_method: must be one of"):
        Bleu(smooth_method="laplace")


def write_pair(tmp_path, source: str, target: str, prefix: str = "train"):
    (tmp_path / f"{prefix}.de").write_text(source, encoding="utf-8")
    (tmp_path / f"{prefix}.en").write_text(target, encoding="utf-8")
    return tmp_path / prefix


def test_reader_tokenises_both_sides_and_keeps_provenance(tmp_path):
    prefix = write_pair(tmp_path, "Ein Mann (mit Hut) läuft.\n\nZwei Hunde!\n", "A man (with a hat) walks.\n\nTwo dogs!\n")
    reader = DatasetReader.from_params({"type": "parallel_text", "source_language": "de", "target_language": "en", "lowercase": True})
    examples = reader.read(prefix)
    assert [example.tokens for example in examples] == [["ein", "mann", "(", "mit", "hut", ")", "läuft", "."], ["zwei", "hunde", "!"]]
    assert examples[0].target == "a man ( with a hat ) walks ." and examples[1].meta == {"path": f"{prefix}.de", "line": 3}
    assert [e.target for e in reader.read(f"{prefix}.de")] == [e.target for e in examples]  # the source file names the pair too
    cased = ParallelTextReader("de", "en", max_examples=1).read(prefix)
    assert len(cased) == 1 and cased[0].tokens[:2] == ["Ein", "Mann"]
    assert reader.text_to_example("Ein Hund.").tokens == ["ein", "hund", "."]
    assert reader.text_to_example("Ein Hund.\tA dog.").target == "a dog ."


def test_reader_errors_name_file_and_line(tmp_path):
    reader = ParallelTextReader("de", "en")
    prefix = write_pair(tmp_path, "eins\nzwei\ndrei\n", "one\ntwo\n")
    with pytest.raises(DataError, match=rf"{tmp_path}/train\.de:3: train\.de has a line 3, but {tmp_path}/train\.en ends before it"):
        reader.read(prefix)
    prefix = write_pair(tmp_path, "eins\n", "one\ntwo\n", "short")
    with pytest.raises(DataError, match=r"short\.en:2: short\.en has a line 2, but .*short\.de ends before it"):
        reader.read(prefix)
    prefix = write_pair(tmp_path, "eins\n  \n", "one\ntwo\n", "hole")
    with pytest.raises(DataError, match=rf"{tmp_path}/hole\.de:2: an empty sentence"):
        reader.read(prefix)
    (tmp_path / "lonely.de").write_text("eins\n")
    with pytest.raises(DataError, match=rf"{tmp_path}/lonely\.en: no such file"):
        reader.read(tmp_path / "lonely")
    (tmp_path / "bad.de").write_bytes(b"eins\nzw\xe9i\n")
    (tmp_path / "bad.en").write_text("one\ntwo\n")
    with pytest.raises(DataError, match=r"bad\.de:2: invalid UTF-8"):
        reader.read(tmp_path / "bad")


def test_reader_options_are_checked():
    with pytest.raises(ConfigurationError, match=r"^target_language: must differ from source_language, both are 'en'"):
        ParallelTextReader("en", "en")
    with pytest.raises(ConfigurationError, match=r"^tokenize: unknown sacreBLEU tokenizer"):
        ParallelTextReader("de", "en", tokenize="moses")


@pytest.mark.skipif(not (MULTI30K / "val.en").exists(), reason=f"Multi30k not found at {MULTI30K}")
def test_bleu_on_tokenised_references_equals_sacrebleu_on_the_raw_ones():
    """The reader's 13a tokens re-tokenise to themselves, so scoring against the tokenised targets is
    scoring against the raw references, as `sacrebleu` does.
    """
    examples = ParallelTextReader("de", "en", max_examples=300).read(MULTI30K / "val")
    raw = (MULTI30K / "val.en").read_text(encoding="utf-8").splitlines()[:300]
    hypotheses = [" ".join(e.target.split()[1:]) for e in examples]  # outputs missing their first word
    metric = Bleu()
    metric(hypotheses, [e.target for e in examples])
    assert metric.get_metric()["bleu"] == pytest.approx(sacrebleu.corpus_bleu(hypotheses, [raw]).score / 100, abs=1e-12)


# ------------------------------------------------------------------ end to end through `toolkit`

CONFIG = """
{
  dataset_reader: { type: 'parallel_text', source_language: 'de', target_language: 'en', lowercase: true },
  train_data_path: std.extVar('TRAIN'),
  validation_data_path: std.extVar('TEST'),
  test_data_path: std.extVar('TEST'),
  grammar: { type: 'sequence', max_length: 40 },
  model: {
    type: 'encoder_decoder',
    encoder: { type: 'hypernode_transformer', phrases: { type: 'ngram', max_n: 3 }, input_dim: 32, layers: { num_layers: 1, num_heads: 2, ff_dim: 64 } },
    decoder: { type: 'transformer', input_dim: 32, layers: { num_layers: 1, num_heads: 2, ff_dim: 64 } },
  },
  metrics: [{ type: 'bleu', lowercase: true }],
  trainer: { optimizer: { type: 'adam', lr: 3e-3 }, num_epochs: 2, max_tokens: 1024, validation_metric: '+bleu', device: 'cpu', progress_bar: false },
  random_seed: 7,
}
"""


@pytest.mark.skipif(not (MULTI30K / "train.de").exists(), reason=f"Multi30k not found at {MULTI30K}")
def test_translation_trains_with_the_hypernode_encoder(tmp_path, monkeypatch, capsys):
    for split, start, count in (("train", 0, 80), ("test", 200, 20)):  # slices of Multi30k train
        for language in ("de", "en"):
            lines = (MULTI30K / f"train.{language}").read_text(encoding="utf-8").splitlines()[start : start + count]
            (tmp_path / f"{split}.{language}").write_text("\n".join(lines) + "\n", encoding="utf-8")
        monkeypatch.setenv(split.upper(), str(tmp_path / split))
    (tmp_path / "config.jsonnet").write_text(CONFIG)
    monkeypatch.setattr(sys, "argv", ["toolkit", "train", str(tmp_path / "config.jsonnet"), "-s", str(tmp_path / "run")])
    try:
        main()
    except SystemExit as exit:
        assert not exit.code, capsys.readouterr().err
    final = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert 0.0 <= final["test_bleu"] <= 1.0 and final["training_epochs"] == 2
