"""What runs in the child process that evaluates a config (see :mod:`toolkit.bounded_jsonnet`).

Run as ``python -I -S jsonnet_child.py JSONNET_FOLDER`` with the request as JSON on standard input;
it writes ``=`` and jsonnet's output, or ``!`` and the error, on standard output. It imports the
standard library and libjsonnet only, so that the child starts in a few milliseconds.
"""

import json
import math
import os
import stat
import sys
from contextlib import suppress

try:
    import resource
except ImportError:  # pragma: no cover - Windows: the parent's wall-clock deadline alone
    resource = None  # type: ignore[assignment]

OUT_OF_MEMORY = 3  # the exit status when Python, not libjsonnet, ran out of memory
NOT_REGULAR = {
    stat.S_ISDIR: "a directory",
    stat.S_ISFIFO: "a pipe (FIFO), not a regular file",
    stat.S_ISCHR: "a character device, not a regular file",
    stat.S_ISBLK: "a block device, not a regular file",
    stat.S_ISSOCK: "a socket, not a regular file",
}


class Refused(ValueError):
    """A file that evaluation does not read; the message begins with its path."""


def read_regular_file(path: str, most: int, bound: str) -> bytes:
    """The bytes of *path*, which must be a regular file of at most *most* bytes (*bound* says so in words)."""
    try:
        status = os.stat(path)
        if not stat.S_ISREG(status.st_mode):  # opening a FIFO would block, reading /dev/zero never ends
            raise Refused(f"{path} is {next((kind for test, kind in NOT_REGULAR.items() if test(status.st_mode)), 'not a regular file')}")
        with open(path, "rb") as file:
            data = file.read(most + 1)
    except FileNotFoundError:
        raise Refused(f"{path} does not exist") from None
    except OSError as error:
        raise Refused(f"{path}: {(error.strerror or type(error).__name__).lower()}") from None
    if len(data) > most:
        raise Refused(f"{path} is {max(status.st_size, len(data)) / 1e6:,.1f} MB, more than {bound}, the most a config may read")
    return data


def evaluate(request: dict) -> str:
    """Jsonnet's output for *request*; a jsonnet error is a ``RuntimeError``, an output over the bound a :class:`Refused`.

    Imports resolve relative to the importing file's folder, as with jsonnet's own importer, and
    read regular files only.
    """
    import _jsonnet

    most, bound = request["most"], request["bound"]

    def load(folder: str, name: str) -> tuple[str, bytes]:
        path = name if os.path.isabs(name) else folder + name
        return path, read_regular_file(path, most, bound)

    output = _jsonnet.evaluate_snippet(request["name"], request["text"], ext_vars=request["ext_vars"], import_callback=load)
    if len(output) > most:
        raise Refused(f"its value is more than {bound} of JSON, the most a config may make")
    return output


def limit(memory: int, seconds: float) -> None:
    """Bound this process's address space (beyond what it has mapped already) and CPU time, where the system allows."""
    if resource is None:
        return
    cpu = math.ceil(seconds) + 1  # the parent's wall-clock deadline comes first, unless the parent is gone
    _lower(resource.RLIMIT_CPU, cpu, cpu + 1)
    _lower(resource.RLIMIT_AS, _address_space() + memory, None)


def _lower(which: int, soft: int, hard: int | None) -> None:
    _, current = resource.getrlimit(which)
    hard = soft if hard is None else hard
    if current != resource.RLIM_INFINITY:
        soft, hard = min(soft, current), min(hard, current)
    with suppress(ValueError, OSError):  # macOS refuses some; the other bounds still hold
        resource.setrlimit(which, (soft, hard))


def _address_space() -> int:
    """The bytes of address space this process has mapped already (Linux; 0 elsewhere)."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def main() -> None:
    sys.path.insert(0, sys.argv[1])
    request = json.loads(sys.stdin.buffer.read())
    limit(request["memory"], request["seconds"])
    try:
        reply = "=" + evaluate(request)
    except (RuntimeError, Refused) as error:
        reply = "!" + str(error).strip()
    except MemoryError:
        os._exit(OUT_OF_MEMORY)
    sys.stdout.buffer.write(reply.encode("utf-8", errors="replace"))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
