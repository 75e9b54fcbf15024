"""Params: key paths, typed pops, jsonnet files, ext vars and overrides."""

import json
import logging
import os
import subprocess
import sys
from contextlib import suppress
from pathlib import Path

import _jsonnet
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toolkit
from toolkit.bounded_jsonnet import plain_json
from toolkit.errors import ConfigurationError
from toolkit.params import Params, data_root, default_ext_vars, evaluate_jsonnet


@pytest.fixture
def no_data_env(monkeypatch):
    monkeypatch.delenv("DATA_ROOT", raising=False)
    monkeypatch.delenv("TOOLKIT_DATA", raising=False)


def write(tmp_path: Path, text: str, name: str = "config.jsonnet") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


class TestPop:
    def test_nested_dicts_carry_their_history(self):
        params = Params({"model": {"encoder": {"num_layers": 2}}})
        encoder = params.pop("model").pop("encoder")
        assert isinstance(encoder, Params) and encoder.history == "model.encoder."
        assert "model" not in params

    def test_missing_required_key_names_the_full_path(self):
        encoder = Params({"model": {"encoder": {}}}).pop("model").pop("encoder")
        with pytest.raises(ConfigurationError, match=r"^missing key 'model\.encoder\.num_layers'$"):
            encoder.pop("num_layers")
        assert encoder.pop("num_layers", 3) == 3

    def test_a_component_must_be_an_object_and_null_leaves_an_optional_one_out(self):
        params = Params({"model": {"type": "x"}, "grammar": None, "trainer": 3, "vocabulary": {}})
        model = params.pop_object("model")
        assert isinstance(model, Params) and model.history == "model." and model.pop("type") == "x"
        assert params.pop_object("grammar", None) is None and params.pop_object("missing", None) is None
        default = params.pop_object("absent", {"type": "y"})
        assert default.history == "absent." and default.pop("type") == "y"
        assert params.pop_object("vocabulary", {"min_count": 1}).as_dict() == {}  # given, even empty, wins
        with pytest.raises(ConfigurationError, match=r"^trainer: expected an object \(a component's config\), got 3$"):
            params.pop_object("trainer", {})
        with pytest.raises(ConfigurationError, match=r"^reader: expected an object .*, got None$"):
            Params({"reader": None}).pop_object("reader")
        with pytest.raises(ConfigurationError, match=r"^missing key 'reader'$"):
            Params({}).pop_object("reader")

    def test_a_string_is_a_string_and_null_only_where_optional(self):
        params = Params({"path": "a.tsv", "test": None, "bad": {"x": [1]}, "required": None})
        assert params.pop_str("path") == "a.tsv" and params.pop_str("test", None) is None
        with pytest.raises(ConfigurationError, match=r"^bad: expected a string, got \{'x': \[1\]\}$"):  # the value, not Params(...)
            params.pop_str("bad", None)
        with pytest.raises(ConfigurationError, match=r"^required: expected a string, got None$"):
            params.pop_str("required")

    def test_get_does_not_remove_and_nested_views_share(self):
        params = Params({"trainer": {"num_epochs": 1}})
        assert params.get("missing") is None
        params["trainer"]["num_epochs"] = 5
        assert params.get("trainer").history == "trainer."
        assert params.as_dict() == {"trainer": {"num_epochs": 5}}

    def test_typed_pops(self):
        params = Params({"i": 3, "f": 2, "b": "true", "c": "dfs", "bad": True})
        assert params.pop_int("i") == 3
        assert params.pop_float("f") == 2.0 and isinstance(params.pop_float("x", 1), float)
        assert params.pop_bool("b") is True
        assert params.pop_choice("c", ["bfs", "dfs"]) == "dfs"
        assert params.pop_choice("d", ["bfs", "dfs"], default="bfs") == "bfs"
        with pytest.raises(ConfigurationError, match=r"^bad: expected int, got True$"):
            params.pop_int("bad")

    def test_pop_choice_lists_the_choices(self):
        params = Params({"order": "xfs"}, history="decoder.")
        message = r"^decoder\.order: expected one of 'bfs', 'dfs', got 'xfs'$"
        with pytest.raises(ConfigurationError, match=message):
            params.pop_choice("order", ["bfs", "dfs"])

    def test_as_dict_and_duplicate_are_independent_copies(self):
        source = {"a": {"b": [1, {"c": 2}]}}
        params = Params(source)
        plain = params.as_dict()
        plain["a"]["b"][1]["c"] = 99
        copy = params.duplicate()
        copy.pop("a")
        assert params.as_dict() == {"a": {"b": [1, {"c": 2}]}} and type(plain["a"]) is dict
        params.pop("a").pop("b")
        assert source == {"a": {"b": [1, {"c": 2}]}}

    def test_assert_empty_names_every_leftover(self):
        params = Params({"x": 1, "y": 2}, history="trainer.")
        with pytest.raises(ConfigurationError) as info:
            params.assert_empty("Trainer")
        assert "'trainer.x'" in str(info.value) and "'trainer.y'" in str(info.value)
        Params({}).assert_empty("Trainer")


