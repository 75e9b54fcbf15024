"""Output files that must never be torn, interleaved or written over what is read; numeric options out of range; names of installed models."""

from __future__ import annotations

import resource
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import toolkit
from tests.bad_inputs.checks import QUESTIONS, trained_run
from tests.bad_inputs.machinery import TSV, Case, Env
from tests.waiting import wait_for

LINES = QUESTIONS.replace(b"\n\n", b"\n") * 10  # 20 questions, in batches of 4
EARLIER = "the earlier output\n"


def usage_error(*args: str) -> Callable[[Env], str]:
    """A check: `toolkit ARGS` is click's usage error (exit status 2, no traceback); its `Error:` line."""

    def check(env: Env) -> str:
        code, out, err = env.cli(*args)
        assert code == 2 and out == "" and "Traceback" not in err, (code, err)
        return err.strip().splitlines()[-1]

    return check


def predicting(env: Env, during: Callable[[int], None]) -> None:
    """Make `toolkit predict` call ``during(records written so far)`` after each batch it writes."""
    load = toolkit.load_predictor

    def load_predictor(*args, **kwargs):
        runner = load(*args, **kwargs)
        predict_lines = runner.predict_lines

        def lines_with_a_pause(lines, batch_size: int) -> Iterator[str]:
            for number, line in enumerate(predict_lines(lines, batch_size), start=1):
                yield line
                if number % batch_size == 0:
                    during(number)

        runner.predict_lines = lines_with_a_pause
        return runner

    env.monkeypatch.setattr(toolkit, "load_predictor", load_predictor)


def predict_into(env: Env, output: Path) -> tuple[int, str]:
    code, _, err = env.cli("predict", env.archive(), env.tmp / "input.txt", "--device", "cpu", "--batch-size", "4", "-o", output)
    return code, err


def two_predicts_at_once(env: Env) -> None:
    """The second `predict -o same.jsonl` runs whole while the first is writing its second batch."""
    env.write({"input.txt": LINES})
    clean = env.tmp / "clean.jsonl"
    assert predict_into(env, clean)[0] == 0
    same = env.write({"same.jsonl": EARLIER})
    seen: list[str] = []

    def second_run(written: int) -> None:
        if written == 4 and not seen:
            seen.append(same.read_text())  # a reader while the first writes: the earlier file
            seen.append(predict_into(env, same))
            seen.append(same.read_text())  # the second run's whole output

    predicting(env, second_run)
    code, err = predict_into(env, same)
    assert code == 0, err
    assert seen[0] == EARLIER and seen[1][0] == 0 and seen[2] == clean.read_text(), seen
    assert same.read_text() == clean.read_text() and len(same.read_text().splitlines()) == LINES.count(b"\n")
    assert sorted(path.name for path in env.tmp.iterdir()) == ["clean.jsonl", "input.txt", "same.jsonl"], "no temporary file is left"


def predict_interrupted(env: Env) -> None:
    env.write({"input.txt": LINES})
    out = env.write({"out.jsonl": EARLIER})

    def interrupt(written: int) -> None:
        raise KeyboardInterrupt

    predicting(env, interrupt)
    code, err = predict_into(env, out)
    assert code == 130 and err.strip() == "interrupted", err
    assert out.read_text() == EARLIER
    assert sorted(path.name for path in env.tmp.iterdir()) == ["input.txt", "out.jsonl"], "no temporary file is left"


def two_packages_at_once(env: Env) -> None:
    """The second `package` into one folder runs whole while the first writes its wheel: they shared `WHEEL.tmp`."""
    import toolkit.packaging

    dist = env.tmp / "dist"
    command = ("package", env.archive(), "-o", dist, "--name", "geo_parser", "--version", "1.0.0")
    assert env.cli(*command)[0] == 0
    wheel = dist / "geo_parser-1.0.0-py3-none-any.whl"
    clean = wheel.read_bytes()
    wheel.unlink()
    write_wheel, seconds = toolkit.packaging.write_wheel, []

    def write_and_meanwhile_package(target: Path, members: dict) -> None:
        write_wheel(target, members)
        if not seconds:
            seconds.append(None)  # the second run's own write_wheel runs no third
            seconds[0] = env.cli(*command)

    env.monkeypatch.setattr(toolkit.packaging, "write_wheel", write_and_meanwhile_package)
    code, _, err = env.cli(*command)
    assert code == 0 and seconds[0][0] == 0, (err, seconds)
    assert wheel.read_bytes() == clean and zipfile.ZipFile(wheel).testzip() is None
    assert [path.name for path in dist.iterdir()] == [wheel.name], "no temporary file is left"


