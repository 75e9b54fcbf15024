"""UD treebanks by name: a config's top-level ``treebank`` becomes the data paths it does not give."""

from pathlib import Path

import pytest

from tests.conftest import REPO, run
from toolkit.data.ud_treebanks import Treebank, available, find_treebank, resolve_treebank
from toolkit.errors import ConfigurationError
from toolkit.params import Params


def layout(root: Path, files: dict[str, tuple[str, ...]]) -> Path:
    """Empty CoNLL-U files under *root*: folder -> the splits of the treebank named after its files."""
    for folder, names in files.items():
        (root / folder).mkdir(parents=True)
        for name in names:
            (root / folder / name).write_text("")
    return root


@pytest.fixture
def root(tmp_path):
    return layout(
        tmp_path / "data",
        {
            "ud-french-sequoia": ("fr_sequoia-ud-train.conllu", "fr_sequoia-ud-dev.conllu", "fr_sequoia-ud-test.conllu"),
            "UD_Turkish-IMST": ("tr_imst-ud-train.conllu", "tr_imst-ud-test.conllu"),  # no dev: trains without validation
            "UD_Kurmanji-MG": ("kmr_mg-ud-test.conllu",),  # a test-only treebank: nothing to train on
            "notes": ("README.md",),
        },
    )


def test_a_treebank_is_found_by_its_name_whatever_its_folder(root):
    assert find_treebank("fr_sequoia", root) == Treebank(
        "fr_sequoia", *(root / "ud-french-sequoia" / f"fr_sequoia-ud-{split}.conllu" for split in ("train", "dev", "test"))
    )
    turkish = find_treebank("tr_imst", root)
    assert turkish.dev is None and turkish.test == root / "UD_Turkish-IMST" / "tr_imst-ud-test.conllu" and turkish.language == "tr"
    assert available(root) == ["fr_sequoia", "tr_imst"]


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("el_gdt", "no treebank 'el_gdt' under .*; those there: fr_sequoia, tr_imst"),
        ("kmr_mg", "no treebank 'kmr_mg' under .*no \\*/kmr_mg-ud-train.conllu"),  # only a test file
        ("French", "expected a UD treebank name such as 'fr_sequoia'"),
        ("fr_sequoia/../x", "expected a UD treebank name"),  # never a path
        (7, "expected a UD treebank name"),
    ],
)
def test_a_missing_or_malformed_name_is_refused_naming_the_key_and_the_choices(root, name, message):
    with pytest.raises(ConfigurationError, match=f"^treebank: {message}"):
        find_treebank(name, root)


def test_a_name_in_two_folders_is_refused_with_both(root):
    layout(root, {"UD_French-Sequoia-copy": ("fr_sequoia-ud-train.conllu",)})
    with pytest.raises(ConfigurationError, match="in 2 folders .*UD_French-Sequoia-copy.*ud-french-sequoia|in 2 folders .*ud-french-sequoia.*copy"):
        find_treebank("fr_sequoia", root)


def test_paths_a_config_names_win_and_the_treebank_fills_the_rest(root):
    config = resolve_treebank({"treebank": "tr_imst", "test_data_path": "mine.conllu", "trainer": {}}, root)
    assert config == {"train_data_path": str(root / "UD_Turkish-IMST" / "tr_imst-ud-train.conllu"), "test_data_path": "mine.conllu", "trainer": {}}
    assert resolve_treebank({"train_data_path": "x"}, root) == {"train_data_path": "x"}  # no treebank: as it was


def test_the_ud_config_reads_the_treebank_an_override_names(root):
    config = REPO / "jsonnet_configs" / "ud.jsonnet"
    english = Params.from_file(config, ext_vars={"DATA_ROOT": str(layout(root, {"ud-english-ewt": ("en_ewt-ud-train.conllu",)}))})
    assert english["train_data_path"] == str(root / "ud-english-ewt" / "en_ewt-ud-train.conllu") and "treebank" not in english
    french = Params.from_file(config, '{"treebank": "fr_sequoia"}', ext_vars={"DATA_ROOT": str(root)})
    assert [french[key] for key in ("train_data_path", "validation_data_path", "test_data_path")] == [
        str(root / "ud-french-sequoia" / f"fr_sequoia-ud-{split}.conllu") for split in ("train", "dev", "test")
    ]


def test_train_refuses_an_unknown_treebank_in_one_line(root, monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("DATA_ROOT", str(root))
    code, _, err = run(monkeypatch, capsys, "train", REPO / "jsonnet_configs" / "ud.jsonnet", "-s", tmp_path / "run", "-o", '{"treebank": "de_gsd"}')
    assert code == 1 and err.strip().splitlines() == [
        f"error: treebank: no treebank 'de_gsd' under {root} (no */de_gsd-ud-train.conllu); those there: fr_sequoia, tr_imst"
    ]
    assert not (tmp_path / "run").exists()
