"""A frozen transformer's per-sentence word vectors, kept in large blocks in memory or on disk.

A cache of one small tensor per sentence costs more than its bytes: every sentence is its own
allocation, made between the transformer's much larger passing ones, and the allocator cannot give
the gaps back (all-MiniLM-L6-v2 on 3,000 EWT sentences: 497 MiB of vectors grew the process by
945 MiB). Here sentences are copied end to end into blocks of ``block_bytes``, so the heap holds a
few large allocations instead. With a *directory*, each block is a memory-mapped file there instead:
the kernel pages the vectors in and out, and a cache larger than memory still trains.
"""

import contextlib
import os
import tempfile
from pathlib import Path

import torch

from toolkit.errors import ConfigurationError

Key = tuple[tuple[int, ...], tuple[int, ...]]  # a sentence: its subword ids and each word's subword count


class WordVectorCache:
    """Sentence key -> (words, ...) vectors, each sentence's rows contiguous in one block.

    Reading returns a view into the block: copy it before writing to it. Blocks in memory live on
    the device of the rows written; memory-mapped ones on the CPU, so readers move what they read.
    """

    def __init__(self, dtype: torch.dtype | None = None, directory: str | os.PathLike | None = None, block_bytes: int = 64 * 2**20):
        self.dtype = dtype  # None: as given
        self.directory = Path(directory).expanduser() if directory is not None else None
        self.block_bytes = block_bytes
        self.blocks: list[torch.Tensor] = []
        self.used = 0  # rows of the last block taken
        self.index: dict[Key, tuple[int, int, int]] = {}  # key -> (block, first row, rows)
        if self.directory is not None and not self.directory.is_dir():
            raise ConfigurationError(f"{str(self.directory)!r} is not a folder", key="cache_dir")

    def __len__(self) -> int:
        return len(self.index)

    def __contains__(self, key: Key) -> bool:
        return key in self.index

    def __getitem__(self, key: Key) -> torch.Tensor:
        block, start, rows = self.index[key]
        return self.blocks[block][start : start + rows]

    def __setitem__(self, key: Key, rows: torch.Tensor) -> None:
        """Copy *rows* (words, ...) in, converted to the cache's dtype; a key kept already keeps its first rows."""
        if key in self.index:
            return
        last = self.blocks[-1] if self.blocks else None
        if last is None or self.used + len(rows) > len(last) or last.shape[1:] != rows.shape[1:] or (self.directory is None and last.device != rows.device):
            self.blocks.append(self.new_block(len(rows), rows.shape[1:], self.dtype or rows.dtype, rows.device))
            self.used = 0
        block = self.blocks[-1]
        block[self.used : self.used + len(rows)] = rows
        self.index[key] = (len(self.blocks) - 1, self.used, len(rows))
        self.used += len(rows)

    @property
    def nbytes(self) -> int:
        """Bytes the kept vectors take (the blocks' unused tails left out)."""
        return sum(self.blocks[block][start : start + rows].nbytes for block, start, rows in self.index.values())

    def new_block(self, at_least: int, row_shape: torch.Size, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
        """Room for *at_least* rows, or a block's worth: on *device* in memory (a GPU's cache stays on
        the GPU), on the CPU in a file.
        """
        row_bytes = max(1, row_shape.numel() * dtype.itemsize)
        rows = max(at_least, self.block_bytes // row_bytes)
        if self.directory is None:
            return torch.empty((rows, *row_shape), dtype=dtype, device=device)
        return self.mapped_block(rows * row_shape.numel(), dtype).view(rows, *row_shape)

    def mapped_block(self, numel: int, dtype: torch.dtype) -> torch.Tensor:
        """A tensor backed by a new file in the directory: its space reserved first, so a full disk
        is an error here rather than a crash (SIGBUS) when a page is first written; the file is
        unlinked at once, so nothing is left behind, not even after a crash.
        """
        assert self.directory is not None
        descriptor, name = tempfile.mkstemp(prefix="word-vectors-", suffix=".bin", dir=self.directory)
        try:
            try:
                os.posix_fallocate(descriptor, 0, numel * dtype.itemsize)
            except AttributeError:  # no posix_fallocate (macOS): the size is set, the space not reserved
                os.ftruncate(descriptor, numel * dtype.itemsize)
            except OSError as error:  # the CLI says it in one line: "error: DIRECTORY: no space left on device ..."
                why = f"{error.strerror} (the word-vector cache needs {numel * dtype.itemsize / 2**20:.0f} MiB more)"
                raise OSError(error.errno, why, str(self.directory)) from None
            block = torch.from_file(name, shared=True, size=numel, dtype=dtype)
        finally:
            os.close(descriptor)
            with contextlib.suppress(OSError):
                os.unlink(name)  # the mapping stays valid (POSIX); the space is freed when it goes
        return block
