"""The CoNLL-U reader: words, trees, multiword tokens, empty nodes, and errors that name file and line."""

import pytest

from tests.conftest import data_root
from toolkit.data.dataset_readers import ConlluReader, DatasetReader, DependencyTree
from toolkit.errors import DataError

# Two sentences. The first has a multiword token (3-4 "don't" = "do" + "n't") and an empty node (5.1).
SAMPLE = """\
# sent_id = s1
# text = I don't know.
1\tI\tI\tPRON\tPRP\t_\t4\tnsubj\t4:nsubj\t_
2\tjust\tjust\tADV\tRB\t_\t4\tadvmod\t4:advmod\t_
3-4\tdon't\t_\t_\t_\t_\t_\t_\t_\t_
3\tdo\tdo\tAUX\tVBP\t_\t4\taux\t4:aux\t_
4\tn't\tnot\tPART\tRB\t_\t0\troot\t0:root\t_
5\tknow\tknow\tVERB\tVB\t_\t4\tobl:npmod\t4:obl:npmod\t_
5.1\tknow\tknow\tVERB\tVB\t_\t_\t_\t4:conj\tCopyOf=5
6\t.\t.\tPUNCT\t.\t_\t4\tpunct\t4:punct\t_

# sent_id = s2
1\tHello\thello\tINTJ\tUH\t_\t0\troot\t0:root\t_
"""


