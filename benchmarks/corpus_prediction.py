r"""Corpus prediction at scale: plain ``toolkit predict`` in one process against ``--engine dask`` with
1 worker and with N workers, on a corpus of EWT sentences (raw text, one per line), alternated in
one run; then the faults: a worker killed mid-shard, and the whole job stopped by SIGTERM and rerun.

Every configuration is the command a user types, run end to end as a subprocess (model loading and
the cluster's start included), on the same lines: one file for the plain run, ``--files`` files for
the engine. Each prints records/s and the ratios the goals name (1 worker ≥ 0.9× plain; N workers
≥ 0.8·N× 1 worker); the faults print the counts that must match (input lines = records, nothing twice).

    python benchmarks/corpus_prediction.py --archive runs/ewt_scale/model.tar.gz --sentences 200000 \
        --files 16 --workers 2 [--rounds 1] [--beam-size 1 --quantize int8] [--work /tmp/corpus_bench]
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from itertools import cycle, islice
from pathlib import Path

from toolkit.params import data_root


def ewt_texts() -> list[str]:
    """The ``# text`` of every EWT sentence (train, dev and test): real sentences of real lengths."""
    folder = Path(data_root()) / "ud-english-ewt"
    return [
        line[len("# text = ") :].rstrip("\n")
        for path in sorted(folder.glob("*.conllu"))
        for line in open(path, encoding="utf-8")
        if line.startswith("# text = ")
    ]


def write_corpus(work: Path, sentences: int, files: int) -> tuple[Path, Path]:
    """*sentences* lines cycling through EWT's, as one file (for the plain run) and as *files* files."""
    lines = list(islice(cycle(ewt_texts()), sentences))
    corpus = work / "corpus"
    corpus.mkdir(parents=True)
    per_file = -(-sentences // files)
    for index in range(files):
        (corpus / f"part{index:03d}.txt").write_text("".join(line + "\n" for line in lines[index * per_file : (index + 1) * per_file]), encoding="utf-8")
    whole = work / "all.txt"
    whole.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return whole, corpus


def toolkit(*arguments) -> list[str]:
    return [sys.executable, "-m", "toolkit", *map(str, arguments)]


def timed(command: list[str]) -> float:
    began = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"failed ({done.returncode}): {' '.join(command)}\n{done.stderr[-3000:]}")
    return time.perf_counter() - began


def sentences_of(text: str) -> list[str]:
    """The CoNLL-U sentences of *text* without their comments (the ids differ between a file and its shards)."""
    return ["\n".join(line for line in block.splitlines() if not line.startswith("#")) for block in text.split("\n\n") if block.strip()]


def check_folder(out: Path, corpus: Path) -> dict:
    """The summary of *out*, once every output holds one sentence per input line, numbered as in its file."""
    summary = json.loads((out / "summary.json").read_text())
    for source in sorted(corpus.glob("*.txt")):
        lines = source.read_text(encoding="utf-8").count("\n")
        ids = [line for line in (out / f"{source.stem}.conllu").read_text(encoding="utf-8").splitlines() if line.startswith("# sent_id = ")]
        assert ids == [f"# sent_id = {number}" for number in range(1, lines + 1)], f"{source.name}: {len(ids)} sentences for {lines} lines"
    entries = [entry for line in (out / "manifest.jsonl").read_text().splitlines() if "output" in (entry := json.loads(line))]  # not the intents
    assert len(entries) == len({(entry["input"], entry["start"]) for entry in entries}) == summary["shards"], "a shard recorded twice"
    return summary


def engine_command(archive: str, corpus: Path, out: Path, workers: int, options: list[str]) -> list[str]:
    return toolkit("predict", archive, corpus, "-o", out, "--engine", "dask", "--workers", workers, *options)


def speed(args, whole: Path, corpus: Path, options: list[str]) -> None:
    work = Path(args.work)
    runs = {
        "plain toolkit predict": lambda: toolkit("predict", args.archive, whole, "-o", work / "plain.conllu", *options),
        "dask, 1 worker": lambda: engine_command(args.archive, corpus, work / "dask1", 1, options),
        f"dask, {args.workers} workers": lambda: engine_command(args.archive, corpus, work / f"dask{args.workers}", args.workers, options),
    }
    seconds: dict[str, list[float]] = {name: [] for name in runs}
    names = list(runs)
    for round_ in range(args.rounds):
        for name in names[round_ % 3 :] + names[: round_ % 3]:  # each configuration first in turn
            if "workers" in name or "worker" in name:
                shutil.rmtree(work / f"dask{int(name.split(', ')[1].split()[0])}", ignore_errors=True)  # an engine run parses everything
            seconds[name].append(timed(runs[name]()))
            print(f"round {round_ + 1}: {name}: {seconds[name][-1]:.1f} s", flush=True)
    plain_sentences = sentences_of((work / "plain.conllu").read_text(encoding="utf-8"))
    assert len(plain_sentences) == args.sentences, f"plain: {len(plain_sentences)} sentences"
    for folder in (work / "dask1", work / f"dask{args.workers}"):
        summary = check_folder(folder, corpus)
        assert summary["lines"] == summary["records"] == args.sentences, summary
        joined = [s for path in sorted(folder.glob("*.conllu")) for s in sentences_of(path.read_text(encoding="utf-8"))]
        same = sum(a == b for a, b in zip(joined, plain_sentences))
        busy = sum(json.loads(line)["seconds"] for line in manifest_lines(folder))
        print(
            f"{folder.name}: {summary['records']:,} records for {summary['lines']:,} lines; {same / len(plain_sentences):.2%} identical to the "
            f"plain run's; shards took {busy:.1f} worker-seconds"
        )
    best = {name: min(times) for name, times in seconds.items()}
    plain, one, many = (best[name] for name in names)
    print(f"\n{args.sentences:,} sentences, {os.cpu_count()} cores, options {' '.join(options) or '(none)'}; best of {args.rounds} round(s), end to end")
    print("| run | seconds | sentences/s | × plain | × 1 worker |\n| --- | --- | --- | --- | --- |")
    for name in names:
        print(f"| {name} | {best[name]:.1f} | {args.sentences / best[name]:,.0f} | {plain / best[name]:.2f} | {one / best[name]:.2f} |")
    print(f"goals: 1 worker ≥ 0.90× plain: {plain / one:.2f}; {args.workers} workers ≥ {0.8 * args.workers:.1f}× 1 worker: {one / many:.2f}")