class TestFiles:
    def test_missing_file(self, tmp_path):
        with pytest.raises(ConfigurationError, match="^config file not found: .*nope.jsonnet$"):
            Params.from_file(tmp_path / "nope.jsonnet")

    def test_jsonnet_error_carries_file_and_line(self, tmp_path):
        path = write(tmp_path, "{\n  a: 1,\n  b: ,\n}\n")
        with pytest.raises(ConfigurationError) as info:
            Params.from_file(path)
        assert f"{path}:3" in str(info.value)

    def test_runtime_error_names_the_undefined_ext_var(self, tmp_path):
        path = write(tmp_path, '{a: std.extVar("SURELY_UNDEFINED_VAR_42")}')
        with pytest.raises(ConfigurationError, match="SURELY_UNDEFINED_VAR_42"):
            Params.from_file(path)

    def test_top_level_must_be_an_object(self, tmp_path):
        with pytest.raises(ConfigurationError, match="top level must be an object, got list"):
            Params.from_file(write(tmp_path, "[1, 2]"))

    def test_imports_relative_to_the_config(self, tmp_path):
        write(tmp_path, "{hidden: 8}", "base.libsonnet")
        path = write(tmp_path, 'local base = import "base.libsonnet"; {model: base + {layers: 2}}')
        assert Params.from_file(path).as_dict() == {"model": {"hidden": 8, "layers": 2}}

    def test_to_file_round_trips(self, tmp_path):
        params = Params({"model": {"sizes": [1, 2]}, "name": "x"})
        params.to_file(tmp_path / "out.json")
        assert json.loads((tmp_path / "out.json").read_text()) == params.as_dict()
        assert Params.from_file(tmp_path / "out.json").as_dict() == params.as_dict()


class TestExtVars:
    def test_data_root_default_is_shared_data_beside_the_repository(self, no_data_env):
        repository = Path(toolkit.__file__).absolute().parent.parent
        assert data_root() == str(repository.parent / "shared" / "data")

    def test_toolkit_data_then_data_root_env(self, no_data_env, monkeypatch):
        monkeypatch.setenv("TOOLKIT_DATA", "/from/toolkit_data")
        assert data_root() == "/from/toolkit_data"
        monkeypatch.setenv("DATA_ROOT", "/from/data_root")
        assert data_root() == "/from/data_root"

    def test_config_sees_data_root_and_environment(self, tmp_path, no_data_env, monkeypatch):
        monkeypatch.setenv("TOOLKIT_DATA", "/data")
        monkeypatch.setenv("FP_TEST_SEED", "13")
        path = write(tmp_path, '{train: std.extVar("DATA_ROOT") + "/atis/train.tsv", seed: std.parseInt(std.extVar("FP_TEST_SEED"))}')
        assert Params.from_file(path).as_dict() == {"train": "/data/atis/train.tsv", "seed": 13}

    def test_explicit_ext_vars_win(self, tmp_path, monkeypatch):
        monkeypatch.setenv("DATA_ROOT", "/env")
        path = write(tmp_path, '{root: std.extVar("DATA_ROOT")}')
        assert Params.from_file(path, ext_vars={"DATA_ROOT": "/explicit"})["root"] == "/explicit"

    def test_default_ext_vars_skip_non_identifier_names(self, monkeypatch):
        monkeypatch.setenv("NOT-AN-IDENTIFIER", "x")
        monkeypatch.setenv("FP_OK_NAME", "y")
        variables = default_ext_vars()
        assert "NOT-AN-IDENTIFIER" not in variables and variables["FP_OK_NAME"] == "y"
        assert "DATA_ROOT" in variables


