"""The seeded Smatch metric and the penman reader."""

import random

import penman
import pytest

from tests.conftest import data_root
from toolkit.data.dataset_readers import DatasetReader
from toolkit.errors import DataError
from toolkit.metrics import Metric, Smatch
from toolkit.metrics.smatch import smatch_counts

WANT_BOY = "(w / want-01 :ARG0 (b / boy))"
WANT_GIRL = "(w / want-01 :ARG0 (g / girl))"


def test_smatch_of_a_hand_computed_pair():
    # 4 triples each (2 instances, 1 relation, the top); all but the boy/girl instance match
    assert smatch_counts(WANT_GIRL, WANT_BOY) == (3, 4, 4)
    metric = Metric.by_name("smatch")()
    metric([WANT_GIRL, penman.decode(WANT_BOY)], [WANT_BOY, WANT_BOY])
    assert metric.get_metric() == pytest.approx({"smatch_precision": 7 / 8, "smatch_recall": 7 / 8, "smatch": 7 / 8})


def test_smatch_counts_and_placeholders():
    metric = Smatch()
    metric([None, "(not a graph"], [WANT_BOY, WANT_BOY])  # both score as the one-node placeholder: its top matches
    values = metric.get_metric(reset=True)
    assert (
        values["smatch_recall"] == pytest.approx(1 / 4)
        and values["smatch_precision"] == pytest.approx(1 / 2)
        and metric.state() == {"match": 0.0, "predicted": 0.0, "gold": 0.0, "greedy": 0.0}
    )
    metric.load_state({"match": 3, "predicted": 4, "gold": 6, "greedy": 0})
    assert metric.get_metric()["smatch"] == pytest.approx(2 * 0.75 * 0.5 / 1.25)


def test_smatch_is_deterministic_and_leaves_the_global_random_state_alone():
    path = data_root() / "amr-little-prince" / "amr-bank-struct-v3.0-dev.txt"
    if not path.exists():
        pytest.skip(f"The Little Prince AMR data not found at {path}")
    graphs = [penman.encode(graph, indent=None) for graph in penman.load(str(path))[:40]]
    shifted = graphs[1:] + graphs[:1]  # different graphs: hill climbing has real choices to make
    random.seed(5)
    before = random.getstate()
    scores = []
    for _ in range(2):
        metric = Smatch(seed=13)
        metric(shifted, graphs)
        scores.append(metric.get_metric())
    assert scores[0] == scores[1] and 0.0 < scores[0]["smatch"] < 1.0
    assert random.getstate() == before


# ------------------------------------------------------------ the penman reader


def test_reader_on_the_little_prince_dev_split():
    path = data_root() / "amr-little-prince" / "amr-bank-struct-v3.0-dev.txt"
    if not path.exists():
        pytest.skip(f"The Little Prince AMR data not found at {path}")
    examples = DatasetReader.by_name("penman")().read(path)
    assert len(examples) == 145
    first = examples[0]
    assert first.tokens == ["Chapter", "1", "."] and first.meta["id"] == "lpp_1943.1" and first.meta["line"] == 4
    assert isinstance(first.target, penman.Graph) and len(first.meta["lemmas"]) == 3
    assert sum(len(example.target.triples) for example in examples) == 2376  # SOURCE.md: 2,376 triples


def test_reader_prefers_tok_and_names_file_and_line_on_errors(tmp_path):
    good = tmp_path / "good.txt"
    good.write_text("# ::id a ::date x\n# ::snt Hello, world!\n# ::tok Hello , world !\n(h / hello)\n\n# ::snt Hi there\n(h / hi)\n")
    examples = DatasetReader.by_name("penman")(lemmas=False).read(good)
    assert [example.tokens for example in examples] == [["Hello", ",", "world", "!"], ["Hi", "there"]]
    assert examples[0].meta["id"] == "a" and examples[1].meta["line"] == 6
    bad = tmp_path / "bad.txt"
    bad.write_text("# ::snt fine\n(f / fine)\n\n# ::snt broken\n(b / broken\n  :ARG0 (x\n")
    with pytest.raises(DataError) as error:
        DatasetReader.by_name("penman")(lemmas=False).read(bad)
    assert str(bad) in str(error.value) and ":5" in str(error.value)
    missing = tmp_path / "missing.txt"
    missing.write_text("# ::id q\n(f / fine)\n")
    with pytest.raises(DataError, match="snt"):
        DatasetReader.by_name("penman")().read(missing)
