"""Plugins as a user meets them: lazy entry points, archives that remember their plugins, a pip-installed example."""

import json
import os
import shutil
import subprocess
import sys
import tarfile
from importlib.metadata import EntryPoint

import pytest

from tests.conftest import FIXTURES, REPO, data_root, run
from tests.plugin_env import PLUGIN, make_venv
from toolkit import plugins
from toolkit.errors import RegistryError
from toolkit.grammars import Grammar
from toolkit.metrics.metric import Metric
from toolkit.params import Params
from toolkit.registrable import record_built

plugins.import_builtin_components()


@pytest.fixture
def fake_entry_points(tmp_path, monkeypatch):
    """Install entry points to modules written in *tmp_path*; forget which plugins were loaded, before and after."""
    monkeypatch.syspath_prepend(str(tmp_path))

    def install(**modules: str) -> None:
        for name, source in modules.items():
            (tmp_path / f"{name}.py").write_text(source)
        points = [EntryPoint(name, name, plugins.ENTRY_POINT_GROUP) for name in modules]
        monkeypatch.setattr(plugins, "entry_points", lambda group: points if group == plugins.ENTRY_POINT_GROUP else [])
        plugins.load_entry_point_plugins.cache_clear()

    yield install
    plugins.load_entry_point_plugins.cache_clear()


LOWERCASE_GRAMMAR = """
from toolkit.grammars import Grammar
from toolkit.grammars.sequence import SequenceGrammar

@Grammar.register("{name}")
class Lowercase(SequenceGrammar):
    pass
"""


def test_entry_points_load_only_when_a_name_is_missing(fake_entry_points):
    fake_entry_points(lazy_plugin_a=LOWERCASE_GRAMMAR.format(name="lazy_a"))
    Grammar.from_params({"type": "sequence"})
    assert "lazy_plugin_a" not in sys.modules  # a built-in name never imports a plugin
    assert type(Grammar.from_params({"type": "lazy_a"})).__module__ == "lazy_plugin_a"


def test_a_broken_plugin_is_a_warning_and_the_name_stays_unknown(fake_entry_points, caplog):
    fake_entry_points(broken_plugin=LOWERCASE_GRAMMAR.format(name="never") + "\nraise RuntimeError('oops')\n")
    with pytest.raises(RegistryError, match="'lazy_missing' is not a registered Grammar"):
        Grammar.from_params({"type": "lazy_missing"})
    assert "plugin broken_plugin (entry point broken_plugin) could not be loaded: oops" in caplog.text


def test_the_plugins_of_an_archive_are_the_packages_of_the_components_built(fake_entry_points, tmp_path):
    fake_entry_points(lazy_plugin_b=LOWERCASE_GRAMMAR.format(name="lazy_b"))
    (tmp_path / "my_metrics.py").write_text("from toolkit.metrics import ExactMatch\nclass Exact(ExactMatch):\n    pass\n")
    with record_built() as built:
        Grammar.from_params({"type": "arc_standard"})
        Metric.from_params({"type": "exact_match"})
    assert plugins.plugin_records(built) == []
    with record_built() as built:
        Grammar.from_params({"type": "lazy_b"})
        Metric.from_params({"type": "my_metrics.Exact"})
        Metric.from_params({"type": "exact_match"})
    assert plugins.plugin_records(built) == [  # on the path, not installed: the folder they came from
        {"package": "lazy_plugin_b", "distribution": None, "version": None, "direct_url": None, "path": str(tmp_path)},
        {"package": "my_metrics", "distribution": None, "version": None, "direct_url": None, "path": str(tmp_path)},
    ]


def test_list_names_the_package_of_every_component(monkeypatch, capsys):
    code, out, _ = run(monkeypatch, capsys, "list", "Grammar")
    assert code == 0
    assert "  arc_standard: transition_systems.arc_standard.ArcStandard [parsing-toolkit 0.2.0]" in out


def test_the_example_plugin_configs_build_the_plugin_grammars(monkeypatch):
    monkeypatch.syspath_prepend(str(PLUGIN))
    import toolkit_example_plugin  # noqa: F401

    for config, name in (("geo_postorder.jsonnet", "PostorderCodec"), ("ud_ewt_arc_eager.jsonnet", "ArcEager"), ("ud_ewt_covington.jsonnet", "Covington")):
        params = Params.from_file(str(PLUGIN / "configs" / config))
        assert type(Grammar.from_params(params.pop("grammar"))).__name__ == name


# ------------------------------------------------------------------ archives remember their plugins


