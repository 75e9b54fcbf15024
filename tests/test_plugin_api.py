"""The public API a plugin may rely on: docs/plugin_api.md is true, and an old form keeps working with a warning."""

import importlib
import json
import logging
import os
import re
import subprocess
import sys
import warnings

import pytest

from tests.conftest import FIXTURES, REPO
from toolkit import plugins, upgrades
from toolkit.params import Params
from toolkit.registrable import registered_bases
from toolkit.upgrades import ToolkitDeprecationWarning
from transition_systems import LEFT, REDUCE, RIGHT, SHIFT, SWAP, ValidActions

OLD_PLUGIN = FIXTURES / "old_plugin"


@pytest.fixture(autouse=True)
def no_site_warned_yet(monkeypatch):
    """Each test starts as a fresh process would: no old call site has been warned about."""
    monkeypatch.setattr(upgrades, "_WARNED_SITES", set())


def listed() -> list[tuple[str, list[str]]]:
    """(name, import paths) for every name in the doc's tables."""
    rows = []
    for line in (REPO / "docs" / "plugin_api.md").read_text(encoding="utf-8").splitlines():
        if line.startswith("| `"):
            _, names, paths, _ = line.split("|", 3)
            rows += [(name, re.findall(r"`([\w.]+)`", paths)) for name in re.findall(r"`([\w.]+)`", names)]
    return rows


def test_every_listed_name_imports_from_every_path_listed():
    rows = listed()
    assert len(rows) > 50
    for name, paths in rows:
        assert paths, f"{name} has no import path"
        found = []
        for path in paths:
            value = importlib.import_module(path)
            for part in name.split("."):  # Registrable.register
                assert hasattr(value, part), f"docs/plugin_api.md: {name} does not import from {path}"
                value = getattr(value, part)
            found.append(value)
        assert all(value == found[0] for value in found), f"{name} is another object from each of {paths}"


def test_every_registrable_base_is_listed():
    plugins.import_builtin_components()
    names = {name for name, _ in listed()}
    shipped = ("toolkit", "transition_systems", "tree_codecs", "predictors")  # not the bases other test modules define
    assert {base.__name__ for base in registered_bases() if base.__module__.split(".")[0] in shipped} <= names


# ------------------------------------------------------------------ ValidActions.of's flags


def test_the_old_flags_mean_the_kinds_they_stood_for():
    new = ValidActions.of(moves=[SHIFT], arcs=[LEFT, RIGHT], root_label="root")
    with pytest.warns(DeprecationWarning, match=r"ValidActions.of\(moves=") as caught:
        assert ValidActions.of(shift=True, left=True, right=True, root=False, swap=False, root_label="root") == new  # by keyword, as in the bug report
        assert ValidActions.of(True, True, True, False, False, "root") == new  # by position, as the shipped systems called it
        assert ValidActions.of(True, False, False, True, False, "root", reduce=True) == ValidActions.of(
            moves=[SHIFT, REDUCE], root_arcs=[RIGHT], root_label="root"
        )  # the example plugin's arc-eager
        assert ValidActions.of(True, False, True, root=False, swap=True, root_label="root", shift_symbol="SHIFT:the") == ValidActions.of(
            moves=[SHIFT, SWAP], arcs=[RIGHT], root_label="root", shift_symbol="SHIFT:the"
        )
    with pytest.warns(DeprecationWarning, match=r"valid.but\(moves=valid.moves \| \{SWAP\}\)") as caught_too:
        assert new.but(swap=True, left=False) == new.but(moves={SHIFT, SWAP}, arcs={RIGHT})
    assert all(warning.category is ToolkitDeprecationWarning and warning.filename == __file__ for warning in [*caught, *caught_too])
    with pytest.raises(TypeError, match="unexpected keyword argument 'shfit'"):
        ValidActions.of(shfit=True)


def test_an_old_call_warns_once_per_call_site():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default", ToolkitDeprecationWarning)
        for _ in range(5):
            ValidActions.of(shift=True, left=False, right=False, root=False, swap=False, root_label=None)
        ValidActions.of(shift=False, left=False, right=False, root=True, swap=False, root_label=None)
    assert [warning.lineno for warning in caught] == [caught[0].lineno, caught[0].lineno + 1]


def old_flags_call():
    return ValidActions.of(shift=True, left=True, right=False, root=False, swap=False, root_label="root")


def old_but_call(valid):
    return valid.but(swap=True)


def test_an_old_call_in_a_parsers_inner_loop_warns_once_whatever_resets_the_filters():
    """Two sites, 100,000 old calls: two warnings, however often the filters are reset.

    pytest shows every DeprecationWarning ("always"), and torch or any catch_warnings resets Python's
    once-per-location record; before, this was 100,000 warnings.
    """
    new = ValidActions.of(moves=[SHIFT], arcs=[LEFT], root_label="root")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for step in range(50_000):
            assert old_flags_call() == new
            assert old_but_call(new) == new.but(moves=new.moves | {SWAP})
            if step % 1000 == 0:
                warnings.filterwarnings("ignore", message="an unrelated warning")  # as torch does: every site's record is reset
                with warnings.catch_warnings():
                    pass
    sites = [(warning.category, warning.filename, warning.lineno) for warning in caught]
    assert sites == [
        (ToolkitDeprecationWarning, __file__, old_flags_call.__code__.co_firstlineno + 1),
        (ToolkitDeprecationWarning, __file__, old_but_call.__code__.co_firstlineno + 1),
    ]


