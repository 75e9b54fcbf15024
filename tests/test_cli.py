"""End to end through the `toolkit` command on a slice of real GEO data, and its errors on bad input."""

import json
import tarfile

import click
import pytest

from tests.conftest import FIXTURES, run

CONFIG = str(FIXTURES / "tiny_seq2seq.jsonnet")


@pytest.fixture
def data_env(monkeypatch, geo_slice):
    monkeypatch.setenv("TRAIN", str(geo_slice["train"]))
    monkeypatch.setenv("TEST", str(geo_slice["test"]))
    return geo_slice


@pytest.fixture
def archive(tmp_path_factory, data_env, monkeypatch, capsys):
    directory = tmp_path_factory.mktemp("run")
    code, out, err = run(monkeypatch, capsys, "train", CONFIG, "-s", directory, "-f")
    assert code == 0, err
    assert out.strip().endswith("model.tar.gz")
    return directory / "model.tar.gz"


def test_train_evaluate_predict(archive, data_env, monkeypatch, capsys, tmp_path):
    directory = archive.parent
    history = [json.loads((directory / f"metrics_epoch_{e}.json").read_text()) for e in range(3)]
    assert [h["epoch"] for h in history] == [0, 1, 2]
    assert history[-1]["training_loss"] < history[0]["training_loss"]
    final = json.loads((directory / "metrics.json").read_text())
    assert {"test_exact_match", "test_logic_match", "training_epochs"} <= set(final)
    with tarfile.open(archive) as tar:
        names = set(tar.getnames())
    assert {"config.json", "weights.safetensors", "metrics.json", "vocabulary/tokens.txt", "vocabulary/symbols.txt"} <= names

    code, out, err = run(monkeypatch, capsys, "evaluate", archive, data_env["test"])
    assert code == 0, err
    metrics = json.loads(out)
    assert metrics["examples"] == 10 and 0.0 <= metrics["logic_match"] <= 1.0
    # The archive's averaged weights are the ones training scored on the test set.
    assert metrics["logic_match"] == pytest.approx(final["test_logic_match"])
    code, out, err = run(monkeypatch, capsys, "evaluate", archive, data_env["test"], "--metric", "exact_match", "--metric", "token_accuracy")
    assert code == 0, err
    both = json.loads(out)  # a second exact_match is named after its metric; a new score keeps its name
    assert both["exact_match:exact_match"] == both["exact_match"] == metrics["exact_match"] and "logic_match" in both
    code, _, err = run(monkeypatch, capsys, "evaluate", archive, data_env["test"], "--metric", "exact_mach")
    assert code == 1 and "exact_match" in err and "Traceback" not in err

    inputs = tmp_path / "questions.txt"
    inputs.write_text('what state border s0\n\n{"question": "citi in s0"}\n{"question": 3}\nnot json {\n{"question": "citi\\tin s0"}\n')
    code, out, err = run(monkeypatch, capsys, "predict", archive, inputs, "--predictor", "semantic_parser")
    assert code == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    assert len(lines) == 6  # nothing dropped, nothing reordered
    assert lines[0]["question"] == "what state border s0" and isinstance(lines[0]["logical_form"], str)
    assert "error" in lines[1]
    assert lines[2]["question"] == "citi in s0"
    assert "error" in lines[3]
    assert lines[4]["question"] == "not json {"
    assert lines[5]["question"] == "citi in s0"  # a tab in a JSON question is a space, not the start of a gold logical form


def test_list_shows_registered_names(monkeypatch, capsys):
    code, out, _ = run(monkeypatch, capsys, "list")
    assert code == 0
    for expected in ("Seq2SeqEncoder", "transformer", "Grammar", "sequence (default)", "Metric", "logic_match", "Predictor", "semantic_parser"):
        assert expected in out
    code, out, _ = run(monkeypatch, capsys, "list", "metric")
    assert code == 0 and "exact_match" in out and "Grammar" not in out


def assert_one_line_error(code, err, *fragments):
    assert code != 0
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def test_config_key_typo_names_the_key_path(data_env, monkeypatch, capsys, tmp_path):
    code, _, err = run(monkeypatch, capsys, "train", CONFIG, "-s", tmp_path / "r", "-o", '{"model.encoder.layers.num_layer": 2}')
    assert_one_line_error(code, err, "model.encoder.layers.num_layer", "num_layers")


