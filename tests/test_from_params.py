"""Building objects from configs by annotation: conversion, extras, Lazy and key-path errors.

String annotations (``from __future__ import annotations``) are used on purpose: the builder
must resolve them.
"""

from __future__ import annotations

from typing import Any, Literal

import pytest

from toolkit.errors import ConfigurationError
from toolkit.from_params import FromParams, Lazy, construct
from toolkit.params import Params
from toolkit.registrable import Registrable


class FpVocab:
    def __init__(self, size: int = 10):
        self.size = size


class FpLayer(Registrable):
    pass


@FpLayer.register("dense")
class FpDense(FpLayer):
    def __init__(self, hidden_size: int, activation: str = "relu"):
        self.hidden_size, self.activation = hidden_size, activation


@FpLayer.register("embedding")
class FpEmbedding(FpLayer):
    def __init__(self, vocab: FpVocab, dim: int):
        self.vocab, self.dim = vocab, dim


class FpEncoder(Registrable):
    pass


@FpEncoder.register("stacked")
class FpStacked(FpEncoder):
    def __init__(self, layer: FpLayer, num_layers: int, dropout: float = 0.0):
        self.layer, self.num_layers, self.dropout = layer, num_layers, dropout


@FpLayer.register("checked")
class FpChecked(FpLayer):
    """Refuses a width below 1, naming only its own key: the builder completes the path."""

    def __init__(self, width: int):
        if width < 1:
            raise ConfigurationError(f"must be at least 1, got {width}", key="width")
        self.width = width


@FpEncoder.register("lazy_stack")
class FpLazyStack(FpEncoder):
    """Builds its layer inside its own constructor, as encoders build their positional encodings."""

    def __init__(self, layer: Lazy[FpLayer]):
        self.layer = layer.construct()


class FpModel(FromParams):
    def __init__(self, encoder: FpEncoder, name: str = "model"):
        self.encoder, self.name = encoder, name


class FpExperiment(FromParams):
    def __init__(self, model: FpModel, seed: int = 0):
        self.model, self.seed = model, seed


class FpContainers(FromParams):
    def __init__(
        self,
        layers: list[FpLayer] = (),
        sizes: dict[str, int] = None,  # noqa: RUF013 - an implicit Optional, as old plugin code writes it
        pair: tuple[int, str] = (0, ""),
        many: tuple[float, ...] = (),
        tags: set[str] = frozenset(),
        maybe: int | None = 5,
        either: int | list[int] = 0,
        order: Literal["bfs", "dfs"] = "bfs",
        anything: Any = None,
        untyped=None,
    ):
        self.layers, self.sizes, self.pair, self.many = layers, sizes, pair, many
        self.tags, self.maybe, self.either, self.order = tags, maybe, either, order
        self.anything, self.untyped = anything, untyped


class FpOptimizer(Registrable):
    default_implementation = "sgd"


@FpOptimizer.register("sgd")
class FpSgd(FpOptimizer):
    def __init__(self, model_parameters: list, lr: float, momentum: float = 0.0):
        self.model_parameters, self.lr, self.momentum = model_parameters, lr, momentum


class FpTrainer(FromParams):
    def __init__(self, optimizer: Lazy[FpOptimizer], num_epochs: int = 1):
        self.optimizer, self.num_epochs = optimizer, num_epochs


class FpBase(FromParams):
    def __init__(self, width: int, depth: int = 1):
        self.width, self.depth = width, depth


class FpChild(FpBase):
    def __init__(self, colour: str, **kwargs):
        super().__init__(**kwargs)
        self.colour = colour


class FpPlain:
    """Not a FromParams subclass: built through construct()."""

    def __init__(self, inner: FpDense, scale: float = 1.0):
        self.inner, self.scale = inner, scale


def experiment(encoder: dict) -> dict:
    return {"model": {"encoder": encoder}}


STACKED = {"type": "stacked", "num_layers": 2, "layer": {"type": "dense", "hidden_size": 8}}