def test_the_warnings_name_every_old_form_they_replace():
    from transition_systems.actions import BUT_KINDS, FLAGS, OF_KINDS, OLD_PARAMETERS

    old_form, new_form = OF_KINDS.split(" is now ")
    assert all(re.search(rf"\b{name}\b", old_form) for name in OLD_PARAMETERS)  # shift_symbol= too, which the first text left out
    assert "root_label=" in new_form and "shift_symbol=" in new_form  # a plugin passing them learns that they stay
    assert all(f"{name}=" in BUT_KINDS.split(" is now ")[0] for name in FLAGS)
    assert "shift_symbol=" in BUT_KINDS and "root_label=" in BUT_KINDS


def test_an_old_call_raised_as_an_error_raises_every_time():
    with warnings.catch_warnings():
        warnings.simplefilter("error", ToolkitDeprecationWarning)
        for _ in range(2):
            with pytest.raises(ToolkitDeprecationWarning):
                ValidActions.of(shift=True, left=False, right=False, root=True, swap=False, root_label=None)


# ------------------------------------------------------------------ config keys that moved


def test_a_config_with_moved_keys_is_read_with_one_warning_per_key(tmp_path, caplog):
    config = tmp_path / "old.jsonnet"
    config.write_text(json.dumps({"model": {"encoder": {"type": "transformer", "num_layers": 2, "dropout": 0.3, "max_length": 90}}}))
    overrides = {"model.encoder.dropout": 0.2, "model.encoder.layers.num_heads": 4}  # an old key and a new one, over the file's old keys
    with caplog.at_level(logging.WARNING, logger="toolkit.upgrades"):
        params = Params.from_file(config, overrides)
    assert params.as_dict()["model"]["encoder"] == {
        "type": "transformer",
        "layers": {"num_layers": 2, "dropout": 0.2, "num_heads": 4},
        "positional_encoding": {"type": "sinusoidal", "max_length": 90},
    }
    assert [record.getMessage() for record in caplog.records] == [
        f"{config}: model.encoder.num_layers -> model.encoder.layers.num_layers (the key has moved; read as the new one, but update the config)",
        f"{config}: model.encoder.dropout -> model.encoder.layers.dropout (the key has moved; read as the new one, but update the config)",
        f"{config}: model.encoder.max_length -> model.encoder.positional_encoding.max_length (the key has moved; read as the new one, but update the config)",
        "the overrides: model.encoder.dropout -> model.encoder.layers.dropout (the key has moved; read as the new one, but update the config)",
    ]


# ------------------------------------------------------------------ a plugin of the previous release


def toolkit(*args: str, environment: dict[str, str]) -> subprocess.CompletedProcess:
    """`toolkit ARGS` in a fresh process, with Python's default warning filters as a user has them."""
    return subprocess.run([sys.executable, "-m", "toolkit.cli", *args], env=environment, capture_output=True, text=True, cwd=REPO)


def test_a_plugin_and_config_written_for_the_previous_release_train_with_warnings(ewt, tmp_path):
    environment = {
        **{name: value for name, value in os.environ.items() if name != "PYTHONWARNINGS"},
        "PYTHONPATH": os.pathsep.join([str(REPO), str(FIXTURES)]),
        "TRAIN": str(ewt["train"]),
        "TEST": str(ewt["test"]),
    }
    config = str(OLD_PLUGIN / "old_arc_hybrid.jsonnet")
    result = toolkit("train", config, "-s", str(tmp_path / "run"), "--include-package", "old_plugin", environment=environment)
    assert result.returncode == 0, result.stderr[-3000:]
    assert (tmp_path / "run" / "model.tar.gz").exists() and "test:" in result.stderr
    for old, new in (
        ("model.encoder.dropout", "model.encoder.layers.dropout"),
        ("model.encoder.max_length", "model.encoder.positional_encoding.max_length"),
        ("model.decoder.num_layers", "model.decoder.layers.num_layers"),
    ):
        assert f"{config}: {old} -> {new} (the key has moved; read as the new one, but update the config)" in result.stderr
    source = OLD_PLUGIN / "__init__.py"
    line = source.read_text(encoding="utf-8").splitlines().index("        return ValidActions.of(") + 1
    warned = f"{source}:{line}: ToolkitDeprecationWarning: ValidActions.of's flags"
    # once per call site, not per step, and not again after torch's own warning filters reset Python's record of it
    assert result.stderr.count(warned) == 1, result.stderr[-3000:]
    assert "ValidActions.of(moves=" in result.stderr

    result = toolkit("oracle", config, str(ewt["test"]), "--include-package", "old_plugin", environment=environment)
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout)
    assert report["examples"] == 10 and report["oracle_errors"] == 0 and result.stderr.count(warned) == 1
    assert f"{config}: model.encoder.dropout -> model.encoder.layers.dropout" in result.stderr