def test_unknown_type_lists_the_available_names(data_env, monkeypatch, capsys, tmp_path):
    code, _, err = run(monkeypatch, capsys, "train", CONFIG, "-s", tmp_path / "r", "-o", '{"model.encoder.type": "transfromer"}')
    assert_one_line_error(code, err, "transfromer", "did you mean 'transformer'", "Available")


def test_wrong_value_type_names_the_key_path(data_env, monkeypatch, capsys, tmp_path):
    code, _, err = run(monkeypatch, capsys, "train", CONFIG, "-s", tmp_path / "r", "-o", '{"trainer.num_epochs": "three"}')
    assert_one_line_error(code, err, "trainer.num_epochs", "int")


def test_missing_data_file(data_env, monkeypatch, capsys, tmp_path):
    code, _, err = run(monkeypatch, capsys, "train", CONFIG, "-s", tmp_path / "r", "-o", json.dumps({"train_data_path": str(tmp_path / "nope.tsv")}))
    assert_one_line_error(code, err, "nope.tsv")


def test_training_reads_every_file_of_a_list_of_paths_in_order(data_env, monkeypatch, capsys, tmp_path, caplog):
    lines = data_env["train"].read_text().splitlines(keepends=True)
    first, second = tmp_path / "first.tsv", tmp_path / "second.tsv"
    first.write_text("".join(lines[:3]))
    second.write_text("".join(lines[3:]))
    overrides = {"train_data_path": [str(first), str(second)], "trainer.num_epochs": 1}
    with caplog.at_level("INFO", logger="toolkit.training.train"):
        code, _, err = run(monkeypatch, capsys, "train", CONFIG, "-s", tmp_path / "r", "-o", json.dumps(overrides))
    assert code == 0, err
    assert f"read {len(lines)} training" in caplog.text
    second.write_text("no tab on this line\n")
    code, _, err = run(monkeypatch, capsys, "train", CONFIG, "-s", tmp_path / "r2", "-o", json.dumps(overrides))
    assert_one_line_error(code, err, "second.tsv:1")


def test_tsv_line_without_tab_names_file_and_line(data_env, monkeypatch, capsys, tmp_path):
    bad = tmp_path / "bad.tsv"
    bad.write_text("what state border s0\t( state:t $0 )\nno tab on this line\n")
    code, _, err = run(monkeypatch, capsys, "train", CONFIG, "-s", tmp_path / "r", "-o", json.dumps({"train_data_path": str(bad)}))
    assert_one_line_error(code, err, "bad.tsv:2")


def test_existing_serialization_dir_needs_recover_or_force(data_env, monkeypatch, capsys, tmp_path):
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "out.log").write_text("earlier run")
    code, _, err = run(monkeypatch, capsys, "train", CONFIG, "-s", tmp_path / "r")
    assert_one_line_error(code, err, "--recover", "--force")


def test_a_run_that_fails_before_its_first_epoch_leaves_nothing_to_clear(data_env, monkeypatch, capsys, tmp_path):
    """A typo in the config must not turn the corrected command into "use --recover or --force"."""
    typo = json.dumps({"model.encoder.num_layerz": 2})
    code, _, err = run(monkeypatch, capsys, "train", CONFIG, "-s", tmp_path / "new", "-o", typo)
    assert_one_line_error(code, err, "num_layerz")
    assert not (tmp_path / "new").exists()  # made by the run, so removed
    (tmp_path / "empty").mkdir()
    code, _, err = run(monkeypatch, capsys, "train", CONFIG, "-s", tmp_path / "empty", "-o", typo)
    assert_one_line_error(code, err, "num_layerz")
    assert list((tmp_path / "empty").iterdir()) == []  # there before: kept, and empty again


def test_missing_archive(monkeypatch, capsys, tmp_path):
    code, _, err = run(monkeypatch, capsys, "evaluate", tmp_path / "missing.tar.gz", tmp_path / "data.tsv")
    assert_one_line_error(code, err, "archive not found")


