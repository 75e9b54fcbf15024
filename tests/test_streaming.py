"""Prediction streams: input is read as output is written, one line at a time, with memory bounded
on any input (endless streams, lines without an end, CoNLL-U blocks without a blank line), and
still one record out per record in.
"""

import io
import itertools
import os
import signal
import threading

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


# ------------------------------------------------------------------ the output: whole or not at all


def leftovers(folder) -> list[str]:
    return sorted(path.name for path in folder.iterdir() if path.name.endswith(".tmp"))


def test_an_output_file_is_the_earlier_one_until_it_is_whole(tmp_path):
    out = tmp_path / "out.jsonl"
    out.write_text("earlier\n")
    with files.writing_output(out) as sink:
        for number in range(1000):
            sink.write(f"line {number}\n")
            assert out.read_text() == "earlier\n"  # what any reader sees meanwhile
    assert out.read_text() == "".join(f"line {number}\n" for number in range(1000)) and leftovers(tmp_path) == []


def test_two_writers_of_one_file_leave_one_whole_output(tmp_path):
    """Interleaved line by line, as two `toolkit predict -o same.jsonl` were (306 lines for 300, 5 torn)."""
    out = tmp_path / "same.jsonl"
    with files.writing_output(out) as first, files.writing_output(out) as second:
        for number in range(300):
            first.write(f'{{"first": {number}}}\n')
            second.write(f'{{"second": {number}, "longer": "{"x" * number}"}}\n')
            first.flush()
            second.flush()
    # the second (inner) writer finishes first; the first one's whole output then replaces it
    assert out.read_text() == "".join(f'{{"first": {number}}}\n' for number in range(300))
    assert leftovers(tmp_path) == []


def test_a_failed_write_leaves_the_earlier_file_and_no_temporary_one(tmp_path):
    out = tmp_path / "out.jsonl"
    out.write_text("earlier\n")
    out.chmod(0o640)
    with pytest.raises(KeyboardInterrupt), files.writing_output(out) as sink:
        sink.write("half of it\n")
        raise KeyboardInterrupt
    assert out.read_text() == "earlier\n" and leftovers(tmp_path) == []
    with files.writing_output(out) as sink:
        sink.write("new\n")
    assert out.read_text() == "new\n" and out.stat().st_mode & 0o777 == 0o640  # renamed into place with the earlier file's mode


def test_sigterm_while_writing_leaves_the_earlier_file_and_no_temporary_one(tmp_path, monkeypatch):
    """A scheduler's SIGTERM (`timeout`, `kill`): Python's default ends the process before any cleanup."""
    out = tmp_path / "out.jsonl"
    out.write_text("earlier\n")

    def ended_unhandled(signum, frame):
        pytest.fail("SIGTERM reached the default handler: the process would have ended with its temporary file left")

    previous = signal.signal(signal.SIGTERM, ended_unhandled)
    try:
        with pytest.raises(KeyboardInterrupt), files.writing_output(out) as sink:
            sink.write("half of it\n")
            os.kill(os.getpid(), signal.SIGTERM)
    finally:
        assert signal.signal(signal.SIGTERM, previous) is ended_unhandled  # and the handler before it is back
    assert out.read_text() == "earlier\n" and leftovers(tmp_path) == []


def test_an_output_through_a_link_is_written_where_the_link_points(tmp_path):
    (tmp_path / "results").mkdir()
    target = tmp_path / "results" / "out.jsonl"
    link = tmp_path / "latest.jsonl"
    link.symlink_to(target)
    with files.writing_output(link) as sink:
        sink.write("x\n")
    assert link.is_symlink() and target.read_text() == "x\n"


def test_devices_and_pipes_are_written_as_they_stream(tmp_path):
    """A device or a pipe cannot be replaced by a file: `-o /dev/null`, `-o /dev/stdout` and a FIFO are written in place."""
    assert files.written_in_place("/dev/null") and files.written_in_place("/dev/stdout") and files.written_in_place("/proc/self/fd/1")
    assert not files.written_in_place(tmp_path / "new.jsonl")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    received: list[str] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text()))
    reader.start()
    with files.writing_output(fifo) as sink:
        sink.write("streamed\n")
    reader.join(timeout=30)
    assert received == ["streamed\n"] and fifo.is_fifo()
