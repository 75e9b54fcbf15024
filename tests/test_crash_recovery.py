"""Crash safety: training killed at random moments, resumed with --recover, ends bit-identical; a run replaced with --force is never lost."""

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time

import pytest
import torch
from safetensors.torch import load_file

from tests.conftest import FIXTURES, REPO
from tests.waiting import wait_for
from toolkit.serving.launch import answering_ctrl_c

OVERRIDES = '{"trainer.num_epochs": 60, "trainer.max_tokens": 256, "test_data_path": null}'


def command(directory, *options):
    return [sys.executable, "-m", "toolkit", "train", str(FIXTURES / "tiny_seq2seq.jsonnet"), "-s", str(directory), "-o", OVERRIDES, *options]


@pytest.mark.slow  # several short trainings in subprocesses, killed at random points
def test_killed_at_random_points_and_resumed_ends_with_the_same_weights(tmp_path):
    source = REPO.parent / "shared" / "data" / "geo" / "train.txt"
    if not source.exists():
        pytest.skip(f"GEO data not found at {source}")
    lines = source.read_text(encoding="utf-8").splitlines()
    (tmp_path / "train.tsv").write_text("\n".join(lines[:300]) + "\n")
    (tmp_path / "test.tsv").write_text("\n".join(lines[300:320]) + "\n")
    env = {**os.environ, "TRAIN": str(tmp_path / "train.tsv"), "TEST": str(tmp_path / "test.tsv"), "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO)}

    subprocess.run(command(tmp_path / "straight"), env=env, check=True, capture_output=True)

    crashed, rng, kills = tmp_path / "crashed", random.Random(7), 0
    state = crashed / "checkpoints" / "training_state.pt"
    for _ in range(12):
        options = ("--recover",) if state.exists() else ("-f",)
        seen = len(logged_epochs(crashed))
        process = subprocess.Popen(command(crashed, *options), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # killed at a random point of the run's own progress, not of the clock (3 to 8 s: a fast machine ended the run
        # before 3 kills, a slow one killed every start in its startup): 0 to 3 more epochs logged, then within an
        # epoch's time as the run last measured it: in the startup, an epoch, a validation or a checkpoint write
        more = rng.randint(0, 3)
        wait_for(lambda seen=seen, more=more, process=process: len(logged_epochs(crashed)) >= seen + more or process.poll() is not None, "the epochs")
        time.sleep(rng.uniform(0.0, (logged_epochs(crashed) or logged_epochs(tmp_path / "straight"))[-1]["epoch_seconds"]))
        if process.poll() is not None:
            break
        process.send_signal(signal.SIGKILL)
        process.wait()
        kills += 1
    if process.returncode != 0 or not (crashed / "model.tar.gz").exists():
        options = ("--recover",) if state.exists() else ("-f",)
        subprocess.run(command(crashed, *options), env=env, check=True, capture_output=True)
    assert kills >= 3, f"the run finished after {kills} kills: make it longer"

    straight, resumed = load_file(str(tmp_path / "straight" / "weights.safetensors")), load_file(str(crashed / "weights.safetensors"))
    assert straight.keys() == resumed.keys()
    assert all(torch.equal(straight[name], resumed[name]) for name in straight)


def logged_epochs(directory) -> list[dict]:
    """The epochs the run in *directory* has logged so far in its out.log (a run resumed with --recover adds to it)."""
    log = directory / "out.log"
    lines = log.read_text(encoding="utf-8").splitlines(keepends=True) if log.exists() else []
    return [json.loads(line.split(": epoch ", 1)[1].split(": ", 1)[1]) for line in lines if ": epoch " in line and line.endswith("}\n")]


def run_files(directory) -> dict[str, bytes]:
    """The files of the run in *directory* and their bytes (the lock, which names its last owner, left out)."""
    return {str(path.relative_to(directory)): path.read_bytes() for path in sorted(directory.rglob("*")) if path.is_file() and path.name != ".lock"}


@pytest.mark.slow  # a dozen short trainings in subprocesses
def test_a_replacing_run_killed_at_any_moment_leaves_one_whole_run(tmp_path):
    """`--force` over a finished run, stopped at random moments by SIGKILL, or by Ctrl-C given twice in
    quick succession (the second arriving while the first is cleaning up): once the next start in the
    directory has put things in order, it holds the old run byte for byte, or the new run with its
    first epoch saved; never a mix, never nothing.
    """
    source = REPO.parent / "shared" / "data" / "geo" / "train.txt"
    if not source.exists():
        pytest.skip(f"GEO data not found at {source}")
    lines = source.read_text(encoding="utf-8").splitlines()
    (tmp_path / "train.tsv").write_text("\n".join(lines[:300]) + "\n")
    (tmp_path / "test.tsv").write_text("\n".join(lines[300:320]) + "\n")
    env = {**os.environ, "TRAIN": str(tmp_path / "train.tsv"), "TEST": str(tmp_path / "test.tsv"), "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO)}
    run_dir = tmp_path / "run"
    subprocess.run([*command(run_dir), "-o", '{"trainer.num_epochs": 1}'], env=env, check=True, capture_output=True)
    old = run_files(run_dir)

    rng, outcomes = random.Random(3), set()
    for trial in range(8):
        process = subprocess.Popen(command(run_dir, "--force"), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=answering_ctrl_c)
        time.sleep(rng.uniform(2.0, 9.0))  # startup, the move aside, the first epoch, its checkpoint, the old run's deletion
        if trial % 2:
            process.send_signal(signal.SIGKILL)
        else:
            process.send_signal(signal.SIGINT)
            time.sleep(rng.uniform(0.0, 0.05))
            if process.poll() is None:
                process.send_signal(signal.SIGINT)
        process.wait()
        tidy = subprocess.run(command(run_dir), env=env, capture_output=True, text=True)  # refused (not empty), after putting things in order
        assert tidy.returncode == 1 and "not empty" in tidy.stderr, tidy.stderr
        files = run_files(run_dir)
        assert not any(name.startswith(".replaced") for name in files), sorted(files)
        if files == old:
            outcomes.add("old")
            continue
        assert "checkpoints/training_state.pt" in files, f"trial {trial}: neither the old run nor a new one with a saved epoch: {sorted(files)}"
        outcomes.add("new")
        shutil.rmtree(run_dir)  # the old run again, for the next trial
        subprocess.run([*command(run_dir), "-o", '{"trainer.num_epochs": 1}'], env=env, check=True, capture_output=True)
        old = run_files(run_dir)
    assert outcomes, "no trial ran"
