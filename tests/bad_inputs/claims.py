"""What the documentation says a command does, checked against the command: a user who reads the docs is
given the defaults, ranges and behaviour the code has (serving.md said a stop waited "with no time
limit" long after ``--graceful-timeout`` existed).
"""

from __future__ import annotations

import re

import click

from tests.bad_inputs.machinery import Case, Env
from tests.conftest import REPO

PAGES = sorted((REPO / "docs").rglob("*.md")) + [REPO / "README.md"]
DEFAULT = re.compile(r"`(--[a-z][a-z-]*)` \((?:default )?`?([0-9][0-9.,]*[KMG]?)`?")
RANGE = re.compile(r"`(--[a-z][a-z-]*)`(?: and `(--[a-z][a-z-]*)`)? ([0-9][0-9.,]*) to ([0-9][0-9.,]*)")


def options() -> dict[str, list[click.Option]]:
    """Every option of every `toolkit` command, by its name (``--batch-size``: predict's, serve's, ...)."""
    from toolkit.cli import cli

    found: dict[str, list[click.Option]] = {}
    for command in cli.commands.values():
        for parameter in command.params:
            if isinstance(parameter, click.Option):
                for name in parameter.opts:
                    found.setdefault(name, []).append(parameter)
    return found


def number(text: str) -> float:
    return float(text.replace(",", ""))


def as_default(option: click.Option, text: str) -> object:
    """The doc's *text* for *option*'s default, read as the option reads a value (``64M``, ``10``, ``127.0.0.1``)."""
    if isinstance(option.type, (click.types.IntParamType, click.types.FloatParamType)) or hasattr(option.type, "UNITS"):
        return option.type.convert(text.replace(",", ""), option, None)
    return text


def claimed_defaults(env: Env) -> None:
    """Every "`--option` (N" in the docs is that option's default, in some command that has the option."""
    known, seen = options(), 0
    for page in PAGES:
        for name, text in DEFAULT.findall(page.read_text(encoding="utf-8")):
            assert name in known, f"{page.name}: {name} is no option of any command"
            assert any(as_default(option, text) == option.default for option in known[name]), f"{page.name}: {name} ({text}) is not its default"
            seen += 1
    assert seen >= 8, seen


def claimed_ranges(env: Env) -> None:
    """Every "`--option` A to B" in the docs is the range that option takes (click's own bounds)."""
    known, seen = options(), 0
    for page in PAGES:
        for first, second, least, most in RANGE.findall(page.read_text(encoding="utf-8")):
            for name in filter(None, (first, second)):
                bounds = {(getattr(option.type, "min", None), getattr(option.type, "max", None)) for option in known[name]}
                assert (number(least), number(most)) in bounds, f"{page.name}: {name} {least} to {most}; the command takes {bounds}"
                seen += 1
    assert seen >= 6, seen


def stopping_paragraph(env: Env) -> None:
    """docs/serving.md's paragraph on stopping gives the graceful time the server has, and no unbounded wait."""
    from toolkit.limits import MAX_TIMEOUT, MIN_TIMEOUT
    from toolkit.serving.server import GRACEFUL_TIMEOUT

    text = (REPO / "docs" / "serving.md").read_text(encoding="utf-8")
    paragraph = next(block for block in text.split("\n\n") if block.startswith("**Stopping.**"))
    assert "no time limit" not in paragraph and "`--graceful-timeout`" in paragraph
    assert f"{GRACEFUL_TIMEOUT:g} by default, {MIN_TIMEOUT:g} to {MAX_TIMEOUT:,}" in paragraph, paragraph


CASES: list[Case] = [
    Case(
        "docs-stopping",
        'docs/serving.md: on SIGTERM the server "waits, with no time limit" (it waits `--graceful-timeout`, 20 s, and then answers 503)',
        "`docs/serving.md`, against `toolkit.serving`",
        "the paragraph gives the graceful time, its default and its range, as the server has them",
        stopping_paragraph,
        message=False,
    ),
    Case(
        "docs-option-defaults",
        "an option's default as a page states it (`` `--client-timeout` (10 s ``, `` `--shard-size` (default `64M` ``)",
        "every page of `docs/` and the README, against `toolkit`'s options",
        "each is the default of that option in a command that has it",
        claimed_defaults,
        message=False,
    ),
    Case(
        "docs-option-ranges",
        "an option's range as a page states it (`` `--client-timeout` and `--graceful-timeout` 0.5 to 3,600 ``)",
        "every page of `docs/` and the README, against `toolkit`'s options",
        "each is the range that option takes",
        claimed_ranges,
        message=False,
    ),
]
