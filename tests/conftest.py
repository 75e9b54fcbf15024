"""Shared fixtures: paths to the real data sets and small slices of them."""

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"


def data_root() -> Path:
    return Path(os.environ.get("TOOLKIT_DATA", REPO.parent / "shared" / "data"))


@pytest.fixture
def geo_slice(tmp_path) -> dict[str, Path]:
    """The first 40 GEO training pairs as train data and the next 10 as test data."""
    source = data_root() / "geo" / "train.txt"
    if not source.exists():
        pytest.skip(f"GEO data not found at {source}")
    lines = source.read_text(encoding="utf-8").splitlines()
    paths = {"train": tmp_path / "train.tsv", "test": tmp_path / "test.tsv"}
    paths["train"].write_text("\n".join(lines[:40]) + "\n", encoding="utf-8")
    paths["test"].write_text("\n".join(lines[40:50]) + "\n", encoding="utf-8")
    return paths


def run(monkeypatch, capsys, *args):
    """Run `toolkit ARGS` in-process; return (exit code, stdout, stderr)."""
    from toolkit.cli import main

    monkeypatch.setattr(sys, "argv", ["toolkit", *map(str, args)])
    try:
        main()
        code = 0
    except SystemExit as exit:
        code = exit.code or 0
    out, err = capsys.readouterr()
    return code, out, err


def train_archive(config: Path, directory: Path, train: Path, test: Path, *overrides: str) -> Path:
    """`toolkit train CONFIG` in-process with TRAIN and TEST set (for module-scoped fixtures); the archive's path."""
    from toolkit.cli import main

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TRAIN", str(train))
        patch.setenv("TEST", str(test))
        patch.setattr(sys, "argv", ["toolkit", "train", str(config), "-s", str(directory), "-f", *overrides])
        try:
            main()
        except SystemExit as exit:
            assert not exit.code, "training failed: see the captured output"
    return directory / "model.tar.gz"
