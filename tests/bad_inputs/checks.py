"""The checks that bad-input cases share: run a reader or a `toolkit` command on a damaged input, return its one line."""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import socket
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.bad_inputs.machinery import CONLLU, MB, SEQ2SEQ, TSV, WORDS, Env
from tests.conftest import FIXTURES, REPO
from tests.conftest import SEQ2SEQ_OVERRIDES as RUN_OVERRIDES
from toolkit.errors import DataError
from toolkit.files import DirectoryLock


def reader_error_with(env: Env, reader, files) -> str:
    path = env.write(files)
    with pytest.raises(DataError) as error:
        reader.read(path)
    return env.clean(str(error.value))


# ---- commands


def lcrs_config(env: Env) -> Path:
    """tiny_seq2seq.jsonnet with the lcrs_dfs tree codec as its grammar."""
    return env.write({"lcrs.jsonnet": f"(import '{SEQ2SEQ}') + {{ grammar: {{ type: 'lcrs_dfs' }} }}\n"})


def oracle_error(config: str | Callable[[Env], Path], files: dict[str, str | bytes], ext: dict[str, str] | None = None) -> Callable[[Env], str]:
    def check(env: Env) -> str:
        data = env.write(files)
        for name, value in (ext or {}).items():
            env.monkeypatch.setenv(name, value)
        path = config(env) if callable(config) else FIXTURES / config
        return env.cli_error("oracle", path, data)

    return check


def oracle_counts_unbalanced(env: Env) -> None:
    data = env.write({"data.tsv": TSV + "what state\t( state:t ( loc:t s0 )\n"})
    env.seq2seq_env()
    code, out, err = env.cli("oracle", lcrs_config(env), data)
    report = json.loads(out)
    assert code == 0, err
    assert (report["examples"], report["exact_round_trips"], report["oracle_errors"]) == (3, 2, 1)
    assert env.clean(report["first_errors"][0]) == "data.tsv:3: lisp logical form: unbalanced '(': 1 still open at the end of the input"


def train_error(*overrides: str, train: dict[str, str] | None = None, config: Callable[[Env], Path] | None = None) -> Callable[[Env], str]:
    def check(env: Env) -> str:
        env.seq2seq_env(env.write(train) if train else None)
        return env.cli_error("train", config(env) if config else SEQ2SEQ, "-s", env.tmp / "run", *(a for o in overrides for a in ("-o", o)))

    return check


def include_package_error(name: str, source: str | None = None) -> Callable[[Env], str]:
    """`toolkit list --include-package NAME`, with *source* as the module NAME.py on the path if given."""

    def check(env: Env) -> str:
        if source is not None:
            env.write({f"{name}.py": source})
            env.monkeypatch.syspath_prepend(str(env.tmp))
            env.monkeypatch.delitem(sys.modules, name, raising=False)
        return env.cli_error("list", "Grammar", "--include-package", name)

    return check


def serve_on_a_taken_port(env: Env) -> str:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        return env.cli_error("serve", env.tmp / "never-loaded.tar.gz", "--port", str(taken.getsockname()[1]))


def evaluate_error(files: dict[str, str | bytes]) -> Callable[[Env], str]:
    return lambda env: env.cli_error("evaluate", env.archive(), env.write(files), "--device", "cpu")


def predict_records(env: Env, data: bytes) -> list[dict]:
    path = env.write({"input.txt": data})
    code, out, err = env.cli("predict", env.archive(), path, "--device", "cpu")
    assert code == 0, err
    return [json.loads(line) for line in out.splitlines()]


QUESTIONS = b"what state border s0\n\nciti in s0\n"


def predict_like_clean(transform: Callable[[bytes], bytes]) -> Callable[[Env], None]:
    def check(env: Env) -> None:
        assert predict_records(env, transform(QUESTIONS)) == predict_records(env, QUESTIONS)

    return check


def predict_empty(env: Env) -> None:
    assert predict_records(env, b"") == []


def predict_invalid_utf8(env: Env) -> None:
    records = predict_records(env, b"what state border s0\n\xff\xfe border s0\n")
    assert len(records) == 2 and records[1]["question"] == "\ufffd\ufffd border s0" and "logical_form" in records[1]


