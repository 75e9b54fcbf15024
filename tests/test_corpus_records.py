"""A corpus folder holds exactly the records of its inputs as they are now, each line once, whatever ran in
it before: other shard sizes, runs killed at any point, inputs edited, cut short, removed or added,
inputs that change while a run parses them, globs through links and globs that reach the folder itself.
"""

from __future__ import annotations

import json
import os
from contextlib import suppress
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.bad_inputs.corpus import Stopped
from toolkit.corpus.engines import LocalEngine
from toolkit.corpus.inputs import input_files
from toolkit.corpus.manifest import MANIFEST_NAME, SUMMARY_NAME
from toolkit.corpus.run import predict_corpus
from toolkit.corpus.shards import plan_shards
from toolkit.corpus.worker import PredictionSettings, loaded_predictor
from toolkit.errors import ToolkitError
from toolkit.files import DirectoryLock, input_lines

LINES = ["The cat sat on the mat .", "Birds sing .", "It rains in Paris today .", "We went home .", "", '{"broken']


def expected_records(settings: PredictionSettings, files: list[Path]) -> dict[Path, list[str]]:
    """What one plain `toolkit predict` of each file writes, one record per line."""
    predictor = loaded_predictor(settings).predictor
    expected = {}
    for file in files:
        with input_lines(file) as lines:
            expected[file] = list(predictor.predict_lines(lines, settings.batch_size))
    return expected


def folder_records(folder: Path, inputs: list[str], shard_size: int, suffix: str = ".jsonl") -> dict[Path, list[str]]:
    """Each input file's records as the folder holds them (its shards' outputs in order); and no other file is there."""
    files = input_files(inputs, output=folder)
    shards = plan_shards(files, shard_size, suffix)
    present = {path.relative_to(folder).as_posix() for path in folder.rglob("*") if path.is_file()} - {MANIFEST_NAME, SUMMARY_NAME, DirectoryLock.NAME}
    assert present == {shard.output for shard in shards}, "the folder holds exactly the outputs of the inputs as they are now"
    records: dict[Path, list[str]] = {}
    for shard in shards:
        records.setdefault(Path(shard.path), []).extend((folder / shard.output).read_text(encoding="utf-8").splitlines())
    return records


def write_corpus(folder: Path, contents: dict[str, list[str]]) -> None:
    for name in list(os.listdir(folder)):
        if name not in contents:
            (folder / name).unlink()
    for name, lines in contents.items():
        (folder / name).write_text("".join(line + "\n" for line in lines), encoding="utf-8")


file_lines = st.lists(st.sampled_from(LINES), min_size=1, max_size=14)
corpus_contents = st.dictionaries(st.sampled_from(["a.txt", "b.txt", "c.jsonl"]), file_lines, min_size=1, max_size=3)
shard_sizes = st.sampled_from([24, 60, 150, 1 << 20])
run_plan = st.tuples(corpus_contents, shard_sizes, st.sampled_from(["whole", "between", "unrecorded", "mid-shard", "edited"]), st.integers(0, 4))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(runs=st.lists(run_plan, min_size=1, max_size=4), final=st.tuples(corpus_contents, shard_sizes), cut=file_lines)
def test_after_any_runs_the_folder_holds_a_plain_predict_of_the_inputs_as_they_are_now(seq2seq_archive, tmp_path_factory, runs, final, cut):
    root = tmp_path_factory.mktemp("records")
    corpus, out = root / "corpus", root / "out"
    corpus.mkdir()
    settings = PredictionSettings(str(seq2seq_archive), batch_size=4)
    for contents, shard_size, how, at in runs:
        write_corpus(corpus, contents)
        first = corpus / sorted(contents)[0]
        engine = Stopped(at, how, edit=lambda first=first: first.write_text("".join(line + "\n" for line in cut), encoding="utf-8"))
        with suppress(KeyboardInterrupt, ToolkitError):  # stopped, or told an input changed: what matters is what the next run leaves
            predict_corpus(settings, [str(corpus)], out, engine, shard_size=shard_size)
    contents, shard_size = final
    write_corpus(corpus, contents)
    summary = predict_corpus(settings, [str(corpus)], out, LocalEngine(), shard_size=shard_size)
    files = input_files([str(corpus)])
    assert folder_records(out, [str(corpus)], shard_size) == expected_records(settings, files)
    assert summary["lines"] == summary["records"] == sum(len(lines) for lines in contents.values())
    entries = [json.loads(line) for line in (out / MANIFEST_NAME).read_text(encoding="utf-8").splitlines()]
    assert {entry.get("output") for entry in entries if "output" in entry} == {shard.output for shard in plan_shards(files, shard_size, ".jsonl")}


# ------------------------------------------------------------ the cases, one at a time


