"""Training mechanics: exact resume, checkpoint averaging, schedules."""

import json
import struct
import sys
import types

import pytest
import torch
from safetensors.torch import load_file

from tests.conftest import FIXTURES
from toolkit.archive import load_archive
from toolkit.data.dataset_readers import DatasetReader
from toolkit.data.dataset_readers.tsv import TsvReader
from toolkit.errors import ConfigurationError, TrainingError
from toolkit.params import Params
from toolkit.training.schedulers import InverseSqrtScheduler, NoamScheduler
from toolkit.training.train import train_model

CONFIG = FIXTURES / "tiny_seq2seq.jsonnet"


def params(geo_slice, **overrides) -> Params:
    ext_vars = {"TRAIN": str(geo_slice["train"]), "TEST": str(geo_slice["test"])}
    return Params.from_file(CONFIG, overrides={"test_data_path": None, **overrides}, ext_vars=ext_vars)


def weights(directory):
    return load_file(str(directory / "weights.safetensors"))


def test_resumed_training_ends_with_the_same_weights(geo_slice, tmp_path):
    train_model(params(geo_slice, **{"trainer.num_epochs": 4}), tmp_path / "straight")

    train_model(params(geo_slice, **{"trainer.num_epochs": 2}), tmp_path / "resumed")
    first_leg = weights(tmp_path / "resumed")
    train_model(params(geo_slice, **{"trainer.num_epochs": 4}), tmp_path / "resumed", recover=True)

    straight, resumed = weights(tmp_path / "straight"), weights(tmp_path / "resumed")
    assert straight.keys() == resumed.keys()
    for name in straight:
        assert torch.equal(straight[name], resumed[name]), name
    assert any(not torch.equal(first_leg[name], resumed[name]) for name in first_leg)  # the second leg did train
    history = [json.loads((tmp_path / "resumed" / f"metrics_epoch_{e}.json").read_text())["epoch"] for e in range(4)]
    assert history == [0, 1, 2, 3]


def test_final_weights_average_the_best_checkpoints(geo_slice, tmp_path):
    directory = tmp_path / "run"
    train_model(params(geo_slice, **{"trainer.num_epochs": 3, "trainer.num_checkpoints_to_average": 2, "validation_data_path": None}), directory)
    kept = sorted(directory.glob("checkpoints/model_epoch_*.safetensors"))
    assert [path.name for path in kept] == ["model_epoch_1.safetensors", "model_epoch_2.safetensors"]  # no validation: the last two
    one, two = (load_file(str(path)) for path in kept)
    final = weights(directory)
    for name in final:
        assert torch.allclose(final[name], (one[name] + two[name]) / 2, atol=1e-6), name


def test_recover_applies_what_it_may_change_and_refuses_the_rest(geo_slice, tmp_path):
    directory = tmp_path / "run"
    train_model(params(geo_slice, **{"trainer.num_epochs": 1}), directory)
    saved = (directory / "config.json").read_text()
    for change in ({"trainer.optimizer.lr": 1e-4}, {"model.encoder.layers.num_layers": 2}):
        with pytest.raises(ConfigurationError, match="--recover: the config differs .*" + ".*".join(change)):
            train_model(params(geo_slice, **{"trainer.num_epochs": 2, **change}), directory, recover=True)
        assert (directory / "config.json").read_text() == saved  # nothing recorded that was not done
    train_model(params(geo_slice, **{"trainer.num_epochs": 2}), directory, recover=True)
    assert json.loads((directory / "metrics.json").read_text())["training_epochs"] == 2  # done...
    assert json.loads((directory / "config.json").read_text())["trainer"]["num_epochs"] == 2  # ...and recorded
    assert load_archive(directory / "model.tar.gz").config["trainer"]["num_epochs"] == 2
    assert load_archive(directory).config == load_archive(directory / "model.tar.gz").config  # the directory loads too


def test_recover_that_forgets_an_override_names_it_in_a_short_message(geo_slice, tmp_path):
    """The grammar's fit expands `restrict_arities` into a table of every operator (3 KB on ATIS); the
    message must still be a line a user reads, and recovering with the override given again must work.
    """
    directory = tmp_path / "run"
    constrained = {"grammar": {"type": "bracketed", "max_length": 60, "restrict_arities": True, "copy_atoms": True}}
    train_model(params(geo_slice, **{"trainer.num_epochs": 1, **constrained}), directory)
    assert len(json.loads((directory / "config.json").read_text())["grammar"]["arities"]) > 10  # fitted, and recorded
    with pytest.raises(ConfigurationError) as error:
        train_model(params(geo_slice, **{"trainer.num_epochs": 2, "grammar": {"type": "bracketed", "max_length": 60}}), directory, recover=True)
    message = str(error.value)
    assert "grammar.restrict_arities: True -> '(absent)'" in message and "give the first run's -o overrides again" in message
    assert len(message) < 900 and "..." in message  # the fitted table is cut short
    train_model(params(geo_slice, **{"trainer.num_epochs": 2, **constrained}), directory, recover=True)
    assert json.loads((directory / "metrics.json").read_text())["training_epochs"] == 2


