"""Bounds on the work that what a user gives can cause, each raised through an environment variable.

A config is code and a URL is someone else's server: either could run for ever or fill the memory
or the disk. The toolkit stops each at a bound set here, generous for honest input, and the error
names the bound and the variable that raises it (``TOOLKIT_CONFIG_SECONDS=300``)::

    >>> CONFIG_SECONDS.describe()
    '60 s (TOOLKIT_CONFIG_SECONDS)'
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

from toolkit.errors import ConfigurationError

MB = 1_000_000

MAX_BATCH = 4096
"""The most inputs decoded together (``predict``, ``serve``, ``Predictor.predict_lines``): as many as
``serve`` queues at once; a larger batch is no faster, holds every input in memory before the first
output, and past 2**63 was a traceback.
"""

MIN_TIMEOUT = 0.5
"""Seconds, the shortest ``serve --client-timeout`` and ``--graceful-timeout``: a shorter one is no bound
on a slow client but a server that cuts off its own answers (``1e-300`` dropped requests with no
response at all).
"""
MAX_TIMEOUT = 3600
"""Seconds, the longest of each: a longer ``--client-timeout`` lets slow clients hold connections for good (``inf``: forever)."""


@dataclass(frozen=True)
class Limit:
    """A bound: its *default*, in *unit*, unless the environment variable *variable* says otherwise."""

    variable: str
    default: float
    unit: str

    def value(self) -> float:
        """The bound in force: the variable's value, a positive number, else the default."""
        text = os.environ.get(self.variable, "").strip()
        if not text:
            return self.default
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and value > 0):
            raise ConfigurationError(f"{self.variable}: expected a positive number ({self.unit}), got {text!r}")
        return value

    def as_bytes(self) -> int:
        """The bound of a limit in MB, in bytes."""
        return int(self.value() * MB)

    def describe(self) -> str:
        """``60 s (TOOLKIT_CONFIG_SECONDS)``: the bound in force and how to change it."""
        return f"{self.value():g} {self.unit} ({self.variable})"


CONFIG_SECONDS = Limit("TOOLKIT_CONFIG_SECONDS", 60, "s")
"""How long evaluating one config (or ``-o`` snippet) may take, wall-clock."""
CONFIG_MEMORY_MB = Limit("TOOLKIT_CONFIG_MEMORY_MB", 1000, "MB")
"""How much memory evaluating one config may take."""
CONFIG_MAX_MB = Limit("TOOLKIT_CONFIG_MAX_MB", 64, "MB")
"""The largest file a config may be or read (``import``, ``importstr``, ``importbin``), and the largest JSON it may make."""
DOWNLOAD_SECONDS = Limit("TOOLKIT_DOWNLOAD_SECONDS", 3600, "s")
"""How long downloading one archive may take in all."""
DOWNLOAD_MAX_MB = Limit("TOOLKIT_DOWNLOAD_MAX_MB", 10_000, "MB")
"""The largest download when neither the server nor the archive's manifest says how large it is."""
