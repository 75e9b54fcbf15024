"""Parsers for any UD language: the language a reader records, how it lower-cases, the tokenizer learned
from a treebank's text and multiword tokens, and UPOS and FEATS predicted beside the tree.
"""

import json
from pathlib import Path

import pytest

from toolkit.data.dataset_readers.conllu import ConlluReader
from toolkit.data.example import Example
from toolkit.data.language import Language
from toolkit.data.ud_text import TextTokenizer, disagreements, fit_text_tokenizer, surface_tokens
from toolkit.data.ud_treebanks import resolve_treebank
from toolkit.errors import ConfigurationError
from toolkit.modules.token_embedders.hashed_features import spelling_features


def test_turkish_lower_cases_dotted_and_dotless_i_as_two_letters():
    assert Language("tr").lower("IŞIK İSTANBUL Iğdır") == "ışık istanbul ığdır"
    assert Language("az").lower("İLK") == "ilk"
    assert Language("fr").lower("ÉTÉ") == "été" and Language(None).lower("IŞIK") == "işik"
    assert spelling_features("İSTANBUL", 1, 3, Language("tr"))["norm"] == "istanbul"
    assert spelling_features("İSTANBUL", 1, 3)["norm"] != "istanbul"  # Python's own rules add a combining dot


@pytest.mark.parametrize("code", ["French", "f", "FR", "fr-FR", 3])
def test_a_language_that_is_not_an_iso_code_is_refused_by_its_key(code):
    with pytest.raises(ConfigurationError, match="^language: expected an ISO 639 language code"):
        ConlluReader(language=code)


def test_the_treebank_gives_the_readers_its_language_unless_they_name_one(tmp_path):
    (tmp_path / "UD_Greek-GDT").mkdir()
    (tmp_path / "UD_Greek-GDT" / "el_gdt-ud-train.conllu").write_text("")
    config = resolve_treebank(
        {"treebank": "el_gdt", "dataset_reader": {"type": "conllu"}, "validation_dataset_reader": {"type": "conllu", "language": "grc"}}, tmp_path
    )
    assert config["dataset_reader"]["language"] == "el" and config["validation_dataset_reader"]["language"] == "grc"


def example(words: str, ranges=(), text: str | None = None) -> Example:
    """An example as the conllu reader gives it: words, multiword ranges (first, last, form) and text."""
    meta = {"multiword": tuple(ranges)} | ({"text": text} if text else {})
    return Example(words.split(), meta=meta)


FRENCH = [
    example("Le chat de le voisin dort .", [(3, 4, "du")], "Le chat du voisin dort."),
    example("À le marché , il a vu de les pommes .", [(1, 2, "Au"), (8, 9, "des")], "Au marché, il a vu des pommes."),
    example("Il mange des pommes .", (), "Il mange des pommes."),
    example("Il mange des poires .", (), "Il mange des poires."),
    example("La fin de les travaux .", [(3, 4, "des")], "La fin des travaux."),
    example("Il est là-bas .", (), "Il est là-bas."),
    example("Il vient de là-bas .", (), "Il vient de là-bas."),
]


def test_surface_tokens_put_a_multiword_range_back_over_its_words():
    assert surface_tokens(FRENCH[1])[:3] == [("Au", ("À", "le")), ("marché", ("marché",)), (",", (",",))]


FRENCH_AMBIGUOUS = [
    *(example(f"La fin de les {noun} .", [(3, 4, "des")], f"La fin des {noun}.") for noun in ("travaux", "jours", "mois", "vacances", "cours", "années")),
    *(example(f"Il mange des {noun} .", (), f"Il mange des {noun}.") for noun in ("pommes", "poires", "fruits", "noix", "glaces", "figues")),
]


def test_multiword_tokens_are_learned_with_their_readings_and_their_contexts():
    tokenizer = fit_text_tokenizer(FRENCH, "fr") if _has_spacy() else fit_without_spacy(FRENCH)
    assert tokenizer.multiword["du"] == {"words": ["de", "le"], "split": 1, "whole": 0}
    assert tokenizer.multiword["au"]["words"] == ["à", "le"]
    assert tokenizer.multiword["des"] == {"words": ["de", "les"], "split": 2, "whole": 2}  # too rare to be told apart: the majority
    assert tokenizer.words(["DU", "pain"], 0) == ("DE", "le") and tokenizer.words(["Du", "pain"], 0) == ("De", "le")
    assert tokenizer.words(["Au", "marché"], 0) == ("À", "le")
    assert tokenizer.words(["dudit"], 0) == ("dudit",)  # never expanded in training: never expanded
    ambiguous = fit_text_tokenizer(FRENCH_AMBIGUOUS, "fr") if _has_spacy() else fit_without_spacy(FRENCH_AMBIGUOUS)
    assert ambiguous.multiword["des"]["weights"]  # both readings frequent: decided by the perceptron
    assert ambiguous.words(["La", "fin", "des", "haricots"], 2) == ("de", "les")
    assert ambiguous.words(["Il", "mange", "des", "haricots"], 2) == ("des",)