def test_recover_without_an_earlier_run_is_an_error(geo_slice, tmp_path):
    with pytest.raises(ConfigurationError, match="holds no earlier run"):
        train_model(params(geo_slice), tmp_path / "empty", recover=True)


def test_noam_schedule_matches_the_paper_formula():
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
    scheduler = NoamScheduler(optimizer, model_size=512, warmup_steps=4000)
    for step in (1, 100, 4000, 10000):
        assert scheduler.multiplier(step, 4000) == pytest.approx(512**-0.5 * min(step**-0.5, step * 4000**-1.5))
    assert optimizer.param_groups[0]["lr"] == pytest.approx(512**-0.5 * 4000**-1.5)  # step 1 already applied


def test_inverse_sqrt_peaks_at_the_end_of_warmup():
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
    scheduler = InverseSqrtScheduler(optimizer, warmup_steps=10)
    values = [scheduler.multiplier(step, 10) for step in range(1, 41)]
    assert max(values) == values[9] == 1.0
    assert values[39] == pytest.approx(0.5)


def test_a_parameter_group_with_its_own_warmup_follows_it_from_its_own_rate():
    """A fine-tuned transformer's group: its lr and warmup_steps, the same inverse-sqrt shape."""
    main, pretrained = torch.nn.Parameter(torch.zeros(1)), torch.nn.Parameter(torch.zeros(1))
    optimizer = torch.optim.SGD([{"params": [main]}, {"params": [pretrained], "lr": 0.01, "warmup_steps": 4}], lr=1.0)
    scheduler = InverseSqrtScheduler(optimizer, warmup_steps=2)
    rates = []
    for _ in range(16):
        rates.append([group["lr"] for group in optimizer.param_groups])
        optimizer.step()
        scheduler.step()
    assert [main for main, _ in rates[:4]] == pytest.approx([0.5, 1.0, (2 / 3) ** 0.5, (2 / 4) ** 0.5])
    assert [pretrained for _, pretrained in rates[:5]] == pytest.approx([0.0025, 0.005, 0.0075, 0.01, 0.01 * (4 / 5) ** 0.5])
    assert rates[15][1] == pytest.approx(0.01 * (4 / 16) ** 0.5)


def test_bf16_mixed_precision_trains_on_the_cpu(geo_slice, tmp_path):
    train_model(params(geo_slice, **{"trainer.num_epochs": 2, "trainer.mixed_precision": "bf16", "validation_data_path": None}), tmp_path / "bf16")
    history = [json.loads((tmp_path / "bf16" / f"metrics_epoch_{e}.json").read_text()) for e in range(2)]
    assert all(h["training_loss"] == h["training_loss"] for h in history)  # finite, not NaN
    assert history[1]["training_loss"] < history[0]["training_loss"]
    assert all(t.dtype == torch.float32 for t in weights(tmp_path / "bf16").values())  # master weights stay fp32


def test_fp16_on_the_cpu_is_a_config_error(geo_slice, tmp_path):
    with pytest.raises(ConfigurationError, match="fp16"):
        train_model(params(geo_slice, **{"trainer.num_epochs": 1, "trainer.mixed_precision": "fp16", "trainer.device": "cpu"}), tmp_path / "fp16")


def test_time_budget_cuts_the_epoch_at_a_step_and_recover_goes_on_from_that_step(geo_slice, tmp_path):
    """A budget spent before training starts stops epoch 0 after its first optimizer step (a budget is
    checked inside the epoch, so a slow first epoch cannot overrun it); the weights of that step are the
    archive's, the metrics say where it stopped, and ``--recover`` goes on from the next batch: the
    run then ends bit-identical to one never stopped, epoch 0's loss over all its batches.
    """
    every_other = {"trainer.num_epochs": 3, "trainer.validate_every": 2}
    train_model(params(geo_slice, **every_other), tmp_path / "straight")
    train_model(params(geo_slice, **every_other, **{"trainer.max_minutes": 0}), tmp_path / "budget")
    assert sorted(p.name for p in (tmp_path / "budget").glob("metrics_epoch_*.json")) == ["metrics_epoch_0.json"]
    cut = json.loads((tmp_path / "budget" / "metrics_epoch_0.json").read_text())
    assert (cut["trained_batches"], cut["epoch_batches"]) == (1, 2) and "validation_loss" not in cut
    assert json.loads((tmp_path / "budget" / "metrics.json").read_text())["trained_batches"] == 1
    assert load_archive(tmp_path / "budget" / "model.tar.gz").model is not None  # a usable model
    train_model(params(geo_slice, **every_other), tmp_path / "budget", recover=True)
    straight, resumed = weights(tmp_path / "straight"), weights(tmp_path / "budget")
    assert all(torch.equal(straight[name], resumed[name]) for name in straight)
    first = [json.loads((tmp_path / run / "metrics_epoch_0.json").read_text()) for run in ("straight", "budget")]
    assert first[0]["training_loss"] == first[1]["training_loss"] and "trained_batches" not in first[1]


