"""Install hints: every message names an extra that setup.cfg defines, in the one form of ``toolkit.extras``."""

import ast
import configparser
import re
from pathlib import Path

import pytest

from toolkit.extras import EXTRAS, install_hint

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("toolkit", "predictors", "transition_systems", "tree_codecs", "benchmarks", "examples")
CANONICAL = re.compile(r'pip install "parsing-toolkit\[([\w,-]+)\]"')
# `pip install` hints that are not about an extra: how to install a plugin package an archive needs
# again, from where it came from (an index, pinned; a folder, editable or not; a URL or a VCS)
NOT_EXTRAS = {
    "toolkit/plugins.py": (
        "pip install NAME==V``",
        "pip install -e PATH``",
        "pip install PATH``",
        "pip install {name}",
        "pip install {shlex.quote(where)}",
        "pip install -e {shlex.quote(where)}",
        "pip install it",
    )
}


def setup_cfg_extras() -> set[str]:
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    return set(config["options.extras_require"])


def source_files():
    for folder in SOURCES:
        for path in sorted((ROOT / folder).rglob("*.py")):
            yield path.relative_to(ROOT).as_posix(), path.read_text(encoding="utf-8")


def test_the_extras_are_setup_cfgs():
    assert set(EXTRAS) == setup_cfg_extras()


def test_a_hint_names_the_extras_in_one_form():
    assert install_hint("viz") == 'pip install "parsing-toolkit[viz]"'
    assert install_hint("spacy", "viz") == 'pip install "parsing-toolkit[spacy,viz]"'
    for wrong in (("matplotlib",), ("viz", "spaCy"), ()):
        with pytest.raises(ValueError, match="not extras"):
            install_hint(*wrong)


def test_every_install_hint_call_names_an_extra():
    extras = setup_cfg_extras()
    calls = 0
    for name, text in source_files():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "install_hint":
                calls += 1
                named = [argument.value for argument in node.args if isinstance(argument, ast.Constant)]
                assert named and len(named) == len(node.args), f"{name}:{node.lineno}: install_hint takes literal extras"
                assert set(named) <= extras, f"{name}:{node.lineno}: {named} are not all extras of setup.cfg"
    assert calls >= 10  # the scan does find them


def test_no_other_form_of_install_hint_in_the_sources():
    extras, wrong = setup_cfg_extras(), []
    for name, text in source_files():
        if name == "toolkit/extras.py":
            continue
        for number, line in enumerate(text.splitlines(), 1):
            # a command with an argument, not prose about pip ("``pip install`` makes", "pip installed")
            for start in (hint.start() for hint in re.finditer(r"pip install (?=\S)", line)):
                canonical = CANONICAL.match(line, start)
                if canonical and set(canonical.group(1).split(",")) <= extras:
                    continue  # where a call cannot go: a docstring's command line
                if not any(line.startswith(allowed, start) for allowed in NOT_EXTRAS.get(name, ())):
                    wrong.append(f"{name}:{number}: {line.strip()}")
    assert not wrong, "use toolkit.extras.install_hint:\n" + "\n".join(wrong)
