"""Tree inputs: the tree_pairs reader, tree positions in the encoder, and tree-to-sequence end to end."""

import json

import pytest
import torch

from tests.conftest import FIXTURES, run
from toolkit.data.example import Example
from toolkit.errors import DataError
from toolkit.from_params import Lazy
from toolkit.modules.encoders import TransformerEncoder
from toolkit.modules.positional_encoding import PositionalEncoding
from toolkit.modules.transformer_settings import TransformerSettings
from tree_codecs import LcrsDfsCodec, NaryDfsCodec, TreePairsReader


def write(tmp_path, text):
    path = tmp_path / "pairs.tsv"
    path.write_text(text, encoding="utf-8")
    return path


def batch_inputs(encoder, paths):
    """What a model passes the encoder for a batch of trees with these token paths."""
    examples = [Example(["x"] * len(p), token_paths=p) for p in paths]
    return encoder.batch_inputs([encoder.example_inputs(e) for e in examples], max(map(len, paths)))


def test_reader_lists_the_source_tree_with_paths(tmp_path):
    path = write(tmp_path, "( a b ( c d ) )\tx y\n")
    [example] = TreePairsReader(LcrsDfsCodec()).read(path)
    # LCRS: branch 0 = first child, 1 = next sibling. a's first child b, b's sibling c, c's child d.
    assert example.tokens == ["a/2", "b/0", "c/1", "d/0"]
    assert example.token_paths == [(), (0,), (0, 1), (0, 1, 0)]
    assert example.target == "x y"
    [nary] = TreePairsReader(NaryDfsCodec(max_degree=2)).read(path)
    assert nary.token_paths == [(), (0,), (1,), (1, 0)]


def test_reader_source_column_and_predictor_input(tmp_path):
    reader = TreePairsReader(LcrsDfsCodec(), source_column=1)
    [example] = reader.read(write(tmp_path, "what is it ?\t( f x )\n"))
    assert (example.tokens, example.target) == (["f/1", "x/0"], "what is it ?")
    assert reader.text_to_example("( f x )").tokens == ["f/1", "x/0"]
    assert reader.text_to_example("( f x )").target is None


def test_unbalanced_source_tree_names_file_and_line(tmp_path):
    path = write(tmp_path, "( a b )\tfine\n( a ( b c )\tbroken\n")
    with pytest.raises(DataError) as error:
        TreePairsReader(LcrsDfsCodec()).read(path)
    assert error.value.line == 2 and str(path) in str(error.value)


def test_tree_encoder_sees_paths_not_sequence_order():
    """Without sequence positions, permuting tokens together with their paths permutes the states."""
    torch.manual_seed(0)
    tree = Lazy(PositionalEncoding, {"type": "tree", "max_depth": 4})
    encoder = TransformerEncoder(16, TransformerSettings(num_layers=2, num_heads=2, ff_dim=32, dropout=0.0), tree).eval()
    embedded = torch.randn(1, 4, 16)
    paths = [[(), (0,), (0, 1), (0, 1, 0)]]
    mask = torch.ones(1, 4, dtype=torch.bool)
    out = encoder(embedded, mask, **batch_inputs(encoder, paths))
    order = [2, 0, 3, 1]
    permuted = encoder(embedded[:, order], mask, **batch_inputs(encoder, [[paths[0][i] for i in order]]))
    assert torch.allclose(permuted, out[:, order], atol=1e-5)
    # ... and the paths matter: the same tokens at other nodes are encoded differently.
    moved = encoder(embedded, mask, **batch_inputs(encoder, [[(), (1,), (1, 1), (1, 1, 1)]]))
    assert not torch.allclose(moved, out, atol=1e-3)


def test_padding_does_not_change_a_tree(tmp_path):
    torch.manual_seed(0)
    tree = Lazy(PositionalEncoding, {"type": "tree"})
    encoder = TransformerEncoder(16, TransformerSettings(num_layers=1, num_heads=2, ff_dim=32, dropout=0.0), tree).eval()
    embedded = torch.randn(2, 3, 16)
    mask = torch.tensor([[True, True, True], [True, True, False]])
    inputs = batch_inputs(encoder, [[(), (0,), (0, 1)], [(), (0,)]])
    assert inputs["token_paths"].shape == (2, 3, 64) and inputs["token_paths"][1, 2].sum() == 0
    batched = encoder(embedded, mask, **inputs)[1, :2]
    alone = encoder(embedded[1:, :2], mask[1:, :2], **batch_inputs(encoder, [[(), (0,)]]))[0]
    assert torch.allclose(batched, alone, atol=1e-5)


def test_tree_to_sequence_end_to_end(monkeypatch, capsys, geo_slice, tmp_path):
    monkeypatch.setenv("TRAIN", str(geo_slice["train"]))
    monkeypatch.setenv("TEST", str(geo_slice["test"]))
    config = FIXTURES / "tiny_tree2seq.jsonnet"
    code, out, err = run(monkeypatch, capsys, "train", config, "-s", tmp_path / "run", "-o", '{"trainer.num_epochs": 1}')
    assert code == 0, err
    archive = out.strip().splitlines()[-1]
    inputs = tmp_path / "trees.txt"
    trees = [line.split("\t")[1] for line in geo_slice["test"].read_text().splitlines()[:3]]
    inputs.write_text("\n".join(trees) + "\n")
    code, out, err = run(monkeypatch, capsys, "predict", archive, inputs)
    assert code == 0, err
    assert len(out.strip().splitlines()) == 3  # one question per tree, in order


def test_tree_encoder_on_sentences_is_a_clear_error(monkeypatch, capsys, geo_slice, tmp_path):
    monkeypatch.setenv("TRAIN", str(geo_slice["train"]))
    monkeypatch.setenv("TEST", str(geo_slice["test"]))
    override = json.dumps({"model.encoder.positional_encoding.type": "tree"})
    code, _, err = run(monkeypatch, capsys, "train", FIXTURES / "tiny_seq2seq.jsonnet", "-s", tmp_path / "run", "-o", override)
    assert code != 0
    assert "tree_pairs" in err and "Traceback" not in err
