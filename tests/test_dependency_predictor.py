"""End to end on a slice of UD English-EWT: `toolkit train` a seconds-sized Stack-Transformer (labeled
SHIFT, non-projective trees skipped), then `toolkit evaluate` and `toolkit predict --predictor dependency`
on plain text and CoNLL-U, bad sentences included.
"""

import functools
import json
import sys
import tarfile
from collections import Counter
from types import SimpleNamespace

import conllu
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from predictors.dependency import MAX_WORDS, DependencyPredictor, make_tokenizer
from predictors.predictor import Predictor
from tests.conftest import run
from toolkit.archive import Archive, load_archive
from toolkit.data.vocabulary import Vocabulary
from toolkit.errors import ConfigurationError
from toolkit.grammars import SequenceGrammar
from toolkit.models import EncoderDecoder
from toolkit.modules.decoders import TransformerDecoder
from toolkit.modules.encoders import TransformerEncoder
from toolkit.modules.transformer_settings import TransformerSettings


def test_training_records_the_labeled_shift_words_and_the_skipped_trees(dependency_archive, ewt, monkeypatch, capsys):
    with tarfile.open(dependency_archive) as tar:
        config = json.load(tar.extractfile("config.json"))
        symbols = tar.extractfile("vocabulary/symbols.txt").read().decode("utf-8").split("\n")
    assert len(config["grammar"]["shift_words"]) == 20 and config["model"]["decoder"]["type"] == "stack_transformer"
    assert sum(symbol.startswith("SHIFT:") for symbol in symbols) == 20
    log = (dependency_archive.parent / "out.log").read_text()
    assert "left out 2 of 40 training examples that the grammar skips" in log
    code, out, err = run(monkeypatch, capsys, "evaluate", dependency_archive, ewt["test"])
    assert code == 0, err
    metrics = json.loads(out)
    assert metrics["examples"] == 10 and 0.0 <= metrics["las"] <= metrics["uas"] <= 1.0


def check_tree(sentence):
    heads = [token["head"] for token in sentence if isinstance(token["id"], int)]
    assert heads.count(0) == 1 and all(0 <= head <= len(heads) for head in heads)


def test_predict_plain_text(dependency_archive, tmp_path, monkeypatch, capsys, caplog):
    text = tmp_path / "sentences.txt"
    lines = ["The cat sat on the mat .", "", " ".join(["word"] * (MAX_WORDS + 1)), "Birds sing ."]  # no limit of the model's: MAX_WORDS
    text.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out, err = run(monkeypatch, capsys, "predict", dependency_archive, text, "--predictor", "dependency")
    assert code == 0, err
    sentences = conllu.parse(out)
    assert len(sentences) == 4  # one per input line, in order
    assert [s.metadata["sent_id"] for s in sentences] == ["1", "2", "3", "4"]
    assert [t["form"] for t in sentences[0]] == lines[0].split() and sentences[0].metadata["text"] == lines[0]
    assert [t["form"] for t in sentences[3]] == lines[3].split()
    for sentence in (sentences[0], sentences[3]):
        check_tree(sentence)
    assert len(sentences[1]) == 0 and sentences[1].metadata["error"] == f"{text}:2: an empty sentence (no words to parse)"
    assert len(sentences[2]) == 0 and f"a sentence of {MAX_WORDS + 1} words is longer than this model can parse" in sentences[2].metadata["error"]
    assert f"{text}:3: a sentence of {MAX_WORDS + 1} words" in caplog.text  # also logged
    assert f"{text}:2" not in caplog.text  # a blank line is no mistake: recorded, not logged


