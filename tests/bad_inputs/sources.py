"""Where configs and models come from: jsonnet that never ends or reads a device, downloads that stall or never end."""

from __future__ import annotations

from tests.bad_inputs.machinery import Case

CASES: list[Case] = []