def predict_over_run_weights(env: Env) -> str:
    run_dir = trained_run(env)
    weights = (run_dir / "weights.safetensors").read_bytes()
    message = env.cli_error("predict", run_dir, env.write({"input.txt": QUESTIONS}), "--device", "cpu", "-o", run_dir / "weights.safetensors")
    assert (run_dir / "weights.safetensors").read_bytes() == weights
    return message


def evaluate_over_ensemble_member(env: Env) -> str:
    other = env.tmp / "other.tar.gz"
    shutil.copyfile(env.archive(), other)
    (env.tmp / "metrics.json").symlink_to(other)
    data = env.write({"data.tsv": TSV})
    message = env.cli_error("evaluate", env.archive(), data, "--ensemble", other, "--device", "cpu", "--output-file", env.tmp / "metrics.json")
    assert other.read_bytes() == env.archive().read_bytes()
    return message


def visualize_into_run_vocabulary(env: Env) -> str:
    run_dir = trained_run(env)
    before = sorted(path.name for path in (run_dir / "vocabulary").iterdir())
    message = env.cli_error("visualize", run_dir, env.write({"input.txt": QUESTIONS}), "--device", "cpu", "-o", run_dir / "vocabulary")
    assert sorted(path.name for path in (run_dir / "vocabulary").iterdir()) == before
    return message


def serve_past_open_files(env: Env) -> str:
    """`ulimit -n 1024`, as on most machines: 5,000 connections cannot be held."""
    limits = resource.getrlimit(resource.RLIMIT_NOFILE)
    env.monkeypatch.setattr(resource, "getrlimit", lambda which: (1024, limits[1]) if which == resource.RLIMIT_NOFILE else limits)
    return usage_error("serve", "model.tar.gz", "--max-connections", "5000")(env)


def install_model(env: Env, name: str) -> None:
    """A model package *name* installed on the path, as pip lays one out (its archive is never read here)."""
    site = env.tmp / "site-packages"
    (site / name).mkdir(parents=True)
    (site / name / "__init__.py").write_text("")
    info = site / f"{name}-1.0.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0.0\n")
    (info / "entry_points.txt").write_text(f"[parsing_toolkit.models]\n{name} = {name}\n")
    env.monkeypatch.syspath_prepend(str(site))


def installed_name(*command: str) -> Callable[[Env], str]:
    """A check: `toolkit COMMAND...` with the model `ewt_quick` installed."""

    def check(env: Env) -> str:
        install_model(env, "ewt_quick")
        env.monkeypatch.chdir(env.tmp)
        env.write({"input.txt": QUESTIONS, "data.tsv": TSV})
        return env.cli_error(*command)

    return check


def killed_predict_leftover(env: Env) -> None:
    """`predict -o out.jsonl` killed with SIGKILL as it writes leaves its temporary file; the next run removes it."""
    env.write({"input.txt": LINES * 100})
    out = env.tmp / "out.jsonl"
    command = [sys.executable, "-m", "toolkit", "predict", str(env.archive()), str(env.tmp / "input.txt"), "--device", "cpu", "-o", str(out)]
    job = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: list(env.tmp.glob(".out.jsonl.*.tmp")), "the temporary output")
    finally:
        job.kill()
        job.wait()
    assert list(env.tmp.glob(".out.jsonl.*.tmp")), "a killed writer leaves its temporary file"
    code, err = predict_into(env, out)
    assert code == 0, err
    assert not list(env.tmp.glob(".out.jsonl.*")) and out.read_text().count("\n") == 100 * LINES.count(b"\n")


def dead_evaluate_leftover(env: Env) -> None:
    """A dead writer's temporary file of `metrics.json` (one nobody holds) is removed by the next `evaluate --output-file`."""
    dead = env.write({".metrics.json.0123abcd.tmp": "what a killed run wrote", ".other.json.0123abcd.tmp": "another output's"})
    code, _, err = env.cli("evaluate", env.archive(), env.write({"data.tsv": TSV}), "--device", "cpu", "--output-file", env.tmp / "metrics.json")
    assert code == 0, err
    assert not dead.exists() and (env.tmp / ".other.json.0123abcd.tmp").exists() and (env.tmp / "metrics.json").exists()


def live_writer_kept(env: Env) -> None:
    """A temporary file its writer still holds survives another writer of the same output, which writes whole."""
    from toolkit.files import temporary_beside

    env.write({"input.txt": LINES})
    out = env.tmp / "out.jsonl"
    with temporary_beside(out) as live:
        live.write_text("the first writer's half")
        code, err = predict_into(env, out)
        assert code == 0, err
        assert live.read_text() == "the first writer's half" and out.read_text().count("\n") == LINES.count(b"\n")
        live.unlink()