def test_predict_conllu_with_bad_sentences(dependency_archive, ewt, tmp_path, monkeypatch, capsys):
    blocks = ewt["test"].read_text(encoding="utf-8").strip().split("\n\n")
    lines = blocks[2].split("\n")
    bad_line = next(i for i, line in enumerate(lines) if line.startswith("3\t"))
    lines[bad_line] = "3\tonly\tfour\tcolumns"
    blocks[2] = "\n".join(lines)
    blocks.insert(5, "# sent_id = nothing\n# text =")
    path = tmp_path / "input.conllu"
    path.write_text("\n\n".join(blocks) + "\n", encoding="utf-8")
    line_of_bad = sum(block.count("\n") + 2 for block in blocks[:2]) + bad_line + 1

    code, out, err = run(monkeypatch, capsys, "predict", dependency_archive, path, "--predictor", "dependency", "--beam-size", "2", "--batch-size", "3")
    assert code == 0, err
    predicted, given = conllu.parse(out), conllu.parse("\n\n".join(blocks) + "\n\n")
    assert len(predicted) == len(given) == 11
    for i, (out_sentence, in_sentence) in enumerate(zip(predicted, given)):
        assert out_sentence.metadata.get("sent_id") == in_sentence.metadata.get("sent_id")
        if i == 2:
            assert len(out_sentence) == 0
            assert out_sentence.metadata["error"] == f"{path}:{line_of_bad}: expected 10 tab-separated columns, found 4"
        elif i == 5:
            assert len(out_sentence) == 0 and "a sentence without words" in out_sentence.metadata["error"]
        else:  # every word and multiword token in place, with the predicted tree
            assert [t["form"] for t in out_sentence] == [t["form"] for t in in_sentence]
            assert [t["lemma"] for t in out_sentence] == [t["lemma"] for t in in_sentence]
            check_tree(out_sentence)


def test_plain_text_is_tokenised_as_spacy_does(dependency_archive, tmp_path, monkeypatch, capsys):
    # by spaCy when it is installed, else by the Treebank fallback: the same words and spaces here
    text = tmp_path / "sentence.txt"
    text.write_text("I don't know, really.\n", encoding="utf-8")
    code, out, err = run(monkeypatch, capsys, "predict", dependency_archive, text, "--predictor", "dependency")
    assert code == 0, err
    (sentence,) = conllu.parse(out)
    assert [t["form"] for t in sentence] == ["I", "do", "n't", "know", ",", "really", "."]
    assert [t["misc"] for t in sentence] == [None, {"SpaceAfter": "No"}, None, {"SpaceAfter": "No"}, None, {"SpaceAfter": "No"}, None]
    check_tree(sentence)


def test_predict_reads_json_lines_as_the_python_api_does(dependency_archive, tmp_path, monkeypatch, capsys):
    """A JSON line was tokenised as text (``{``, ``"``, ``sentence`` ... became words); tabs and line breaks inside a sentence are spaces."""
    from toolkit import load_predictor

    text = tmp_path / "input.jsonl"
    lines = ['{"sentence": "Dogs\\tbark.\\nCats sleep."}', '{"tokens": ["Birds", "sing", "."]}', '{"tokens": 5}', "Dogs\tbark ."]
    text.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out, err = run(monkeypatch, capsys, "predict", dependency_archive, text, "--predictor", "dependency")
    assert code == 0, err
    sentences = conllu.parse(out)
    assert [[t["form"] for t in s] for s in sentences] == [["Dogs", "bark", ".", "Cats", "sleep", "."], ["Birds", "sing", "."], [], ["Dogs", "bark", "."]]
    assert [s.metadata.get("text") for s in sentences] == ["Dogs bark. Cats sleep.", "Birds sing .", None, "Dogs bark ."]
    assert [t["misc"] for t in sentences[0]] == [None, {"SpaceAfter": "No"}, None, None, {"SpaceAfter": "No"}, None]
    assert sentences[2].metadata["error"].endswith('a JSON input line needs a "sentence" string or a "tokens" list of tokens without spaces')
    api = load_predictor(dependency_archive, device="cpu").predict_batch(lines[:2])
    assert [[t["head"] for t in s] for s in sentences[:2]] == [output["heads"] for output in api]


def test_tokenizers():
    assert make_tokenizer("whitespace")[0]("I don't  know .") == [("I", True), ("don't", True), ("know", True), (".", True)]
    with pytest.raises(ConfigurationError, match="tokenizer must be"):
        make_tokenizer("nltk")


def test_spacy_tokenizer_splits_like_the_treebank():
    pytest.importorskip("spacy", reason='spaCy is not installed (pip install "spacy>=3.8,<3.9")')
    tokenize, name = make_tokenizer("auto")
    assert name == "spacy"
    assert tokenize("I don't know.") == [("I", True), ("do", False), ("n't", True), ("know", False), (".", False)]


def test_without_spacy_plain_text_is_split_by_the_treebank_fallback(monkeypatch):
    monkeypatch.setitem(sys.modules, "spacy", None)  # import spacy now raises ImportError
    tokenize, name = make_tokenizer("auto")
    assert name == "treebank" and make_tokenizer("treebank")[1] == "treebank"
    assert tokenize("I don't know.") == [("I", True), ("do", False), ("n't", True), ("know", False), (".", False)]
    with pytest.raises(ConfigurationError, match=r'pip install "parsing-toolkit\[spacy\]"'):
        make_tokenizer("spacy")


