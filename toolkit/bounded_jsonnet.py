"""Jsonnet evaluated within bounds: a config cannot run for ever, take all the memory, or read a device.

libjsonnet has no memory bound of its own: ``importstr '/dev/zero'`` or an array bomb
(``std.makeArray(1e9, ...)``) grows until an allocation fails, and libjsonnet then aborts the whole
process (``FATAL ERROR``, SIGABRT), saying nothing of the config. So jsonnet runs in a child
process (:mod:`toolkit.jsonnet_child`: a fresh interpreter, about 27 ms on top of jsonnet's own 23
for a config of this repository) under an address-space and a CPU-time limit and a
wall-clock deadline (:mod:`toolkit.limits`), and whatever ends it becomes one
:class:`ConfigurationError` naming the config and the bound. Every file evaluation reads (the
config itself, each ``import``, ``importstr`` and ``importbin``) must be a regular file of at most
``CONFIG_MAX_MB``: a FIFO, ``/dev/zero``, ``/dev/stdin`` or a directory is refused where it is
named instead of blocking or growing.

Plain JSON (most ``-o`` overrides) is read directly, as jsonnet would give it back, with no child.
macOS does not enforce address-space limits: there a memory bomb ends when jsonnet's allocation
fails or at the time bounds, in one line all the same.
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
from collections.abc import Mapping
from importlib.util import find_spec
from typing import Any

from toolkit import jsonnet_child
from toolkit.errors import ConfigurationError
from toolkit.limits import CONFIG_MAX_MB, CONFIG_MEMORY_MB, CONFIG_SECONDS

# A fresh interpreter (-I: nothing from the environment or the current folder on its path; -S: no
# site packages) runs the child's file with libjsonnet's folder as its one addition to the path.
CHILD = [sys.executable, "-I", "-S", jsonnet_child.__file__, os.path.dirname(find_spec("_jsonnet").origin or "")]


def evaluate(name: str, text: str, ext_vars: Mapping[str, str]) -> Any:
    """The JSON value of the jsonnet *text* of the file *name* (``<snippet>`` for a snippet): plain
    JSON read directly, anything else evaluated by jsonnet in a child process within the bounds.
    """
    if (value := plain_json(text)) is not None:
        return value
    seconds = CONFIG_SECONDS.value()
    request = {
        "name": name,
        "text": text,
        "ext_vars": dict(ext_vars),
        "memory": CONFIG_MEMORY_MB.as_bytes(),
        "seconds": seconds,
        "most": CONFIG_MAX_MB.as_bytes(),
        "bound": CONFIG_MAX_MB.describe(),
    }
    try:
        done = subprocess.run(CHILD, input=json.dumps(request).encode(), capture_output=True, timeout=seconds, check=False)
    except subprocess.TimeoutExpired:
        raise ConfigurationError(f"cannot evaluate {name}: it ran for longer than {CONFIG_SECONDS.describe()}, the bound on evaluating a config") from None
    reply = done.stdout.decode("utf-8", errors="replace")
    if done.returncode != 0 or not reply.startswith(("=", "!")):
        raise ConfigurationError(f"cannot evaluate {name}: {how_it_ended(done)}")
    if reply.startswith("!"):
        raise ConfigurationError(f"cannot evaluate {name}: {reply[1:]}")
    try:
        return json.loads(reply[1:])
    except RecursionError:
        raise ConfigurationError(f"cannot evaluate {name}: its value is nested too deeply to read") from None


def how_it_ended(done: subprocess.CompletedProcess) -> str:
    """Why the child ended without an answer: memory, CPU time, or a crash, with its last word."""
    error = done.stderr.decode("utf-8", errors="replace")
    if done.returncode == jsonnet_child.OUT_OF_MEMORY or "memory allocation" in error:  # libjsonnet: "FATAL ERROR: a memory allocation error occurred."
        return f"it needs more memory than {CONFIG_MEMORY_MB.describe()}, the bound on evaluating a config"
    if done.returncode == -getattr(signal, "SIGXCPU", 0):
        return f"it ran for longer than {CONFIG_SECONDS.describe()}, the bound on evaluating a config"
    try:
        how = f"signal {signal.Signals(-done.returncode).name}" if done.returncode < 0 else f"exit status {done.returncode}"
    except ValueError:
        how = f"signal {-done.returncode}"
    last = error.strip().splitlines()[-1:]
    return f"jsonnet ended abnormally ({how}{': ' + last[0] if last else ''})"


def read_config_file(path: str) -> str:
    """The text of the config file *path*, a regular file of at most ``CONFIG_MAX_MB``; else one line saying what it is."""
    try:
        data = jsonnet_child.read_regular_file(path, CONFIG_MAX_MB.as_bytes(), CONFIG_MAX_MB.describe())
    except jsonnet_child.Refused as error:
        raise ConfigurationError(f"config file {error}") from None
    return data.decode("utf-8", errors="replace")


def plain_json(text: str) -> Any:
    """*text* read as JSON, as jsonnet would give it back (keys sorted, integral numbers as ints), or
    ``None`` where jsonnet must say what it is: not JSON, a key twice, NaN, a number out of range.
    """
    try:
        return json.loads(text, parse_int=_jsonnet_number, parse_float=_jsonnet_number, parse_constant=_not_json, object_pairs_hook=_sorted_object)
    except (ValueError, RecursionError):
        return None


def _jsonnet_number(text: str) -> int | float:
    """A number as jsonnet outputs it: a double, written as an integer when it is one."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(text)
    return int(value) if value.is_integer() else value


def _not_json(text: str) -> Any:
    raise ValueError(text)


def _sorted_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    if len({key for key, _ in pairs}) != len(pairs):
        raise ValueError("a key twice")
    return dict(sorted(pairs))
