"""Bad input met by training runs: a replaced run interrupted, a time budget on a busy machine."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Callable
from pathlib import Path

from tests.bad_inputs.checks import RUN_OVERRIDES, snapshot, trained_run
from tests.bad_inputs.machinery import SEQ2SEQ, TSV, Case, Env
from toolkit.training.callbacks import TrainerCallback


@TrainerCallback.register("interrupt_for_a_test")
class Interrupt(TrainerCallback):
    """Ctrl-C (a ``KeyboardInterrupt``) or a real SIGTERM sent to this process, at the first batch of
    the epoch that ``$INTERRUPT_AT`` names (``1`` or ``1:SIGTERM``): set in the environment, not the
    config, so that ``--recover`` runs the same config without it.
    """

    def on_batch(self, trainer, run, epoch, batch_number, output) -> None:
        at, _, sent = os.environ.get("INTERRUPT_AT", "").partition(":")
        if at and (epoch, batch_number) == (int(at), 0):
            if sent in ("", "SIGINT"):
                raise KeyboardInterrupt
            os.kill(os.getpid(), getattr(signal, sent))


INTERRUPTIBLE = json.dumps({"trainer.callbacks": [{"type": "interrupt_for_a_test"}], "trainer.num_epochs": 3})


def interrupting(env: Env, epoch: int, sent: str = "SIGINT") -> str:
    """The override that makes a run interruptible, set to be interrupted in *epoch*."""
    env.monkeypatch.setenv("INTERRUPT_AT", f"{epoch}:{sent}")
    return INTERRUPTIBLE


def interrupted(env: Env, status: int, *args) -> str:
    """`toolkit train ARGS`, interrupted: its exit *status* and last line (the log's lines come before it)."""
    code, _, err = env.cli("train", *args)
    assert code == status and "Traceback" not in err, (code, err)
    return env.clean(err.strip().splitlines()[-1])


def force_interrupted_in_its_first_epoch(sent: str, status: int) -> Callable[[Env], str]:
    """`--force` over a finished run, interrupted in the new run's first epoch: every file of the old run is back."""

    def check(env: Env) -> str:
        run_dir = trained_run(env)
        before = snapshot(run_dir)
        message = interrupted(env, status, SEQ2SEQ, "-s", run_dir, "--force", "-o", RUN_OVERRIDES, "-o", interrupting(env, 0, sent))
        assert snapshot(run_dir) == before and not (run_dir / ".replaced").exists()
        return message

    return check


def force_interrupted_in_its_second_epoch(env: Env) -> str:
    """Once the new run has saved an epoch, it is the run in the directory: the old one is gone, `--recover` finishes the new one."""
    run_dir = trained_run(env)
    old_weights = (run_dir / "weights.safetensors").read_bytes()
    message = interrupted(env, 130, SEQ2SEQ, "-s", run_dir, "--force", "-o", RUN_OVERRIDES, "-o", interrupting(env, 1))
    assert not (run_dir / "weights.safetensors").exists() and not (run_dir / ".replaced").exists()
    assert json.loads((run_dir / "metrics_epoch_0.json").read_text())["epoch"] == 0
    env.monkeypatch.delenv("INTERRUPT_AT")
    code, _, err = env.cli("train", SEQ2SEQ, "-s", run_dir, "--recover", "-o", RUN_OVERRIDES, "-o", INTERRUPTIBLE)
    assert code == 0, err
    assert (run_dir / "weights.safetensors").read_bytes() != old_weights and (run_dir / "metrics_epoch_2.json").exists()
    return message


def killed_half_way(marker: str | None, moved_back: bool) -> Callable[[Env], None]:
    """A `--force` start killed (SIGKILL: nothing can be cleaned up) while the old run's files moved
    into `.replaced` (*marker* ``.moving``) or back out of it (``.restoring``, *moved_back*): the
    next start finishes the move, and takes none of the old run's files for the new run's.
    """

    def check(env: Env) -> None:
        run_dir = trained_run(env)
        before = snapshot(run_dir)
        aside = run_dir / ".replaced"
        aside.mkdir()
        (aside / marker).touch()
        names = sorted(path.name for path in run_dir.iterdir() if path.name not in (".replaced", ".lock"))
        for name in names[: len(names) // 2] if not moved_back else names:
            (run_dir / name).rename(aside / name)
        if moved_back:  # half of them were already back
            for name in names[: len(names) // 2]:
                (aside / name).rename(run_dir / name)
        code, _, err = env.cli("train", SEQ2SEQ, "-s", run_dir, "-o", RUN_OVERRIDES)
        assert code == 1 and "is not empty; use --recover" in err, err  # refused, after the old run is back
        assert snapshot(run_dir) == before and not aside.exists()

    return check


def killed_while_deleting_the_old_run(env: Env) -> None:
    """The new run saved its first epoch and was killed while it deleted the old one (renamed to
    `.replaced.tmp` first): the half-deleted old run is never put back, and `--recover` goes on.
    """
    run_dir = env.tmp / "run"
    env.seq2seq_env()
    code, _, err = env.cli("train", SEQ2SEQ, "-s", run_dir, "-o", RUN_OVERRIDES, "-o", interrupting(env, 1))
    assert code == 130, err
    half = run_dir / ".replaced.tmp"
    (half / "checkpoints").mkdir(parents=True)
    (half / "out.log").write_text("the old run's log, its checkpoints half deleted")
    env.monkeypatch.delenv("INTERRUPT_AT")
    code, _, err = env.cli("train", SEQ2SEQ, "-s", run_dir, "--recover", "-o", RUN_OVERRIDES, "-o", INTERRUPTIBLE)
    assert code == 0, err
    assert not half.exists() and "the old run's log" not in (run_dir / "out.log").read_text()


def budget_cuts_the_first_epoch(env: Env) -> None:
    """A budget shorter than the first epoch (as on a busy machine): the epoch stops after an optimizer step."""
    env.seq2seq_env(env.write({"train.tsv": TSV * 20}))
    code, _, err = env.cli("train", SEQ2SEQ, "-s", env.tmp / "run", "-o", RUN_OVERRIDES, "-o", '{"trainer.max_minutes": 0, "trainer.max_tokens": 128}')
    assert code == 0, err
    metrics = json.loads((env.tmp / "run" / "metrics.json").read_text())
    assert metrics["trained_batches"] == 1 < metrics["epoch_batches"] and (env.tmp / "run" / "model.tar.gz").exists()
    assert "the time budget of 0 minutes ran out in epoch 0, after batch 1 of" in (env.tmp / "run" / "out.log").read_text()


def budget_cuts_a_validation(env: Env) -> None:
    """The budget runs out while the first epoch is validated: the validation is left out, the run ends there."""
    from toolkit.training import validation

    env.seq2seq_env()
    real_predict = validation.predict

    def spent_while_decoding(*args):
        env.monkeypatch.setattr("time.monotonic", lambda: float("inf"))
        return real_predict(*args)

    env.monkeypatch.setattr(validation, "predict", spent_while_decoding)
    code, _, err = env.cli("train", SEQ2SEQ, "-s", env.tmp / "run", "-o", '{"trainer.max_minutes": 60, "trainer.num_epochs": 3}')
    assert code == 0, err
    assert [path.name for path in (env.tmp / "run").glob("metrics_epoch_*.json")] == ["metrics_epoch_0.json"]
    assert "validation_loss" not in json.loads((env.tmp / "run" / "metrics_epoch_0.json").read_text())
    assert "epoch 0 is not validated: the time budget of 60 minutes ran out" in (env.tmp / "run" / "out.log").read_text()


def budget_spent_before_recover(env: Env) -> None:
    """`--recover` of a run whose budget is spent (cut short in epoch 0) with the same budget: it trains
    nothing more, and writes the archive from the weights it kept.
    """
    env.seq2seq_env(env.write({"train.tsv": TSV * 20}))
    run_dir: Path = env.tmp / "run"
    budget = '{"trainer.max_minutes": 0, "trainer.max_tokens": 128}'
    assert env.cli("train", SEQ2SEQ, "-s", run_dir, "-o", RUN_OVERRIDES, "-o", budget)[0] == 0
    weights = (run_dir / "weights.safetensors").read_bytes()
    code, _, err = env.cli("train", SEQ2SEQ, "-s", run_dir, "--recover", "-o", RUN_OVERRIDES, "-o", budget)
    assert code == 0, err
    assert (run_dir / "weights.safetensors").read_bytes() == weights and "another epoch would overrun the time budget" in (run_dir / "out.log").read_text()


CASES: list[Case] = [
    Case(
        "force-ctrl-c-first-epoch",
        "`--force` over a finished run, then Ctrl-C in the new run's first epoch (the old run was deleted once the new model was built: "
        "an empty directory, exit 130 and nothing said)",
        "`toolkit train --force`, exit status 130; every file of the old run is as it was",
        "interrupted: no epoch was saved yet, so the run that --force replaces is back in run, as it was",
        force_interrupted_in_its_first_epoch("SIGINT", 130),
    ),
    Case(
        "force-sigterm-first-epoch",
        "the same with SIGTERM (a scheduler ending the job), which killed the process outright",
        "`toolkit train --force`, exit status 143; every file of the old run is as it was",
        "interrupted: no epoch was saved yet, so the run that --force replaces is back in run, as it was",
        force_interrupted_in_its_first_epoch("SIGTERM", 143),
    ),
    Case(
        "force-ctrl-c-second-epoch",
        "`--force` over a finished run, then Ctrl-C in the new run's second epoch",
        "`toolkit train --force`, exit status 130; the new run, with its first epoch saved, replaces the old one; `--recover` finishes it",
        "interrupted: run keeps the epochs saved so far; go on with the same command and --recover",
        force_interrupted_in_its_second_epoch,
    ),
    Case(
        "force-killed-moving-aside",
        "a `--force` start killed (SIGKILL) while it moved the old run aside: half its files in `.replaced`",
        "`toolkit train` (any start in that directory)",
        "the move is undone first, every file as it was (here the directory is then refused as not empty)",
        killed_half_way(".moving", moved_back=False),
        message=False,
    ),
    Case(
        "force-killed-moving-back",
        "a `--force` start killed while it put the old run back: half its files back, the new run's already deleted "
        "(the next start used to delete the files already back as the new run's)",
        "`toolkit train` (any start in that directory)",
        "the rest is put back first, every file as it was",
        killed_half_way(".restoring", moved_back=True),
        message=False,
    ),
    Case(
        "force-killed-deleting-old-run",
        "a new run killed while it deleted the run it replaced, after saving its first epoch (a half-deleted run could have been put back)",
        "`toolkit train --recover`",
        "the half-deleted run (renamed `.replaced.tmp` in one step before its deletion) is removed, never put back; the new run goes on",
        killed_while_deleting_the_old_run,
        message=False,
    ),
    Case(
        "budget-first-epoch",
        "`trainer.max_minutes` shorter than the first epoch (the README's 3-minute quickstart took 11.4 minutes: one epoch of 560 s, never cut)",
        "`toolkit train`",
        "the epoch stops at the first optimizer step past the budget, with a warning; `metrics.json` says `trained_batches` of "
        "`epoch_batches`; the archive holds those weights",
        budget_cuts_the_first_epoch,
        message=False,
    ),
    Case(
        "budget-validation",
        "the budget runs out while an epoch is validated (a validation ran to its end however long it took)",
        "`toolkit train`",
        "the validation is cut short and left out, with a warning; the epoch is kept unvalidated and the run ends",
        budget_cuts_a_validation,
        message=False,
    ),
    Case(
        "budget-spent-recover",
        "`--recover` with the same budget of a run the budget cut short",
        "`toolkit train --recover`",
        "nothing more is trained; the archive is written from the kept weights (with a larger `max_minutes`, the run goes on from the step "
        "where it stopped and ends bit-identical to one never stopped: `tests/test_training.py`)",
        budget_spent_before_recover,
        message=False,
    ),
]
