"""int8 dynamic quantization (``--quantize int8``): the Linear layers change, the outputs barely do.

Stated tolerance, on the session's tiny trained parsers (tests/conftest.py): a quantized parser's
outputs equal the float parser's on at least 90% of the fixture's sentences, and its scores are
within 2 points.
"""

import json

import pytest
import torch
from torch import nn

from tests.conftest import run
from toolkit import load_predictor
from toolkit.errors import ConfigurationError
from toolkit.quantization import quantize

AGREEMENT, SCORE_TOLERANCE = 0.9, 0.02


def test_every_linear_layer_is_quantized_and_nothing_else():
    model = nn.Sequential(nn.Embedding(10, 8), nn.Linear(8, 8), nn.LayerNorm(8), nn.Linear(8, 3))
    before = model(torch.tensor([[1, 2, 3]]))
    quantize(model, "int8")
    assert [type(module).__name__ for module in model] == ["Embedding", "Linear", "LayerNorm", "Linear"]
    assert all(type(module).__module__.startswith("torch.ao.nn.quantized.dynamic") for module in (model[1], model[3]))
    assert not model.training
    torch.testing.assert_close(model(torch.tensor([[1, 2, 3]])), before, atol=0.05, rtol=0.05)
    assert quantize(nn.Linear(2, 2), None).weight is not None  # None: left as it is


def test_each_output_row_gets_its_own_scale():
    """A row of small weights beside one of large weights keeps its precision: one scale for the
    whole matrix would round the small row to zero.
    """
    torch.manual_seed(0)
    layer = nn.Linear(16, 2, bias=False)
    with torch.no_grad():
        layer.weight[0] *= 1000
        layer.weight[1] /= 1000
    inputs = torch.randn(4, 16)
    small = layer(inputs)[:, 1]
    quantized = quantize(nn.Sequential(layer), "int8")
    torch.testing.assert_close(quantized(inputs)[:, 1], small, atol=0, rtol=0.05)


def test_an_unknown_scheme_is_refused():
    with pytest.raises(ConfigurationError, match=r"^--quantize must be one of int8, got 'int4'$"):
        quantize(nn.Linear(2, 2), "int4")


def _agreement(archive, lines):
    plain = load_predictor(archive, device="cpu").predict_batch(lines)
    quantized = load_predictor(archive, device="cpu", quantize="int8").predict_batch(lines)
    return sum(a == b for a, b in zip(plain, quantized)) / len(lines)


def _scores(monkeypatch, capsys, archive, data, *options):
    code, out, err = run(monkeypatch, capsys, "evaluate", str(archive), str(data), "--device", "cpu", *options)
    assert code == 0, err
    return json.loads(out)


def test_a_quantized_semantic_parser_agrees_with_the_float_one(seq2seq_archive, monkeypatch, capsys):
    test = seq2seq_archive.parent.parent / "test.tsv"
    questions = [line.split("\t")[0] for line in test.read_text(encoding="utf-8").splitlines()]
    assert _agreement(seq2seq_archive, questions) >= AGREEMENT
    plain, quantized = (_scores(monkeypatch, capsys, seq2seq_archive, test, *options) for options in ((), ("--quantize", "int8")))
    assert abs(plain["exact_match"] - quantized["exact_match"]) <= SCORE_TOLERANCE + 1e-9


def test_a_quantized_dependency_parser_agrees_with_the_float_one(dependency_archive, ewt, monkeypatch, capsys):
    sentences = [
        " ".join(line.split("\t")[1] for line in block.splitlines() if line and not line.startswith("#") and line.split("\t")[0].isdigit())
        for block in ewt["test"].read_text(encoding="utf-8").split("\n\n")
        if block.strip()
    ][:40]
    assert _agreement(dependency_archive, sentences) >= AGREEMENT
    plain, quantized = (_scores(monkeypatch, capsys, dependency_archive, ewt["test"], *options) for options in ((), ("--quantize", "int8")))
    assert abs(plain["las"] - quantized["las"]) <= SCORE_TOLERANCE and abs(plain["uas"] - quantized["uas"]) <= SCORE_TOLERANCE
