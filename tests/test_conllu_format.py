"""One CoNLL-U format: the ``conllu`` reader and the dependency predictor accept and refuse the same inputs, at the same line."""

import io

import pytest

from predictors import Predictor
from toolkit.archive import load_archive
from toolkit.data.conllu_format import Kind, blocks, parse_sentence
from toolkit.data.dataset_readers import ConlluReader
from toolkit.errors import DataError
from toolkit.files import InputLines


def row(word_id, form, head="0", deprel="root"):
    return f"{word_id}\t{form}\t_\tX\tX\t_\t{head}\t{deprel}\t_\t_"


def MWT(span, form):
    return f"{span}\t{form}\t_\t_\t_\t_\t_\t_\t_\t_"


def EMPTY(node_id):
    return f"{node_id}\tgo\tgo\tVERB\tVB\t_\t_\t_\t0:root\t_"


TWO_WORDS = [row(1, "go"), row(2, "now", "1", "advmod")]

# A good sentence first: the predictor tells CoNLL-U from plain text by the first row, so the case comes second.
GOOD = ["# sent_id = good", row(1, "Hello"), row(2, "!", "1", "punct")]

ACCEPTED = {
    "multiword token": (["# sent_id = mwt", "1-2\tdon't\t_\t_\t_\t_\t_\t_\t_\t_", row(1, "do"), row(2, "n't", "1", "advmod")], ["do", "n't"]),
    "empty node": ([row(1, "go"), "1.1\tgo\tgo\tVERB\tVB\t_\t_\t_\t0:root\t_", row(2, "now", "1", "advmod")], ["go", "now"]),
    "comments before the rows": (["# sent_id = c", "# text = go now", "# a remark", row(1, "go"), row(2, "now", "1", "advmod")], ["go", "now"]),
    "empty nodes before the first word and in a row": ([EMPTY("0.1"), row(1, "go"), EMPTY("1.1"), EMPTY("1.2"), row(2, "now", "1", "advmod")], ["go", "now"]),
    "an empty node before a multiword token": (
        [row(1, "go"), EMPTY("1.1"), MWT("2-3", "don't"), row(2, "do", "1", "dep"), row(3, "n't", "2", "dep")],
        ["go", "do", "n't"],
    ),
    "two multiword tokens side by side": (
        [MWT("1-2", "au"), row(1, "à"), row(2, "le", "1", "det"), MWT("3-4", "du"), row(3, "de", "1", "dep"), row(4, "le", "3", "det")],
        ["à", "le", "de", "le"],
    ),
}

REFUSED = {  # the lines of the case block, the offending one (1-based within the block), what is said
    "a line with 9 fields": ([row(1, "go"), row(2, "now", "1", "advmod").rsplit("\t", 1)[0]], 2, "expected 10 tab-separated columns, found 9"),
    "a line with 11 fields": ([row(1, "go") + "\t_"], 1, "expected 10 tab-separated columns, found 11"),
    "a non-integer id": ([row(1, "go"), row("x", "now", "1", "advmod")], 2, "malformed CoNLL-U line: 'x' is not a valid ID"),
    "a zero-padded id": ([row("01", "go")], 1, "malformed CoNLL-U line: '01' is not a valid ID"),
    "a range ending before it starts": ([MWT("2-1", "go"), row(1, "go")], 1, "multiword token 2-1 must span two words or more"),
    "a range of one word": ([MWT("1-1", "go"), *TWO_WORDS], 1, "multiword token 1-1 must span two words or more"),
    "a range past the sentence's end (issue 60)": (
        [row(1, "go"), MWT("2-5", "nowhere"), row(2, "now", "1", "advmod")],
        2,
        "multiword token 2-5 ends past the sentence's last word (2)",
    ),
    "overlapping ranges": (
        [MWT("1-2", "gon"), row(1, "go"), MWT("2-3", "nowt"), row(2, "now", "1", "dep"), row(3, "t", "1", "dep")],
        3,
        "multiword tokens 1-2 and 2-3 overlap",
    ),
    "a range after its words": (
        [*TWO_WORDS, MWT("1-2", "gonow")],
        3,
        "multiword token 1-2 is out of place: its line comes right before its first word 1, and the next word here is 3",
    ),
    "a range before another word": ([MWT("2-3", "nowt"), *TWO_WORDS], 1, "multiword token 2-3 is out of place"),
    "a range with a head": (
        [MWT("1-2", "gonow").replace("\t_\t_\t_\t_\t_\t_\t_\t_", "\t_\t_\t_\t_\t0\troot\t_\t_"), *TWO_WORDS],
        1,
        "multiword token 1-2 has HEAD '0': only words have one",
    ),
    "an empty node out of place": ([row(1, "go"), EMPTY("2.1"), row(2, "now", "1", "advmod")], 2, "empty node 2.1 is out of place"),
    "an empty node skipping a number": ([row(1, "go"), EMPTY("1.2"), row(2, "now", "1", "advmod")], 2, "empty node 1.2 is out of place"),
    "an empty node after a range": (
        [row(1, "go"), MWT("2-3", "nowt"), EMPTY("1.1"), row(2, "now", "1", "dep"), row(3, "t", "1", "dep")],
        3,
        "empty node 1.1 is out of place",
    ),
    "an empty node with a head": (
        [row(1, "go"), EMPTY("1.1").replace("\t_\t_\t0:root", "\t1\tdep\t0:root")],
        2,
        "empty node 1.1 has HEAD '1': only words have one",
    ),
    "an empty FORM": ([row(1, ""), row(2, "now", "1", "advmod")], 1, "malformed CoNLL-U line: column FORM is empty (_ stands for no value)"),
    "an empty node .0": ([row(1, "go"), EMPTY("1.0")], 2, "'1.0' is not a valid ID"),
    "ids out of order": ([row(1, "go"), row(3, "now", "1", "advmod")], 2, "word ids must run 1, 2, 3, ...: expected 2, found 3"),
    "a non-integer head": ([row(1, "go", "x")], 1, "malformed CoNLL-U line: HEAD 'x' is not a word id"),
    "a comment inside a block": ([row(1, "go"), "# a remark", row(2, "now", "1", "advmod")], 2, "a comment line after the sentence's first row"),
    "only comments": (["# sent_id = nothing", "# text ="], 1, "a sentence without words"),
    "only a multiword token": (["# sent_id = mwt", "1-2\tdon't\t_\t_\t_\t_\t_\t_\t_\t_"], 1, "a sentence without words"),
}