@pytest.fixture
def corpus(tmp_path) -> Path:
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "in.txt").write_text("\n".join(LINES[:4] * 20) + "\n", encoding="utf-8")
    return folder


def test_another_shard_size_leaves_no_shard_of_the_first(seq2seq_archive, corpus, tmp_path):
    settings, out = PredictionSettings(str(seq2seq_archive)), tmp_path / "out"
    assert predict_corpus(settings, [str(corpus)], out, LocalEngine(), shard_size=300)["shards"] > 3
    summary = predict_corpus(settings, [str(corpus)], out, LocalEngine())
    assert sorted(path.name for path in out.iterdir()) == [".lock", "in.jsonl", MANIFEST_NAME, SUMMARY_NAME]
    entries = [json.loads(line) for line in (out / MANIFEST_NAME).read_text().splitlines()]
    assert summary["records"] == 80 and [entry["output"] for entry in entries if "output" in entry] == ["in.jsonl"]
    predict_corpus(settings, [str(corpus)], out, LocalEngine(), shard_size=300)  # and back
    assert not (out / "in.jsonl").exists() and len(list(out.glob("in-*.jsonl"))) > 3


def test_a_glob_that_reaches_the_output_folder_leaves_it_out(seq2seq_archive, corpus, monkeypatch, capsys):
    from tests.conftest import run

    monkeypatch.chdir(corpus.parent)
    for _ in range(2):
        code, _, err = run(monkeypatch, capsys, "predict", seq2seq_archive, "corpus/**", "-o", "corpus/parsed", "--engine", "local")
        assert code == 0, err
    assert sorted(path.relative_to(corpus).as_posix() for path in corpus.rglob("*") if path.is_file()) == [
        "in.txt",
        "parsed/.lock",
        "parsed/in.jsonl",
        f"parsed/{MANIFEST_NAME}",
        f"parsed/{SUMMARY_NAME}",
    ]


def test_a_glob_through_links_finds_each_file_once_and_ends(tmp_path):
    loop = tmp_path / "loop"
    (loop / "sub").mkdir(parents=True)
    (loop / "a.txt").write_text("x\n")
    (loop / "sub" / "up").symlink_to("..")  # a loop
    (loop / "sub" / "again").symlink_to("../..")  # a second one, above it: 2^40 paths for glob.glob
    (loop / "alias.txt").symlink_to("a.txt")
    assert input_files([str(loop / "**" / "*.txt")]) == [loop / "a.txt"]
    assert input_files([str(loop / "sub" / "up" / "*.txt"), str(loop)]) == [loop / "sub" / "up" / "a.txt"], "one file, under its first name"


def test_an_input_cut_short_during_the_run_fails_its_shards_and_the_rerun_mends_the_folder(seq2seq_archive, corpus, tmp_path):
    settings, out = PredictionSettings(str(seq2seq_archive)), tmp_path / "out"
    path = corpus / "in.txt"
    shorter = "\n".join(LINES[:4] * 5) + "\n"
    with pytest.raises(ToolkitError, match=r"shards failed .*in.txt changed while the corpus was parsed"):
        predict_corpus(settings, [str(corpus)], out, Stopped(1, "edited", lambda: path.write_text(shorter)), shard_size=300)
    summary = predict_corpus(settings, [str(corpus)], out, LocalEngine(), shard_size=300)
    assert summary["records"] == summary["lines"] == 20
    assert folder_records(out, [str(corpus)], 300) == expected_records(settings, [path])


def test_an_input_changed_after_its_shards_were_parsed_is_reported(seq2seq_archive, corpus, tmp_path):
    settings, out = PredictionSettings(str(seq2seq_archive)), tmp_path / "out"
    (corpus / "later.txt").write_text("Birds sing .\n")
    path = corpus / "in.txt"
    edit = lambda: path.write_text(path.read_text() + "We went home .\n")  # noqa: E731 - in.txt was parsed first
    with pytest.raises(ToolkitError, match=r"in.txt changed while the corpus was parsed \(1 input\(s\) in all\): rerun the command"):
        predict_corpus(settings, [str(corpus)], out, Stopped(1, "edited", edit))
    assert predict_corpus(settings, [str(corpus)], out, LocalEngine())["records"] == 82


def test_a_dead_writers_temporary_file_is_removed_and_a_live_ones_kept(tmp_path):
    from toolkit.files import remove_dead_temporaries, temporary_beside

    target = tmp_path / "same.jsonl"
    dead = tmp_path / ".same.jsonl.0123abcd.tmp"
    dead.write_text("what a killed run wrote")
    other = tmp_path / ".other.jsonl.0123abcd.tmp"
    other.write_text("another output's")
    with temporary_beside(target) as live:
        remove_dead_temporaries([target])
        assert live.exists() and not dead.exists() and other.exists()
        live.unlink()
