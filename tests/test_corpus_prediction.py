"""Corpus prediction (``toolkit predict ... --engine``): shards cut at record boundaries without reading
files whole, one output per shard written whole, a manifest a rerun resumes from, and on Dask's
local cluster the same outputs, surviving a killed worker and a SIGTERM of the whole job.
"""

import gzip
import json
import os
import signal
import subprocess
import sys
import time
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import require_dask, run
from toolkit.corpus.engines import LocalEngine
from toolkit.corpus.inputs import input_files
from toolkit.corpus.manifest import Manifest
from toolkit.corpus.run import predict_corpus
from toolkit.corpus.shards import plan_shards, range_sha256, shard_lines
from toolkit.corpus.worker import PredictionSettings
from toolkit.errors import DataError, ToolkitError
from toolkit.files import input_lines

SENTENCES = ["The cat sat on the mat .", "Birds sing .", "It rains in Paris today .", "We went home ."]


def read_all(shards) -> list[str]:
    lines = []
    for shard in shards:
        with shard_lines(shard) as (shard_text, _):
            lines.extend(shard_text)
    return lines


# ------------------------------------------------------------ shards


line_text = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r"), max_size=30)


@given(lines=st.lists(line_text, max_size=40), ending=st.sampled_from(["\n", "\r\n"]), last_newline=st.booleans(), shard_size=st.integers(1, 200))
def test_ranges_hold_every_line_once_in_order_whatever_the_shard_size(tmp_path_factory, lines, ending, last_newline, shard_size):
    path = tmp_path_factory.mktemp("shards") / "a.txt"
    path.write_bytes((ending.join(lines) + (ending if last_newline and lines else "")).encode("utf-8"))
    shards = plan_shards([path], shard_size, ".jsonl")
    assert shards[0].start == 0 and shards[-1].end == path.stat().st_size
    assert all(earlier.end == later.start for earlier, later in pairwise(shards))
    with input_lines(path) as whole:
        expected = list(whole)
    assert read_all(shards) == expected
    numbered = 1
    for shard in shards:  # each range knows the number of its first line in the file
        assert shard.first_line == numbered
        numbered += len(read_all([shard]))


@given(sentences=st.lists(st.integers(1, 6), min_size=1, max_size=12), gaps=st.integers(1, 3), shard_size=st.integers(1, 300))
def test_conllu_is_cut_between_sentences_only(tmp_path_factory, sentences, gaps, shard_size):
    blocks = [f"# sent_id = {i}\n" + "".join(f"{w}\tw{w}\t_\t_\t_\t_\t0\troot\t_\t_\n" for w in range(1, words + 1)) for i, words in enumerate(sentences)]
    path = tmp_path_factory.mktemp("conllu") / "a.conllu"
    path.write_text(("\n" * gaps).join(blocks) + "\n", encoding="utf-8")
    shards = plan_shards([path], shard_size, ".conllu")
    for shard in shards:
        lines = read_all([shard])
        assert lines[0].startswith("# sent_id"), "a range starts at a sentence"
        assert not lines[-1].strip() or shard is shards[-1], "and ends after a blank line"
    assert sum(line.startswith("# sent_id") for line in read_all(shards)) == len(sentences)


def test_a_gzip_file_is_one_shard_read_through_and_a_damaged_one_is_refused(tmp_path):
    path = tmp_path / "a.txt.gz"
    path.write_bytes(gzip.compress(("\n".join(SENTENCES * 50) + "\n").encode()))
    shards = plan_shards([path], 16, ".jsonl")
    assert len(shards) == 1 and shards[0].compressed and shards[0].output == "a.jsonl"
    assert read_all(shards) == SENTENCES * 50
    path.write_bytes(path.read_bytes()[:-20])  # cut short
    with pytest.raises(DataError, match="gzip file is damaged"):
        read_all(plan_shards([path], 16, ".jsonl"))


