"""What a beam costs in memory, and what the device has free: a beam that cannot fit is refused in one line.

A beam of *k* keeps *k* hypotheses per input, each with its rows of the decoder's cache, so its
memory grows with *k* times the input and the output's length; ``--beam-size 100000`` grew past
15 GB until the kernel killed the process. :func:`hypothesis_bytes` estimates one hypothesis's
share from what the model's context holds per input once the source is read, and
:class:`~toolkit.decoding.beam.BeamSearch` compares the beam it is about to widen to with the
memory free when the batch began. The estimate is meant to refuse beams off by orders of
magnitude, not to pack memory: what it misses, an allocation that fails, is still one line.
"""

import dataclasses
import os
import re

import torch

STATE_BYTES = 2048  # a grammar state (a Python object) per hypothesis: a generous round figure
PER_SYMBOL_BYTES = 32  # a hypothesis's row of each (N, V) tensor of a step: log-probabilities, candidates, masks, in float32
PER_STEP_BYTES = 16  # its symbol in the prefix, and the prefix's copy as rows are chosen
CACHE_SLACK = 4  # the self-attention cache and its spare, each up to twice the steps written (capacities double)


def hypothesis_bytes(source_row_bytes: int, source_length: int, steps: int, symbols: int) -> int:
    """About the bytes one hypothesis holds by *steps* steps.

    *source_row_bytes* is what the context holds per input once the source is read: a Transformer
    cache's keys and values for each source position and layer. A step adds as much for the output
    position as a source position takes (a layer's keys and values, same width), times
    ``CACHE_SLACK``; decoders that keep less per step are overestimated, which errs on the safe side.
    """
    per_position = source_row_bytes / max(source_length, 1)
    return int(source_row_bytes + CACHE_SLACK * per_position * steps + PER_SYMBOL_BYTES * symbols + PER_STEP_BYTES * steps + STATE_BYTES)


def row_bytes(context: object, rows: int) -> int:
    """The bytes per row of the tensors in *context* that hold one row per hypothesis (dim 0 of size *rows*).

    Walks dataclasses, plain objects, lists, tuples and dicts; a tensor with another first dimension
    (a table the rows share) is left out, and a storage is counted once.
    """
    total, seen, storages = 0, set(), set()
    stack = [context]
    while stack:
        item = stack.pop()
        if id(item) in seen or item is None or isinstance(item, (str, bytes, int, float, bool, torch.nn.Module)):
            continue
        seen.add(id(item))
        if isinstance(item, torch.Tensor):
            storage = (item.untyped_storage().data_ptr(), item.data_ptr())
            if item.dim() and item.size(0) == rows and storage not in storages:
                storages.add(storage)
                total += item.nelement() * item.element_size()
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif dataclasses.is_dataclass(item):
            stack.extend(getattr(item, field.name) for field in dataclasses.fields(item))
        elif hasattr(item, "__dict__"):
            stack.extend(vars(item).values())
    return total // max(rows, 1)


def free_bytes(device: torch.device) -> int | None:
    """The memory this process can still take on *device*; ``None`` where that is unknown.

    On a GPU, what the driver reports free plus what torch holds and does not use. On the CPU, the
    least of the system's available memory (``MemAvailable``), what this process's address-space
    limit leaves (``ulimit -v``) and what its cgroup's limit leaves (a container's).
    """
    if device.type == "cuda":
        free, _ = torch.cuda.mem_get_info(device)
        return free + torch.cuda.memory_reserved(device) - torch.cuda.memory_allocated(device)
    if device.type != "cpu":
        return None
    found = [value for value in (_available(), _address_space_left(), _cgroup_left()) if value is not None]
    return min(found) if found else None


def _available() -> int | None:
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _address_space_left() -> int | None:
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows
        return None
    soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    if soft == resource.RLIM_INFINITY:
        return None
    try:
        with open("/proc/self/status") as status:
            size = int(re.search(r"^VmSize:\s+(\d+) kB", status.read(), re.M).group(1)) * 1024
    except (OSError, AttributeError, ValueError):
        return None
    return max(soft - size, 0)


def _cgroup_left() -> int | None:
    try:
        with open("/sys/fs/cgroup/memory.max") as limit, open("/sys/fs/cgroup/memory.current") as current:
            most, used = limit.read().strip(), current.read().strip()
    except OSError:
        return None
    if most == "max":
        return None
    try:
        return max(int(most) - int(used), 0)
    except ValueError:
        return None


def out_of_memory(error: BaseException) -> bool:
    """Whether *error* is an allocation that failed: ``MemoryError``, CUDA's, or the CPU allocator's ``RuntimeError``."""
    if isinstance(error, (MemoryError, torch.cuda.OutOfMemoryError)):
        return True
    message = str(error)
    return isinstance(error, RuntimeError) and ("can't allocate memory" in message or "out of memory" in message.lower())


def size_text(count: float) -> str:
    """*count* bytes as people write them: ``1.8 GB``, ``640 MB``, ``12 KB``."""
    for unit, scale in (("TB", 1 << 40), ("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{int(count)} bytes"
