import os
from pathlib import Path

import pytest

from toolkit.data.dataset_readers import DatasetReader, TsvReader
from toolkit.errors import ConfigurationError, DataError

DATA_ROOT = Path(os.environ.get("TOOLKIT_DATA", Path(__file__).parents[2] / "shared" / "data"))


def write(tmp_path, content: bytes, name="data.tsv") -> Path:
    path = tmp_path / name
    path.write_bytes(content)
    return path


def test_registered():
    assert DatasetReader.by_name("tsv") is TsvReader
    reader = DatasetReader.from_params({"type": "tsv", "max_examples": 3})
    assert isinstance(reader, TsvReader) and reader.max_examples == 3


def test_reads_examples(tmp_path):
    path = write(tmp_path, b"what is  s0\t( lambda $0   e ( x $0 ) ) \n\n  \nhow big\t( size s0 )")
    examples = TsvReader().read(path)
    assert [e.tokens for e in examples] == [["what", "is", "s0"], ["how", "big"]]
    assert [e.target for e in examples] == ["( lambda $0 e ( x $0 ) )", "( size s0 )"]
    assert [e.meta for e in examples] == [{"path": str(path), "line": 1}, {"path": str(path), "line": 4}]


def test_bom_and_crlf(tmp_path):
    path = write(tmp_path, "\ufeffa b\t( c )\r\nd\t( e )\r\n".encode("utf-8"))
    examples = TsvReader().read(path)
    assert [(e.tokens, e.target) for e in examples] == [(["a", "b"], "( c )"), (["d"], "( e )")]


def test_max_examples(tmp_path):
    path = write(tmp_path, b"a\tb\nc\td\ne\tf\n")
    assert len(TsvReader(max_examples=2).read(path)) == 2
    with pytest.raises(ConfigurationError):
        TsvReader(max_examples=-1)


def test_max_examples_stops_before_a_later_bad_line(tmp_path):
    path = write(tmp_path, b"a\tb\nno tab here\n")
    assert len(TsvReader(max_examples=1).read(path)) == 1


@pytest.mark.parametrize(
    "content, line, problem",
    [
        (b"a\tb\nno tab here\n", 2, "found no tab"),
        (b"a\tb\tc\n", 1, "found 2 tabs"),
        (b"a\tb\n\n \t( x )\n", 3, "found an empty question"),
        (b"a\t  \n", 1, "found an empty logical form"),
        (b"a\tb\nok\tok\ncaf\xe9\tx\n", 3, "invalid UTF-8"),
    ],
)
def test_bad_lines_name_file_and_line(tmp_path, content, line, problem):
    path = write(tmp_path, content, name="bad.tsv")
    with pytest.raises(DataError) as info:
        TsvReader().read(path)
    message = str(info.value)
    assert message.startswith(f"{path}:{line}: ")
    assert problem in message
    assert (info.value.path, info.value.line) == (str(path), line)


def test_no_tab_message(tmp_path):
    path = write(tmp_path, b"a\tb\nno tab\n", name="train.txt")
    with pytest.raises(DataError, match=r"train\.txt:2: expected 'question<TAB>logical form', found no tab"):
        TsvReader().read(path)


def test_missing_file(tmp_path):
    path = tmp_path / "missing.tsv"
    with pytest.raises(DataError, match="missing.tsv"):
        TsvReader().read(path)


def test_text_to_example():
    reader = TsvReader()
    plain = reader.text_to_example("what is  s0\n")
    assert (plain.tokens, plain.target) == (["what", "is", "s0"], None)
    labelled = reader.text_to_example("what is s0\t( x  s0 )\r\n")
    assert (labelled.tokens, labelled.target) == (["what", "is", "s0"], "( x s0 )")
    with pytest.raises(DataError, match="empty"):
        reader.text_to_example("   ")


def test_real_geo_slice():
    path = DATA_ROOT / "geo" / "train.txt"
    if not path.is_file():
        pytest.skip(f"{path} not found (set TOOLKIT_DATA)")
    examples = TsvReader(max_examples=50).read(path)
    assert len(examples) == 50
    assert examples[0].tokens == ["where", "is", "c0"]
    assert examples[0].target == "( lambda $0 e ( loc:t c0 $0 ) )"
    assert [e.meta["line"] for e in examples] == list(range(1, 51))
    assert all(e.tokens and e.target.startswith("( ") and e.target.endswith(" )") for e in examples)
    assert all(e.target.count("(") == e.target.count(")") for e in examples)