def _has_spacy() -> bool:
    try:
        import spacy  # noqa: F401
    except ImportError:
        return False
    return True


def fit_without_spacy(examples):
    import toolkit.data.ud_text as ud_text

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ud_text, "spacy_installed", lambda: False)
        return ud_text.fit_text_tokenizer(examples, "fr")


def test_disagreements_are_the_stretches_segmented_otherwise():
    text = "Il est là-bas, l'on dit 50 000."
    gold = ["Il", "est", "là-bas", ",", "l'", "on", "dit", "50 000", "."]
    spacy_like = ["Il", "est", "là", "-", "bas", ",", "l'on", "dit", "50", "000", "."]
    assert list(disagreements(text, gold, spacy_like)) == [(7, 13, ((0, 6),)), (15, 19, ((0, 2), (2, 4))), (24, 30, ((0, 6),))]
    assert list(disagreements(text, gold, gold)) == []
    assert list(disagreements(text, ["Il", "dit"], gold)) == []  # tokens that do not spell the text: nothing learned


def test_the_learned_tokenizer_corrects_spacy_splits_sentences_and_expands_multiword_tokens():
    pytest.importorskip("spacy")
    numbers = Example(["On", "compte", "50 000", "voix", "."], meta={"text": "On compte 50 000 voix."})  # a token with a space
    training = [*FRENCH, example("Il est parti à 14h30 .", (), "Il est parti à 14h30."), numbers]
    tokenizer = fit_text_tokenizer(training, "fr")
    sentences = tokenizer.sentences("Il vient de là-bas à 18h15. Le chat du voisin a 30 000 puces")
    assert [[token.form for token in sentence] for sentence in sentences] == [
        ["Il", "vient", "de", "là-bas", "à", "18h15", "."],  # spaCy alone: là - bas, 18 h 15
        ["Le", "chat", "du", "voisin", "a", "30 000", "puces"],  # digits as 0: 14h30 taught 18h15, 50 000 taught 30 000
    ]
    assert sentences[1][2].words == ("de", "le") and sentences[0][5].space_after is False and sentences[0][4].space_after is True
    again = TextTokenizer("fr", **json.loads(json.dumps(tokenizer.config())))  # as an archive's config rebuilds it
    assert again.sentences("Le chat du voisin dort") == tokenizer.sentences("Le chat du voisin dort")


# ------------------------------------------------------------------ a French parser, end to end


def predict_text(archive: Path, text: str, monkeypatch, capsys, tmp_path) -> list[str]:
    from toolkit.cli import main

    source = tmp_path / "input.txt"
    source.write_text(text, encoding="utf-8")
    monkeypatch.setattr("sys.argv", ["toolkit", "predict", str(archive), str(source)])
    main()
    return capsys.readouterr().out.split("\n\n")


def test_the_archive_records_the_language_the_tokenizer_and_the_tag_sets(french_archive):
    from toolkit.archive import load_archive

    archive = load_archive(french_archive)
    assert archive.dataset_reader.language == "fr" and archive.dataset_reader.text_tokenizer.multiword["du"]["words"] == ["de", "le"]
    assert "NOUN" in archive.model.grammar.tag_sets["upos"] and archive.model.tag_heads is not None
    metrics = json.loads((french_archive.parent / "metrics.json").read_text())
    assert 0 <= metrics["test_feats_accuracy"] <= 1


def test_raw_french_comes_out_as_ud_words_with_ranges_tags_and_sentences(french_archive, monkeypatch, capsys, tmp_path):
    from toolkit.archive import load_archive

    blocks = predict_text(french_archive, "Le chat du voisin dort. Il pleut.\nΤο παιδί είναι στο σπίτι.\n", monkeypatch, capsys, tmp_path)
    first, second, greek = blocks[0].splitlines(), blocks[1].splitlines(), blocks[2].splitlines()
    assert first[:2] == ["# sent_id = 1.1", "# text = Le chat du voisin dort."] and second[:2] == ["# sent_id = 1.2", "# text = Il pleut."]
    rows = [line.split("\t") for line in first[2:]]
    assert [row[:2] for row in rows] == [["1", "Le"], ["2", "chat"], ["3-4", "du"], ["3", "de"], ["4", "le"], ["5", "voisin"], ["6", "dort"], ["7", "."]]
    assert rows[2][2:] == ["_"] * 8  # a range row has a form and MISC only
    words = [row for row in rows if "-" not in row[0]]
    tag_sets = load_archive(french_archive).model.grammar.tag_sets
    assert all(row[3] in tag_sets["upos"] and row[3] != "_" and row[5] in tag_sets["feats"] for row in words)  # UPOS and FEATS predicted
    assert sorted(int(row[6]) for row in words).count(0) == 1 and all(0 <= int(row[6]) <= len(words) for row in words)
    assert words[-2][9] == "SpaceAfter=No" and words[-1][9] == "_"
    assert greek[0] == "# sent_id = 2" and "Greek script" in greek[-1] and greek[-1].startswith("# error")


