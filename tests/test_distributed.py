"""Data-parallel training: `torchrun --nproc_per_node 2` on the CPU with gloo, through the real CLI."""

import json
import os
import signal
import subprocess
import sys
from contextlib import suppress
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, REPO, data_root
from tests.waiting import GENEROUS, wait_for
from toolkit.training.distributed import Distributed

CONFIG = FIXTURES / "tiny_seq2seq.jsonnet"


def test_shards_give_every_rank_the_same_number_of_batches():
    batches = list(range(7))
    shards = [Distributed(rank, 3).shard(batches) for rank in range(3)]
    assert shards == [[0, 3], [1, 4], [2, 5]]  # 6 is dropped: every rank takes 2 steps
    assert Distributed().shard(batches) == batches
    assert [Distributed(rank, 3).unpadded_shard(batches) for rank in range(3)] == [[0, 3, 6], [1, 4], [2, 5]]


@pytest.fixture(scope="module")
def geo(tmp_path_factory):
    source = data_root() / "geo" / "train.txt"
    if not source.exists():
        pytest.skip(f"GEO data not found at {source}")
    lines = source.read_text(encoding="utf-8").splitlines()
    directory = tmp_path_factory.mktemp("geo")
    (directory / "train.tsv").write_text("\n".join(lines[:300]) + "\n")
    (directory / "test.tsv").write_text("\n".join(lines[300:320]) + "\n")
    return {"TRAIN": str(directory / "train.tsv"), "TEST": str(directory / "test.tsv")}


def command(processes: int, directory: Path, *options: str) -> list[str]:
    launcher = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", str(processes)] if processes > 1 else [sys.executable]
    return [*launcher, "-m", "toolkit", "train", str(CONFIG), "-s", str(directory), *options]


def environment(geo) -> dict[str, str]:
    return {**os.environ, **geo, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO)}


def train(geo, processes: int, directory: Path, *options: str) -> list[dict]:
    result = subprocess.run(command(processes, directory, *options), env=environment(geo), capture_output=True, text=True, timeout=3 * GENEROUS)
    assert result.returncode == 0, result.stderr[-3000:]
    return epochs(directory)


def epochs(directory: Path) -> list[dict]:
    return [json.loads(line.split("epoch ", 1)[1].split(": ", 1)[1]) for line in (directory / "out.log").read_text().splitlines() if ": epoch " in line]


@pytest.mark.slow  # four short trainings in subprocesses, three of them with two processes
def test_torchrun_trains_like_one_process_with_the_same_global_batch_and_recovers(geo, tmp_path):
    two = train(geo, 2, tmp_path / "two", "-o", '{"trainer.max_tokens": 256, "trainer.num_epochs": 4}')
    one = train(geo, 1, tmp_path / "one", "-o", '{"trainer.max_tokens": 512, "trainer.num_epochs": 4}')
    assert [epoch["epoch"] for epoch in two] == [0, 1, 2, 3]  # rank 0 alone logs: each epoch once
    assert abs(two[-1]["validation_loss"] - one[-1]["validation_loss"]) < 0.15
    assert two[-1]["validation_loss"] < two[0]["validation_loss"] - 0.3  # it learned
    written = sorted(path.name for path in (tmp_path / "two").iterdir())
    assert written.count("model.tar.gz") == 1 and not any(name.endswith(".tmp") for name in written)

    # Killed (SIGKILL, the whole process group) once a checkpoint exists, then resumed under torchrun.
    killed = tmp_path / "killed"
    options = ("-o", '{"trainer.max_tokens": 256, "trainer.num_epochs": 4}')
    process = subprocess.Popen(command(2, killed, *options), env=environment(geo), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    state = killed / "checkpoints" / "training_state.pt"
    try:
        wait_for(lambda: state.exists() or process.poll() is not None, "a checkpoint")
    finally:
        with suppress(ProcessLookupError):  # ended already
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    assert state.exists(), f"the run ended with {process.returncode} before its first checkpoint"

    def workers_gone() -> bool:  # the workers too: until each has exited it holds the run's lock
        try:
            os.killpg(process.pid, 0)
        except ProcessLookupError:
            return True
        return False

    wait_for(workers_gone, "the workers killed")
    resumed = train(geo, 2, killed, "--recover", *options)
    assert [epoch["epoch"] for epoch in resumed][-1] == 3
    final = json.loads((killed / "metrics.json").read_text())
    assert final["validation_loss"] == two[-1]["validation_loss"]  # the same run as the uninterrupted one
    assert final["test_exact_match"] == json.loads((tmp_path / "two" / "metrics.json").read_text())["test_exact_match"]