def kill_worker_mid_shard(args, corpus: Path, options: list[str]) -> None:
    """Kill (SIGKILL) the worker that is writing a shard; the job must end with every line once."""
    import psutil

    out = Path(args.work) / "fault_kill"
    shutil.rmtree(out, ignore_errors=True)
    job = subprocess.Popen(engine_command(args.archive, corpus, out, args.workers, options), stderr=subprocess.PIPE, text=True)
    victim = None
    while victim is None and job.poll() is None:
        time.sleep(0.05)
        for process in psutil.Process(job.pid).children(recursive=True):
            try:
                if any(Path(f.path).name.endswith(".tmp") for f in process.open_files()) and len(manifest_lines(out)) >= 1:
                    victim = process
            except psutil.Error:
                continue
    assert victim is not None, "the job ended before a worker could be killed"
    partial = [Path(f.path).name for f in victim.open_files() if f.path.endswith(".tmp")]
    victim.send_signal(signal.SIGKILL)
    print(f"fault: killed worker {victim.pid} while it wrote {partial}", flush=True)
    _, err = job.communicate()
    assert job.returncode == 0, err[-3000:]
    summary = check_folder(out, corpus)
    assert summary["lines"] == summary["records"] == args.sentences and summary["failed"] == 0, summary
    print(f"fault, a worker killed mid-shard: {summary['records']:,} records for {summary['lines']:,} lines, {summary['shards']} shards, none twice")


def manifest_lines(out: Path) -> list[str]:
    path = out / "manifest.jsonl"
    return path.read_text().splitlines() if path.exists() else []


def terminate_and_resume(args, corpus: Path, options: list[str]) -> None:
    """SIGTERM the whole job once a third of the shards are done; the same command must finish it."""
    out = Path(args.work) / "fault_sigterm"
    shutil.rmtree(out, ignore_errors=True)
    command = engine_command(args.archive, corpus, out, args.workers, options)
    job = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    while len(manifest_lines(out)) < max(1, args.files // 3):
        time.sleep(0.05)
    job.send_signal(signal.SIGTERM)
    _, err = job.communicate()
    assert job.returncode == 143, err[-3000:]
    finished = len(manifest_lines(out))
    began = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    summary = check_folder(out, corpus)
    assert summary["parsed_now"] == summary["shards"] - finished and summary["lines"] == summary["records"] == args.sentences, summary
    print(
        f"fault, SIGTERM of the whole job: {finished} of {summary['shards']} shards were recorded; the rerun parsed the other "
        f"{summary['parsed_now']} in {time.perf_counter() - began:.1f} s: {summary['records']:,} records for {summary['lines']:,} lines, none twice"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--archive", required=True)
    parser.add_argument("--sentences", type=int, default=200_000)
    parser.add_argument("--files", type=int, default=16)
    parser.add_argument("--workers", type=int, default=os.cpu_count())
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--beam-size", type=int, default=None)
    parser.add_argument("--quantize", choices=["int8"], default=None)
    parser.add_argument("--work", default="/tmp/corpus_bench", help="Scratch folder (emptied first).")
    parser.add_argument("--no-speed", action="store_true", help="The fault runs only.")
    args = parser.parse_args()
    options = [*(["--beam-size", str(args.beam_size)] if args.beam_size else []), *(["--quantize", args.quantize] if args.quantize else [])]
    shutil.rmtree(args.work, ignore_errors=True)
    whole, corpus = write_corpus(Path(args.work), args.sentences, args.files)
    print(f"{time.strftime('%Y-%m-%d %H:%M')}: {args.sentences:,} EWT sentences in {args.files} files, {os.cpu_count()} cores", flush=True)
    if not args.no_speed:
        speed(args, whole, corpus, options)
    kill_worker_mid_shard(args, corpus, options)
    terminate_and_resume(args, corpus, options)


if __name__ == "__main__":
    main()
