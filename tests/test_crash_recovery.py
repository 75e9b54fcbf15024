"""Crash safety: training killed with SIGKILL at random moments, resumed with --recover, ends bit-identical."""

import os
import random
import signal
import subprocess
import sys
import time

import pytest
import torch
from safetensors.torch import load_file

from tests.conftest import FIXTURES, REPO

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
        process = subprocess.Popen(command(crashed, *options), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(3.0, 8.0))  # startup, then somewhere in an epoch, a validation or a checkpoint write
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