class TestNesting:
    def test_nested_registrables_by_type(self):
        built = FpExperiment.from_params(experiment(STACKED))
        encoder = built.model.encoder
        assert isinstance(encoder, FpStacked) and encoder.num_layers == 2
        assert isinstance(encoder.layer, FpDense) and encoder.layer.hidden_size == 8
        assert built.seed == 0 and built.model.name == "model"

    def test_callers_dict_is_not_consumed(self):
        config = experiment(STACKED)
        FpExperiment.from_params(config)
        assert config["model"]["encoder"]["layer"] == {"type": "dense", "hidden_size": 8}

    def test_typo_three_levels_deep_names_the_full_path(self):
        layer = {"type": "dense", "hidden_sise": 8}
        with pytest.raises(ConfigurationError) as info:
            FpExperiment.from_params(experiment({**STACKED, "layer": layer}))
        assert str(info.value) == ("unknown key 'model.encoder.layer.hidden_sise' (did you mean 'hidden_size'?); valid keys: activation, hidden_size")

    def test_wrong_value_type_names_path_type_and_value(self):
        with pytest.raises(ConfigurationError) as info:
            FpExperiment.from_params(experiment({**STACKED, "num_layers": "six"}))
        assert str(info.value) == "model.encoder.num_layers: expected int, got 'six'"

    def test_a_constructor_naming_its_own_key_gets_the_full_path(self):
        layer = {"type": "checked", "width": 0}
        with pytest.raises(ConfigurationError) as info:
            FpExperiment.from_params(experiment({**STACKED, "layer": layer}))
        assert str(info.value) == "model.encoder.layer.width: must be at least 1, got 0"
        with pytest.raises(ConfigurationError) as info:
            FpChecked(width=0)
        assert str(info.value) == "width: must be at least 1, got 0"

    def test_a_lazy_built_inside_a_constructor_is_not_prefixed_twice(self):
        with pytest.raises(ConfigurationError) as info:
            FpExperiment.from_params(experiment({"type": "lazy_stack", "layer": {"type": "checked", "width": -2}}))
        assert str(info.value) == "model.encoder.layer.width: must be at least 1, got -2"

    def test_missing_key_names_the_full_path(self):
        encoder = {k: v for k, v in STACKED.items() if k != "num_layers"}
        with pytest.raises(ConfigurationError, match=r"^missing key 'model\.encoder\.num_layers'$"):
            FpExperiment.from_params(experiment(encoder))

    def test_missing_type_names_the_full_path(self):
        with pytest.raises(ConfigurationError, match=r"missing key 'model\.encoder\.type'"):
            FpExperiment.from_params(experiment({"num_layers": 2}))

    def test_leftover_keys_are_reported_together(self):
        encoder = {**STACKED, "num_layer": 3, "dropuot": 0.1, "zzz": 1}
        encoder.pop("num_layers")
        with pytest.raises(ConfigurationError) as info:
            FpExperiment.from_params(experiment(encoder))
        assert str(info.value) == (
            "unknown keys 'model.encoder.num_layer' (did you mean 'num_layers'?), "
            "'model.encoder.dropuot' (did you mean 'dropout'?), 'model.encoder.zzz'; "
            "valid keys: dropout, layer, num_layers"
        )

    def test_params_history_prefixes_paths(self):
        params = Params({"trainer": {"optimizer": {}, "num_epochs": "x"}}).pop("trainer")
        with pytest.raises(ConfigurationError, match=r"^trainer\.num_epochs: expected int"):
            FpTrainer.from_params(params)


class TestConversion:
    def test_containers(self):
        built = FpContainers.from_params(
            {
                "layers": [{"type": "dense", "hidden_size": 1}, {"type": "dense", "hidden_size": 2}],
                "sizes": {"a": 1, "b": 2},
                "pair": [3, "x"],
                "many": [1, 2.5],
                "tags": ["a", "b", "a"],
            }
        )
        assert [layer.hidden_size for layer in built.layers] == [1, 2]
        assert built.sizes == {"a": 1, "b": 2}
        assert built.pair == (3, "x")
        assert built.many == (1.0, 2.5) and isinstance(built.many[0], float)
        assert built.tags == {"a", "b"}

    def test_list_item_error_names_the_index(self):
        layers = [{"type": "dense", "hidden_size": 1}, {"type": "dense", "hidden_size": 1.5}]
        message = r"^layers\.1\.hidden_size: expected int, got 1\.5$"
        with pytest.raises(ConfigurationError, match=message):
            FpContainers.from_params({"layers": layers})

    def test_dict_value_error_names_the_key(self):
        with pytest.raises(ConfigurationError, match=r"^sizes\.b: expected int, got 'two'$"):
            FpContainers.from_params({"sizes": {"a": 1, "b": "two"}})

    def test_fixed_tuple_length_is_checked(self):
        with pytest.raises(ConfigurationError, match=r"^pair: expected .*2 items"):
            FpContainers.from_params({"pair": [1, "a", 2]})

    def test_optional_accepts_null_and_checks_the_member(self):
        assert FpContainers.from_params({"maybe": None}).maybe is None
        with pytest.raises(ConfigurationError, match=r"^maybe: expected int, got 'x'$"):
            FpContainers.from_params({"maybe": "x"})

    def test_union_tries_members_in_order(self):
        assert FpContainers.from_params({"either": 3}).either == 3
        assert FpContainers.from_params({"either": [1, 2]}).either == [1, 2]
        with pytest.raises(ConfigurationError, match=r"^either: expected .*int.*got 'x'"):
            FpContainers.from_params({"either": "x"})

    def test_literal(self):
        assert FpContainers.from_params({"order": "dfs"}).order == "dfs"
        with pytest.raises(ConfigurationError, match=r"^order: expected one of 'bfs', 'dfs'"):
            FpContainers.from_params({"order": "xfs"})

    def test_any_and_untyped_get_plain_values(self):
        built = FpContainers.from_params({"anything": {"a": {"b": 1}}, "untyped": [{"c": 2}]})
        assert type(built.anything) is dict and type(built.anything["a"]) is dict
        assert built.anything == {"a": {"b": 1}} and built.untyped == [{"c": 2}]

    def test_int_is_accepted_for_float(self):
        built = FpStacked.from_params({**STACKED, "dropout": 1})
        assert built.dropout == 1.0 and isinstance(built.dropout, float)

    def test_bool_is_not_an_int_and_int_is_not_a_bool(self):
        with pytest.raises(ConfigurationError, match=r"^hidden_size: expected int, got True$"):
            FpDense.from_params({"hidden_size": True})
        with pytest.raises(ConfigurationError, match=r"^activation: expected str, got 3$"):
            FpDense.from_params({"hidden_size": 1, "activation": 3})

    def test_object_expected_but_scalar_given(self):
        message = r"^model: expected FpModel \(an object\), got 3$"
        with pytest.raises(ConfigurationError, match=message):
            FpExperiment.from_params({"model": 3})