@pytest.fixture(scope="module")
def predictor(dependency_archive):
    return Predictor.by_name("dependency")(load_archive(dependency_archive))


def write(tmp_path, case):
    path = tmp_path / "input.conllu"
    path.write_text("\n".join([*GOOD, "", *case, ""]), encoding="utf-8")
    return path


def predict(predictor, path):
    return list(predictor.predict_lines(InputLines(io.StringIO(path.read_text(encoding="utf-8")), str(path)), batch_size=2))


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_the_reader_and_the_predictor_accept_the_same_sentences(name, predictor, tmp_path):
    case, words = ACCEPTED[name]
    path = write(tmp_path, case)
    good, read = ConlluReader().read(path)
    assert good.tokens == ["Hello", "!"] and read.tokens == words and read.meta["line"] == len(GOOD) + 2
    outputs = predict(predictor, path)
    assert len(outputs) == 2 and all("# error" not in output for output in outputs)
    rows = [line.split("\t") for line in outputs[1].splitlines() if not line.startswith("#")]
    assert [fields[1] for fields in rows if "-" not in fields[0] and "." not in fields[0]] == words
    assert [fields[0] for fields in rows if "-" in fields[0]] == [line.split("\t")[0] for line in case if "-" in line.split("\t")[0]]  # copied through
    assert [line for line in outputs[1].splitlines() if line.startswith("#")] == [line for line in case if line.startswith("#")]


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_the_reader_and_the_predictor_refuse_the_same_sentences_at_the_same_line(name, predictor, tmp_path):
    case, offending, message = REFUSED[name]
    path = write(tmp_path, case)
    where = f"{path}:{len(GOOD) + 1 + offending}: "
    with pytest.raises(DataError) as error:
        ConlluReader().read(path)
    assert str(error.value).startswith(where) and message in str(error.value)
    outputs = predict(predictor, path)
    assert len(outputs) == 2 and "# error" not in outputs[0]  # one record per block, in order
    (error_line,) = [line for line in outputs[1].splitlines() if line.startswith("# error = ")]
    assert error_line.startswith(f"# error = {where}") and message in error_line
    leading = [line for line in case[: next((i for i, line in enumerate(case) if not line.startswith("#")), len(case))]]
    assert outputs[1].splitlines()[:-1] == leading  # the comments before the rows are kept, then the error


def test_annotations_are_the_readers_own_requirement():
    """A tokenizer's output (no heads, no relations) is good CoNLL-U for the predictor; training needs gold trees."""
    lines = list(enumerate([row(1, "go", "_", "_"), row(2, "now", "_", "_")], start=1))
    sentence = parse_sentence(lines, "in.conllu")
    assert [word.form for word in sentence.words] == ["go", "now"] and sentence.words[0].head is None
    with pytest.raises(DataError, match=r"^.*t\.conllu:1: word 1 has no head"):
        ConlluReader()._sentence(lines, "t.conllu")


def test_parse_sentence_keeps_every_row_with_its_kind_and_line():
    text = ["# sent_id = a", "1-2\tdon't\t_\t_\t_\t_\t_\t_\t_\t_", row(1, "do"), row(2, "n't", "1"), "2.1\tx\t_\t_\t_\t_\t_\t_\t_\t_"]
    sentence = parse_sentence(list(enumerate(text, start=7)), "f")
    assert sentence.line == 7 and sentence.sent_id == "a" and sentence.comments == ["# sent_id = a"]
    assert [(r.line, r.kind) for r in sentence.rows] == [(8, Kind.MULTIWORD), (9, Kind.WORD), (10, Kind.WORD), (11, Kind.EMPTY)]
    assert [r.head for r in sentence.rows] == [None, 0, 1, None]


def test_blocks_are_split_at_blank_lines_and_bounded():
    lines = list(enumerate(["a", "b", "  ", "", "c", "d", "e", "\t"], start=1))
    assert [(block.lines, block.dropped) for block in blocks(lines)] == [([(1, "a"), (2, "b")], 0), ([(5, "c"), (6, "d"), (7, "e")], 0)]
    assert [(block.line, len(block.lines), block.dropped) for block in blocks(lines, max_lines=2)] == [(1, 2, 0), (5, 2, 1)]
