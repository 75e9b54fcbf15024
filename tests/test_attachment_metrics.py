"""UAS and LAS: hand-computed scores, punctuation, universal relations, and incomplete predictions."""

import pytest

from toolkit.data.dataset_readers import DependencyTree
from toolkit.errors import DataError
from toolkit.metrics import AttachmentScores, Metric

# "She ate the fish ." with gold tags; the prediction gets "the" wrong (head) and "fish" half wrong (relation).
GOLD = DependencyTree((2, 0, 4, 2, 2), ("nsubj", "root", "det", "obj", "punct"), ("PRON", "VERB", "DET", "NOUN", "PUNCT"))
PREDICTED = DependencyTree((2, 0, 2, 2, 2), ("nsubj", "root", "det", "iobj", "punct"))


def scores(predictions, golds, **options):
    metric = Metric.from_params({"type": "attachment_scores", **options})
    metric(predictions, golds)
    return metric.get_metric(reset=True)


def test_hand_computed_uas_and_las_include_punctuation_by_default():
    assert scores([PREDICTED], [GOLD]) == {"uas": pytest.approx(4 / 5), "las": pytest.approx(3 / 5)}
    assert scores([GOLD.without_upos()], [GOLD]) == {"uas": 1.0, "las": 1.0}


def test_excluding_punctuation_scores_only_words_whose_gold_tag_is_not_punct():
    assert scores([PREDICTED], [GOLD], exclude_punctuation=True) == {"uas": pytest.approx(3 / 4), "las": pytest.approx(2 / 4)}
    with pytest.raises(DataError, match="UPOS"):
        scores([PREDICTED], [PREDICTED], exclude_punctuation=True)


def test_universal_relations_ignore_subtypes():
    gold = DependencyTree((0, 1), ("root", "nmod:poss"))
    predicted = DependencyTree((0, 1), ("root", "nmod:tmod"))
    assert scores([predicted], [gold])["las"] == 0.5
    assert scores([predicted], [gold], universal_relations=True)["las"] == 1.0


def test_scores_are_micro_averaged_over_words_and_batches():
    metric = AttachmentScores()
    metric([PREDICTED], [GOLD])
    metric([DependencyTree((0,), ("root",))], [DependencyTree((0,), ("root",))])
    assert metric.get_metric() == {"uas": pytest.approx(5 / 6), "las": pytest.approx(4 / 6)}
    state = metric.state()
    assert state == {"unlabelled": 5, "labelled": 4, "total": 6}
    fresh = AttachmentScores()
    fresh.load_state(state)
    assert fresh.get_metric(reset=True) == metric.get_metric(reset=True)
    assert metric.get_metric() == {"uas": 0.0, "las": 0.0}


def test_missing_or_short_predictions_count_as_wrong():
    assert scores([None], [GOLD]) == {"uas": 0.0, "las": 0.0}
    assert scores([DependencyTree((2, 0), ("nsubj", "root"))], [GOLD]) == {"uas": pytest.approx(2 / 5), "las": pytest.approx(2 / 5)}
    assert scores([{"heads": [2, 0, 4, 2, 2], "deprels": ["nsubj", "root", "det", "obj", "x"]}], [GOLD])["las"] == pytest.approx(4 / 5)


def test_mismatched_batches_and_non_tree_golds_are_errors():
    with pytest.raises(ValueError, match="2 predictions but 1 golds"):
        scores([PREDICTED, PREDICTED], [GOLD])
    with pytest.raises(DataError, match="gold dependency trees"):
        scores([PREDICTED], ["( a b )"])
