"""The disk cache of indexed training data: keys, reuse, corrupt entries, and a real second run."""

import json
import logging

from tests.conftest import FIXTURES, train_archive
from toolkit.data.cache import cache_key, cached, fingerprint


def test_fingerprint_covers_every_file_a_prefix_names(tmp_path):
    (tmp_path / "train.de").write_text("eins\n")
    (tmp_path / "train.en").write_text("one\n")
    before = fingerprint(tmp_path / "train")
    assert fingerprint(tmp_path / "train.de") != before
    (tmp_path / "train.en").write_text("two\n")
    assert fingerprint(tmp_path / "train") != before


def test_the_key_follows_what_shapes_indexing_and_nothing_else(tmp_path):
    data = tmp_path / "train.tsv"
    data.write_text("a\tb\n")
    config = {"grammar": {"type": "sequence"}, "model": {"type": "encoder_decoder"}, "trainer": {"num_epochs": 1}, "train_data_path": "x"}
    key = cache_key(config, data)
    assert cache_key({**config, "trainer": {"num_epochs": 9}, "train_data_path": "elsewhere"}, data) == key
    assert cache_key({**config, "grammar": {"type": "bracketed"}}, data) != key
    data.write_text("a\tc\n")
    assert cache_key(config, data) != key


def test_the_key_follows_a_pretrained_tokenizers_files(tmp_path):
    """The subword ids of a pretrained transformer come from its tokenizer files, which the config only names."""
    import pytest

    pytest.importorskip("transformers")
    from tests.conftest import save_tiny_bert
    from toolkit.modules.token_embedders import TokenEmbedder

    directory = save_tiny_bert(tmp_path / "bert")
    data = tmp_path / "train.tsv"
    data.write_text("a\tb\n")
    source = lambda: TokenEmbedder.from_params({"type": "pretrained_transformer", "model_name": str(directory)}).inputs_source()  # noqa: E731
    before = source()
    assert before["tokenizer_sha256"] and cache_key({}, data, inputs=[before]) != cache_key({}, data)
    vocabulary = directory / "vocab.txt"
    vocabulary.write_text(vocabulary.read_text().replace("dog", "cat"))
    tokenizer = directory / "tokenizer.json"
    if tokenizer.exists():
        tokenizer.write_text(tokenizer.read_text().replace('"dog"', '"cat"'))
    assert cache_key({}, data, inputs=[source()]) != cache_key({}, data, inputs=[before])


def test_cached_computes_once_and_recomputes_a_corrupt_entry(tmp_path, caplog):
    calls = []

    def compute():
        calls.append(1)
        return [{"source": [1, 2]}]

    assert cached(tmp_path, "k", compute) == cached(tmp_path, "k", compute) == [{"source": [1, 2]}]
    assert len(calls) == 1 and cached(None, "k", compute) and len(calls) == 2
    (tmp_path / "k.pickle").write_bytes(b"not a pickle")
    with caplog.at_level(logging.WARNING):
        assert cached(tmp_path, "k", compute) == [{"source": [1, 2]}]
    assert "ignoring the unreadable cache entry" in caplog.text and len(calls) == 3
    assert cached(tmp_path, "fresh", compute, write=False) and not (tmp_path / "fresh.pickle").exists()


def test_a_second_run_reads_the_stack_transformer_masks_from_the_cache(ewt, tmp_path, monkeypatch):
    monkeypatch.setenv("TOOLKIT_CACHE_DIR", str(tmp_path / "cache"))
    overrides = json.dumps({"model.decoder.type": "stack_transformer", "model.decoder.layers.num_heads": 2, "trainer.num_epochs": 1})
    first = train_archive(FIXTURES / "tiny_dependency.jsonnet", tmp_path / "first", ewt["train"], ewt["test"], "-o", overrides)
    second = train_archive(FIXTURES / "tiny_dependency.jsonnet", tmp_path / "second", ewt["train"], ewt["test"], "-o", overrides)
    assert "cached 40 preprocessed examples" in (first.parent / "out.log").read_text()
    assert "read 40 preprocessed examples from the cache" in (second.parent / "out.log").read_text()
    metrics = [json.loads((archive.parent / "metrics.json").read_text()) for archive in (first, second)]
    assert metrics[0]["test_las"] == metrics[1]["test_las"] and metrics[0]["training_loss"] == metrics[1]["training_loss"]