def test_inputs_are_files_folders_and_globs_and_outputs_keep_their_folders(tmp_path):
    corpus = tmp_path / "corpus"
    (corpus / "2024").mkdir(parents=True)
    (corpus / ".hidden").mkdir()
    (corpus / "docs").mkdir()
    for name in ("a.txt", "2024/b.jsonl", "2024/c.conllu.gz", ".hidden/d.txt", "docs/notes.md"):
        (corpus / name).write_text("x\n")
    files = input_files([str(corpus)])
    assert [file.relative_to(corpus).as_posix() for file in files] == ["2024/b.jsonl", "2024/c.conllu.gz", "a.txt"]
    assert [shard.output for shard in plan_shards(files, 1 << 20, ".conllu")] == ["2024/b.conllu", "2024/c.conllu", "a.conllu"]
    assert input_files([str(corpus / "**" / "*.jsonl")]) == [corpus / "2024" / "b.jsonl"]
    assert input_files([str(corpus / "a.txt"), str(corpus / "*.txt")]) == [corpus / "a.txt"], "each file once"
    (corpus / "a.jsonl").write_text("x\n")
    with pytest.raises(ToolkitError, match="would both be written to a.conllu"):
        plan_shards(input_files([str(corpus)]), 1 << 20, ".conllu")
    for missing, message in ((corpus / "nothing*.txt", "no input file matches"), (corpus / "absent.txt", "input file not found")):
        with pytest.raises(ToolkitError, match=message):
            input_files([str(missing)])
    with pytest.raises(ToolkitError, match="holds no corpus files"):
        input_files([str(corpus / "docs")])


# ------------------------------------------------------------ one process: outputs, manifest, resume


