"""Shared fixtures: paths to the real data sets and small slices of them."""

import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"

# No test depends on how fast the machine is (tests/waiting.py): Hypothesis's 200 ms deadline per example and its
# too_slow health check are clocks, so every property test runs without them (a test's own settings keep this).
settings.register_profile("any_machine", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("any_machine")


def data_root() -> Path:
    return Path(os.environ.get("TOOLKIT_DATA", REPO.parent / "shared" / "data"))


def require_dask():
    """Skip where Dask is missing; fail instead under ``REQUIRE_SCALE=1`` (CI installs the scale extra)."""
    try:
        import distributed  # noqa: F401
    except ImportError:
        if os.environ.get("REQUIRE_SCALE") == "1":
            pytest.fail('REQUIRE_SCALE=1, and Dask is missing: pip install -e ".[scale]"', pytrace=False)
        pytest.skip('Dask is not installed (pip install -e ".[scale]")')


def require_swipl() -> None:
    """Skip the calling test (or module) where SWI-Prolog is missing; fail instead under ``REQUIRE_SWIPL=1`` (CI installs it)."""
    import shutil

    from toolkit.execution.prolog import MISSING_SWIPL

    if shutil.which("swipl") is None:
        if os.environ.get("REQUIRE_SWIPL") == "1":
            pytest.fail(f"REQUIRE_SWIPL=1, and {MISSING_SWIPL}", pytrace=False)
        pytest.skip(MISSING_SWIPL, allow_module_level=True)


@pytest.fixture
def geo_slice(tmp_path) -> dict[str, Path]:
    """The first 40 GEO training pairs as train data and the next 10 as test data."""
    source = data_root() / "geo" / "train.txt"
    if not source.exists():
        pytest.skip(f"GEO data not found at {source}")
    lines = source.read_text(encoding="utf-8").splitlines()
    paths = {"train": tmp_path / "train.tsv", "test": tmp_path / "test.tsv"}
    paths["train"].write_text("\n".join(lines[:40]) + "\n", encoding="utf-8")
    paths["test"].write_text("\n".join(lines[40:50]) + "\n", encoding="utf-8")
    return paths


def run(monkeypatch, capsys, *args):
    """Run `toolkit ARGS` in-process; return (exit code, stdout, stderr)."""
    from toolkit.cli import main

    monkeypatch.setattr(sys, "argv", ["toolkit", *map(str, args)])
    try:
        main()
        code = 0
    except SystemExit as exit:
        code = exit.code or 0
    out, err = capsys.readouterr()
    return code, out, err


def train_archive(config: Path, directory: Path, train: Path, test: Path, *overrides: str) -> Path:
    """`toolkit train CONFIG` in-process with TRAIN and TEST set (for module-scoped fixtures); the archive's path."""
    from toolkit.cli import main

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TRAIN", str(train))
        patch.setenv("TEST", str(test))
        patch.setattr(sys, "argv", ["toolkit", "train", str(config), "-s", str(directory), "-f", *overrides])
        try:
            main()
        except SystemExit as exit:
            assert not exit.code, "training failed: see the captured output"
    return directory / "model.tar.gz"


# ------------------------------------------------------------------ a tiny random BERT, saved like a downloaded one

TINY_BERT_VOCABULARY = "[PAD] [UNK] [CLS] [SEP] [MASK] the dog ##s run ##ning un ##believ ##able".split() + list("abcdefghijklmnop")


def save_tiny_bert(directory: Path, seed: int = 0) -> Path:
    """A 2-layer, 32-wide BERT with random weights and a WordPiece vocabulary, saved with its tokenizer."""
    import inspect

    import torch

    transformers = pytest.importorskip("transformers")
    directory.mkdir(parents=True, exist_ok=True)
    vocab_file = directory / "vocab.txt"
    vocab_file.write_text("\n".join(TINY_BERT_VOCABULARY) + "\n", encoding="utf-8")
    fast = transformers.BertTokenizerFast  # transformers 4 reads `vocab_file`, 5 reads `vocab`
    key = "vocab_file" if "vocab_file" in inspect.signature(fast.__init__).parameters else "vocab"
    tokenizer = fast(**{key: str(vocab_file)})
    assert tokenizer.convert_tokens_to_ids("dog") == TINY_BERT_VOCABULARY.index("dog")
    config = transformers.BertConfig(
        vocab_size=len(TINY_BERT_VOCABULARY),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
    )
    torch.manual_seed(seed)
    transformers.BertModel(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


@pytest.fixture(scope="session")
def tiny_bert(tmp_path_factory) -> Path:
    return save_tiny_bert(tmp_path_factory.mktemp("tiny_bert"))


# ------------------------------------------------------------------ real archives, trained once per session


def _blocks_slice(factory, name: str, source: Path, keep=lambda block: True) -> dict[str, Path]:
    """The first 40 blocks of *source* as train data and the next 10 as test data."""
    if not source.exists():
        pytest.skip(f"{name} not found at {source}")
    blocks = [block for block in source.read_text(encoding="utf-8").split("\n\n") if keep(block)]
    directory = factory.mktemp(name)
    paths = {"train": directory / f"train{source.suffix}", "test": directory / f"test{source.suffix}"}
    paths["train"].write_text("\n\n".join(blocks[:40]) + "\n\n", encoding="utf-8")
    paths["test"].write_text("\n\n".join(blocks[40:50]) + "\n\n", encoding="utf-8")
    return paths


@pytest.fixture(scope="session")
def ewt(tmp_path_factory) -> dict[str, Path]:
    """40 training and 10 test sentences of EWT dev (2 of the 40 are non-projective)."""
    return _blocks_slice(tmp_path_factory, "ewt", data_root() / "ud-english-ewt" / "en_ewt-ud-dev.conllu")


@pytest.fixture(scope="session")
def little_prince(tmp_path_factory) -> dict[str, Path]:
    """40 training and 10 test graphs from the start of The Little Prince's training split."""
    source = data_root() / "amr-little-prince" / "amr-bank-struct-v3.0-train.txt"
    return _blocks_slice(tmp_path_factory, "lpp", source, keep=lambda block: "# ::snt" in block)


DEPENDENCY_OVERRIDES = {
    "model.decoder.type": "stack_transformer",
    "model.decoder.layers.num_heads": 2,
    "grammar": {"non_projective": "skip", "labeled_shift_words": 20},
    "trainer.num_epochs": 1,
    "trainer.num_checkpoints_to_average": 1,
}


SEQ2SEQ_OVERRIDES = '{"trainer.num_epochs": 1, "trainer.num_checkpoints_to_average": 1}'


@pytest.fixture(scope="session")
def seq2seq_archive(tmp_path_factory) -> Path:
    """tiny_seq2seq.jsonnet trained one epoch on 40 GEO pairs (a few seconds)."""
    source = data_root() / "geo" / "train.txt"
    if not source.exists():
        pytest.skip(f"GEO data not found at {source}")
    lines = source.read_text(encoding="utf-8").splitlines()
    directory = tmp_path_factory.mktemp("seq2seq_run")
    (directory / "train.tsv").write_text("\n".join(lines[:40]) + "\n", encoding="utf-8")
    (directory / "test.tsv").write_text("\n".join(lines[40:50]) + "\n", encoding="utf-8")
    return train_archive(FIXTURES / "tiny_seq2seq.jsonnet", directory / "run", directory / "train.tsv", directory / "test.tsv", "-o", SEQ2SEQ_OVERRIDES)


@pytest.fixture(scope="session")
def geo_raw_archive(tmp_path_factory) -> Path:
    """A seconds-sized raw-question GEO parser (60 geo-raw training questions, 2 epochs, entities
    anonymized) whose denotation metric carries the Geobase executor; its 20 test questions are
    ``test.tsv`` beside the run directory.
    """
    import json

    require_swipl()
    raw = data_root() / "geo-raw"
    if not (raw / "geo_prolog_train.tsv").exists():
        pytest.skip(f"geo-raw not found at {raw}")
    directory = tmp_path_factory.mktemp("geo_raw_run")
    lines = (raw / "geo_prolog_train.tsv").read_text(encoding="utf-8").splitlines()
    (directory / "train.tsv").write_text("\n".join(lines[:60]) + "\n", encoding="utf-8")
    (directory / "test.tsv").write_text("\n".join(lines[60:80]) + "\n", encoding="utf-8")
    anonymizer = {"type": "geo_prolog", "finder": {"type": "lexicon", "lexicon": {"path": str(raw / "geo_entities.json")}}, "unknown": "keep"}
    overrides = {
        "dataset_reader": {"type": "tsv", "anonymizer": anonymizer},
        "grammar": {"type": "anonymized", "anonymizer": anonymizer, "grammar": {"type": "sequence", "max_length": 60}},
        "metrics": [{"type": "exact_match"}, {"type": "denotation_accuracy", "executor": {"type": "geoquery_prolog", "database": str(raw)}}],
        "trainer.validation_metric": "+denotation_accuracy",
        "trainer.num_epochs": 2,
    }
    return train_archive(FIXTURES / "tiny_seq2seq.jsonnet", directory / "run", directory / "train.tsv", directory / "test.tsv", "-o", json.dumps(overrides))


@pytest.fixture(scope="session")
def geo_abstaining_archive(geo_raw_archive, tmp_path_factory) -> Path:
    """The parser of ``geo_raw_archive`` searching as the main job does: a beam of 3 guided by its executor,
    with answer kinds, abstention and ``min_confidence``, and a length penalty of its own. A copy of its run
    folder with ``model.search`` changed (a folder may go without ``manifest.json``), so no second training.
    """
    import json
    import shutil

    run = tmp_path_factory.mktemp("geo_abstaining") / "run"
    shutil.copytree(geo_raw_archive.parent, run, ignore=shutil.ignore_patterns("model.tar.gz", "manifest.json"))
    config = json.loads((run / "config.json").read_text(encoding="utf-8"))
    executor = next(metric["executor"] for metric in config["metrics"] if metric["type"] == "denotation_accuracy")
    search = {"beam_size": 3, "length_penalty": 0.5, "answer_kinds": {"type": "geo_english"}, "abstain": True, "min_confidence": 0.5}
    config["model"]["search"] = {"type": "beam", "execution_guided": executor, **search}
    (run / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return run


@pytest.fixture(scope="session")
def dependency_archive(ewt, tmp_path_factory) -> Path:
    """A seconds-sized Stack-Transformer (labeled SHIFT, non-projective trees skipped) on the EWT slice."""
    import json

    directory = tmp_path_factory.mktemp("dependency_run")
    return train_archive(FIXTURES / "tiny_dependency.jsonnet", directory, ewt["train"], ewt["test"], "-o", json.dumps(DEPENDENCY_OVERRIDES))


@pytest.fixture(scope="session")
def amr_archive(little_prince, tmp_path_factory) -> Path:
    """A seconds-sized AMR Stack-Transformer on the Little Prince slice."""
    directory = tmp_path_factory.mktemp("amr_run")
    return train_archive(FIXTURES / "tiny_amr.jsonnet", directory, little_prince["train"], little_prince["test"])


@pytest.fixture(scope="session")
def sequoia(tmp_path_factory) -> dict[str, Path]:
    return _blocks_slice(tmp_path_factory, "sequoia", data_root() / "ud-french-sequoia" / "fr_sequoia-ud-train.conllu")


@pytest.fixture(scope="session")
def french_archive(sequoia, tmp_path_factory) -> Path:
    """A seconds-sized French parser that tags UPOS and FEATS, on 40 Sequoia sentences; its raw text is tokenized by spaCy."""
    import json

    pytest.importorskip("spacy")
    overrides = {
        "dataset_reader": {"type": "conllu", "language": "fr"},
        "grammar": {"type": "arc_standard", "tags": ["upos", "feats"]},
        "metrics": [{"type": "attachment_scores"}, {"type": "tag_accuracy", "field": "feats", "name": "feats_accuracy"}],
        "trainer.num_epochs": 2,
    }
    directory = tmp_path_factory.mktemp("french_run")
    return train_archive(FIXTURES / "tiny_dependency.jsonnet", directory, sequoia["train"], sequoia["test"], "-o", json.dumps(overrides))
