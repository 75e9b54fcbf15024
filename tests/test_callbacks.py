"""Trainer callbacks: the hooks' order, stopping, state across --recover, config errors, built-ins from the trainer's keys."""

import json
from typing import ClassVar

import pytest
import torch

from tests.conftest import FIXTURES
from toolkit.data.example import Example
from toolkit.errors import ConfigurationError, TrainingError
from toolkit.params import Params
from toolkit.training.callbacks import (
    EarlyStopping,
    LearningCurves,
    ModelFlopsUtilization,
    TensorBoardScalars,
    TimeBudget,
    TrainerCallback,
    TrainingState,
)
from toolkit.training.schedulers import ConstantScheduler, InverseSqrtScheduler
from toolkit.training.train import train_model
from toolkit.training.trainer import GradientDescentTrainer, Trainer


def params(geo_slice, **overrides) -> Params:
    ext_vars = {"TRAIN": str(geo_slice["train"]), "TEST": str(geo_slice["test"])}
    return Params.from_file(FIXTURES / "tiny_seq2seq.jsonnet", overrides={"test_data_path": None, **overrides}, ext_vars=ext_vars)


@TrainerCallback.register("test_recorder")
class Recorder(TrainerCallback):
    """Records every hook in :attr:`events` (the instance is built inside train_model) and counts epochs across --recover."""

    events: ClassVar[list[tuple]] = []

    def __init__(self) -> None:
        self.epochs_seen: list[int] = []

    def on_start(self, trainer, run):
        assert isinstance(trainer, GradientDescentTrainer)
        self.events.append(("start", run.state.epoch, list(self.epochs_seen)))

    def on_batch(self, trainer, run, epoch, batch_number, output):
        assert "loss" in output
        self.events.append(("batch", epoch, batch_number))

    def on_epoch(self, trainer, run, epoch, results):
        assert run.state.history[-1] is results and "best_epoch" in results
        self.epochs_seen.append(epoch)
        results["epochs_seen"] = len(self.epochs_seen)
        self.events.append(("epoch", epoch))

    def on_end(self, trainer, run):
        self.events.append(("end", run.state.epoch))

    def state_dict(self):
        return {"epochs_seen": self.epochs_seen}

    def load_state_dict(self, state):
        self.epochs_seen = list(state["epochs_seen"])


@TrainerCallback.register("test_stop_after")
class StopAfter(TrainerCallback):
    def __init__(self, epoch: int) -> None:
        self.epoch = epoch

    def on_epoch(self, trainer, run, epoch, results):
        if epoch == self.epoch:
            run.state.stop(f"stopping: the test asked to after epoch {epoch}")


def without_batches(events):
    """The events with each epoch's batches folded into one ("batches", epoch, count), checking they run 0, 1, 2..."""
    folded = []
    for event in events:
        if event[0] != "batch":
            folded.append(event)
        elif folded[-1][:2] == ("batches", event[1]):
            assert event[2] == folded[-1][2]
            folded[-1] = ("batches", event[1], event[2] + 1)
        else:
            assert event[2] == 0
            folded.append(("batches", event[1], 1))
    return folded


def test_a_registered_callback_gets_the_hooks_in_order_and_its_state_across_recover(geo_slice, tmp_path):
    directory = tmp_path / "run"
    Recorder.events = []
    train_model(params(geo_slice, **{"trainer.num_epochs": 2, "trainer.callbacks": [{"type": "test_recorder"}]}), directory)
    folded = without_batches(Recorder.events)
    assert [event[:2] for event in folded] == [("start", -1), ("batches", 0), ("epoch", 0), ("batches", 1), ("epoch", 1), ("end", 1)]
    assert folded[0][2] == [] and folded[1][2] > 1
    assert json.loads((directory / "metrics_epoch_1.json").read_text())["epochs_seen"] == 2  # what on_epoch adds is recorded
    assert json.loads((directory / "metrics.json").read_text())["epochs_seen"] == 2

    Recorder.events = []
    train_model(params(geo_slice, **{"trainer.num_epochs": 3, "trainer.callbacks": [{"type": "test_recorder"}]}), directory, recover=True)
    assert [event[:2] for event in without_batches(Recorder.events)] == [("start", 1), ("batches", 2), ("epoch", 2), ("end", 2)]
    assert Recorder.events[0][2] == [0, 1]  # its state_dict() came back through the training state
    assert json.loads((directory / "metrics.json").read_text())["epochs_seen"] == 3


def test_a_callback_that_asks_to_stop_ends_training_after_that_epoch(geo_slice, tmp_path):
    directory = tmp_path / "run"
    overrides = {"trainer.num_epochs": 4, "trainer.callbacks": [{"type": "test_stop_after", "epoch": 1}, {"type": "test_recorder"}]}
    Recorder.events = []
    train_model(params(geo_slice, **overrides), directory)
    assert sorted(path.name for path in directory.glob("metrics_epoch_*.json")) == ["metrics_epoch_0.json", "metrics_epoch_1.json"]
    assert json.loads((directory / "metrics.json").read_text())["training_epochs"] == 2
    assert Recorder.events[-1] == ("end", 1)  # the callbacks after the one that stopped still saw epoch 1, and the end
    assert "stopping: the test asked to after epoch 1" in (directory / "out.log").read_text()
    assert (directory / "model.tar.gz").exists()


