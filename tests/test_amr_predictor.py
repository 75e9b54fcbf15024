"""End to end on a slice of The Little Prince: `toolkit train` a seconds-sized AMR Stack-Transformer,
then `toolkit predict --predictor amr` on plain text and JSON lines, bad lines included; every graph
written must be read back by `penman.decode`.
"""

import json
import logging
import tempfile
from pathlib import Path

import penman
from hypothesis import given, settings
from hypothesis import strategies as st

from predictors.amr import penman_block
from tests.conftest import run
from toolkit.archive import load_archive
from toolkit.data.dataset_readers import PenmanReader
from toolkit.data.tokenization import split_tokens
from transition_systems.amr.graph import PLACEHOLDER
from transition_systems.amr.penman_text import metadata_value, read_metadata_value


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


# ------------------------------------------------------------ metadata that penman reads back (issue 60)

# text as a hostile user writes it: penman's separator, keys, backslashes, comment marks, every kind of line break
PIECES = st.sampled_from([*"ab :\\#=é", "::", "::snt", " ::id 2 ", "\n", "\r", "\t", "\u2028", "\x85", "\x0b"])
HOSTILE = st.lists(st.one_of(PIECES, st.text(max_size=3)), max_size=12).map("".join)
TOKENS = st.lists(st.lists(st.sampled_from([*"ab:\\#é", "::"]), min_size=1, max_size=4).map("".join), max_size=6)


def read_back(block: str) -> dict[str, str]:
    """The metadata penman reads from *block*, written to a file and loaded as a user would (universal newlines)."""
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "out.amr"
        path.write_text(block, encoding="utf-8")
        [graph] = penman.load(path)
    return graph.metadata


@settings(max_examples=300, deadline=None)
@given(text=HOSTILE, tokens=TOKENS, error=HOSTILE, number=st.integers(1, 10**6))
def test_every_metadata_value_comes_back_through_penman(text, tokens, error, number):
    """`# ::snt the prince ::id 2 sleeps` was read by penman as snt "the prince" and id "2 sleeps"."""
    metadata = read_back(penman_block(number, text, tokens, PLACEHOLDER, error or None))
    assert set(metadata) == {"id", "snt", "tok", *(["error"] if error else [])}
    assert metadata["id"] == str(number)
    assert read_metadata_value(metadata["snt"]) == " ".join(text.split())  # whitespace runs are one space: a value is one line
    assert read_metadata_value(metadata["tok"]).split(" ") == (tokens or [""])
    if error:
        assert read_metadata_value(metadata["error"]) == " ".join(error.split())


def test_the_issue_case_and_text_without_colons_are_written_as_they_are():
    block = penman_block(1, "the prince ::id 2 sleeps", ["the", "prince", "::", "id", "2", "sleeps"], PLACEHOLDER)
    assert block.splitlines()[1:3] == [r"# ::snt the prince :\:id 2 sleeps", r"# ::tok the prince :\: id 2 sleeps"]
    assert read_back(block) == {"id": "1", "snt": r"the prince :\:id 2 sleeps", "tok": r"the prince :\: id 2 sleeps"}
    assert metadata_value("The rose: proud, at 10:30.") == "The rose: proud, at 10:30."  # no escape where none is needed


def test_tokens_with_spaces_are_an_error_not_other_tokens(amr_archive):
    """``{"tokens": ["New York"]}`` was written as ``# ::tok New York``, two tokens when read back."""
    from predictors import Predictor

    predictor = Predictor.by_name("amr")(load_archive(amr_archive))
    lines = ['{"tokens": ["New York", "sleeps"]}', '{"tokens": ["a", ""]}', '{"tokens": ["a", "b"]}']
    blocks = list(predictor.predict_lines(lines))
    assert [read_back(block).get("error", "").split(": ", 1)[-1] for block in blocks] == [
        '"tokens" must be a list of strings, none empty or with spaces in it',
        '"tokens" must be a list of strings, none empty or with spaces in it',
        "",
    ]


def test_the_tok_line_is_the_words_every_reader_of_the_text_gets(amr_archive, tmp_path):
    """``# ::tok`` holds the tokenizer's words, which the ``penman`` reader's ``spacy`` tokenizer gives too: no word
    written without an apostrophe split (``id`` was ``i d``), each markup tag one word, read back whole.
    """
    from predictors import Predictor

    text = 'my id card , Wed night : <i>BRAF</i> in <xref ref-type="fig" rid="F3">Fig 3</xref>'
    words = ["my", "id", "card", ",", "Wed", "night", ":", "<i>", "BRAF", "</i>", "in", '<xref ref-type="fig" rid="F3">', "Fig", "3", "</xref>"]
    [block] = Predictor.by_name("amr")(load_archive(amr_archive)).predict_lines([text])
    assert split_tokens(read_back(block)["tok"]) == words
    source = tmp_path / "data.txt"
    source.write_text(f"# ::snt {text}\n(c / card :poss (i / i))\n", encoding="utf-8")
    assert PenmanReader(tokenizer="spacy", lemmas=False).read(source)[0].tokens == words