def test_a_validation_that_would_overrun_the_budget_is_cut_short(geo_slice, tmp_path, monkeypatch):
    """The budget runs out while epoch 0 is validated (its training ended in time): the validation is
    left out, the epoch is kept unvalidated, and its weights are the archive's.
    """
    from toolkit.training import validation

    real_predict = validation.predict

    def budget_spent_while_decoding(model, examples, max_tokens, search, should_stop):
        monkeypatch.setattr("time.monotonic", lambda: float("inf"))  # from here on, the budget is spent
        return real_predict(model, examples, max_tokens, search, should_stop)

    monkeypatch.setattr(validation, "predict", budget_spent_while_decoding)
    train_model(params(geo_slice, **{"trainer.num_epochs": 3, "trainer.max_minutes": 60}), tmp_path / "run")
    epochs = sorted(p.name for p in (tmp_path / "run").glob("metrics_epoch_*.json"))
    assert epochs == ["metrics_epoch_0.json"]
    first = json.loads((tmp_path / "run" / "metrics_epoch_0.json").read_text())
    assert "validation_loss" not in first and "trained_batches" not in first  # trained whole, validation cut


def test_precision_auto_is_full_precision_on_the_cpu_and_bad_values_name_the_key():
    from toolkit.device import resolve_precision

    assert resolve_precision("auto", torch.device("cpu")) is None
    assert resolve_precision("bf16", torch.device("cpu")) == "bf16"
    with pytest.raises(ConfigurationError, match="trainer.mixed_precision"):
        resolve_precision("fp8", torch.device("cpu"))


def test_weights_that_are_views_of_one_buffer_save_and_load(tmp_path):
    """CuDNN flattens an nn.LSTM's weights into one buffer on a GPU; tied embeddings stay tied."""
    from toolkit.weights import load_weights, save_weights

    class Flattened(torch.nn.Module):
        def __init__(self):
            super().__init__()
            buffer = torch.arange(12.0)
            self.a = torch.nn.Parameter(buffer[:6].view(2, 3))  # views, as cuDNN makes them
            self.b = torch.nn.Parameter(buffer[6:].view(3, 2))
            self.embedding = torch.nn.Embedding(4, 2)
            self.output = torch.nn.Linear(2, 4, bias=False)
            self.output.weight = self.embedding.weight  # tied

    model = Flattened()
    path = tmp_path / "weights.safetensors"
    save_weights(model, path)
    saved = load_file(str(path))
    assert sorted(saved) == ["a", "b", "embedding.weight"]  # the tied output weight is stored once
    fresh = Flattened()
    with torch.no_grad():
        fresh.b.zero_(), fresh.embedding.weight.zero_()
    load_weights(fresh, saved)
    assert torch.equal(fresh.b, model.b) and torch.equal(fresh.output.weight, model.embedding.weight)


