"""Prediction streams: input is read as output is written, one line at a time, with memory bounded
on any input (endless streams, lines without an end, CoNLL-U blocks without a blank line), and
still one record out per record in.
"""

import io
import itertools

import pytest

from predictors import Predictor
from toolkit import files
from toolkit.archive import load_archive
from toolkit.files import InputLines, OverlongLine

SENTENCES = ("The cat sat on the mat .", "Birds sing .", "It rains .")


@pytest.fixture(params=["semantic_parser", "dependency", "amr"])
def predictor(request) -> Predictor:
    """The base predictor's streaming (the semantic parser's) and the two that write their own formats."""
    archive = request.getfixturevalue({"semantic_parser": "seq2seq_archive", "dependency": "dependency_archive", "amr": "amr_archive"}[request.param])
    return Predictor.by_name(request.param)(load_archive(archive))


def test_input_lines_never_hold_more_than_a_bounded_line(monkeypatch):
    monkeypatch.setattr(files, "MAX_LINE_CHARS", 8)
    text = "short\n" + "x" * 20 + "\n" + "1234567\r\n" + "12345678\n" + "y" * 30 + "\r\nlast"
    lines = list(InputLines(io.StringIO(text, newline=""), "<test>"))
    assert [str(line) for line in lines] == ["short", "x" * 8, "1234567", "12345678", "y" * 8, "last"]
    assert [type(line) is OverlongLine for line in lines] == [False, True, False, False, True, False]
    assert [line.length for line in lines if isinstance(line, OverlongLine)] == [20, 30]


def test_predict_lines_reads_its_input_as_it_writes(predictor):
    read = 0

    def endless():
        nonlocal read
        for sentence in itertools.cycle(SENTENCES):
            read += 1
            yield sentence

    outputs = list(itertools.islice(predictor.predict_lines(endless(), batch_size=4), 9))
    assert len(outputs) == 9 and read <= 12  # three batches of four, and not a line more


def test_an_overlong_line_is_one_error_record_at_its_place(predictor, monkeypatch):
    monkeypatch.setattr(files, "MAX_LINE_CHARS", 64)
    text = f"{SENTENCES[0]}\n{'a ' * 100}\n{SENTENCES[1]}\n"
    outputs = list(predictor.predict_lines(InputLines(io.StringIO(text), "in.txt"), batch_size=2))
    assert len(outputs) == 3
    message = "a line of 200 characters is longer than predict reads (64 at most)"
    assert [message in output for output in outputs] == [False, True, False]
    assert all("error" not in output for output in (outputs[0], outputs[2]))


def test_blank_lines_before_any_text_are_not_all_held(dependency_archive):
    """Telling plain text from CoNLL-U looks at a bounded number of lines, however many blank lines come first."""
    from predictors.dependency import HEAD_LINES

    read = 0

    def blanks():
        nonlocal read
        while True:
            read += 1
            yield ""

    predictor = Predictor.by_name("dependency")(load_archive(dependency_archive))
    outputs = list(itertools.islice(predictor.predict_lines(blanks(), batch_size=8), 3))
    assert read <= HEAD_LINES + 8
    assert all("an empty sentence" in output for output in outputs)


def test_a_conllu_block_without_a_blank_line_is_held_to_a_bound(dependency_archive):
    predictor = Predictor.by_name("dependency")(load_archive(dependency_archive))
    row = "{}\tword\t_\t_\t_\t_\t0\troot\t_\t_"
    most = predictor.max_words + 10_000
    endless_block = [row.format(i) for i in range(1, most + 50)]
    good = [row.format(1).replace("word", "Hello"), row.format(2).replace("word", "!").replace("\t0\troot", "\t1\tpunct")]
    outputs = list(predictor.predict_lines([*endless_block, "", *good, ""], batch_size=4))
    assert len(outputs) == 2
    assert f"a sentence of {most + 49:,} lines is longer than this model can parse" in outputs[0]
    assert "error" not in outputs[1] and "\tHello\t" in outputs[1]
