"""Ctrl-C and SIGTERM, met so that the work they stop cleans up and says what it left.

Python's default for SIGTERM ends the process at once: no ``finally`` runs, so a half-written file
or a half-moved run stays. Inside :func:`termination_interrupts` SIGTERM raises :class:`Terminated`
(a ``KeyboardInterrupt``) instead, wherever the main thread is, and the CLI reports it as
``interrupted`` with status 143 (130 for Ctrl-C). Inside :func:`shielded` both wait until a short
critical step (files of a run moving between folders) has ended.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class Terminated(KeyboardInterrupt):
    """SIGTERM (a scheduler ending the job, ``kill``), raised where Ctrl-C would be."""


def in_main_thread() -> bool:
    """Whether signal handlers can be set here (Python allows it in the main thread only)."""
    return threading.current_thread() is threading.main_thread()


@contextmanager
def termination_interrupts() -> Iterator[None]:
    """While inside, SIGTERM raises :class:`Terminated` (in the main thread only: elsewhere signals cannot be caught)."""
    if not in_main_thread():
        yield
        return

    def interrupt(signum, frame) -> None:
        raise Terminated

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def shielded() -> Iterator[None]:
    """Ctrl-C and SIGTERM wait until the step inside has ended, then take effect.

    For steps that must not stop half-way (a run's files moving from one folder to another). In the
    main thread only; elsewhere no handler can be set, and such steps need markers of their own
    to be finished by the next start.
    """
    if not in_main_thread():
        yield
        return
    received: list[int] = []
    handlers = {number: signal.signal(number, lambda caught, frame: received.append(caught)) for number in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for number, handler in handlers.items():
            signal.signal(number, handler)
        if received:
            raise KeyboardInterrupt if received[0] == signal.SIGINT else Terminated