def test_an_archive_that_is_not_a_dependency_parser_is_refused():
    vocab = Vocabulary({"tokens": Counter("ab"), "symbols": Counter("xy")})
    model = EncoderDecoder(vocab, SequenceGrammar(), TransformerEncoder(8, TransformerSettings(1, 2, 16)), TransformerDecoder(8, TransformerSettings(1, 2, 16)))
    archive = Archive(model, {}, None, [], {})  # type: ignore[arg-type]
    with pytest.raises(
        ConfigurationError, match="the dependency predictor writes dependency trees, and this archive.s grammar .SequenceGrammar. predicts text"
    ):
        DependencyPredictor(archive)


def test_the_json_interface_reads_json_objects(dependency_archive):
    """`predict` reads a JSON line as the other predictors do: given tokens as they are, a sentence tokenised."""
    from toolkit import load_predictor

    parser = load_predictor(dependency_archive, device="cpu")
    given = parser.predict('{"tokens": ["Dogs", "bark", "loudly."]}')
    assert given["tokens"] == ["Dogs", "bark", "loudly."] and len(given["heads"]) == 3  # not re-split
    assert parser.predict('{"sentence": "Dogs bark loudly."}')["tokens"] == ["Dogs", "bark", "loudly", "."]
    assert parser.predict("Dogs bark loudly.")["tokens"] == ["Dogs", "bark", "loudly", "."]
    outputs = parser.predict_batch(['{"tokens": "Dogs"}', '{"tokens": [', "[1]", '{"sentence": ""}'])
    assert [output.get("error") for output in outputs] == [
        'a JSON input line needs a "sentence" string or a "tokens" list of tokens without spaces',
        "invalid JSON: Expecting value: line 1 column 13 (char 12)",
        None,  # only an object is a JSON input: "[1]" is text
        "empty input line",
    ]
    assert outputs[2]["tokens"] == ["[", "1", "]"]


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda parser: parser.predict(None), "predict takes one text, a str, not None"),
        (lambda parser: parser.predict(5), "predict takes one text, a str, not an int"),
        (lambda parser: parser.predict(b"Dogs bark"), r"not a bytes \(decode bytes first"),
        (lambda parser: parser.predict(["Dogs", "bark"]), "predict takes one text, a str, not a list"),
        (lambda parser: parser.predict_batch("Dogs bark"), r"not one str; for one text use predict\(text\)"),
        (lambda parser: parser.predict_batch(None), "predict_batch takes a list of texts, not None"),
        (lambda parser: parser.predict_batch(["Dogs bark", 3]), "predict_batch: input 1 is an int, not a str"),
        (lambda parser: parser.predict_tokens(["Dogs", "bark"]), "each a list of str tokens"),
        (lambda parser: list(parser.predict_lines("Dogs bark")), r"predict_lines takes lines \(an open file, a list of str\), not one str"),
    ],
)
def test_the_python_api_names_a_wrong_argument_type(dependency_archive, call, message):
    """A string given to ``predict_batch`` used to be parsed character by character, and ``None`` died in ``.strip()``."""
    from toolkit import load_predictor

    with pytest.raises(TypeError, match=message):
        call(load_predictor(dependency_archive, device="cpu"))


def test_predict_tokens_refuses_an_empty_sentence_by_its_position(dependency_archive):
    """It failed inside torch ("cannot reshape tensor of 0 elements")."""
    from toolkit import load_predictor
    from toolkit.errors import DataError

    with pytest.raises(DataError, match="^predict_tokens: sentence 1 has no tokens"):
        load_predictor(dependency_archive, device="cpu").predict_tokens([["Dogs", "bark"], []])


def test_predict_tokens_refuses_a_blank_token_by_its_position(dependency_archive):
    """An empty token was parsed as a word, and written as an empty CoNLL-U FORM."""
    from toolkit import load_predictor
    from toolkit.errors import DataError

    with pytest.raises(DataError, match="^predict_tokens: token 2 of sentence 1 is empty or whitespace"):
        load_predictor(dependency_archive, device="cpu").predict_tokens([["Dogs", "bark"], ["Cats", "sleep", " "]])


