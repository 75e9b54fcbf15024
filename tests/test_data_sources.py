"""Data sources of a config: files, examples picked by id, named domains scored one by one."""

import json

import pytest

from tests.conftest import FIXTURES
from toolkit.data.dataset_readers import PenmanReader
from toolkit.data.example import Example
from toolkit.errors import ConfigurationError
from toolkit.evaluation import score
from toolkit.metrics.metric import Metric
from toolkit.params import Params
from toolkit.training.data_sources import DataSource, data_sources, read_sources
from toolkit.training.train import train_model

PENMAN = "".join(f"# ::id d.{i}\n# ::snt word{i}\n(w / word-{i:02d})\n\n" for i in range(1, 6))


def test_a_value_names_files_picked_ids_and_domains():
    assert data_sources("a.txt", "k") == [DataSource("a.txt")]
    assert data_sources(["a.txt", {"path": "b.txt", "ids": ["x", "y"]}], "k") == [DataSource("a.txt"), DataSource("b.txt", ("x", "y"))]
    assert data_sources({"lp": "a.txt", "bio": [{"path": "b.txt", "ids": ["x"]}, "c.txt"]}, "k") == [
        DataSource("a.txt", None, "lp"),
        DataSource("b.txt", ("x",), "bio"),
        DataSource("c.txt", None, "bio"),
    ]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"path": "b.txt", "ids": []}, r"k.ids: expected a non-empty list of ids"),
        ({"path": "b.txt", "ids": "x"}, r"k.ids: expected a non-empty list of ids"),
        ({"path": "b.txt", "id": ["x"]}, r"k: a source is \{path: FILE, ids: \[ID, ...\]\}, got keys \['id', 'path'\]"),
        ({"bio": 7}, r"k.bio: expected a path"),
        ([], r"k: expected a path"),
    ],
)
def test_a_bad_value_is_one_error_naming_its_key(value, message):
    with pytest.raises(ConfigurationError, match=message):
        data_sources(value, "k")


def test_ids_pick_examples_in_the_files_order_and_a_missing_one_is_named(tmp_path):
    path = tmp_path / "graphs.txt"
    path.write_text(PENMAN, encoding="utf-8")
    reader = PenmanReader(lemmas=False)
    picked = read_sources(reader, [DataSource(str(path), ("d.4", "d.2"), "bio")])
    assert [example.meta["id"] for example in picked] == ["d.2", "d.4"] and {example.meta["domain"] for example in picked} == {"bio"}
    with pytest.raises(ConfigurationError, match=r"holds no example with the id 'd.9' \(1 of 2 ids missing\)"):
        read_sources(reader, [DataSource(str(path), ("d.1", "d.9"))])


class Matches(Metric):
    """The share of predictions equal to their target."""

    def reset(self):
        self.right = self.total = 0

    def __call__(self, predictions, golds):
        self.right += sum(p == g for p, g in zip(predictions, golds))
        self.total += len(golds)

    def get_metric(self, reset=False):
        return {"matches": self.right / self.total}


def test_scores_come_for_the_whole_and_for_each_domain():
    examples = [Example(["a"], "x", {"domain": "lp"}), Example(["b"], "y", {"domain": "bio"}), Example(["c"], "z", {"domain": "bio"})]
    assert score(["x", "y", "no"], examples, [Matches()]) == {"matches": 2 / 3, "lp_matches": 1.0, "bio_matches": 0.5}
    assert score(["x"], examples[:1], [Matches()]) == {"matches": 1.0}, "one domain: no breakdown"


def test_training_validates_and_tests_each_domain(geo_slice, tmp_path):
    ext_vars = {"TRAIN": str(geo_slice["train"]), "TEST": str(geo_slice["test"])}
    domains = {"first": str(geo_slice["test"]), "second": str(geo_slice["train"])}
    overrides = {"validation_data_path": domains, "test_data_path": domains, "trainer.num_epochs": 1, "trainer.validation_metric": "+second_exact_match"}
    train_model(Params.from_file(FIXTURES / "tiny_seq2seq.jsonnet", overrides=overrides, ext_vars=ext_vars), tmp_path / "run")
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert {"validation_first_exact_match", "validation_second_exact_match", "test_first_exact_match", "test_second_exact_match"} <= set(metrics)