def predict_huge_line(env: Env) -> str:
    records = predict_records(env, QUESTIONS + WORDS.encode() + b"\n" + QUESTIONS)
    assert len(records) == 7 and "logical_form" in records[0] and "logical_form" in records[6]
    assert records[3]["input"] == WORDS
    return records[3]["error"]


def predict_bad_json(env: Env) -> str:
    records = predict_records(env, b'what state border s0\n{"question": "citi in s0"\n{"question": 3}\n')
    assert len(records) == 3 and "logical_form" in records[0]
    assert records[2] == {"error": 'a JSON input line needs a "question" string', "input": '{"question": 3}'}
    return records[1]["error"]


def repacked_archive(env: Env, name: str, change: Callable[[str, bytes], bytes], manifest: bool = True, extra: dict[str, bytes] | None = None) -> Path:
    """A copy of the archive whose members' bytes went through *change(member name, bytes)*, plus *extra* members.

    With *manifest*, ``manifest.json`` is rewritten to match, as a genuine archive's would be;
    without it, the copy is a tampered one.
    """
    target = env.tmp / name
    with tarfile.open(env.archive()) as source:
        members = [(member, source.extractfile(member).read() if member.isfile() else None) for member in source.getmembers()]
    members = [(member, change(member.name, data) if data is not None else None) for member, data in members]
    for member_name, data in (extra or {}).items():
        members.append((tarfile.TarInfo(member_name), data))
    if manifest:
        digests = {member.name: hashlib.sha256(data).hexdigest() for member, data in members if data is not None and member.name != "manifest.json"}
        members = [(m, json.dumps({"sha256": digests}).encode() if m.name == "manifest.json" else data) for m, data in members]
    with tarfile.open(target, "w:gz") as out:
        for member, data in members:
            if data is None:
                out.addfile(member)
                continue
            member.size = len(data)
            out.addfile(member, io.BytesIO(data))
    return target


def damaged_archive(env: Env, name: str, damage: Callable[[bytearray], None]) -> Path:
    """A copy of the archive's bytes after *damage*."""
    data = bytearray(env.archive().read_bytes())
    damage(data)
    target = env.tmp / name
    target.write_bytes(bytes(data))
    return target


def flip(position: Callable[[int], int]) -> Callable[[bytearray], None]:
    def damage(data: bytearray) -> None:
        data[position(len(data))] ^= 0x10

    return damage


def zero_4k(data: bytearray) -> None:
    middle = len(data) // 2
    data[middle : middle + 4096] = bytes(min(4096, len(data) - middle))


def predict_with(env: Env, archive: Path) -> str:
    return env.cli_error("predict", archive, env.write({"input.txt": QUESTIONS}), "--device", "cpu")


# ---- a trained serialization directory, for --recover and the lock


def trained_run(env: Env) -> Path:
    """A copy of the seq2seq archive's serialization directory, with TRAIN and TEST as it was trained with."""
    run_dir = env.tmp / "run"
    shutil.copytree(env.archive().parent, run_dir)
    config = json.loads((run_dir / "config.json").read_text())
    env.monkeypatch.setenv("TRAIN", config["train_data_path"])
    env.monkeypatch.setenv("TEST", config["test_data_path"])
    return run_dir


def recover_error(damage: Callable[[Path], None] = lambda run_dir: None, *overrides: str, forget_first: bool = False) -> Callable[[Env], str]:
    """A check: `toolkit train --recover` on a trained directory after *damage*, with *overrides* after the run's own
    (or, with *forget_first*, without the run's own).
    """

    def check(env: Env) -> str:
        run_dir = trained_run(env)
        damage(run_dir)
        first = () if forget_first else ("-o", RUN_OVERRIDES)
        return env.cli_error("train", SEQ2SEQ, "-s", run_dir, "--recover", *first, *(a for o in overrides for a in ("-o", o)))

    return check


def state_file(run_dir: Path) -> Path:
    return run_dir / "checkpoints" / "training_state.pt"


def truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def force_into_other_files(env: Env) -> str:
    env.seq2seq_env()
    notes = env.tmp / "notes"
    notes.mkdir()
    (notes / "thesis.tex").write_text("months of work")
    message = env.cli_error("train", SEQ2SEQ, "-s", notes, "--force", "-o", RUN_OVERRIDES)
    assert [path.name for path in notes.iterdir()] == ["thesis.tex"]
    return message


def predict_over_input(env: Env) -> str:
    source = env.write({"input.txt": QUESTIONS})
    (env.tmp / "link.txt").symlink_to(source)
    message = env.cli_error("predict", env.archive(), env.tmp / "link.txt", "--device", "cpu", "-o", source)
    assert source.read_bytes() == QUESTIONS
    return message


def locked_run(option: str) -> Callable[[Env], str]:
    """A check: `toolkit train OPTION` into a directory that another run holds; nothing in it may change."""

    def check(env: Env) -> str:
        run_dir = trained_run(env)
        before = sorted(path.name for path in run_dir.rglob("*"))
        lock = DirectoryLock(run_dir)
        lock.acquire("hold the directory")
        try:
            message = env.cli_error("train", SEQ2SEQ, "-s", run_dir, option, "-o", RUN_OVERRIDES)
        finally:
            lock.release()
        assert sorted(path.name for path in run_dir.rglob("*")) == before
        return message

    return check


def early_config_error(override: str) -> Callable[[Env], str]:
    """A check: the config error comes before the first epoch (no epoch's metrics are written)."""

    def check(env: Env) -> str:
        env.seq2seq_env()
        message = env.cli_error("train", SEQ2SEQ, "-s", env.tmp / "run", "-o", override)
        assert not list((env.tmp / "run").glob("metrics_epoch_*.json"))
        return message

    return check


def evaluate_output_error(env: Env) -> str:
    code, out, err = env.cli("evaluate", env.archive(), env.write({"data.tsv": TSV}), "--device", "cpu", "--output-file", env.tmp / "missing" / "metrics.json")
    assert out == "", "the error comes before the decoding, not after the metrics"
    lines = err.strip().splitlines()
    assert code == 1 and len(lines) == 1 and "Traceback" not in err, err
    return env.clean(lines[0])


def predict_lines_end_in_newline_only(env: Env) -> None:
    r"""A bare \r, a form feed, U+0085, U+2028 and U+2029 stay inside their lines: one record per \n."""
    data = "what state\rborder s0\nciti\x0cin s0\nwhat\x85state\u2028border\u2029s0\n".encode()
    records = predict_records(env, data)
    assert len(records) == data.count(b"\n") == 3
    assert [record["question"] for record in records] == ["what state border s0", "citi in s0", "what state border s0"]


def unfinished_run(env: Env) -> Path:
    run = env.tmp / "run"
    (run / "checkpoints").mkdir(parents=True)
    (run / "vocabulary").mkdir()
    (run / "config.json").write_text("{}")
    return run


def newer_archive(env: Env) -> str:
    archive = repacked_archive(env, "newer.tar.gz", lambda name, data: b'{"toolkit_version": "99.0.0"}\n' if name == "version.json" else data)
    return env.cli_error("evaluate", archive, env.write({"data.tsv": TSV}), "--device", "cpu")


def unknown_key_archive(env: Env) -> str:
    def change(name: str, data: bytes) -> bytes:
        if name != "config.json":
            return data
        config = json.loads(data)
        config["model"]["encoder"]["rotary"] = True
        return json.dumps(config).encode()

    archive = repacked_archive(env, "future.tar.gz", change)
    return env.cli_error("predict", archive, env.write({"input.txt": QUESTIONS}), "--device", "cpu")


def ensemble_with(change: Callable[[dict], None]) -> Callable[[Env], str]:
    """``toolkit predict ARCHIVE --ensemble OTHER``, OTHER the archive with *change* made to its config (manifest to match)."""

    def check(env: Env) -> str:
        def changed(name: str, data: bytes) -> bytes:
            if name != "config.json":
                return data
            config = json.loads(data)
            change(config)
            return json.dumps(config).encode()

        other = repacked_archive(env, "other.tar.gz", changed)
        return env.cli_error("predict", env.archive(), env.write({"input.txt": QUESTIONS}), "--ensemble", other, "--device", "cpu")

    return check


