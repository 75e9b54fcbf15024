"""The tagger: the `tags` grammar, tag accuracy, the model with plain and hypernode encoders, and `toolkit train` on EWT."""

import json

import pytest
import torch

from tests.conftest import data_root, run
from toolkit.data.dataset_readers import DependencyTree
from toolkit.data.example import Example
from toolkit.data.vocabulary import Vocabulary
from toolkit.errors import ConfigurationError, DataError
from toolkit.grammars import SequenceGrammar
from toolkit.metrics import Metric, TagAccuracy
from toolkit.models import Model, TagGrammar
from toolkit.oracle import replay_oracle
from toolkit.training.train import build_vocabulary


def tree(tags):
    return DependencyTree(tuple(range(len(tags))), ("dep",) * len(tags), tuple(tags))


EXAMPLES = [
    Example("the dog barks".split(), tree(["DET", "NOUN", "VERB"]), {"path": "a.conllu", "line": 1}),
    Example("a cat sleeps .".split(), tree(["DET", "NOUN", "VERB", "PUNCT"]), {"path": "a.conllu", "line": 6}),
]


def test_tags_grammar_reads_the_upos_of_a_tree_and_round_trips():
    grammar = TagGrammar()
    assert grammar.oracle(EXAMPLES[0]) == ["DET", "NOUN", "VERB"]
    report = replay_oracle(grammar, EXAMPLES)
    assert report["exact_round_trips"] == 2 and report["tag_accuracy"] == 1.0
    state = grammar.initial_state(EXAMPLES[0]).apply("DET").apply("NOUN")
    assert not state.is_final() and state.allowed() is None
    assert state.apply("VERB").is_final() and state.apply("VERB").allowed() == ()
    assert grammar.oracle(Example(["a", "b"], "X Y")) == ["X", "Y"]  # plain tag strings work too


def test_tags_grammar_names_file_and_line_of_a_sentence_without_one_tag_per_token():
    with pytest.raises(DataError, match=r"a\.conllu:4: grammar 'tags' needs one 'upos' tag per token: 2 tokens, 1 tags"):
        TagGrammar().oracle(Example(["a", "b"], tree(["X"]), {"path": "a.conllu", "line": 4}))
    with pytest.raises(DataError, match=r"2 tokens, no tags"):
        TagGrammar().oracle(Example(["a", "b"], DependencyTree((0, 1), ("root", "dep"))))


def test_tag_accuracy_by_hand():
    metric = Metric.from_params({"type": "tag_accuracy"})
    metric([("DET", "NOUN", "NOUN"), None], [tree(["DET", "NOUN", "VERB"]), tree(["X", "Y"])])
    metric([["A"]], ["A B"])  # a short prediction: its missing tag is wrong
    assert metric.get_metric(reset=True) == {"tag_accuracy": pytest.approx(3 / 7)}
    assert TagAccuracy().get_metric() == {"tag_accuracy": 0.0}
    with pytest.raises(DataError, match="needs gold tags"):
        metric([("A",)], [DependencyTree((0,), ("root",))])


def build(encoder):
    grammar = TagGrammar()
    vocab = build_vocabulary(EXAMPLES, grammar)
    torch.manual_seed(0)
    return Model.from_params({"type": "tagger", "encoder": encoder}, vocab=vocab, grammar=grammar)


HYPERNODE = {
    "type": "hypernode_transformer",
    "input_dim": 16,
    "layers": {"num_layers": 1, "num_heads": 2, "ff_dim": 32},
    "phrases": {"type": "ngram", "max_n": 3},
}


def test_tagger_indexes_hypernodes_once_per_example_and_batches_them():
    model = build(HYPERNODE)
    indexed = [model.index(example) for example in EXAMPLES]
    assert indexed[0]["encoder_inputs"]["hypernodes"].int().tolist() == [[1, 1, 0], [0, 1, 1], [1, 1, 1]]  # (0, 1), (1, 2), (0, 1, 2)
    assert model.length(indexed[1]) == 4
    batch = model.collate(indexed)
    assert batch["source"].shape == (2, 4) and batch["encoder_inputs"]["hypernodes"].shape == (2, 5, 4) and batch["target"].shape == (2, 4)
    assert batch["encoder_inputs"]["hypernodes"][0].int().tolist() == [[1, 1, 0, 0], [0, 1, 1, 0], [1, 1, 1, 0], [0, 0, 0, 0], [0, 0, 0, 0]]
    output = model(batch)
    assert output["num_tokens"] == 7 and output["loss"].requires_grad


@pytest.mark.parametrize("encoder", [{"type": "transformer", "input_dim": 16, "layers": {"num_layers": 1, "num_heads": 2, "ff_dim": 32}}, HYPERNODE])
def test_tagger_learns_a_tiny_set_and_predicts_one_real_tag_per_token(encoder):
    model = build(encoder)
    batch = model.collate([model.index(example) for example in EXAMPLES])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    model.train()
    for _ in range(60):
        optimizer.zero_grad()
        model(batch)["loss"].backward()
        optimizer.step()
    model.eval()
    predictions = model.predict(EXAMPLES)
    assert predictions == [("DET", "NOUN", "VERB"), ("DET", "NOUN", "VERB", "PUNCT")]
    unseen = model.predict([Example(["zzz"] * 6)])[0]
    assert len(unseen) == 6 and not set(unseen) & set(Vocabulary.SPECIALS)