@pytest.fixture(scope="module")
def plugin_archive(tmp_path_factory):
    """A tiny GEO parser with the example plugin's post-order codec, trained in a subprocess with --include-package."""
    source = data_root() / "geo" / "train.txt"
    if not source.exists():
        pytest.skip(f"GEO data not found at {source}")
    directory = tmp_path_factory.mktemp("postorder")
    lines = source.read_text(encoding="utf-8").splitlines()
    (directory / "train.tsv").write_text("\n".join(lines[:30]) + "\n")
    (directory / "test.tsv").write_text("\n".join(lines[30:36]) + "\n")
    environment = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), str(PLUGIN)]),
        "TRAIN": str(directory / "train.tsv"),
        "TEST": str(directory / "test.tsv"),
    }
    toolkit(
        environment,
        "train",
        FIXTURES / "tiny_postorder.jsonnet",
        "-s",
        directory / "run",
        "-o",
        '{"trainer.num_epochs": 1}',
        "--include-package",
        "toolkit_example_plugin",
    )
    return directory


def toolkit(environment, *args, python=sys.executable, check=True):
    result = subprocess.run([str(python), "-m", "toolkit.cli", *map(str, args)], env=environment, capture_output=True, text=True, cwd=REPO)
    if check:
        assert result.returncode == 0, result.stderr[-3000:]
    return result


def test_an_archive_records_its_plugins_and_imports_them_in_a_fresh_process(plugin_archive):
    with tarfile.open(plugin_archive / "run" / "model.tar.gz") as tar:
        assert json.load(tar.extractfile("plugins.json")) == [
            {"package": "toolkit_example_plugin", "distribution": None, "version": None, "direct_url": None, "path": str(PLUGIN)}
        ]
    # a fresh process that never imports the plugin by hand: no --include-package, no entry point
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(PLUGIN)])}
    result = toolkit(environment, "predict", plugin_archive / "run" / "model.tar.gz", plugin_archive / "test.tsv")
    outputs = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(outputs) == 6 and all("logical_form" in output for output in outputs)


def test_an_archive_whose_plugin_is_missing_says_which_in_one_line(plugin_archive):
    environment = {**os.environ, "PYTHONPATH": str(REPO)}
    result = toolkit(environment, "predict", plugin_archive / "run" / "model.tar.gz", plugin_archive / "test.tsv", check=False)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert (
        result.stderr.strip()
        .splitlines()[-1]
        .endswith(
            f"needs the plugin package 'toolkit_example_plugin' (imported from {PLUGIN} when the archive was written), "
            f"which is not installed: put {PLUGIN} on PYTHONPATH or pip install it"
        )
    )


def test_an_archive_whose_plugin_is_broken_says_where_in_one_line(plugin_archive, tmp_path):
    (tmp_path / "toolkit_example_plugin").mkdir()
    (tmp_path / "toolkit_example_plugin" / "__init__.py").write_text("def f(:\n")
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(tmp_path)])}
    result = toolkit(environment, "predict", plugin_archive / "run" / "model.tar.gz", plugin_archive / "test.tsv", check=False)
    assert result.returncode == 1 and "Traceback" not in result.stderr and result.stdout == ""
    assert result.stderr.strip().splitlines()[-1] == (
        "error: the plugin package 'toolkit_example_plugin' failed to import: SyntaxError: invalid syntax "
        f"(at {tmp_path / 'toolkit_example_plugin' / '__init__.py'}:1; toolkit -v shows the traceback)"
    )


# ------------------------------------------------------------------ the example plugin, pip-installed


@pytest.mark.slow  # a new virtual environment and two trainings in subprocesses
def test_pip_installed_plugin_trains_and_predicts_through_the_cli(tmp_path):
    """Pip install examples/plugin into a new environment; train and predict with its grammars by name only."""
    ewt_dev, geo = data_root() / "ud-english-ewt" / "en_ewt-ud-dev.conllu", data_root() / "geo" / "train.txt"
    if not (ewt_dev.exists() and geo.exists()):
        pytest.skip("EWT or GEO data not found")
    python = make_venv(tmp_path / "venv")
    environment = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    sentences = ewt_dev.read_text(encoding="utf-8").split("\n\n")
    (tmp_path / "train.conllu").write_text("\n\n".join(sentences[:30]) + "\n\n")
    (tmp_path / "test.conllu").write_text("\n\n".join(sentences[30:36]) + "\n\n")
    questions = geo.read_text(encoding="utf-8").splitlines()
    (tmp_path / "train.tsv").write_text("\n".join(questions[:30]) + "\n")
    (tmp_path / "test.tsv").write_text("\n".join(questions[30:36]) + "\n")

    listed = toolkit(environment, "list", "Grammar", python=python).stdout
    assert "arc_eager: toolkit_example_plugin.arc_eager.ArcEager [toolkit-example-plugin 0.1.0]" in listed
    assert "postorder: toolkit_example_plugin.postorder.PostorderCodec [toolkit-example-plugin 0.1.0]" in listed
    assert "covington: toolkit_example_plugin.covington.Covington [toolkit-example-plugin 0.1.0]" in listed

    for name, config, suffix, overrides in (
        ("ewt", "tiny_dependency.jsonnet", "conllu", {"grammar.type": "arc_eager"}),
        # a new action kind (NO-ARC) and a configuration with a second list; n(n + 3)/2 actions must fit max_steps
        ("ewt_covington", "tiny_dependency.jsonnet", "conllu", {"grammar": {"type": "covington"}, "model.search": {"type": "greedy", "max_steps": 1000}}),
        ("geo", "tiny_postorder.jsonnet", "tsv", {}),
    ):
        data = {"TRAIN": str(tmp_path / f"train.{suffix}"), "TEST": str(tmp_path / f"test.{suffix}")}
        toolkit(
            {**environment, **data}, "train", FIXTURES / config, "-s", tmp_path / name, "-o", json.dumps({**overrides, "trainer.num_epochs": 1}), python=python
        )
        with tarfile.open(tmp_path / name / "model.tar.gz") as tar:
            assert json.load(tar.extractfile("plugins.json")) == [
                {
                    "package": "toolkit_example_plugin",
                    "distribution": "toolkit-example-plugin",
                    "version": "0.1.0",
                    "direct_url": {"url": (tmp_path / "venv" / "plugin-source").as_uri(), "dir_info": {}},  # PEP 610: pip installed it from that folder
                    "path": None,
                }
            ]
        predicted = toolkit(environment, "predict", tmp_path / name / "model.tar.gz", tmp_path / f"test.{suffix}", python=python).stdout
        if suffix == "conllu":  # the dependency predictor is the archive's default: one CoNLL-U block per sentence
            assert predicted.count("\n\n") == 6 and "# error" not in predicted
        else:
            assert [("logical_form" in json.loads(line)) for line in predicted.splitlines()] == [True] * 6


