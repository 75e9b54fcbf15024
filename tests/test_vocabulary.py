import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.data.vocabulary import Vocabulary
from toolkit.errors import ArchiveError, ConfigurationError

SPECIALS = ["@@PADDING@@", "@@UNKNOWN@@", "@start@", "@end@"]


class TestConstruction:
    def test_specials_come_first(self):
        vocab = Vocabulary()
        assert vocab.tokens("tokens") == SPECIALS
        assert (vocab.PAD_INDEX, vocab.UNK_INDEX, vocab.BOS_INDEX, vocab.EOS_INDEX) == (0, 1, 2, 3)
        assert vocab.get_index(Vocabulary.EOS) == Vocabulary.EOS_INDEX

    def test_order_is_count_then_alphabetical(self):
        vocab = Vocabulary({"tokens": {"b": 2, "a": 2, "c": 5, "d": 1}})
        assert vocab.tokens("tokens") == SPECIALS + ["c", "a", "b", "d"]

    def test_min_count_and_max_size(self):
        counts = {"tokens": {"a": 5, "b": 3, "c": 2, "d": 1}}
        assert Vocabulary(counts, min_count={"tokens": 2}).tokens("tokens")[4:] == ["a", "b", "c"]
        assert Vocabulary(counts, max_size={"tokens": 2}).tokens("tokens")[4:] == ["a", "b"]

    def test_unknown_token_in_padded_namespace_is_unk(self):
        vocab = Vocabulary({"tokens": {"a": 1}})
        assert vocab.indices(["a", "zzz"], "tokens") == [4, Vocabulary.UNK_INDEX]

    def test_non_padded_namespace(self):
        vocab = Vocabulary({"labels": {"x": 1, "y": 2}}, non_padded_namespaces=["labels"])
        assert vocab.tokens("labels") == ["y", "x"]
        assert vocab.get_index("x", "labels") == 1
        with pytest.raises(KeyError, match="'zzz'.*non-padded namespace 'labels'"):
            vocab.get_index("zzz", "labels")

    def test_add_get_size(self):
        vocab = Vocabulary()
        assert vocab.add_token("hello") == 4
        assert vocab.add_token("hello") == 4
        assert vocab.get_token(4) == "hello"
        assert vocab.size("tokens") == 5
        with pytest.raises(KeyError, match="out of range"):
            vocab.get_token(5)

    def test_reading_unseen_namespace_creates_nothing(self):
        vocab = Vocabulary()
        assert vocab.size("other") == 4
        assert vocab.get_index("x", "other") == Vocabulary.UNK_INDEX
        assert vocab.namespaces() == []


class TestAliases:
    def test_alias_counts_merge_before_min_count(self):
        vocab = Vocabulary(
            {"tokens": {"a": 1, "b": 3}, "symbols": {"a": 1, "c": 1}},
            min_count={"tokens": 2},
            namespace_aliases={"symbols": "tokens"},
        )
        assert vocab.namespaces() == ["tokens"]
        assert vocab.tokens("symbols") == SPECIALS + ["b", "a"]
        assert vocab.canonical("symbols") == "tokens"
        assert vocab.add_token("new", "symbols") == vocab.get_index("new", "tokens") == 6

    def test_alias_chain_rejected(self):
        with pytest.raises(ConfigurationError, match="itself an alias"):
            Vocabulary(namespace_aliases={"a": "b", "b": "c"})


class TestSaveLoad:
    def test_file_format(self, tmp_path):
        vocab = Vocabulary({"tokens": {"a": 1}, "labels": {"L": 1}}, non_padded_namespaces=["labels"], namespace_aliases={"symbols": "tokens"})
        vocab.save(tmp_path)
        assert (tmp_path / "tokens.txt").read_text(encoding="utf-8") == "\n".join(SPECIALS + ["a"]) + "\n"
        assert (tmp_path / "labels.txt").read_text(encoding="utf-8") == "L\n"
        meta = json.loads((tmp_path / "vocabulary.json").read_text())
        assert meta["namespace_aliases"] == {"symbols": "tokens"}
        assert Vocabulary.load(tmp_path) == vocab

    def test_missing_directory(self, tmp_path):
        with pytest.raises(ArchiveError):
            Vocabulary.load(tmp_path / "nothing")

    def test_corrupt_files(self, tmp_path):
        Vocabulary({"tokens": {"a": 1}}).save(tmp_path)
        (tmp_path / "tokens.txt").write_text("a\na\n", encoding="utf-8")
        with pytest.raises(ArchiveError, match="twice"):
            Vocabulary.load(tmp_path)
        (tmp_path / "tokens.txt").write_text("a\nb\n", encoding="utf-8")
        with pytest.raises(ArchiveError, match="must start with"):
            Vocabulary.load(tmp_path)
        (tmp_path / "tokens.txt").unlink()
        with pytest.raises(ArchiveError, match="tokens.txt"):
            Vocabulary.load(tmp_path)
        (tmp_path / "vocabulary.json").write_text("{not json", encoding="utf-8")
        with pytest.raises(ArchiveError, match="vocabulary.json"):
            Vocabulary.load(tmp_path)

    @settings(max_examples=40, deadline=None)
    @given(
        counts=st.dictionaries(
            st.sampled_from(["tokens", "labels", "chars"]),
            st.dictionaries(st.text(st.characters(blacklist_characters="\n", blacklist_categories=("Cs",)), max_size=5), st.integers(1, 4)),
        )
    )
    def test_round_trip(self, tmp_path_factory, counts):
        vocab = Vocabulary(counts, non_padded_namespaces=["labels"], namespace_aliases={"symbols": "tokens"})
        directory = tmp_path_factory.mktemp("vocab")
        vocab.save(directory)
        loaded = Vocabulary.load(directory)
        assert loaded == vocab
        for namespace in vocab.namespaces():
            assert loaded.tokens(namespace) == vocab.tokens(namespace)


def test_doctests():
    import doctest

    import toolkit.data.vocabulary as module

    assert doctest.testmod(module).failed == 0
