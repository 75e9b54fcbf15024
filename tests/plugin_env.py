"""A throwaway virtual environment with the example plugin pip-installed (for tests and benchmarks/cli_startup.py).

Installing torch and the toolkit again would take minutes, so the new environment sees the
current one's packages through a ``.pth`` file (the toolkit included, as it is installed here);
only the plugin is installed into it, with pip, as a user would.
"""

import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PLUGIN = REPO / "examples" / "plugin"


def make_venv(directory: Path, with_plugin: bool = True) -> Path:
    """Create the environment in *directory*; return its Python."""
    subprocess.run([sys.executable, "-m", "venv", str(directory)], check=True, capture_output=True)
    python = directory / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")
    site_packages = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], check=True, capture_output=True, text=True
    ).stdout.strip()
    parent = sysconfig.get_paths()["purelib"]
    Path(site_packages, "_parent_environment.pth").write_text(f"import site; site.addsitedir({parent!r})\n")
    if with_plugin:  # from a copy, so the build leaves no egg-info in the source tree; --no-deps: the toolkit is visible
        source = shutil.copytree(PLUGIN, directory / "plugin-source", ignore=shutil.ignore_patterns("build", "*.egg-info"))
        subprocess.run([str(python), "-m", "pip", "install", "--no-deps", "--quiet", str(source)], check=True, capture_output=True)
    return python