class TestExtras:
    def test_extra_by_name(self):
        vocab = FpVocab()
        built = FpEmbedding.from_params({"dim": 3}, vocab=vocab)
        assert built.vocab is vocab

    def test_extra_by_type_under_another_name(self):
        vocab = FpVocab()
        built = FpLayer.from_params({"type": "embedding", "dim": 3}, vocabulary=vocab)
        assert built.vocab is vocab

    def test_extras_reach_nested_constructions(self):
        vocab = FpVocab()
        config = experiment({**STACKED, "layer": {"type": "embedding", "dim": 4}})
        built = FpExperiment.from_params(config, vocabulary=vocab, unrelated="ignored")
        assert built.model.encoder.layer.vocab is vocab

    def test_two_extras_of_the_type_are_ambiguous(self):
        with pytest.raises(ConfigurationError, match=r"^missing key 'vocab'$"):
            FpEmbedding.from_params({"dim": 3}, source=FpVocab(), target=FpVocab())

    def test_scalar_extras_do_not_match_by_type(self):
        built = FpStacked.from_params(STACKED, batch_size=0.5)
        assert built.dropout == 0.0

    def test_config_wins_over_extra(self):
        assert FpDense.from_params({"hidden_size": 3}, hidden_size=99).hidden_size == 3


class TestLazy:
    def test_construct_with_run_time_kwargs(self):
        trainer = FpTrainer.from_params({"optimizer": {"lr": 0.1}, "num_epochs": 2})
        assert isinstance(trainer.optimizer, Lazy)
        optimizer = trainer.optimizer.construct(model_parameters=["w"])
        assert isinstance(optimizer, FpSgd)
        assert optimizer.model_parameters == ["w"] and optimizer.lr == 0.1

    def test_kwargs_win_over_captured_extras_and_construct_repeats(self):
        config = {"optimizer": {"type": "sgd", "lr": 1}}
        trainer = FpTrainer.from_params(config, model_parameters=["old"])
        first = trainer.optimizer.construct()
        second = trainer.optimizer.construct(model_parameters=["new"])
        assert first.model_parameters == ["old"] and second.model_parameters == ["new"]
        assert first is not second and second.lr == 1.0

    def test_errors_surface_at_construct_with_the_path(self):
        params = Params({"trainer": {"optimizer": {"lr": "fast"}}}).pop("trainer")
        trainer = FpTrainer.from_params(params)
        message = r"^trainer\.optimizer\.lr: expected float, got 'fast'$"
        with pytest.raises(ConfigurationError, match=message):
            trainer.optimizer.construct(model_parameters=[])


class TestSignatures:
    def test_kwargs_constructor_takes_parent_parameters(self):
        built = FpChild.from_params({"colour": "red", "width": 3})
        assert (built.colour, built.width, built.depth) == ("red", 3, 1)

    def test_kwargs_constructor_still_rejects_unknown_keys(self):
        message = r"'widht' \(did you mean 'width'\?\); valid keys: colour, depth, width$"
        with pytest.raises(ConfigurationError, match=message):
            FpChild.from_params({"colour": "red", "widht": 3})

    def test_plain_class_via_construct(self):
        built = construct(FpPlain, {"inner": {"hidden_size": 5}, "scale": 2})
        assert isinstance(built.inner, FpDense) and built.inner.hidden_size == 5
        assert built.scale == 2.0

    def test_function_via_construct(self):
        def make(vocab: FpVocab, sizes: list[int]) -> tuple:
            return vocab, sizes

        vocab = FpVocab()
        assert construct(make, {"sizes": [1, 2]}, v=vocab) == (vocab, [1, 2])

    def test_plain_class_parameter_is_built_from_an_object(self):
        built = FpEmbedding.from_params({"dim": 1, "vocab": {"size": 7}})
        assert built.vocab.size == 7
