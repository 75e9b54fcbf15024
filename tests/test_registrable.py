"""Registration, lookup by name or dotted path, and the errors a config author sees."""

import collections
import subprocess
import sys
from pathlib import Path

import pytest

from toolkit.errors import ConfigurationError, RegistryError
from toolkit.registrable import Registrable, registered_bases


class RegTestEncoder(Registrable):
    default_implementation = "rnn"


@RegTestEncoder.register("rnn")
class RegTestRnn(RegTestEncoder):
    def __init__(self, hidden: int = 4):
        self.hidden = hidden


@RegTestEncoder.register("transformer")
class RegTestTransformer(RegTestEncoder):
    def __init__(self, heads: int):
        self.heads = heads


@RegTestEncoder.register("tiny_transformer", constructor="tiny")
class RegTestTinyTransformer(RegTestTransformer):
    @classmethod
    def tiny(cls, scale: int = 1) -> "RegTestTinyTransformer":
        return cls(heads=2 * scale)


class RegTestUnregistered(RegTestEncoder):
    """Reachable only by its dotted path."""

    def __init__(self, size: int):
        self.size = size


class RegTestNoDefault(Registrable):
    pass


@RegTestNoDefault.register("only")
class RegTestOnly(RegTestNoDefault):
    pass


def dotted(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


class TestLookup:
    def test_by_name_returns_registered_class(self):
        assert RegTestEncoder.by_name("transformer") is RegTestTransformer

    def test_by_name_with_constructor_returns_bound_classmethod(self):
        built = RegTestEncoder.by_name("tiny_transformer")(scale=3)
        assert isinstance(built, RegTestTinyTransformer) and built.heads == 6

    def test_list_available_is_sorted_with_default_first(self):
        assert RegTestEncoder.list_available() == ["rnn", "tiny_transformer", "transformer"]

    def test_is_registered(self):
        assert RegTestEncoder.is_registered("rnn")
        assert not RegTestEncoder.is_registered("lstm")

    def test_registered_name_is_the_class_own_name_not_its_parents(self):
        assert RegTestTransformer.registered_name() == "transformer"
        assert RegTestTinyTransformer.registered_name() == "tiny_transformer"  # a subclass of a registered class
        assert RegTestUnregistered.registered_name() == "RegTestUnregistered"

    def test_subclass_uses_nearest_ancestor_registry(self):
        assert RegTestRnn.by_name("transformer") is RegTestTransformer

    def test_register_on_subclass_makes_a_separate_registry(self):
        class RegTestSubBase(RegTestEncoder):
            pass

        @RegTestSubBase.register("special")
        class RegTestSpecial(RegTestSubBase):
            pass

        assert RegTestSubBase.list_available() == ["special"]
        assert not RegTestEncoder.is_registered("special")
        assert registered_bases()[RegTestSubBase] == {"special": RegTestSpecial}

    def test_registered_bases_lists_names_and_classes(self):
        assert registered_bases()[RegTestEncoder]["transformer"] is RegTestTransformer
        assert RegTestRnn not in registered_bases()


class TestDottedNames:
    def test_dotted_name_imports_the_class(self):
        assert RegTestEncoder.by_name(dotted(RegTestUnregistered)) is RegTestUnregistered

    def test_dotted_name_in_config(self):
        built = RegTestEncoder.from_params({"type": dotted(RegTestUnregistered), "size": 7})
        assert isinstance(built, RegTestUnregistered) and built.size == 7

    def test_dotted_name_of_a_foreign_class_is_rejected(self):
        with pytest.raises(RegistryError, match="not a subclass of .*RegTestEncoder"):
            RegTestEncoder.by_name("collections.OrderedDict")
        assert collections.OrderedDict  # the module itself imported fine

    def test_dotted_name_of_a_missing_module(self):
        with pytest.raises(RegistryError, match="cannot import module 'no_such_package_xyz'"):
            RegTestEncoder.by_name("no_such_package_xyz.Encoder")


class TestUnknownNames:
    def test_message_has_did_you_mean_available_and_plugin_hint(self):
        with pytest.raises(RegistryError) as info:
            RegTestEncoder.by_name("transfromer")
        assert str(info.value) == (
            "'transfromer' is not a registered RegTestEncoder; did you mean 'transformer'? "
            "Available: rnn, tiny_transformer, transformer. "
            "Other packages are loaded with --include-package PACKAGE."
        )

    def test_no_did_you_mean_without_a_close_name(self):
        with pytest.raises(RegistryError) as info:
            RegTestEncoder.by_name("zzzzzz")
        assert "did you mean" not in str(info.value)
        assert "Available: rnn, tiny_transformer, transformer." in str(info.value)

    def test_unknown_type_in_config_names_the_key_path(self):
        with pytest.raises(RegistryError, match=r"^type: 'lstm' is not a registered"):
            RegTestEncoder.from_params({"type": "lstm"})


class TestRegistration:
    def test_duplicate_name_names_both_classes(self):
        class RegTestDupBase(Registrable):
            pass

        @RegTestDupBase.register("x")
        class RegTestFirst(RegTestDupBase):
            pass

        class RegTestSecond(RegTestDupBase):
            pass

        with pytest.raises(ConfigurationError) as info:
            RegTestDupBase.register("x")(RegTestSecond)
        message = str(info.value)
        assert f"{__name__}.{RegTestFirst.__qualname__}" in message
        assert f"{__name__}.{RegTestSecond.__qualname__}" in message
        assert RegTestDupBase.by_name("x") is RegTestFirst

    def test_exist_ok_replaces(self):
        class RegTestReplaceBase(Registrable):
            pass

        @RegTestReplaceBase.register("x")
        class RegTestOld(RegTestReplaceBase):
            pass

        @RegTestReplaceBase.register("x", exist_ok=True)
        class RegTestNew(RegTestReplaceBase):
            pass

        assert RegTestReplaceBase.by_name("x") is RegTestNew

    def test_same_class_may_register_twice(self):
        RegTestEncoder.register("rnn")(RegTestRnn)
        assert RegTestEncoder.by_name("rnn") is RegTestRnn

    def test_registering_a_non_subclass_fails(self):
        with pytest.raises(ConfigurationError, match="not a subclass"):
            RegTestNoDefault.register("rnn_here")(RegTestRnn)

    def test_missing_constructor_fails(self):
        with pytest.raises(ConfigurationError, match="no constructor 'build'"):
            RegTestNoDefault.register("bad", constructor="build")(RegTestOnly)


class TestFromParams:
    def test_type_selects_the_implementation(self):
        built = RegTestEncoder.from_params({"type": "transformer", "heads": 8})
        assert isinstance(built, RegTestTransformer) and built.heads == 8

    def test_default_implementation_without_type(self):
        built = RegTestEncoder.from_params({"hidden": 9})
        assert type(built) is RegTestRnn and built.hidden == 9

    def test_no_type_and_no_default_is_a_missing_key(self):
        with pytest.raises(ConfigurationError, match="missing key 'type'"):
            RegTestNoDefault.from_params({})

    def test_named_constructor_is_used(self):
        built = RegTestEncoder.from_params({"type": "tiny_transformer", "scale": 2})
        assert isinstance(built, RegTestTinyTransformer) and built.heads == 4

    def test_registered_subclass_without_type_builds_itself(self):
        built = RegTestTransformer.from_params({"heads": 3})
        assert type(built) is RegTestTransformer

    def test_subclass_rejects_a_sibling_type(self):
        with pytest.raises(RegistryError, match="not a RegTestRnn"):
            RegTestRnn.from_params({"type": "transformer", "heads": 1})

    def test_overridden_from_params_of_the_implementation_is_used(self):
        class RegTestCustomBase(Registrable):
            pass

        @RegTestCustomBase.register("custom")
        class RegTestCustom(RegTestCustomBase):
            def __init__(self, words: list):
                self.words = words

            @classmethod
            def from_params(cls, params, **extras):
                return cls(words=params.pop("text").split())

        built = RegTestCustomBase.from_params({"type": "custom", "text": "a b"}, unused=1)
        assert built.words == ["a", "b"]


def test_a_script_that_imports_only_the_archive_module_still_finds_the_shipped_components():
    """``toolkit.archive.load_archive`` alone once failed on an arc-standard archive: the grammar was not registered."""
    script = (
        "from toolkit.grammars import Grammar\n"
        "import sys\n"
        "assert 'transition_systems' not in sys.modules\n"
        "print(Grammar.by_name('arc_standard').__module__, 'lcrs_dfs' in Grammar.list_available())\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=Path(__file__).resolve().parents[1])
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["transition_systems.arc_standard", "True"]