def serve_option(*args: str) -> Callable[[Env], str]:
    return usage_error("serve", "model.tar.gz", *args)


def serve_from_python(**options: float) -> Callable[[Env], str]:
    """A check: ``toolkit.serving.server.serve`` called with *options* (before anything is served); its error."""

    def check(env: Env) -> str:
        from toolkit.errors import ToolkitError
        from toolkit.serving.server import serve

        with pytest.raises(ToolkitError) as error:
            serve(None, "semantic_parser", "model.tar.gz", None, 1, 0.0, **options)
        return str(error.value)

    return check


def too_big(option: str) -> str:
    return f"`{option} 99999999999999999999`"


CASES: list[Case] = [
    Case(
        "output-two-predicts",
        "two `toolkit predict ... -o same.jsonl` at once, the second run whole while the first writes (they left 306 lines for 300 inputs, 5 torn)",
        "`toolkit predict` (seq2seq archive), twice",
        "both exit 0; `same.jsonl` is the earlier file while they write, then one run's whole output (each writes a hidden temporary file and renames it into place)",
        two_predicts_at_once,
        message=False,
    ),
    Case(
        "output-predict-interrupted",
        "Ctrl-C while `predict -o out.jsonl` writes over an earlier `out.jsonl` (it was left holding the first batches)",
        "`toolkit predict` (seq2seq archive)",
        "exit 130, `interrupted`; `out.jsonl` is the earlier file, byte for byte; no temporary file is left",
        predict_interrupted,
        message=False,
    ),
    Case(
        "output-two-packages",
        "two `toolkit package -o dist` at once, the second run whole while the first writes (they shared one `WHEEL.tmp`: the first failed, or renamed a torn wheel)",
        "`toolkit package` (seq2seq archive), twice",
        "both exit 0; the wheel is whole, the same bytes as one run's; no temporary file is left",
        two_packages_at_once,
        message=False,
    ),
    Case(
        "output-over-run-weights",
        "`predict RUN IN -o RUN/weights.safetensors` (the weights it loaded were overwritten with 182 bytes)",
        "`toolkit predict` (a run's folder); the weights are unchanged",
        "error: the output file run/weights.safetensors is part of the archive run: writing it would destroy the archive; name another file",
        predict_over_run_weights,
    ),
    Case(
        "output-over-ensemble-member",
        "`evaluate --ensemble other.tar.gz --output-file metrics.json`, `metrics.json` a link to `other.tar.gz`",
        "`toolkit evaluate` (seq2seq archive), before decoding; `other.tar.gz` is unchanged",
        "error: the output file metrics.json is the archive other.tar.gz: writing it would destroy the archive; name another file",
        evaluate_over_ensemble_member,
    ),
    Case(
        "output-into-run-vocabulary",
        "`visualize RUN IN -o RUN/vocabulary` (pictures written into the vocabulary the run loads)",
        "`toolkit visualize` (a run's folder), before loading; the vocabulary is unchanged",
        "error: the output folder run/vocabulary is part of the archive run: writing it would destroy the archive; name another folder",
        visualize_into_run_vocabulary,
    ),
    Case(
        "serve-max-wait-huge",
        "`--max-wait-ms 1e308` (accepted, and no request was ever answered)",
        "`toolkit serve`",
        "Error: Invalid value for '--max-wait-ms': 1e+308 is not in the range 0<=x<=10000.",
        usage_error("serve", "model.tar.gz", "--max-wait-ms", "1e308"),
    ),
    Case(
        "serve-client-timeout-nan",
        "`--client-timeout nan` (accepted: `nan` passed every range check, since every comparison with it is false)",
        "`toolkit serve`",
        "Error: Invalid value for '--client-timeout': 'nan' is not a number",
        usage_error("serve", "model.tar.gz", "--client-timeout", "nan"),
    ),
    Case(
        "serve-client-timeout-tiny",
        "`--client-timeout 1e-300` (accepted, and the server then dropped some requests with no response)",
        "`toolkit serve`",
        "Error: Invalid value for '--client-timeout': 1e-300 is not in the range 0.5<=x<=3600.",
        serve_option("--client-timeout", "1e-300"),
    ),
    Case(
        "serve-graceful-timeout-tiny",
        "`--graceful-timeout 0.001` (every request read when SIGTERM came was cancelled at once)",
        "`toolkit serve`",
        "Error: Invalid value for '--graceful-timeout': 0.001 is not in the range 0.5<=x<=3600.",
        serve_option("--graceful-timeout", "0.001"),
    ),
    Case(
        "serve-client-timeout-zero",
        "`--client-timeout 0`",
        "`toolkit serve`",
        "Error: Invalid value for '--client-timeout': 0.0 is not in the range 0.5<=x<=3600.",
        serve_option("--client-timeout", "0"),
    ),
    Case(
        "serve-timeout-python",
        "`serve(..., client_timeout=1e-300)` from Python",
        "`toolkit.serving.server.serve`",
        "client_timeout must be from 0.5 to 3,600 seconds, not 1e-300",
        serve_from_python(client_timeout=1e-300),
    ),
    Case(
        "output-killed-leftover",
        "`predict -o out.jsonl` killed with SIGKILL while it writes (its `.out.jsonl.<hex>.tmp` stayed for good), then run again",
        "`toolkit predict` (seq2seq archive), in a subprocess, then again",
        "the second run removes the dead writer's temporary file and writes `out.jsonl` whole",
        killed_predict_leftover,
        message=False,
    ),
    Case(
        "output-dead-leftover-evaluate",
        "a temporary file of `metrics.json` that a killed `evaluate --output-file` left, and one of another output",
        "`toolkit evaluate` (seq2seq archive)",
        "the dead writer's file is removed (no process holds it); the other output's is left alone",
        dead_evaluate_leftover,
        message=False,
    ),
    Case(
        "output-live-writer-kept",
        "`predict -o out.jsonl` while another writer of `out.jsonl` is still writing its temporary file",
        "`toolkit predict` (seq2seq archive)",
        "the live writer's file is kept (it holds a lock on it); this run writes `out.jsonl` whole",
        live_writer_kept,
        message=False,
    ),
    Case(
        "serve-connections-past-ulimit",
        "`--max-connections 5000` under `ulimit -n 1024` (accepted, though past the limit `accept` fails and no 503 can be sent)",
        "`toolkit serve`",
        "Error: Invalid value for '--max-connections': 5000 connections need more files open than this process may have (1024, ulimit -n): at most 960, or raise ulimit -n",
        serve_past_open_files,
    ),
    Case(
        "predict-batch-size-huge",
        f"{too_big('--batch-size')} (`ValueError: Stop argument for islice()`)",
        "`toolkit predict`",
        "Error: Invalid value for '--batch-size': 99999999999999999999 is not in the range 1<=x<=4096.",
        usage_error("predict", "model.tar.gz", "input.txt", "--batch-size", "99999999999999999999"),
    ),
    Case(
        "visualize-max-sentences-huge",
        f"{too_big('--max-sentences')} (`ValueError: Stop argument for islice()`)",
        "`toolkit visualize`",
        "Error: Invalid value for '--max-sentences': 99999999999999999999 is not in the range 1<=x<=1000.",
        usage_error("visualize", "model.tar.gz", "input.txt", "-o", "pictures", "--max-sentences", "99999999999999999999"),
    ),
    Case(
        "serve-batch-size-huge",
        f"{too_big('--batch-size')} (accepted: a batch the queue of 4,096 inputs can never fill waits out `--max-wait-ms` every time)",
        "`toolkit serve`",
        "Error: Invalid value for '--batch-size': 99999999999999999999 is not in the range 1<=x<=4096.",
        usage_error("serve", "model.tar.gz", "--batch-size", "99999999999999999999"),
    ),
    Case(
        "installed-name-dash",
        "`ewt-quick`, the installed model being `ewt_quick` (it said only `archive not found: ewt-quick`)",
        "`toolkit predict`",
        "error: archive not found: ewt-quick is no file or folder here, nor the name of an installed model; did you mean ewt_quick?",
        installed_name("predict", "ewt-quick", "input.txt", "--device", "cpu"),
    ),
    Case(
        "installed-name-case",
        "`EWT_Quick`, the installed model being `ewt_quick`",
        "`toolkit evaluate`",
        "error: archive not found: EWT_Quick is no file or folder here, nor the name of an installed model; did you mean ewt_quick?",
        installed_name("evaluate", "EWT_Quick", "data.tsv", "--device", "cpu"),
    ),
    Case(
        "installed-name-typo",
        "`ewt_quik`, the installed model being `ewt_quick` (it listed every installed model)",
        "`toolkit serve`",
        "error: archive not found: ewt_quik is no file or folder here, nor the name of an installed model; did you mean ewt_quick?",
        installed_name("serve", "ewt_quik", "--port", "0", "--device", "cpu"),
    ),
]
