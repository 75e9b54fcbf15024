"""Output files that must never be torn, interleaved or written over what is read; numeric options out of range; names of installed models."""

from __future__ import annotations

from tests.bad_inputs.machinery import Case

CASES: list[Case] = []