def test_tagger_needs_the_tags_grammar():
    vocab = build_vocabulary(EXAMPLES, TagGrammar())
    with pytest.raises(ConfigurationError, match=r'needs "grammar": \{"type": "tags"\}'):
        Model.from_params({"type": "tagger", "encoder": {"type": "transformer", "input_dim": 16}}, vocab=vocab, grammar=SequenceGrammar())


# ------------------------------------------------------------------ end to end through `toolkit`

CONFIG = """
{
  dataset_reader: { type: 'conllu' },
  train_data_path: std.extVar('TRAIN'),
  validation_data_path: std.extVar('TEST'),
  test_data_path: std.extVar('TEST'),
  grammar: { type: 'tags' },
  model: {
    type: 'tagger',
    encoder: { type: 'transformer', input_dim: 32, layers: { num_layers: 1, num_heads: 2, ff_dim: 64, dropout: 0.1 } },
    source_token_dropout: 0.1,
  },
  metrics: [{ type: 'tag_accuracy' }],
  trainer: {
    optimizer: { type: 'adam', lr: 3e-3 },
    num_epochs: 3,
    max_tokens: 1024,
    validation_metric: '+tag_accuracy',
    num_checkpoints_to_average: 2,
    device: 'cpu',
    progress_bar: false,
  },
  random_seed: 7,
}
"""


@pytest.fixture
def ewt(tmp_path, monkeypatch):
    """The first 120 sentences of EWT train as TRAIN and the first 30 of EWT test as TEST."""
    root = data_root() / "ud-english-ewt"
    if not (root / "en_ewt-ud-train.conllu").exists():
        pytest.skip(f"UD English-EWT not found at {root}")
    paths = {}
    for split, count in (("train", 120), ("test", 30)):
        sentences = (root / f"en_ewt-ud-{split}.conllu").read_text(encoding="utf-8").split("\n\n")[:count]
        paths[split] = tmp_path / f"{split}.conllu"
        paths[split].write_text("\n\n".join(sentences) + "\n\n", encoding="utf-8")
        monkeypatch.setenv(split.upper(), str(paths[split]))
    (tmp_path / "config.jsonnet").write_text(CONFIG)
    paths["config"] = tmp_path / "config.jsonnet"
    return paths


HYPERNODE_OVERRIDE = json.dumps({"model.encoder": {"type": "hypernode_transformer", "phrases": {"type": "ngram", "max_n": 2}}})


@pytest.mark.parametrize("override", ["{}", HYPERNODE_OVERRIDE])
def test_train_evaluate_predict_on_an_ewt_slice(ewt, override, monkeypatch, capsys, tmp_path):
    directory = tmp_path / "run"
    code, out, err = run(monkeypatch, capsys, "train", ewt["config"], "-s", directory, "-o", override)
    assert code == 0, err
    history = [json.loads((directory / f"metrics_epoch_{epoch}.json").read_text()) for epoch in range(3)]
    assert history[-1]["training_loss"] < history[0]["training_loss"]
    final = json.loads((directory / "metrics.json").read_text())
    assert 0.2 < final["test_tag_accuracy"] <= 1.0  # 17 tags: well above chance after three epochs

    code, out, err = run(monkeypatch, capsys, "evaluate", directory / "model.tar.gz", ewt["test"])
    assert code == 0, err
    assert json.loads(out)["tag_accuracy"] == pytest.approx(final["test_tag_accuracy"])

    inputs = tmp_path / "sentences.txt"
    inputs.write_text('The dog barks .\n\n{"tokens": ["I", "agree"]}\n')
    code, out, err = run(monkeypatch, capsys, "predict", directory / "model.tar.gz", inputs, "--predictor", "predictors.tagger.TaggerPredictor")
    assert code == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    assert lines[0]["tokens"] == ["The", "dog", "barks", "."] and len(lines[0]["tags"]) == 4
    assert "error" in lines[1] and lines[2]["tokens"] == ["I", "agree"] and len(lines[2]["tags"]) == 2


def test_a_typo_in_the_phrase_generator_is_one_error_line(ewt, monkeypatch, capsys, tmp_path):
    override = json.dumps({"model.encoder": {"type": "hypernode_transformer", "phrases": {"type": "ngram", "max_m": 2}}})
    code, _, err = run(monkeypatch, capsys, "train", ewt["config"], "-s", tmp_path / "run", "-o", override)
    assert code == 1 and err.startswith("error: ") and "'model.encoder.phrases.max_m' (did you mean 'max_n'?)" in err
    assert "Traceback" not in err