@pytest.fixture
def corpus(tmp_path) -> Path:
    """Two files, one gzipped, with a line no predictor can read (invalid JSON) and a blank line among them."""
    folder = tmp_path / "corpus"
    folder.mkdir()
    lines = [*SENTENCES * 10, '{"broken', "", *SENTENCES * 5]
    (folder / "a.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / "b.txt.gz").write_bytes(gzip.compress(("\n".join(SENTENCES * 3) + "\n").encode()))
    return folder


def one_process(monkeypatch, capsys, archive: Path, path: Path) -> str:
    code, out, err = run(monkeypatch, capsys, "predict", archive, path)
    assert code == 0, err
    return out


def test_local_engine_writes_what_one_process_writes_and_a_rerun_resumes(seq2seq_archive, corpus, tmp_path, monkeypatch, capsys):
    out = tmp_path / "out"
    code, _, err = run(monkeypatch, capsys, "predict", seq2seq_archive, corpus, "-o", out, "--engine", "local", "--shard-size", "200")
    assert code == 0, err
    assert "3 input lines" not in err and "error records" in err
    parts = sorted(path.name for path in out.glob("a-*.jsonl"))
    assert len(parts) > 3, "a.txt is cut into ranges"
    joined = "".join((out / name).read_text(encoding="utf-8") for name in parts)
    assert joined == one_process(monkeypatch, capsys, seq2seq_archive, corpus / "a.txt")
    assert (out / "b.jsonl").read_text(encoding="utf-8").count("\n") == len(SENTENCES) * 3
    summary = json.loads((out / "summary.json").read_text())
    assert summary["lines"] == summary["records"] == 62 + 12 and summary["errors"] == 2  # the broken JSON and the blank line
    manifest = Manifest(out)
    assert len(manifest.entries) == len(parts) + 1
    assert all(entry["lines"] == entry["records"] for entry in manifest.entries.values())

    # a rerun parses nothing; a damaged output, a changed input or another beam is parsed again
    code, _, err = run(monkeypatch, capsys, "predict", seq2seq_archive, corpus, "-o", out, "--engine", "local", "--shard-size", "200")
    assert code == 0 and "(0 parsed now)" in err
    (out / parts[1]).write_text("torn", encoding="utf-8")
    code, _, err = run(monkeypatch, capsys, "predict", seq2seq_archive, corpus, "-o", out, "--engine", "local", "--shard-size", "200")
    assert code == 0 and "(1 parsed now)" in err
    assert "".join((out / name).read_text(encoding="utf-8") for name in parts) == joined
    code, _, err = run(monkeypatch, capsys, "predict", seq2seq_archive, corpus, "-o", out, "--engine", "local", "--shard-size", "200", "--beam-size", "2")
    assert code == 0 and f"({len(parts) + 1} parsed now)" in err


def test_dependency_outputs_number_the_lines_of_the_file_in_every_range(dependency_archive, tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("\n".join(SENTENCES * 6) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    summary = predict_corpus(PredictionSettings(str(dependency_archive)), [str(path)], out, LocalEngine(), shard_size=100)
    assert summary["shards"] > 2
    ids = [line for part in sorted(out.glob("a-*.conllu")) for line in part.read_text(encoding="utf-8").splitlines() if line.startswith("# sent_id")]
    assert ids == [f"# sent_id = {number}" for number in range(1, 25)]


def test_a_torn_manifest_line_is_left_out_and_its_shard_parsed_again(seq2seq_archive, corpus, tmp_path):
    out = tmp_path / "out"
    settings = PredictionSettings(str(seq2seq_archive))
    predict_corpus(settings, [str(corpus)], out, LocalEngine(), shard_size=400)
    text = (out / "manifest.jsonl").read_text(encoding="utf-8")
    (out / "manifest.jsonl").write_text(text[: -len(text.splitlines()[-1]) // 2 - 1], encoding="utf-8")  # killed mid-line
    (out / ".a-00001.jsonl.1234abcd.tmp").write_text("half a shard")  # and mid-shard
    summary = predict_corpus(settings, [str(corpus)], out, LocalEngine(), shard_size=400)
    assert summary["parsed_now"] == 1 and summary["records"] == 74
    assert not list(out.glob(".*.tmp")), "a killed run's partial outputs are removed"


def test_a_changed_input_is_parsed_again(seq2seq_archive, corpus, tmp_path):
    out = tmp_path / "out"
    settings = PredictionSettings(str(seq2seq_archive))
    predict_corpus(settings, [str(corpus)], out, LocalEngine())
    path = corpus / "a.txt"
    path.write_text(path.read_text().replace("Birds", "Cats"))
    assert predict_corpus(settings, [str(corpus)], out, LocalEngine())["parsed_now"] == 1
    shard = plan_shards([path], 1 << 20, ".jsonl")[0]
    assert Manifest(out).entries[shard.key]["input_sha256"] == range_sha256(shard)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["{corpus}"], "is a corpus (several files, a folder or a glob): parse it into a folder with --engine"),
        (["{corpus}/a.txt", "--workers", "2"], "--workers is for corpus prediction: add --engine"),
        (["{corpus}", "--engine", "local"], "name their folder with -o FOLDER"),
        (["-", "--engine", "local", "-o", "{tmp}/out"], "not standard input"),
        (["{corpus}", "--engine", "spark", "-o", "{tmp}/out"], "--engine 'spark' is not an engine; the engines: dask, local"),
        (["{corpus}", "--engine", "local", "-o", "{corpus}"], "the output folder {corpus} holds the input {corpus}"),
        (["{corpus}/a.txt", "--engine", "local", "-o", "{corpus}"], "holds the input"),
        (["{corpus}", "--engine", "local", "-o", "{corpus}/a.txt"], "is a file: name a folder"),
        (["{corpus}", "--engine", "local", "--workers", "2", "-o", "{tmp}/out"], "--engine local parses in this process"),
        (["{corpus}", "--engine", "local", "--shard-size", "lots", "-o", "{tmp}/out"], "'lots' is not a size in bytes"),
    ],
)
def test_corpus_mistakes_are_one_line(seq2seq_archive, corpus, tmp_path, monkeypatch, capsys, arguments, message):
    filled = [argument.format(corpus=corpus, tmp=tmp_path) for argument in arguments]
    code, _, err = run(monkeypatch, capsys, "predict", seq2seq_archive, *filled)
    assert code in (1, 2) and message.format(corpus=corpus) in err and "Traceback" not in err, err
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_a_shard_that_cannot_be_read_fails_alone(seq2seq_archive, corpus, tmp_path, monkeypatch, capsys):
    (corpus / "c.txt").write_bytes("\ufeffa\nb\n".encode("utf-16"))
    out = tmp_path / "out"
    code, _, err = run(monkeypatch, capsys, "predict", seq2seq_archive, corpus, "-o", out, "--engine", "local")
    assert code == 1 and "1 of 3 shards failed" in err and "UTF-16" in err and "rerun the command" in err
    assert sorted(path.name for path in out.glob("*.jsonl") if path.name != "manifest.jsonl") == ["a.jsonl", "b.jsonl"]


# ------------------------------------------------------------ Dask: a local cluster of 2 workers


def toolkit(*arguments) -> list[str]:
    return [sys.executable, "-m", "toolkit", *map(str, arguments)]


def outputs(folder: Path) -> dict[str, str]:
    return {path.relative_to(folder).as_posix(): path.read_text(encoding="utf-8") for path in sorted(folder.rglob("*.jsonl")) if path.name != "manifest.jsonl"}


@pytest.fixture
def big_corpus(tmp_path) -> Path:
    """Enough lines for shards that take a tiny model a few seconds, so that a kill lands mid-shard."""
    folder = tmp_path / "big"
    folder.mkdir()
    for index in range(4):
        (folder / f"part{index}.txt").write_text("\n".join(SENTENCES * 400) + "\n", encoding="utf-8")
    return folder


def test_dask_writes_what_the_local_engine_writes(seq2seq_archive, corpus, tmp_path):
    require_dask()
    local, dask = tmp_path / "local", tmp_path / "dask"
    common = ["--shard-size", "300"]
    subprocess.run(toolkit("predict", seq2seq_archive, corpus, "-o", local, "--engine", "local", *common), check=True, capture_output=True)
    done = subprocess.run(
        toolkit("predict", seq2seq_archive, corpus, "-o", dask, "--engine", "dask", "--workers", "2", *common), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert outputs(dask) == outputs(local) and len(outputs(dask)) > 2
    hosts = {entry["output"]: entry["records"] for entry in Manifest(dask).entries.values()}
    assert hosts == {entry["output"]: entry["records"] for entry in Manifest(local).entries.values()}


def worker_processes(driver: int) -> list:
    """The Dask worker processes of the local cluster the process *driver* runs (multiprocessing spawns them)."""
    import psutil

    return [process for process in psutil.Process(driver).children(recursive=True) if "spawn_main" in " ".join(process.cmdline())]


def wait_for(condition, timeout: float = 120.0, step: float = 0.02):
    """Poll *condition* until it holds (what it returned) or *timeout* seconds pass (a test failure)."""
    ends = time.monotonic() + timeout
    while time.monotonic() < ends:
        if value := condition():
            return value
        time.sleep(step)
    pytest.fail(f"waited {timeout} s in vain")


def test_a_worker_killed_mid_shard_loses_and_duplicates_nothing(seq2seq_archive, big_corpus, tmp_path):
    require_dask()
    out = tmp_path / "out"
    job = subprocess.Popen(toolkit("predict", seq2seq_archive, big_corpus, "-o", out, "--engine", "dask", "--workers", "2"), stderr=subprocess.PIPE, text=True)
    wait_for(lambda: out.is_dir() and list(out.glob(".*.tmp")))  # a shard is being written
    victims = wait_for(lambda: worker_processes(job.pid))
    victims[0].send_signal(signal.SIGKILL)
    _, err = job.communicate(timeout=600)
    assert job.returncode == 0, err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["failed"] == 0 and summary["lines"] == summary["records"] == 4 * 1600
    for index in range(4):
        assert (out / f"part{index}.jsonl").read_text(encoding="utf-8").count("\n") == 1600


def test_sigterm_stops_the_job_and_the_same_command_finishes_it(seq2seq_archive, big_corpus, tmp_path):
    require_dask()
    out = tmp_path / "out"
    command = toolkit("predict", seq2seq_archive, big_corpus, "-o", out, "--engine", "dask", "--workers", "2", "--shard-size", "8K")
    job = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    wait_for(lambda: (out / "manifest.jsonl").exists() and '"output"' in (out / "manifest.jsonl").read_text())  # some shards are done, others not
    job.send_signal(signal.SIGTERM)
    _, err = job.communicate(timeout=120)
    assert job.returncode == 143 and "rerun the same command" in err, err
    finished = len(Manifest(out).entries)
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["parsed_now"] == summary["shards"] - finished > 0
    assert summary["lines"] == summary["records"] == 4 * 1600
    entries = [entry for line in (out / "manifest.jsonl").read_text().splitlines() if "output" in (entry := json.loads(line))]
    assert len(entries) == summary["shards"], "each shard recorded once: none was parsed twice"
    joined = "".join((out / f"part0-{index:05d}.jsonl").read_text(encoding="utf-8") for index in range(sum(e["input"].endswith("part0.txt") for e in entries)))
    assert joined.count("\n") == 1600


def test_a_full_disk_fails_the_shards_it_stops_and_keeps_the_rest(seq2seq_archive, corpus, tmp_path, monkeypatch, capsys):
    from tests.bad_inputs.checks import small_disk

    (corpus / "big.txt").write_text("\n".join(SENTENCES * 2000) + "\n", encoding="utf-8")  # far more output than the disk holds
    with small_disk(tmp_path / "disk", "64k") as disk:
        code, _, err = run(monkeypatch, capsys, "predict", seq2seq_archive, corpus, "-o", disk / "out", "--engine", "local")
        assert code == 1 and "Traceback" not in err, err
        assert "shards failed" in err and "no space left" in err.lower(), err
        assert not list((disk / "out").glob(".*.tmp")), "no partial output is left"
        assert json.loads((disk / "out" / "summary.json").read_text())["failed"] >= 1


def test_a_folder_of_other_files_or_in_use_is_refused(seq2seq_archive, corpus, tmp_path, monkeypatch, capsys):
    from toolkit.files import DirectoryLock

    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "a.jsonl").write_text("the user's own file\n")
    code, _, err = run(monkeypatch, capsys, "predict", seq2seq_archive, corpus, "-o", mine, "--engine", "local")
    assert code == 1 and "holds files (a.jsonl) and no manifest.jsonl" in err, err
    assert (mine / "a.jsonl").read_text() == "the user's own file\n"
    out = tmp_path / "out"
    out.mkdir()
    lock = DirectoryLock(out)
    lock.acquire("hold it")
    try:
        code, _, err = run(monkeypatch, capsys, "predict", seq2seq_archive, corpus, "-o", out, "--engine", "local")
    finally:
        lock.release()
    assert code == 1 and f"is in use by another corpus prediction (process {os.getpid()})" in err, err


@pytest.fixture
def cluster():
    """A running Dask cluster of one worker process, as `dask scheduler` and `dask worker` would start one."""
    require_dask()
    from distributed import LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as running:
        yield running


def test_the_same_command_runs_on_a_cluster_at_an_address(seq2seq_archive, corpus, cluster, tmp_path):
    local, remote = tmp_path / "local", tmp_path / "remote"
    predict_corpus(PredictionSettings(str(seq2seq_archive)), [str(corpus)], local, LocalEngine(), shard_size=300)
    environment = {**os.environ, "DASK_SCHEDULER_ADDRESS": cluster.scheduler_address}  # Dask's own variable, as on a cluster
    done = subprocess.run(
        toolkit("predict", seq2seq_archive, corpus, "-o", remote, "--engine", "dask", "--shard-size", "300"), capture_output=True, text=True, env=environment
    )
    assert done.returncode == 0, done.stderr
    assert outputs(remote) == outputs(local)
    assert len(cluster.scheduler_info["workers"]) == 1, "the job used the running cluster, and left it running"


def test_a_cluster_that_cannot_run_the_job_is_refused_at_once(seq2seq_archive, corpus, cluster, tmp_path, monkeypatch):
    from toolkit.corpus.engines import DaskEngine

    engine = DaskEngine(address=cluster.scheduler_address)
    with (
        pytest.raises(ToolkitError, match="no worker of the Dask cluster at .* offers a GPU; start one per GPU with CUDA_VISIBLE_DEVICES=N dask worker"),
        engine,
    ):
        engine.start(PredictionSettings(str(seq2seq_archive), device="cuda"))
    monkeypatch.setenv("DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT", "1s")
    command = toolkit("predict", seq2seq_archive, corpus, "-o", tmp_path / "out", "--engine", "dask", "--address", "tcp://127.0.0.1:1")
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 1 and "error: cannot reach the Dask scheduler at tcp://127.0.0.1:1" in done.stderr, done.stderr


def test_each_local_gpu_worker_takes_its_own_device(monkeypatch):
    from toolkit.corpus import engines

    monkeypatch.setattr(engines, "cuda_devices", lambda: 4)
    assert [engines.worker_device("cuda", slot) for slot in range(6)] == ["cuda:0", "cuda:1", "cuda:2", "cuda:3", "cuda:0", "cuda:1"]
    assert engines.worker_device("cuda:2", 1) == "cuda:2" and engines.worker_device("cpu", 3) == "cpu"
    monkeypatch.setattr(engines, "cuda_devices", lambda: 1)
    assert engines.worker_device("cuda", 3) == "cuda", "a worker pinned by CUDA_VISIBLE_DEVICES sees one device"