def test_an_unknown_callback_type_names_its_key_and_the_available_ones():
    config = Params({"trainer": {"device": "cpu", "callbacks": [{"type": "tensorbored"}]}}).pop("trainer")
    with pytest.raises(ConfigurationError, match=r"trainer\.callbacks\.0\.type: 'tensorbored' is not a registered TrainerCallback") as raised:
        Trainer.from_params(config)
    message = str(raised.value)
    assert "did you mean 'tensorboard'?" in message
    assert all(name in message for name in ("early_stopping", "learning_curves", "mfu", "tensorboard", "time_budget"))


def test_the_trainer_builds_the_built_in_callbacks_from_its_keys():
    def kinds(**keys):
        return [type(callback) for callback in GradientDescentTrainer(device="cpu", **keys).callbacks]

    assert kinds() == [ModelFlopsUtilization, TensorBoardScalars, LearningCurves]
    assert kinds(report_mfu=False, patience=3, max_minutes=5.0, callbacks=[StopAfter(2)]) == [
        EarlyStopping,
        TimeBudget,
        StopAfter,
        TensorBoardScalars,
        LearningCurves,
    ]


def test_early_stopping_and_the_time_budget_read_the_training_state():
    trainer = GradientDescentTrainer(device="cpu", validation_metric="+exact_match")
    state = TrainingState(bad_epochs=1)
    EarlyStopping(patience=2).check(trainer, state)
    assert state.stop_reason is None
    state.bad_epochs = 2
    EarlyStopping(patience=2).check(trainer, state)
    assert state.stop_reason == "stopping early: no improvement in exact_match for 2 validations"

    state = TrainingState(elapsed=50.0, history=[{"epoch_seconds": 9.0}])
    TimeBudget(max_minutes=1.0).check(state)
    assert state.stop_reason is None  # 59 s: another epoch still fits
    state.history.append({"epoch_seconds": 11.0})
    TimeBudget(max_minutes=1.0).check(state)
    TimeBudget(max_minutes=0.5).check(state)
    assert state.stop_reason == "stopping: another epoch would overrun the time budget of 1.0 minutes"  # the first reason stays

    state = TrainingState(elapsed=50.0, history=[{"epoch_seconds": 40.0, "cache_fill_seconds": 32.0}])
    TimeBudget(max_minutes=1.0).check(state)
    assert state.stop_reason is None  # the cache is filled: the next epoch takes about 8 s


def test_an_epoch_records_the_time_a_frozen_transformer_spent_filling_its_cache(tiny_bert):
    from toolkit.modules.token_embedders import TokenEmbedder
    from toolkit.training.trainer import cache_fill_seconds

    module = TokenEmbedder.from_params({"type": "pretrained_transformer", "model_name": str(tiny_bert), "layers": "last"}).train()
    model = torch.nn.ModuleDict({"embedder": module})
    inputs = module.batch_inputs([module.example_inputs(Example(["the", "dogs"]))], 2)
    module(torch.zeros(1, 2, dtype=torch.long), torch.ones(1, 2, dtype=torch.bool), **inputs)
    filled = cache_fill_seconds(model)
    assert filled > 0
    module(torch.zeros(1, 2, dtype=torch.long), torch.ones(1, 2, dtype=torch.bool), **inputs)
    assert cache_fill_seconds(model) == filled  # read from the cache: nothing computed


@TrainerCallback.register("test_stop_at_once")
class StopAtOnce(TrainerCallback):
    def on_start(self, trainer, run):
        run.state.stop("stopping: nothing to do")


def test_a_stop_before_the_first_epoch_is_a_training_error(geo_slice, tmp_path):
    with pytest.raises(TrainingError, match="training stopped before its first epoch: stopping: nothing to do"):
        train_model(params(geo_slice, **{"trainer.callbacks": [{"type": "test_stop_at_once"}]}), tmp_path / "run")


def test_validations_during_the_warmup_do_not_count_against_patience():
    trainer = GradientDescentTrainer(device="cpu", validation_metric="+exact_match", patience=2)
    state = TrainingState()
    for epoch, score in enumerate([50.0, 20.0, 10.0]):  # a lucky first epoch, then the rising rate unsettles it
        trainer.select_checkpoints(state, epoch, {"validation_exact_match": score}, has_validation=True, warming_up=True)
    assert state.bad_epochs == 0 and max(state.kept)[1] == 0  # the best epoch is still kept
    trainer.select_checkpoints(state, 3, {"validation_exact_match": 30.0}, has_validation=True)
    assert state.bad_epochs == 1


def test_the_scheduler_warms_up_until_its_longest_group_has():
    weights = [torch.nn.Parameter(torch.zeros(1)) for _ in range(2)]
    optimizer = torch.optim.SGD([{"params": [weights[0]]}, {"params": [weights[1]], "warmup_steps": 5}], lr=1.0)
    scheduler = InverseSqrtScheduler(optimizer, warmup_steps=2)
    warming = []
    for _ in range(6):
        warming.append(scheduler.warming_up)
        optimizer.step()
        scheduler.step()
    assert warming == [True] * 5 + [False]
    assert not ConstantScheduler(torch.optim.SGD([weights[0]], lr=1.0)).warming_up
