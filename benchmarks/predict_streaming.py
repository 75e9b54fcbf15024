"""`toolkit predict` streams: on a 1 GB input it holds the memory it holds on a 1 MB one.

Writes one input file per ``--sizes`` (MB) by repeating the sentences of EWT's test split (its
``# text =`` lines), runs ``toolkit predict ARCHIVE FILE`` on each in a subprocess, reads its
first ``--records`` output records and stops it, and prints the process's peak resident memory
(``VmHWM``, Linux only) and the seconds to its first and last record read. If predict read its
input whole before answering, the 1 GB row would show the gigabyte and the wait.

    python benchmarks/predict_streaming.py --archive runs/ewt/model.tar.gz --predictor dependency
        [--sizes 1 1024] [--records 256] [--tmp /tmp] [-- any further `toolkit predict` options]

The files are written under ``--tmp`` and deleted afterwards.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from toolkit.params import data_root

MB = 1 << 20


def write_input(path: Path, sentences: list[str], megabytes: int) -> int:
    """*path* filled with *sentences*, over and over, to *megabytes*; the number of lines written."""
    block = "".join(f"{sentence}\n" for sentence in sentences)
    copies = -(-megabytes * MB // len(block.encode("utf-8")))
    with open(path, "w", encoding="utf-8") as handle:
        for _ in range(copies):
            handle.write(block)
    return copies * len(sentences)


def peak_memory_mb(pid: int) -> float:
    """The process's peak resident set (``VmHWM``) in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc: this benchmark needs Linux")


def run_predict(command: list[str], records: int, blocks: bool) -> tuple[float, float, float]:
    """Seconds to the first and to the *records*-th record, and peak memory (MB), of one predict run stopped there.

    A record is a line, or with *blocks* a block that ends in a blank line (CoNLL-U, PENMAN).
    """
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    first = seen = 0.0
    count = 0
    try:
        for line in process.stdout:
            if line == "\n" or not blocks:
                count += 1
                first = first or time.perf_counter() - start
            if count >= records:
                seen = time.perf_counter() - start
                break
        else:
            raise RuntimeError(f"predict ended after {count} records (exit code {process.wait()})")
        return first, seen, peak_memory_mb(process.pid)
    finally:
        process.kill()
        process.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--archive", required=True)
    parser.add_argument("--predictor", required=True, help="as `toolkit predict --predictor`")
    parser.add_argument("--data", default=None, help="default: DATA_ROOT/ud-english-ewt/en_ewt-ud-test.conllu")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 1024], help="input sizes in MB")
    parser.add_argument("--records", type=int, default=256, help="output records to read from each run")
    parser.add_argument("--tmp", default=tempfile.gettempdir())
    parser.add_argument("rest", nargs="*", help="further `toolkit predict` options, after --")
    args = parser.parse_args()

    conllu = Path(args.data or Path(data_root()) / "ud-english-ewt" / "en_ewt-ud-test.conllu")
    sentences = [line.removeprefix("# text = ").strip() for line in conllu.read_text(encoding="utf-8").splitlines() if line.startswith("# text = ")]
    blocks = args.predictor in ("dependency", "amr")  # they write blocks that end in a blank line; the others a line each
    options = ["--predictor", args.predictor, *args.rest]
    print(f"{len(sentences)} EWT test sentences repeated; {args.records} records read from each run; {os.path.basename(args.archive)} {' '.join(options)}\n")
    print(f"| input | lines | first record, s | record {args.records}, s | peak memory, MB |")
    print("| ---: | ---: | ---: | ---: | ---: |")
    with tempfile.TemporaryDirectory(dir=args.tmp) as folder:
        for size in args.sizes:
            path = Path(folder) / f"input_{size}mb.txt"
            lines = write_input(path, sentences, size)
            command = [sys.executable, "-m", "toolkit", "predict", args.archive, str(path), *options]
            first, last, memory = run_predict(command, args.records, blocks)
            print(f"| {size:,} MB | {lines:,} | {first:.1f} | {last:.1f} | {memory:,.0f} |", flush=True)
            path.unlink()


if __name__ == "__main__":
    main()