def test_gradient_accumulation_takes_one_optimizer_step_per_k_batches(geo_slice, tmp_path):
    steps = {}
    for k in (1, 3):
        directory = tmp_path / f"k{k}"
        train_model(params(geo_slice, **{"trainer.num_epochs": 1, "trainer.max_tokens": 128, "trainer.accumulation_steps": k}), directory)
        state = torch.load(directory / "checkpoints" / "training_state.pt", weights_only=True)
        steps[k] = int(state["optimizer"]["state"][0]["step"])
        metrics = json.loads((directory / "metrics_epoch_0.json").read_text())
        assert metrics["training_tokens_per_second"] > 0 and 0 < metrics["mfu"] < 1 and metrics["data_seconds"] >= 0
    assert steps[1] > 3 and steps[3] == -(-steps[1] // 3)  # the last, shorter group steps too
    with pytest.raises(ConfigurationError, match="trainer.accumulation_steps: must be at least 1, got 0"):
        train_model(params(geo_slice, **{"trainer.accumulation_steps": 0}), tmp_path / "bad")


def poison_training_batches(monkeypatch, batches, make):
    """Let the model's training forward pass go wrong (*make*(output) returns the bad output) on the given batch numbers."""
    from toolkit.models.encoder_decoder import EncoderDecoder

    forward, calls = EncoderDecoder.forward, iter(range(10**6))

    def poisoned(self, *args, **kwargs):
        output = forward(self, *args, **kwargs)
        return make(output) if self.training and next(calls) in batches else output

    monkeypatch.setattr(EncoderDecoder, "forward", poisoned)


def test_non_finite_gradients_skip_the_step_and_too_many_stop_the_run(geo_slice, tmp_path, monkeypatch):
    def nan_loss(output):
        return {**output, "loss": output["loss"] * float("nan")}

    poison_training_batches(monkeypatch, {1, 2}, nan_loss)
    train_model(params(geo_slice, **{"trainer.num_epochs": 1, "trainer.max_tokens": 128}), tmp_path / "run")
    metrics = json.loads((tmp_path / "run" / "metrics_epoch_0.json").read_text())
    assert metrics["skipped_steps"] == 2 and metrics["training_loss"] == metrics["training_loss"]  # finite: NaN batches left out
    assert all(torch.isfinite(tensor).all() for tensor in weights(tmp_path / "run").values())
    assert "skipped an optimizer step: the gradient norm is nan (2 so far)" in (tmp_path / "run" / "out.log").read_text()

    poison_training_batches(monkeypatch, {1, 2}, nan_loss)
    with pytest.raises(TrainingError, match="stopping after 2 skipped optimizer steps"):
        train_model(params(geo_slice, **{"trainer.num_epochs": 1, "trainer.max_tokens": 128, "trainer.max_skipped_steps": 1}), tmp_path / "stop")


def test_out_of_memory_on_a_batch_skips_it(geo_slice, tmp_path, monkeypatch):
    def out_of_memory(output):
        raise torch.cuda.OutOfMemoryError("CUDA out of memory (simulated)")

    poison_training_batches(monkeypatch, {0}, out_of_memory)
    train_model(params(geo_slice, **{"trainer.num_epochs": 1, "trainer.max_tokens": 128}), tmp_path / "run")
    assert json.loads((tmp_path / "run" / "metrics_epoch_0.json").read_text())["skipped_steps"] == 1
    assert "skipped an optimizer step: out of memory on a batch of" in (tmp_path / "run" / "out.log").read_text()


@DatasetReader.register("test_doubling")
class DoublingReader(TsvReader):
    """Every example twice: a stand-in for an augmenting reader."""

    def _read(self, path):
        for example in super()._read(path):
            yield example
            yield example


def test_validation_test_and_archive_read_with_the_validation_reader(geo_slice, tmp_path, caplog):
    directory = tmp_path / "run"
    overrides = {
        "dataset_reader": {"type": "test_doubling"},
        "validation_dataset_reader": {"type": "tsv"},
        "test_data_path": str(geo_slice["test"]),
        "trainer.num_epochs": 1,
    }
    with caplog.at_level("INFO"):
        train_model(params(geo_slice, **overrides), directory)
    assert "read 80 training and 10 validation examples" in caplog.text
    assert type(load_archive(directory / "model.tar.gz").dataset_reader) is TsvReader


def test_training_writes_its_curves_and_tensorboard_scalars(geo_slice, tmp_path, monkeypatch):
    """The PNG is a real image of the right size; TensorBoard gets every numeric result under training/ and
    validation/ (a stand-in SummaryWriter: the tensorboard package is an optional extra).
    """
    scalars = []

    class Writer:
        def __init__(self, logdir):
            assert logdir.endswith("tensorboard")

        def add_scalar(self, tag, value, step):
            scalars.append((tag, step))

        flush = close = lambda self: None

    monkeypatch.setitem(sys.modules, "torch.utils.tensorboard", types.SimpleNamespace(SummaryWriter=Writer))
    train_model(params(geo_slice, **{"trainer.num_epochs": 2}), tmp_path / "run")
    png = (tmp_path / "run" / "training_curves.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", png[16:24]) == (900, 340)
    assert {("training/loss", 0), ("validation/loss", 1), ("validation/exact_match", 1), ("run/elapsed_seconds", 1)} <= set(scalars)


def test_without_matplotlib_training_still_ends(geo_slice, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)  # import raises ImportError
    train_model(params(geo_slice, **{"trainer.num_epochs": 1}), tmp_path / "run")
    assert (tmp_path / "run" / "model.tar.gz").exists() and not (tmp_path / "run" / "training_curves.png").exists()
