"""Queries that run against a database: unbounded beams, runaway Prolog, answers that are not ground."""

from __future__ import annotations

from tests.bad_inputs.machinery import Case

CASES: list[Case] = []