def pretrained_archive(record: bytes) -> Callable[[Env], str]:
    """``toolkit predict`` on the seq2seq archive with *record* as its ``pretrained.json`` (manifest to match)."""

    def check(env: Env) -> str:
        archive = repacked_archive(env, "pretrained.tar.gz", lambda name, data: data, extra={"pretrained.json": record})
        return predict_with(env, archive)

    return check


MISSING_PRETRAINED = [{"module": "token_embedders.embedders.bert", "source": {"model_name": "/no/such/bert", "sha256": {"model.safetensors": "00"}}}]


# ---- faults that used to lose data, print a traceback or pass silently


@contextmanager
def small_disk(path: Path, size: str = "96k") -> Iterator[Path]:
    """A file system of *size* mounted at *path* (tmpfs), to fill up; skipped where mounting is not
    allowed, except in CI (``CI`` set), which runs as root and must run these cases.
    """
    path.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True, text=True)
    if mounted.returncode:
        message = f"cannot mount a small file system to fill ({mounted.stderr.strip() or 'mount failed'}): needs root"
        pytest.fail(message) if os.environ.get("CI") else pytest.skip(message)
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def snapshot(directory: Path) -> dict[str, bytes]:
    """Every file below *directory* and its bytes (the lock file, which holds the last owner's process id, left out)."""
    return {str(path.relative_to(directory)): path.read_bytes() for path in sorted(directory.rglob("*")) if path.is_file() and path.name != DirectoryLock.NAME}


def force_fails_and_keeps_the_run(*overrides: str, train: dict[str, str] | None = None) -> Callable[[Env], str]:
    """A check: `toolkit train --force` over a finished run fails before training; every file of the run is as it was."""

    def check(env: Env) -> str:
        run_dir = trained_run(env)
        if train:
            env.monkeypatch.setenv("TRAIN", str(env.write(train)))
        before = snapshot(run_dir)
        message = env.cli_error("train", SEQ2SEQ, "-s", run_dir, "--force", "-o", RUN_OVERRIDES, *(a for o in overrides for a in ("-o", o)))
        assert snapshot(run_dir) == before and not (run_dir / ".replaced").exists()
        return message

    return check


def force_over_foreign_files(env: Env) -> str:
    run_dir = trained_run(env)
    (run_dir / "train.tsv").write_text(TSV)
    (run_dir / "notes").mkdir()
    (run_dir / "notes" / "ideas.txt").write_text("months of work")
    env.monkeypatch.setenv("TRAIN", str(run_dir / "train.tsv"))
    before = snapshot(run_dir)
    message = env.cli_error("train", SEQ2SEQ, "-s", run_dir, "--force", "-o", RUN_OVERRIDES)
    assert snapshot(run_dir) == before
    return message


def force_after_an_interrupted_force(env: Env) -> None:
    """A `--force` start killed while it validated left the previous run in `.replaced`: the next start puts it back first."""
    run_dir = trained_run(env)
    before = snapshot(run_dir)
    aside = run_dir / ".replaced"
    aside.mkdir()
    for path in list(run_dir.iterdir()):
        if path.name not in (".replaced", DirectoryLock.NAME):
            path.rename(aside / path.name)
    (run_dir / "out.log").write_text("the killed start's log")
    message = env.cli_error("train", SEQ2SEQ, "-s", run_dir, "-o", RUN_OVERRIDES)  # no --force: refused, after the run is back
    assert "is not empty; use --recover" in message
    assert snapshot(run_dir) == before and not aside.exists()


def force_replaces_a_valid_run(env: Env) -> None:
    run_dir = trained_run(env)
    old_weights = (run_dir / "weights.safetensors").read_bytes()
    code, _, err = env.cli("train", SEQ2SEQ, "-s", run_dir, "--force", "-o", RUN_OVERRIDES, "-o", '{"random_seed": 99}')
    assert code == 0, err
    assert (run_dir / "weights.safetensors").read_bytes() != old_weights and not (run_dir / ".replaced").exists()
    assert json.loads((run_dir / "config.json").read_text())["random_seed"] == 99


