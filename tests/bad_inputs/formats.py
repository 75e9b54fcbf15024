"""Formats other tools read back: CoNLL-U ranges, AMR metadata; graphs whose oracle must stay linear."""

from __future__ import annotations

from tests.bad_inputs.machinery import Case

CASES: list[Case] = []