# ------------------------------------------------------------------ where a missing plugin came from


@pytest.mark.parametrize(
    ("record", "where", "install"),
    [
        (
            {"distribution": "my-parsers", "version": "0.3.0", "direct_url": None},
            "my-parsers 0.3.0 from a package index",
            "pip install my-parsers==0.3.0",
        ),
        (
            {"distribution": "my-parsers", "version": "0.3.0", "direct_url": {"url": "file:///home/me/my%20parsers", "dir_info": {"editable": True}}},
            "my-parsers 0.3.0, an editable install of /home/me/my parsers",
            "pip install -e '/home/me/my parsers'",  # quoted, to paste as it is
        ),
        (
            {"distribution": "my-parsers", "version": "0.3.0", "direct_url": {"url": "file:///src/my_parsers", "dir_info": {}}},
            "my-parsers 0.3.0 from the local folder /src/my_parsers",
            "pip install /src/my_parsers",
        ),
        (
            {"distribution": "my-parsers", "version": "0.3.0", "direct_url": {"url": "file:///dist/my_parsers-0.3.0-py3-none-any.whl", "archive_info": {}}},
            "my-parsers 0.3.0 from /dist/my_parsers-0.3.0-py3-none-any.whl",
            "pip install /dist/my_parsers-0.3.0-py3-none-any.whl",
        ),
        (
            {
                "distribution": "my-parsers",
                "version": "0.3.0",
                "direct_url": {"url": "https://example.org/my.git", "vcs_info": {"vcs": "git", "commit_id": "a1b2c3"}},
            },
            "my-parsers 0.3.0 from git+https://example.org/my.git@a1b2c3",
            "pip install git+https://example.org/my.git@a1b2c3",
        ),
        (
            {"distribution": None, "version": None, "path": "/work/plugins"},
            "imported from /work/plugins when the archive was written",
            "put /work/plugins on PYTHONPATH or pip install it",
        ),
        ({"distribution": None, "version": None}, "", "put my_parsers on PYTHONPATH or pip install it"),  # an archive written before paths were recorded
    ],
)
def test_a_missing_plugin_is_installed_again_from_where_it_came(record, where, install):
    assert plugins.reinstall_hint({"package": "my_parsers", **record}) == (where, install)


@pytest.mark.slow  # a new virtual environment and an editable pip install
def test_an_editable_install_is_recorded_as_one(tmp_path):
    """The reported case: a plugin installed with `pip install -e` is recorded with its folder, and named so when missing."""
    python = make_venv(tmp_path / "venv", with_plugin=False)
    source = shutil.copytree(PLUGIN, tmp_path / "my plugin", ignore=shutil.ignore_patterns("build", "*.egg-info"))
    installed = subprocess.run([str(python), "-m", "pip", "install", "--no-deps", "--quiet", "-e", str(source)], capture_output=True, text=True)
    assert installed.returncode == 0, installed.stderr[-3000:]
    script = "import json, toolkit_example_plugin as p; from toolkit.plugins import plugin_records; print(json.dumps(plugin_records([p.ArcEager])))"
    environment = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    result = subprocess.run([str(python), "-c", script], env=environment, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    [record] = json.loads(result.stdout)
    assert record["direct_url"]["dir_info"] == {"editable": True} and record["direct_url"]["url"] == source.as_uri()
    assert plugins.reinstall_hint(record) == (f"toolkit-example-plugin 0.1.0, an editable install of {source}", f"pip install -e '{source}'")