class TestOverrides:
    CONFIG = "{trainer: {num_epochs: 10, lr: 0.1}, model: {encoder: {layers: 2, sizes: [1, 2]}}}"

    def test_dotted_override(self, tmp_path):
        params = Params.from_file(write(tmp_path, self.CONFIG), overrides={"trainer.num_epochs": 5})
        assert params.as_dict()["trainer"] == {"num_epochs": 5, "lr": 0.1}

    def test_nested_override_keeps_siblings_and_replaces_lists(self, tmp_path):
        overrides = {"model": {"encoder": {"sizes": [3]}}, "trainer": {"lr": 0.5}}
        params = Params.from_file(write(tmp_path, self.CONFIG), overrides=overrides)
        assert params.as_dict() == {
            "trainer": {"num_epochs": 10, "lr": 0.5},
            "model": {"encoder": {"layers": 2, "sizes": [3]}},
        }

    def test_a_new_type_replaces_the_object_keeping_only_the_keys_the_new_type_takes(self, tmp_path, caplog):
        from toolkit.plugins import import_builtin_components
        from toolkit.registrable import keys_taken

        import_builtin_components()
        path = write(
            tmp_path,
            '{model: {decoder: {type: "transformer", input_dim: 8, layers: {num_heads: 2}}}, '
            'grammar: {type: "arc_standard", non_projective: "skip", root_label: "root"}}',
        )
        with caplog.at_level(logging.INFO, logger="toolkit.params"):
            params = Params.from_file(path, overrides={"model.decoder.type": "stack_transformer", "grammar": {"type": "arc_swap"}}, keys_of=keys_taken)
        config = params.as_dict()
        assert config["model"]["decoder"] == {"type": "stack_transformer", "input_dim": 8, "layers": {"num_heads": 2}}  # the sizes carry over
        assert config["grammar"] == {"type": "arc_swap", "root_label": "root"}  # arc_swap takes no non_projective
        assert "grammar is now 'arc_swap', no longer 'arc_standard', so it drops grammar.non_projective" in caplog.text
        # without a registry to ask, a changed type replaces the object whole; the same type still merges
        assert Params.from_file(path, overrides={"grammar.type": "arc_swap"}).as_dict()["grammar"] == {"type": "arc_swap"}
        same = Params.from_file(path, overrides={"grammar": {"type": "arc_standard", "root_label": "top"}}).as_dict()["grammar"]
        assert same == {"type": "arc_standard", "non_projective": "skip", "root_label": "top"}

    def test_string_overrides_json_and_jsonnet(self, tmp_path):
        path = write(tmp_path, self.CONFIG)
        params = Params.from_file(path, overrides='{"model.encoder.layers": 4, "new_key": true}')
        assert params.as_dict()["model"]["encoder"]["layers"] == 4 and params["new_key"] is True
        params = Params.from_file(path, overrides="{trainer+: {num_epochs: 2 * 3}}")
        assert params.as_dict()["trainer"] == {"num_epochs": 6, "lr": 0.1}

    def test_bad_override_string_is_a_configuration_error(self, tmp_path):
        with pytest.raises(ConfigurationError, match="cannot evaluate"):
            Params.from_file(write(tmp_path, self.CONFIG), overrides="{trainer: }")

    def test_evaluate_snippet_and_mistyped_path(self):
        assert evaluate_jsonnet('{a: std.extVar("X")}', {"X": "1"}) == {"a": "1"}
        with pytest.raises(ConfigurationError, match="config file not found: missing.jsonnet"):
            evaluate_jsonnet("missing.jsonnet", {})


