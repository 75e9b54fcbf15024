"""Bad input met by training runs: a replaced run interrupted, a time budget on a busy machine."""

from __future__ import annotations

from tests.bad_inputs.machinery import Case

CASES: list[Case] = []