@pytest.mark.parametrize("batch_size", [0, -1, 2.0, True, 10**20])
def test_predict_lines_refuses_a_batch_size_that_would_read_nothing(dependency_archive, batch_size):
    """``batch_size=0`` returned no output at all for any input: every line dropped, and no error;
    ``10**20`` was islice's ``ValueError`` from deep inside.
    """
    from toolkit import load_predictor

    parser = load_predictor(dependency_archive, "dependency", device="cpu")
    with pytest.raises(ValueError, match="batch_size must be an int from 1 to 4096"):
        list(parser.predict_lines(["Dogs bark ."], batch_size=batch_size))
    with pytest.raises(ValueError, match="batch_size must be an int from 1 to 4096"):
        list(Predictor.predict_lines(parser, ["Dogs bark ."], batch_size=batch_size))  # the base class's, which the semantic parser uses


@pytest.mark.parametrize(
    "archive, predictor, message",
    [
        (3, None, "takes the path of an archive .a str or a Path., not an int"),
        ("model.tar.gz", 3, "predictor is a registered name .a str, see `toolkit list Predictor`., not an int"),
    ],
)
def test_load_predictor_names_a_wrong_argument_type(archive, predictor, message):
    """Both failed deep inside pathlib and the registry."""
    from toolkit import load_predictor

    with pytest.raises(TypeError, match=message):
        load_predictor(archive, predictor)


def test_predict_batch_takes_any_iterable_in_order(dependency_archive):
    from toolkit import load_predictor

    parser = load_predictor(dependency_archive, device="cpu")
    texts = ["Dogs bark .", "", "Cats sleep all day ."]
    assert parser.predict_batch(text for text in texts) == parser.predict_batch(texts)
    assert [output.get("error") for output in parser.predict_batch(iter(texts))] == [None, "empty input line", None]


@pytest.mark.parametrize(
    "beam_size, message", [(0, "must be at least 1, got 0"), (-1, "must be at least 1, got -1"), ("3", "expected int, got '3'"), (2.5, "expected int, got 2.5")]
)
def test_load_predictor_checks_beam_size_before_loading(beam_size, message, tmp_path):
    """beam_size=0 silently kept the model's search; -1, 2.5 and "3" failed inside torch at the first batch."""
    from toolkit import load_predictor

    with pytest.raises(ConfigurationError, match=f"^beam_size: {message}$"):
        load_predictor(tmp_path / "no archive here", beam_size=beam_size)  # refused before the (missing) archive is looked at


def test_load_predictor_takes_one_plugin_name_as_a_name(tmp_path):
    """``include_package="pkg"`` was imported letter by letter (``p``, ``k``, ``g``)."""
    from toolkit import load_predictor

    with pytest.raises(ConfigurationError, match="include-package no_such_plugin_xyz: cannot import it"):
        load_predictor(tmp_path / "no archive here", include_package="no_such_plugin_xyz")


# ------------------------------------------------------------ comments that the conllu library reads back (issue 60)

PIECES = st.sampled_from([*"ab =#,.", "# text = ", "# sent_id = 5", "::", "\t", "\r", "\n", "\u2028", "\x85", "\x0b", "\xa0", "don't"])
HOSTILE = st.lists(st.one_of(PIECES, st.text(max_size=3)), max_size=12).map("".join)


@settings(max_examples=200, deadline=None)
@given(text=HOSTILE, as_json=st.booleans())
def test_every_comment_written_comes_back_through_the_conllu_library(dependency_archive, text, as_json):
    """`# sent_id`, `# text` (as UD spells it: the forms, with a space after each but those marked SpaceAfter=No)
    and `# error` of any input line (plain text, or the text as a JSON line), read back by the `conllu` library.
    """
    predictor = dependency_predictor(dependency_archive)
    line = json.dumps({"sentence": text}) if as_json else text.replace("\n", " ")
    [sentence] = list(predictor.sentences(iter([line]), "in.txt"))
    tree = SimpleNamespace(heads=[0] * len(sentence.tokens), deprels=["root"] * len(sentence.tokens))
    [read] = conllu.parse(predictor.conllu(sentence, None if sentence.error else tree) + "\n")
    assert read.metadata["sent_id"] == "1"
    if sentence.error:
        assert read.metadata["error"] == " ".join(sentence.error.split()) and len(read) == 0
        return
    normal = " ".join(text.split())
    assert read.metadata["text"] == normal and "error" not in read.metadata
    spelled = "".join(token["form"] + ("" if (token["misc"] or {}).get("SpaceAfter") == "No" else " ") for token in read)
    assert spelled.strip() == normal and [token["form"] for token in read] == sentence.tokens


@functools.cache
def dependency_predictor(archive) -> DependencyPredictor:
    return Predictor.by_name("dependency")(load_archive(archive))
