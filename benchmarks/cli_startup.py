"""How long ``toolkit --help`` takes to start with the example plugin pip-installed.

    python benchmarks/cli_startup.py [--runs 10]

Builds a throwaway virtual environment with ``examples/plugin`` installed (tests/plugin_env.py),
then times, alternately in one process, the median wall time of:

- ``python -c pass``: the interpreter alone, the floor;
- ``toolkit --help``: must stay under a second, since plugins load lazily (never for ``--help``);
- ``toolkit list Grammar``: imports every component and the plugin, the cost ``--help`` avoids;
- ``toolkit --help`` with the plugin imported eagerly (``python -c "import toolkit_example_plugin; ..."``),
  what eager entry-point loading would cost.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.plugin_env import make_venv

CLI = "from toolkit.cli import main; main()"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        python = str(make_venv(Path(directory) / "venv"))
        commands = {
            "python -c pass": [python, "-c", "pass"],
            "toolkit --help": [python, "-c", CLI, "--help"],
            "toolkit list Grammar": [python, "-c", CLI, "list", "Grammar"],
            "toolkit --help, plugin imported eagerly": [python, "-c", "import toolkit_example_plugin; " + CLI, "--help"],
        }
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.runs):
            for name, command in commands.items():
                start = time.perf_counter()
                subprocess.run(command, check=True, capture_output=True)
                times[name].append(time.perf_counter() - start)
    floor = statistics.median(times["python -c pass"])
    print(f"| command (example plugin installed, median of {args.runs}) | seconds | minus the interpreter |")
    print("|---|---|---|")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"| `{name}` | {median:.3f} | {median - floor:.3f} |")


if __name__ == "__main__":
    main()