def test_corrupt_archive(monkeypatch, capsys, tmp_path):
    corrupt = tmp_path / "model.tar.gz"
    corrupt.write_bytes(b"\x1f\x8b\x08\x00 this is not a tarball")
    code, _, err = run(monkeypatch, capsys, "predict", corrupt, "-")
    assert_one_line_error(code, err, "model.tar.gz")


def test_archive_with_torn_weights(archive, monkeypatch, capsys, tmp_path):
    torn = tmp_path / "torn.tar.gz"
    with tarfile.open(archive) as source, tarfile.open(torn, "w:gz") as target:
        for member in source.getmembers():
            data = source.extractfile(member) if member.isfile() else None
            if member.name == "weights.safetensors":
                import io

                payload = data.read()[:100]
                member.size = len(payload)
                data = io.BytesIO(payload)
            target.addfile(member, data)
    code, _, err = run(monkeypatch, capsys, "evaluate", torn, tmp_path / "x.tsv")
    assert_one_line_error(code, err, "weights.safetensors")


def test_overrides_repeat_and_may_be_files(data_env, monkeypatch, capsys, tmp_path):
    override_file = tmp_path / "size.jsonnet"
    override_file.write_text("{ 'model.decoder': { layers: { num_layers: 1 }, bogus_key: 3 } }")
    code, _, err = run(monkeypatch, capsys, "train", CONFIG, "-s", tmp_path / "r", "-o", '{"trainer.num_epochs": 1}', "-o", override_file)
    assert_one_line_error(code, err, "model.decoder.bogus_key")


def test_oracle_replays_the_grammar_and_counts_round_trips(data_env, monkeypatch, capsys):
    code, out, err = run(monkeypatch, capsys, "oracle", CONFIG, data_env["train"], "-o", '{"grammar": {"type": "bracketed", "max_length": 60}}')
    assert code == 0, err
    report = json.loads(out)
    assert report["examples"] == 40 and report["exact_round_trips"] == 40 and report["oracle_errors"] == 0
    # A length cap below the longest logical form makes the oracle fail on those lines, by file and line.
    code, out, err = run(monkeypatch, capsys, "oracle", CONFIG, data_env["train"], "-o", '{"grammar": {"type": "bracketed", "max_length": 12}}')
    report = json.loads(out)
    assert code == 0 and report["oracle_errors"] > 0
    assert report["exact_round_trips"] + report["oracle_errors"] == 40
    assert "train.tsv:" in report["first_errors"][0]


def test_oracle_reads_the_whole_file_whatever_the_reader_s_max_examples(data_env, monkeypatch, capsys):
    capped = '{"dataset_reader.max_examples": 5, "validation_dataset_reader": {"type": "tsv", "max_examples": 7}}'
    code, out, err = run(monkeypatch, capsys, "oracle", CONFIG, data_env["train"], "-o", capped)
    assert code == 0, err
    assert json.loads(out)["examples"] == 40


def test_an_override_that_changes_a_type_replaces_the_object(ewt, monkeypatch, capsys):
    """The README's ablation: the EWT config's arc_standard grammar has `non_projective`, which arc_swap does not take."""
    config = FIXTURES.parent.parent / "jsonnet_configs" / "ud_ewt_stack_transformer.jsonnet"
    for override in ('{"grammar": {"type": "arc_swap"}}', '{"grammar.type": "arc_swap"}'):
        code, out, err = run(monkeypatch, capsys, "oracle", config, ewt["train"], "-o", override)
        assert code == 0, err
        report = json.loads(out)
        assert report["examples"] == 40 and report["exact_round_trips"] == 40  # arc_swap derives non-projective trees too


def test_an_empty_override_overrides_nothing(data_env, monkeypatch, capsys):
    """`-o "$EXTRA"` with nothing in EXTRA: as from_file reads an empty override, not a jsonnet syntax error."""
    tree = '{"grammar.type": "lcrs_bfs"}'
    code, out, err = run(monkeypatch, capsys, "oracle", CONFIG, data_env["train"], "-o", "", "-o", tree, "-o", "  \n")
    assert code == 0, err
    assert "trees_deeper_than_max_depth_32" in json.loads(out)  # the tree codec's report: the middle override was taken