def predict_deep_json(env: Env) -> str:
    deep = '{"question": ' + "[" * 1500 + "]" * 1500 + "}"
    records = predict_records(env, b"what state border s0\n" + deep.encode() + b"\nciti in s0\n")
    assert len(records) == 3 and "logical_form" in records[0] and "logical_form" in records[2]
    assert records[1]["input"] == deep
    return records[1]["error"]


def dependency_deep_json(env: Env) -> None:
    archive = env.request.getfixturevalue("dependency_archive")
    deep = '{"tokens": ' + "[" * 1500 + "]" * 1500 + "}"
    path = env.write({"input.txt": "Hi there .\n" + deep + "\nGo home .\n"})
    code, out, err = env.cli("predict", archive, path, "--device", "cpu", "--predictor", "dependency")
    assert code == 0 and "Traceback" not in err, err
    blocks = [block for block in out.split("\n\n") if block.strip()]
    assert len(blocks) == 3 and "# error = " in blocks[1] and "nested too deeply" in blocks[1], blocks[1]
    assert all(any(line[:1].isdigit() for line in block.splitlines()) for block in (blocks[0], blocks[2]))


def archive_config_not_an_object(env: Env) -> str:
    messages = []
    for value in ("[1, 2]", '"str"', "null", "42", "[" * 1500 + "]" * 1500):
        archive = repacked_archive(env, "odd.tar.gz", lambda name, data, value=value: value.encode() if name == "config.json" else data)
        messages.append(predict_with(env, archive))
    assert messages[1:] == [
        "error: odd.tar.gz: corrupt config.json: a string where an object belongs",
        "error: odd.tar.gz: corrupt config.json: null where an object belongs",
        "error: odd.tar.gz: corrupt config.json: a number where an object belongs",
        "error: odd.tar.gz: corrupt config.json: not JSON (JSON nested too deeply to read)",
    ]
    return messages[0]


def archive_without_manifest(env: Env) -> str:
    """manifest.json deleted and the weights zeroed: the archive used to load and predict."""
    target = env.tmp / "stripped.tar.gz"
    with tarfile.open(env.archive()) as source, tarfile.open(target, "w:gz") as out:
        for member in source.getmembers():
            if member.name == "manifest.json":
                continue
            data = source.extractfile(member).read() if member.isfile() else None
            if member.name == "weights.safetensors":
                data = data[:16] + bytes(len(data) - 16)
            out.addfile(member, io.BytesIO(data) if data is not None else None)
    return predict_with(env, target)


def archive_broken_member(env: Env) -> str:
    """A member that passes the manifest (it was rewritten to match) but cannot be read: named by archive and member."""
    archive = repacked_archive(env, "torn.tar.gz", lambda name, data: data[:-1] if name == "vocabulary/tokens.txt" else data)
    return predict_with(env, archive)


def archive_big_unlisted_member(env: Env) -> str:
    """A 64 MB member the manifest does not list (a few KB compressed): refused before a byte of it is written."""
    extracted: list[str] = []
    original = tarfile.TarFile.extract

    def spy(self, member, *args, **kwargs):
        extracted.append(member.name if isinstance(member, tarfile.TarInfo) else member)
        return original(self, member, *args, **kwargs)

    archive = repacked_archive(env, "bomb.tar.gz", lambda name, data: data, manifest=False, extra={"big.bin": bytes(64 * MB)})
    env.monkeypatch.setattr(tarfile.TarFile, "extract", spy)
    message = predict_with(env, archive)
    assert "big.bin" not in extracted and extracted[0] == "manifest.json"
    return message


def archive_member_of_another_size(env: Env) -> str:
    """A member whose size differs from the one the manifest records: refused from its header, before its bytes."""
    source = env.archive()
    with tarfile.open(source) as tar:
        manifest = json.loads(tar.extractfile("manifest.json").read())
    assert manifest["size"]["weights.safetensors"] > 0, "archives record their members' sizes"
    archive = repacked_archive(env, "resized.tar.gz", lambda name, data: data + bytes(4096) if name == "weights.safetensors" else data, manifest=False)
    return predict_with(env, archive)