def write(tmp_path, text, name="sample.conllu"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_reads_words_heads_relations_and_tags(tmp_path):
    path = write(tmp_path, SAMPLE)
    first, second = ConlluReader().read(path)
    assert first.tokens == ["I", "just", "do", "n't", "know", "."]
    assert first.target == DependencyTree(
        (4, 4, 4, 0, 4, 4), ("nsubj", "advmod", "aux", "root", "obl:npmod", "punct"), ("PRON", "ADV", "AUX", "PART", "VERB", "PUNCT"), ("_",) * 6
    )
    assert first.meta == {"path": str(path), "line": 1, "sent_id": "s1", "upos": first.target.upos, "multiword": ((3, 4, "don't"),), "text": "I don't know."}
    assert second.tokens == ["Hello"] and second.target.heads == (0,) and second.meta["line"] == 12
    assert first.target.without_upos() == DependencyTree(first.target.heads, first.target.deprels)


def test_universal_relations_and_max_examples(tmp_path):
    path = write(tmp_path, SAMPLE)
    reader = DatasetReader.from_params({"type": "conllu", "universal_deprels": True, "max_examples": 1})
    (only,) = reader.read(path)
    assert only.target.deprels == ("nsubj", "advmod", "aux", "root", "obl", "punct")


def test_tolerates_extra_blank_lines_crlf_and_no_final_newline(tmp_path):
    text = "\n\n" + SAMPLE.replace("\n\n", "\n\n\n").replace("\n", "\r\n").rstrip()
    examples = ConlluReader().read(write(tmp_path, text))
    assert [len(e.tokens) for e in examples] == [6, 1] and examples[1].meta["line"] == 15


def test_prediction_input_is_whitespace_tokenised_text():
    example = ConlluReader().text_to_example("  I don't  know . ")
    assert example.tokens == ["I", "don't", "know", "."] and example.target is None


def replace_line(number, new):
    lines = SAMPLE.split("\n")
    lines[number - 1] = new
    return "\n".join(lines)


@pytest.mark.parametrize(
    "text, line, message",
    [
        (replace_line(4, "2\tjust\tjust\tADV\tRB\t_\t4\tadvmod"), 4, "expected 10 tab-separated columns, found 8"),
        (replace_line(4, "2 just just ADV RB _ 4 advmod 4:advmod _"), 4, "expected 10 tab-separated columns, found 1"),
        (replace_line(4, "x\tjust\tjust\tADV\tRB\t_\t4\tadvmod\t4:advmod\t_"), 4, "malformed CoNLL-U line: 'x' is not a valid ID"),
        (replace_line(4, "2\tjust\tjust\tADV\tRB\t_\tfour\tadvmod\t4:advmod\t_"), 4, "malformed CoNLL-U line"),
        (replace_line(4, "2\tjust\tjust\tADV\tRB\t_\t_\tadvmod\t4:advmod\t_"), 4, "word 2 has no head"),
        (replace_line(4, "2\tjust\tjust\tADV\tRB\t_\t4\t_\t4:advmod\t_"), 4, "word 2 has no dependency relation"),
        (replace_line(4, "3\tjust\tjust\tADV\tRB\t_\t4\tadvmod\t4:advmod\t_"), 4, "word ids must run 1, 2, 3, ...: expected 2, found 3"),
        (replace_line(4, "2\tjust\tjust\tADV\tRB\t_\t9\tadvmod\t4:advmod\t_"), 4, "head 9 of word 2 is out of range 0..6"),
        (
            replace_line(3, "1\tI\tI\tPRON\tPRP\t_\t2\tnsubj\t4:nsubj\t_").replace("2\tjust\tjust\tADV\tRB\t_\t4", "2\tjust\tjust\tADV\tRB\t_\t1"),
            3,
            "cycle 1 -> 2 -> 1",
        ),
        (SAMPLE + "\n# sent_id = s3\n# text = nothing\n", 15, "a sentence without words"),
        (SAMPLE + "\n# sent_id = s3\n1-2\tdon't\t_\t_\t_\t_\t_\t_\t_\t_\n", 15, "a sentence without words"),
    ],
)
def test_errors_name_file_and_line(tmp_path, text, line, message):
    path = write(tmp_path, text, "broken.conllu")
    with pytest.raises(DataError) as error:
        ConlluReader().read(path)
    assert str(error.value).startswith(f"{path}:{line}: ") and message in str(error.value)


def test_invalid_utf8_and_missing_files_are_data_errors(tmp_path):
    path = tmp_path / "latin1.conllu"
    path.write_bytes(SAMPLE.encode("utf-8").replace(b"just", b"j\xfcst"))
    with pytest.raises(DataError, match=r"latin1.conllu:4: invalid UTF-8"):
        ConlluReader().read(path)
    with pytest.raises(DataError, match="no such file"):
        ConlluReader().read(tmp_path / "missing.conllu")


def test_reads_real_ewt_dev_data():
    path = data_root() / "ud-english-ewt" / "en_ewt-ud-dev.conllu"
    if not path.exists():
        pytest.skip(f"UD English-EWT not found at {path}")
    examples = ConlluReader(max_examples=200).read(path)
    assert len(examples) == 200
    assert all(len(e.tokens) == len(e.target.heads) == len(e.target.upos) for e in examples)
    assert all(e.target.heads.count(0) == 1 for e in examples)
    assert examples[0].meta["line"] == 1 and examples[1].meta["line"] > 1


FRENCH = """\
# text = Le chat du voisin dort.
1\tLe\tle\tDET\t_\tDefinite=Def|Gender=Masc|Number=Sing|PronType=Art\t2\tdet\t_\t_
2\tchat\tchat\tNOUN\t_\tGender=Masc|Number=Sing\t6\tnsubj\t_\t_
3-4\tdu\t_\t_\t_\t_\t_\t_\t_\t_
3\tde\tde\tADP\t_\t_\t5\tcase\t_\t_
4\tle\tle\tDET\t_\tDefinite=Def|Gender=Masc|Number=Sing|PronType=Art\t5\tdet\t_\t_
5\tvoisin\tvoisin\tNOUN\t_\tGender=Masc|Number=Sing\t2\tnmod\t_\t_
6\tdort\tdormir\tVERB\t_\tMood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin\t0\troot\t_\tSpaceAfter=No
7\t.\t.\tPUNCT\t_\t_\t6\tpunct\t_\t_
"""


def test_reads_each_words_features_the_surface_tokens_over_words_and_the_text(tmp_path):
    [sentence] = ConlluReader().read(write(tmp_path, FRENCH))
    assert sentence.tokens == ["Le", "chat", "de", "le", "voisin", "dort", "."]
    assert sentence.target.feats[1] == "Gender=Masc|Number=Sing" and sentence.target.feats[2] == "_" and len(sentence.target.feats) == 7
    assert sentence.target.feats[5] == "Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin"
    assert sentence.meta["multiword"] == ((3, 4, "du"),) and sentence.meta["text"] == "Le chat du voisin dort."
    assert sentence.target.without_upos() == DependencyTree((2, 6, 5, 5, 2, 0, 6), ("det", "nsubj", "case", "det", "nmod", "root", "punct"))
