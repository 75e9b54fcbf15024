"""What a plugin author meets: deprecation warnings, missing plugins."""

from __future__ import annotations

from tests.bad_inputs.machinery import Case

CASES: list[Case] = []