def archive_with_full_tmpdir(env: Env) -> str:
    with small_disk(env.tmp / "tmp", "16k") as tmp:
        env.monkeypatch.setattr(tempfile, "tempdir", str(tmp))
        return predict_with(env, env.archive())


def train_on_a_full_disk(env: Env) -> str:
    env.seq2seq_env()
    with small_disk(env.tmp / "disk", "96k") as disk:
        message = env.cli_error("train", SEQ2SEQ, "-s", disk / "run", "-o", RUN_OVERRIDES)
        assert not [path for path in disk.rglob("*.tmp")], "a failed write leaves no temporary file behind"
        return message


def predict_to_a_full_disk(env: Env) -> str:
    return env.cli_error("predict", env.archive(), env.write({"input.txt": QUESTIONS * 200}), "--device", "cpu", "-o", "/dev/full")


def evaluate_to_a_full_disk(env: Env) -> str:
    return env.cli_error("evaluate", env.archive(), env.write({"data.tsv": TSV}), "--device", "cpu", "--output-file", "/dev/full")


def toolkit_process(*args: str, stdout=subprocess.PIPE, input_path: Path | None = None) -> subprocess.Popen:
    """`python -m toolkit ARGS` in a process of its own, for what only a real pipe or file shows."""
    return subprocess.Popen([sys.executable, "-m", "toolkit", *args], stdout=stdout, stderr=subprocess.PIPE, cwd=REPO)


def predict_into_head(env: Env) -> None:
    """`toolkit predict ... | head -1`: exit status 1 and no message, because click turned the broken pipe into exit 1."""
    process = toolkit_process("predict", str(env.archive()), str(env.write({"input.txt": QUESTIONS * 500})), "--device", "cpu")
    first = process.stdout.readline()
    process.stdout.close()
    err = process.stderr.read().decode()
    assert process.wait(timeout=120) == 0 and err == "", err
    assert json.loads(first)["question"] == "what state border s0"


def predict_to_full_stdout(env: Env) -> str:
    with open("/dev/full", "wb") as full:
        process = toolkit_process("predict", str(env.archive()), str(env.write({"input.txt": QUESTIONS * 500})), "--device", "cpu", stdout=full)
        err = process.stderr.read().decode()
    lines = err.strip().splitlines()
    assert process.wait(timeout=120) == 1 and len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def predict_utf16(encoding: str) -> Callable[[Env], str]:
    def check(env: Env) -> str:
        path = env.write({"input.txt": "\ufeffwhat state border s0\nciti in s0\n".encode(encoding)})
        return env.cli_error("predict", env.archive(), path, "--device", "cpu")

    return check


def predict_nul_line(env: Env) -> str:
    records = predict_records(env, b"what state border s0\nciti\x00 in s0\nciti in s0\n")
    assert len(records) == 3 and "logical_form" in records[0] and "logical_form" in records[2]
    return records[1]["error"]


def evaluate_too_long(env: Env) -> str:
    """A gold sentence longer than the dependency model decodes whole: warned, and counted in the output."""
    archive = env.request.getfixturevalue("dependency_archive")
    env.capsys.readouterr()
    rows = [f"{i}\tw{i}\tw\tNOUN\tNN\t_\t{0 if i == 1 else 1}\t{'root' if i == 1 else 'dep'}\t_\t_" for i in range(1, 601)]
    data = env.write({"data.conllu": CONLLU + "\n".join(rows) + "\n\n"})
    caplog = env.request.getfixturevalue("caplog")
    caplog.clear()
    code, out, err = env.cli("evaluate", archive, data, "--device", "cpu")
    scores = json.loads(out)
    assert code == 0 and scores["too_long"] == 1 and scores["examples"] == 3, (out, err)
    [warning] = [record.getMessage() for record in caplog.records if record.levelname == "WARNING"]
    return env.clean(warning)


def override_error(value: Callable[[Env], str]) -> Callable[[Env], str]:
    def check(env: Env) -> str:
        env.seq2seq_env()
        return env.cli_error("train", SEQ2SEQ, "-s", env.tmp / "run", "-o", value(env))

    return check


PARALLEL_CONFIG = "{ dataset_reader: { type: 'parallel_text', source_language: 'de', target_language: 'en' } }\n"