def test_conllu_input_keeps_its_own_tags_and_gets_the_predicted_ones_where_it_has_none(french_archive, monkeypatch, capsys, tmp_path):
    from toolkit.archive import load_archive

    feats = load_archive(french_archive).model.grammar.tag_sets["feats"]
    given = "1\tLe\t_\tDET\t_\t_\t_\t_\t_\t_\n2\tchat\t_\t_\t_\tGender=Masc\t_\t_\t_\t_\n"
    rows = [line.split("\t") for line in predict_text(french_archive, given + "\n", monkeypatch, capsys, tmp_path)[0].splitlines()]
    assert rows[0][3] == "DET" and rows[0][5] in feats  # its UPOS kept, its FEATS predicted
    assert rows[1][3] in load_archive(french_archive).model.grammar.tag_sets["upos"] and rows[1][5] == "Gender=Masc"


def test_an_ensemble_tags_with_its_members_mean_distribution(french_archive, sequoia):
    from toolkit import load_predictor
    from toolkit.data.dataset_readers.conllu import ConlluReader

    sentences = [example.tokens for example in ConlluReader().read(sequoia["test"])]
    alone = load_predictor(french_archive, device="cpu").predict_tokens(sentences)
    together = load_predictor(french_archive, ensemble=[french_archive], device="cpu").predict_tokens(sentences)
    assert [(tree.upos, tree.feats) for tree in together] == [(tree.upos, tree.feats) for tree in alone]
    assert all(len(tree.upos) == len(tree.feats) == len(words) for tree, words in zip(alone, sentences))


def test_the_spacy_component_sets_the_tags_of_a_parser_that_tags(french_archive):
    spacy = pytest.importorskip("spacy")
    from toolkit import load_predictor

    nlp = spacy.blank("fr")
    nlp.add_pipe("toolkit_parser", config={"archive": str(french_archive)})
    doc = nlp("Le chat dort .")
    tree = load_predictor(french_archive, device="cpu").predict_tokens([["Le", "chat", "dort", "."]])[0]
    assert [token.pos_ for token in doc] == list(tree.upos)
    assert [str(token.morph) or "_" for token in doc] == list(tree.feats)


def test_a_lines_sentences_are_told_apart_wherever_inputs_are_named(french_archive, tmp_path):
    from toolkit import load_predictor

    predictor = load_predictor(french_archive, device="cpu")
    labels = [label for label, _ in predictor.read_inputs(["Il pleut. Il neige.\n", "\n", "Bonjour.\n"])]
    assert labels == ["1.1", "1.2", "3"]  # what `toolkit visualize` names each sentence's folder after: none overwritten


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"text_tokenizer": {"corrections": []}}, "text_tokenizer: is learned for a language: set dataset_reader.language"),
        ({"language": "fr", "text_tokenizer": {"exceptions": {}}}, "text_tokenizer: expected {'corrections': ..., 'multiword': ...} as training records it"),
    ],
)
def test_a_text_tokenizer_that_training_did_not_write_is_refused_by_its_key(settings, message):
    with pytest.raises(ConfigurationError, match=f"^{message}"):
        ConlluReader(**settings)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"tags": ["lemma"]}, r"tags: unknown word fields \['lemma'\]; a tree's tags are \['upos', 'feats'\]"),
        ({"tags": ["upos"], "tag_sets": {"feats": ["_"]}}, r"tag_sets: has the tags of \['feats'\] but the grammar's tags are \['upos'\]"),
    ],
)
def test_tags_a_tree_does_not_have_are_refused_by_their_key(settings, message):
    from toolkit.grammars.grammar import Grammar
    from toolkit.params import Params

    with pytest.raises(ConfigurationError, match=f"^grammar.{message}"):
        Grammar.from_params(Params({"type": "arc_standard", **settings}, "grammar."))
