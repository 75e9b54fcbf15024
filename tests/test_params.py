"""Params: key paths, typed pops, jsonnet files, ext vars and overrides."""

import json
import logging
from pathlib import Path

import pytest

import toolkit
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
