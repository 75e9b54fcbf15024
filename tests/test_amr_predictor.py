"""End to end on a slice of The Little Prince: `toolkit train` a seconds-sized AMR Stack-Transformer,
then `toolkit predict --predictor amr` on plain text and JSON lines, bad lines included; every graph
written must be read back by `penman.decode`.
"""

import json
import logging

import penman

from tests.conftest import run
from toolkit.archive import load_archive


def test_training_records_the_pred_labels_and_evaluates_smatch(amr_archive, little_prince, monkeypatch, capsys):
    import tarfile

    with tarfile.open(amr_archive) as tar:
        config = json.load(tar.extractfile("config.json"))
    assert config["grammar"]["type"] == "amr" and config["grammar"]["pred_labels"] and "open_labels" in config["grammar"]
    code, out, err = run(monkeypatch, capsys, "evaluate", amr_archive, little_prince["test"], "--metric", "exact_smatch")
    assert code == 0, err
    metrics = json.loads(out)
    assert 0.0 <= metrics["smatch"] <= 1.0
    assert metrics["smatch_f1"] >= metrics["smatch"] - 1e-9  # the optimum is never below hill-climbing


def test_predict_writes_one_readable_graph_per_line_in_order(amr_archive, tmp_path, monkeypatch, capsys, caplog):
    lines = [
        "The little prince looked at the stars.",
        "",
        '{"sentence": "I do not like grown-ups."}',
        "{not json",
        '{"tokens": ["He", "saw", "a", "sheep", "."]}',
        '{"question": "no sentence key"}',
        "Why?",
    ]
    source = tmp_path / "in.txt"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    output = tmp_path / "out.amr"
    with caplog.at_level(logging.WARNING):
        code, _, err = run(monkeypatch, capsys, "predict", amr_archive, source, "--predictor", "amr", "-o", output)
    assert code == 0, err
    text = output.read_text(encoding="utf-8")
    graphs = penman.loads(text)
    assert len(graphs) == len(lines) == len(text.strip().split("\n\n"))
    assert [graph.metadata["id"] for graph in graphs] == [str(n) for n in range(1, len(lines) + 1)]
    for block in text.strip().split("\n\n"):
        penman.decode(block)  # each block alone, as a user would read it
    bad = {2, 4, 6}
    for number, graph in enumerate(graphs, start=1):
        assert ("error" in graph.metadata) == (number in bad), graph.metadata
        if number in bad:
            assert graph.triples == [("a", ":instance", "amr-empty")]
            assert f"{source}:{number}" in graph.metadata["error"]
        else:
            assert graph.metadata["tok"] and graph.instances()
    assert graphs[0].metadata["tok"] == "The little prince looked at the stars ."  # spaCy's words, or the same from its fallback
    assert graphs[4].metadata["tok"] == "He saw a sheep ."
    assert sum("amr-empty" not in record.getMessage() and str(source) in record.getMessage() for record in caplog.records) >= 3


def test_json_interface_and_the_oracle_replays_read_back(amr_archive, little_prince):
    from predictors import Predictor

    predictor = Predictor.by_name("amr")(load_archive(amr_archive))
    outputs = predictor.predict_batch(["The rose was proud .", "   "])
    assert penman.decode(outputs[0]["graph"]).instances() and outputs[0]["tokens"] == ["The", "rose", "was", "proud", "."]
    assert "error" in outputs[1]
    # oracle replays of real graphs through the archive's fitted grammar are written the same way
    from predictors.amr import penman_block, readable
    from toolkit.data.dataset_readers import DatasetReader

    grammar = predictor.model.grammar
    for example in DatasetReader.by_name("penman")().read(little_prince["test"]):
        state = grammar.replay(example)
        assert state.is_final()
        penman.decode(penman_block(1, " ".join(example.tokens), example.tokens, readable(state.result())))
