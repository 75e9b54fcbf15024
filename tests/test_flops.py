import logging
import math

import pytest
import torch

from toolkit.training import flops
from toolkit.training.flops import measure_peak_flops, model_flops_utilization


def test_mfu_hand_checked():
    # 6 * 1e6 parameters * 1e4 tokens/s = 6e10 FLOP/s, against a peak of 1.2e11: half of it
    assert model_flops_utilization(1_000_000, 10_000.0, 1.2e11) == pytest.approx(0.5)
    # 6 * 5.6e6 * 2,500 = 8.4e10, against 2.1e12: 4%
    assert model_flops_utilization(5_600_000, 2_500.0, 2.1e12) == pytest.approx(0.04)
    assert model_flops_utilization(0, 1e6, 1e12) == 0.0


def test_mfu_scales_linearly():
    base = model_flops_utilization(1000, 10.0, 1e9)
    assert model_flops_utilization(2000, 10.0, 1e9) == pytest.approx(2 * base)
    assert model_flops_utilization(1000, 30.0, 1e9) == pytest.approx(3 * base)
    assert model_flops_utilization(1000, 10.0, 4e9) == pytest.approx(base / 4)


def test_peak_is_positive_finite_and_cached(monkeypatch):
    monkeypatch.setattr(flops, "_PEAKS", {})
    first = measure_peak_flops(torch.float32, size=64, seconds=0.05)
    assert isinstance(first, float)
    assert first > 0 and math.isfinite(first)
    calls = []
    monkeypatch.setattr(flops, "_measure", lambda *args: calls.append(args) or 1.0)
    assert measure_peak_flops(torch.float32, size=64, seconds=0.05) is first  # cached: not measured again
    assert measure_peak_flops(torch.float32, size=64, seconds=5.0) is first  # seconds is not part of the key
    assert calls == []
    assert measure_peak_flops(torch.float64, size=64, seconds=0.05) == 1.0  # another dtype is measured
    assert len(calls) == 1


def test_a_share_above_one_is_measured_again_and_never_reported(monkeypatch, caplog):
    from toolkit.training.callbacks import ModelFlopsUtilization

    callback = ModelFlopsUtilization()  # fp32 on the CPU until on_start reads the trainer's device and precision
    monkeypatch.setattr(flops, "_PEAKS", {})
    peaks = iter([1e9, 4e9])  # the machine was busy at the first measurement, quiet at the second
    monkeypatch.setattr(flops, "_measure", lambda *args: next(peaks))
    # 6 * 1e6 parameters * 300 tokens/s = 1.8e9 FLOP/s: 1.8 of the first peak, so measured again: 0.45 of the second
    assert callback.utilization(1_000_000, 300.0, world_size=1) == 0.45
    monkeypatch.setattr(flops, "_measure", lambda *args: 1e9)  # measured again, never faster: the higher figure stays
    with caplog.at_level(logging.WARNING, logger="toolkit.training.callbacks"):
        assert callback.utilization(1_000_000, 1_000.0, world_size=1) is None  # 6e9 against 4e9: no honest share
        assert callback.utilization(1_000_000, 2_000.0, world_size=1) is None  # the next epoch, likewise
    assert [record.message.split(":")[0] for record in caplog.records] == ["MFU left out"]  # said once, not every epoch
    assert callback.utilization(1_000_000, 500.0, world_size=1) == 0.75
