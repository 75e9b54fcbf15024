"""The frozen transformer's word-vector cache: sentences kept end to end in blocks, in memory or memory-mapped."""

import errno
import os

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.modules.token_embedders.word_vector_cache import WordVectorCache


def key(i: int):
    return ((i,), (1,))


@settings(max_examples=30, deadline=None)
@given(lengths=st.lists(st.integers(1, 9), min_size=1, max_size=25), block_rows=st.integers(1, 12), on_disk=st.booleans())
def test_every_sentence_reads_back_as_written_across_block_boundaries(lengths, block_rows, on_disk, tmp_path_factory):
    directory = tmp_path_factory.mktemp("cache") if on_disk else None
    cache = WordVectorCache(directory=directory, block_bytes=block_rows * 2 * 3 * 4)  # rows of (2, 3) float32
    written = {key(i): torch.randn(n, 2, 3) for i, n in enumerate(lengths)}
    for k, rows in written.items():
        cache[k] = rows
    assert len(cache) == len(written) and cache.nbytes == sum(r.nbytes for r in written.values())
    for k, rows in written.items():
        assert torch.equal(cache[k], rows)
    assert len(cache.blocks) >= -(-sum(lengths) // max(block_rows, max(lengths)))  # no block holds more than it has room for
    if directory is not None:
        assert list(directory.iterdir()) == []


def test_a_key_kept_keeps_its_first_rows_and_the_dtype_converts():
    cache = WordVectorCache(dtype=torch.float16)
    first = torch.randn(3, 4)
    cache[key(0)] = first
    cache[key(0)] = torch.zeros(3, 4)
    assert cache[key(0)].dtype == torch.float16 and torch.equal(cache[key(0)], first.half())
    assert key(1) not in cache and cache.nbytes == 3 * 4 * 2


def test_a_full_disk_is_an_error_naming_the_folder_not_a_crash(tmp_path, monkeypatch):
    def full(*args):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "posix_fallocate", full, raising=False)
    cache = WordVectorCache(directory=tmp_path)
    with pytest.raises(OSError, match="word-vector cache needs") as raised:
        cache[key(0)] = torch.randn(2, 5)
    assert raised.value.errno == errno.ENOSPC and raised.value.filename == str(tmp_path)
    assert len(cache) == 0 and list(tmp_path.iterdir()) == []


def test_blocks_in_memory_live_where_the_rows_do():
    """A GPU's cache stays on the GPU (the meta device stands in for one here)."""
    cache = WordVectorCache()
    cache[key(0)] = torch.empty(3, 4, device="meta")
    cache[key(1)] = torch.randn(2, 4)
    assert cache[key(0)].device.type == "meta" and cache[key(1)].device.type == "cpu" and len(cache.blocks) == 2
