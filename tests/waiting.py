"""Waiting for an event, never for a time: no test may depend on how fast the machine is.

A test that sleeps a fixed time hoping something has happened by then fails on a busy machine, and
so does one that asserts something took less than a few seconds. :func:`wait_for` polls for the
event itself (a log line, a file, a socket's answer) and gives up only at a deadline that no
machine, however busy, comes near: :data:`GENEROUS`, reached by a hang, that is a broken
implementation. See docs/development.md, "Tests that hold on any machine".
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

GENEROUS = 600.0  # seconds: a backstop for waits and subprocesses that only a hang reaches


def wait_for(condition: Callable[[], T], what: str, timeout: float = GENEROUS, every: float = 0.02) -> T:
    """*condition*'s first true value, asked every *every* seconds; ``AssertionError`` naming *what* after *timeout* seconds."""
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout:g} s")
        time.sleep(every)
    return value