class TestBounds:
    """Evaluation is bounded (toolkit/bounded_jsonnet.py): regular files only, and time, memory and size each end in one line.

    Each case runs in a subprocess with a generous timeout, so that an unbounded evaluation fails the
    test instead of hanging it (a FIFO) or aborting pytest with it (libjsonnet's SIGABRT).
    """

    REPO = Path(__file__).resolve().parents[1]
    SCRIPT = (
        "import sys\n"
        "from toolkit.errors import ConfigurationError\n"
        "from toolkit.params import evaluate_jsonnet\n"
        "try:\n    print(evaluate_jsonnet(sys.argv[1]))\nexcept ConfigurationError as error:\n    print(error)\n"
    )

    def evaluated(self, config: str | Path, **bounds: str) -> str:
        """What evaluating *config* (a snippet or a path) says, with the TOOLKIT_CONFIG_* *bounds* set."""
        env = {**os.environ, **{f"TOOLKIT_CONFIG_{name.upper()}": value for name, value in bounds.items()}}
        done = subprocess.run([sys.executable, "-c", self.SCRIPT, str(config)], capture_output=True, text=True, timeout=300, cwd=self.REPO, env=env)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    @pytest.fixture
    def fifo(self, tmp_path):
        path = tmp_path / "fifo.jsonnet"
        os.mkfifo(path)
        yield path
        with suppress(OSError):  # release a reader still blocked on it
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))

    def test_a_config_file_must_be_a_regular_file(self, fifo, tmp_path):
        assert self.evaluated(fifo) == f"config file {fifo} is a pipe (FIFO), not a regular file"
        assert self.evaluated("/dev/zero") == "config file /dev/zero is a character device, not a regular file"
        assert self.evaluated(tmp_path) == f"config file {tmp_path} is a directory"

    @pytest.mark.parametrize(
        ("kind", "target", "what"),
        [
            ("importstr", "/dev/zero", "a character device, not a regular file"),
            ("importbin", "/dev/urandom", "a character device, not a regular file"),
            ("importstr", "/dev/stdin", "a pipe (FIFO), not a regular file"),  # the evaluation's own standard input
            ("import", "FIFO", "a pipe (FIFO), not a regular file"),
            ("importstr", "DIRECTORY", "a directory"),
        ],
    )
    def test_an_import_must_be_a_regular_file_and_is_named_where_it_is_imported(self, kind, target, what, fifo, tmp_path):
        target = {"FIFO": str(fifo), "DIRECTORY": str(tmp_path)}.get(target, target)
        config = write(tmp_path, f"{{\n  model: {{ x: {kind} '{target}' }},\n}}\n")
        first, site, *_ = self.evaluated(config).splitlines()
        assert first == f'cannot evaluate {config}: RUNTIME ERROR: couldn\'t open import "{target}": {target} is {what}'
        assert site.startswith(f"\t{config}:2:15-")  # where it is imported: line 2, column 15

    @pytest.mark.parametrize(
        "bomb",
        [
            "{ a: std.makeArray(1e9, function(i) i) }",  # an array bomb
            "{ a: std.repeat('x', 1e10) }",  # a huge string
            "{ a: std.length(std.range(1, 1e9)) }",
        ],
    )
    @pytest.mark.skipif(sys.platform != "linux", reason="only Linux enforces an address-space limit; elsewhere the time bounds stop a bomb")
    def test_a_memory_bomb_ends_at_the_memory_bound(self, bomb):
        message = "cannot evaluate <snippet>: it needs more memory than 300 MB (TOOLKIT_CONFIG_MEMORY_MB), the bound on evaluating a config"
        assert self.evaluated(bomb, memory_mb="300") == message

    def test_an_endless_evaluation_ends_at_the_time_bound(self):
        endless = "local loop(n) = if n == 0 then 0 else loop(n - 1) tailstrict; { a: loop(1e15) }"
        message = "cannot evaluate <snippet>: it ran for longer than 1 s (TOOLKIT_CONFIG_SECONDS), the bound on evaluating a config"
        assert self.evaluated(endless, seconds="1") == message

    def test_deep_recursion_is_jsonnet_s_own_error(self):
        message = self.evaluated("local f(x) = f(x + 1); { a: f(0) }")
        assert message.startswith("cannot evaluate <snippet>: RUNTIME ERROR: max stack frames exceeded.")

    def test_what_a_config_reads_or_makes_is_bounded_in_size(self, tmp_path):
        big = tmp_path / "big.txt"
        big.write_text("x" * 200_000)
        assert self.evaluated(big, max_mb="0.1") == f"config file {big} is 0.2 MB, more than 0.1 MB (TOOLKIT_CONFIG_MAX_MB), the most a config may read"
        config = write(tmp_path, f"{{ a: importstr '{big}' }}")
        assert self.evaluated(config, max_mb="0.1").startswith(
            f'cannot evaluate {config}: RUNTIME ERROR: couldn\'t open import "{big}": {big} is 0.2 MB, more than 0.1 MB (TOOLKIT_CONFIG_MAX_MB)'
        )
        assert self.evaluated("{ a: std.makeArray(50000, function(i) i) }", max_mb="0.1") == (
            "cannot evaluate <snippet>: its value is more than 0.1 MB (TOOLKIT_CONFIG_MAX_MB) of JSON, the most a config may make"
        )

    def test_a_bound_that_is_no_number_is_one_line(self, monkeypatch):
        monkeypatch.setenv("TOOLKIT_CONFIG_SECONDS", "-1")
        with pytest.raises(ConfigurationError, match=r"^TOOLKIT_CONFIG_SECONDS: expected a positive number \(s\), got '-1'$"):
            evaluate_jsonnet("{ a: 1 + 1 }")

    CONFIGS = sorted([*REPO.glob("jsonnet_configs/**/*.jsonnet"), *REPO.glob("tests/fixtures/*.jsonnet"), *REPO.glob("examples/plugin/configs/*.jsonnet")])

    @pytest.mark.parametrize("path", CONFIGS, ids=lambda path: path.name)
    def test_every_shipped_config_evaluates_as_jsonnet_alone_would(self, path):
        """Imports through the callback resolve as jsonnet's own importer does (relative to the importing file, folders up and down)."""
        variables = default_ext_vars()
        try:
            expected = json.loads(_jsonnet.evaluate_file(str(path), ext_vars=variables))
        except RuntimeError as error:
            with pytest.raises(ConfigurationError) as refused:
                evaluate_jsonnet(path, variables)
            assert str(error).splitlines()[0] in str(refused.value)
            return
        assert evaluate_jsonnet(path, variables) == expected

    def test_imports_resolve_relative_to_the_importing_file(self, tmp_path):
        (tmp_path / "a" / "b").mkdir(parents=True)
        write(tmp_path, "{ depth: 0, sub: import 'a/b/deep.libsonnet' }", "top.libsonnet")
        write(tmp_path / "a" / "b", "{ depth: 2, text: importstr '../note.txt' }", "deep.libsonnet")
        write(tmp_path / "a", "from a", "note.txt")
        config = write(tmp_path / "a", "{ top: import '../top.libsonnet', me: std.thisFile }")
        assert evaluate_jsonnet(config) == {"me": str(config), "top": {"depth": 0, "sub": {"depth": 2, "text": "from a"}}}


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=5),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=4), children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.text(max_size=4), JSON_VALUES, max_size=5))
def test_plain_json_is_read_as_jsonnet_gives_it_back(config):
    """Key order, integral floats as ints, large integers rounded to doubles: the fast path and jsonnet agree to the byte."""
    text = json.dumps(config)
    assert json.dumps(plain_json(text)) == json.dumps(json.loads(_jsonnet.evaluate_snippet("<snippet>", text)))


@pytest.mark.parametrize("text", ['{"a": 1, "a": 2}', '{"a": NaN}', '{"a": 1e400}', "{a: 1}", "[" * 5000 + "]" * 5000])
def test_what_is_not_plain_json_goes_to_jsonnet(text):
    assert plain_json(text) is None