# ------------------------------------------------------------------ numeric options, outputs


def numeric_options():
    from toolkit.cli import cli

    for name, command in sorted(cli.commands.items()):
        for parameter in command.params:
            if isinstance(parameter.type, (click.types.IntParamType, click.types.FloatParamType)):
                yield pytest.param(parameter, id=f"{name} {parameter.opts[-1]}")


@pytest.mark.parametrize("parameter", list(numeric_options()))
def test_every_numeric_option_has_a_checked_range(parameter):
    """An unbounded value could hang (`serve --max-wait-ms 1e308`) or crash (`--batch-size 99999999999999999999`)."""
    if parameter.name == "beam_size":
        pytest.skip("--beam-size is bounded where it is decoded, by the memory its beam would take, not by a range of its own")
    kind = parameter.type
    assert isinstance(kind, click.types._NumberRangeBase) and kind.min is not None and kind.max is not None, f"{parameter.opts} has no upper bound"
    too_big = ["99999999999999999999"] + (["inf", "nan", "1e308"] if isinstance(kind, click.FloatRange) else [])
    for value in too_big:
        with pytest.raises(click.BadParameter):
            kind.convert(value, parameter, None)
    if parameter.default is not None:  # None: decided at run time (--workers: one per core)
        assert kind.convert(str(parameter.default), parameter, None) == parameter.default


def fake_run(folder):
    """A folder laid out as a finished run (what archive_parts reads is names, not contents), with a user's notes."""
    for name in ("out.log", "config.json", "weights.safetensors", "model.tar.gz", "notes.txt"):
        (folder / name).write_text(name)
    (folder / "vocabulary").mkdir()
    (folder / "vocabulary" / "tokens.txt").write_text("a\n")
    return folder


def test_no_output_lands_on_a_file_of_an_archive_or_its_run(tmp_path):
    from toolkit.cli_options import check_output
    from toolkit.errors import ToolkitError

    (tmp_path / "run").mkdir()
    run_dir = fake_run(tmp_path / "run")
    (tmp_path / "weights-link").symlink_to(run_dir / "weights.safetensors")
    (tmp_path / "run-link").symlink_to(run_dir)
    for archive in (str(run_dir), str(run_dir / "model.tar.gz"), str(tmp_path / "run-link")):
        for output in ("run/weights.safetensors", "run/config.json", "run/vocabulary/tokens.txt", "run/vocabulary/new.txt", "weights-link", "run-link/out.log"):
            with pytest.raises(ToolkitError, match="writing it would destroy the archive; name another file"):
                check_output(str(tmp_path / output), [], [archive])
        for output in ("run/predictions.jsonl", "run/notes.txt", "elsewhere.jsonl"):  # new files beside a run, a user's own: no part of it
            check_output(str(tmp_path / output), [], [archive])
    with pytest.raises(ToolkitError, match=r"the output file .*model.tar.gz is the archive .*model.tar.gz"):
        check_output(str(tmp_path / "run" / "model.tar.gz"), [], [str(run_dir / "model.tar.gz")])


def test_a_picture_cut_short_is_never_left_where_pictures_go(seq2seq_archive, tmp_path, monkeypatch, capsys):
    """A full disk in the middle of the second picture: before, the sentence's folder kept it half written."""
    import errno

    pytest.importorskip("matplotlib")
    from toolkit.visualization import command

    saved = []

    def save_png(figure, path):
        if saved:
            path.write_bytes(b"\x89PNG half")
            raise OSError(errno.ENOSPC, "No space left on device")
        saved.append(path.name)
        save(figure, path)

    save = command.save_png
    monkeypatch.setattr(command, "save_png", save_png)
    questions = tmp_path / "questions.txt"
    questions.write_text("what state border s0\n")
    code, out, err = run(monkeypatch, capsys, "visualize", seq2seq_archive, questions, "-o", tmp_path / "out", "--device", "cpu")
    assert code == 1 and out == "" and err.strip().splitlines()[-1] == "error: a write failed: no space left on the device" and "Traceback" not in err, err
    assert list((tmp_path / "out").rglob("*.*")) == [] and [path.name for path in (tmp_path / "out").iterdir()] == ["sentence_1"]
