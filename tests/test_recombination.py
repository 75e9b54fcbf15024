"""Data recombination (the ``recombination`` reader): hand-checked strategies, determinism, well-formed LFs, configs."""

import itertools
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import FIXTURES, REPO, data_root, run
from toolkit.data.dataset_readers import DatasetReader, TsvReader
from toolkit.data.dataset_readers.recombination import (
    AbsEntities,
    AbsWholePhrases,
    Concat,
    RecombinationReader,
    pair_of,
    unique,
)
from toolkit.data.example import Example
from toolkit.errors import ConfigurationError
from toolkit.grammars.grammar import Grammar
from toolkit.params import Params
from tree_codecs.tree import parse_lisp

OVERRIDES = sorted((REPO / "jsonnet_configs" / "overrides").glob("recombination_*.jsonnet"))

ATIS_LIKE = [
    ("morn flight from ci0 to ci1", "( lambda $0 e ( and ( flight $0 ) ( during_day $0 morning:pd ) ( from $0 ci0 ) ( to $0 ci1 ) ) )"),
    ("afternoon flight to ci0", "( lambda $0 e ( and ( flight $0 ) ( during_day $0 afternoon:pd ) ( to $0 ci0 ) ) )"),
]
GEO_LIKE = [
    ("what state border s0", "( lambda $0 e ( and ( state:t $0 ) ( next_to:t $0 s0 ) ) )"),
    ("what river border s0", "( lambda $0 e ( and ( river:t $0 ) ( next_to:t $0 s0 ) ) )"),
    ("how mani state are there", "( count $0 ( state:t $0 ) )"),
    ("how mani river are there", "( count $0 ( river:t $0 ) )"),
    ("name the state in s0", "( lambda $0 e ( and ( state:t $0 ) ( loc:t $0 s0 ) ) )"),
]


def write(path: Path, pairs) -> Path:
    path.write_text("".join(f"{question}\t{lf}\n" for question, lf in pairs), encoding="utf-8")
    return path


def examples(pairs) -> list[Example]:
    return [Example(question.split(), lf, {"line": line}) for line, (question, lf) in enumerate(pairs, start=1)]


def new_pairs(strategy, pairs) -> set[tuple[str, str]]:
    """Every new example *strategy* can make from *pairs*, as (question, LF) strings."""
    known = {pair_of(example) for example in examples(pairs)}
    return {(" ".join(c.question), c.target) for c in strategy.candidates(unique(examples(pairs))) if c.pair not in known}


def reader(*strategies, seed: int = 13) -> RecombinationReader:
    return DatasetReader.from_params({"type": "recombination", "base_reader": {"type": "tsv"}, "strategies": list(strategies), "seed": seed})


def real_slice(name: str, file: str, size: int) -> list[Example]:
    path = data_root() / name / file
    if not path.exists():
        pytest.skip(f"{path} not found")
    return TsvReader(max_examples=size).read(path)


# ------------------------------------------------------------------ hand-checked strategies


def test_abs_entities_swaps_typed_constants_of_one_type_in_question_and_lf():
    assert new_pairs(AbsEntities(), ATIS_LIKE) == {
        ("afternoon flight from ci0 to ci1", ATIS_LIKE[0][1].replace("morning:pd", "afternoon:pd")),
        ("morn flight to ci0", ATIS_LIKE[1][1].replace("afternoon:pd", "morning:pd")),
    }


def test_abs_entities_swaps_placeholders_only_when_asked_and_never_onto_one_already_there():
    added = new_pairs(AbsEntities(swap_placeholders=True), ATIS_LIKE) - new_pairs(AbsEntities(), ATIS_LIKE)
    # ci0 -> ci1 in the first example would make "from ci1 to ci1": refused
    assert added == {("afternoon flight to ci1", ATIS_LIKE[1][1].replace("ci0", "ci1"))}


def test_abs_entities_finds_nothing_in_anonymized_geo():
    assert new_pairs(AbsEntities(), GEO_LIKE) == set()


def test_abs_whole_phrases_moves_a_phrase_seen_in_two_templates_into_a_third_example():
    # "state"/(state:t $0) and "river"/(river:t $0) fill two templates (rows 1-2 and 3-4), so they swap in row 5
    assert new_pairs(AbsWholePhrases(), GEO_LIKE) == {("name the river in s0", "( lambda $0 e ( and ( river:t $0 ) ( loc:t $0 s0 ) ) )")}
    assert new_pairs(AbsWholePhrases(min_support=3), GEO_LIKE) == set()


def test_abs_whole_phrases_needs_the_span_to_mention_the_subtrees_placeholders():
    pairs = GEO_LIKE + [("name the state next to s0", "( lambda $0 e ( and ( state:t $0 ) ( next_to:t $0 s0 ) ) )")]
    # "in" vs "next to" differ in LF by (loc:t $0 s0) vs (next_to:t $0 s0), which hold s0 while the spans do not
    assert all("next to" not in question or "river" in question for question, _ in new_pairs(AbsWholePhrases(min_support=1), pairs))


def test_concat_joins_questions_with_the_separator_and_puts_the_lfs_under_concat(tmp_path):
    pairs = [("where is s0", "( lambda $0 e ( loc:t s0 $0 ) )"), ("how big is s0", "( size:i s0 )")]
    read = reader({"type": "concat", "k": 2, "ratio": 1.0}).read(write(tmp_path / "train.tsv", pairs))
    assert [(" ".join(e.tokens), e.target) for e in read[:2]] == pairs
    assert {(" ".join(e.tokens), e.target) for e in read[2:]} == {
        ("where is s0 </s> how big is s0", "( concat ( lambda $0 e ( loc:t s0 $0 ) ) ( size:i s0 ) )"),
        ("how big is s0 </s> where is s0", "( concat ( size:i s0 ) ( lambda $0 e ( loc:t s0 $0 ) ) )"),
    }
    assert {tuple(e.meta["sources"]) for e in read[2:]} == {(1, 2), (2, 1)}
    assert all(e.meta["recombination"] == "concat-2" for e in read[2:])


def test_the_reader_keeps_the_originals_first_and_adds_ratio_times_as_many(tmp_path):
    path = write(tmp_path / "train.tsv", GEO_LIKE)
    read = reader({"type": "abs_whole_phrases", "ratio": 1.0}, {"type": "concat", "k": 3, "ratio": 0.4}).read(path)
    assert [(" ".join(e.tokens), e.target) for e in read[:5]] == GEO_LIKE
    assert [e.meta["recombination"] for e in read[5:]] == ["abs_whole_phrases"] + ["concat-3"] * 2  # only 1 AWP example exists
    assert len({pair_of(e) for e in read}) == len(read)


# ------------------------------------------------------------------ determinism


def test_the_same_seed_gives_the_same_sample_and_another_seed_another(tmp_path):
    source = data_root() / "atis" / "train.tsv"
    if not source.exists():
        pytest.skip(f"{source} not found")
    path = tmp_path / "train.tsv"
    path.write_text("\n".join(source.read_text(encoding="utf-8").splitlines()[:300]) + "\n", encoding="utf-8")
    strategies = ({"type": "abs_entities", "ratio": 0.2}, {"type": "abs_whole_phrases", "ratio": 0.2}, {"type": "concat", "k": 3, "ratio": 0.2})
    first, second, other = ([pair_of(e) for e in reader(*strategies, seed=seed).read(path)] for seed in (13, 13, 14))
    assert len(first) > 300 and first == second
    assert first[:300] == other[:300] and first[300:] != other[300:]


# ------------------------------------------------------------------ well-formed logical forms


def assert_well_formed(lf: str) -> None:
    tokens = lf.split()
    depth = 0
    for token in tokens:
        depth += (token == "(") - (token == ")")
        assert depth >= 0, lf
    assert depth == 0, lf
    codec = Grammar.from_params({"type": "lcrs_dfs", "max_nodes": 1000})
    tree = codec.parse(Example(["x"], lf))
    assert str(tree) == " ".join(tokens)
    assert len(codec.oracle(Example(["x"], lf))) == tree.size


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_recombined_lfs_parse_with_the_tree_codec(data):
    name, file = data.draw(st.sampled_from([("geo", "train.txt"), ("atis", "train.tsv")]))
    pool = real_slice(name, file, 120)
    chosen = [pool[i] for i in data.draw(st.lists(st.integers(0, len(pool) - 1), min_size=2, max_size=12, unique=True))]
    strategy = data.draw(st.sampled_from([AbsEntities(swap_placeholders=True), AbsWholePhrases(min_support=1), Concat(k=2), Concat(k=3)]))
    for candidate in itertools.islice(strategy.draws(chosen, 20, random.Random(data.draw(st.integers(0, 99))), None), 40):
        assert_well_formed(candidate.target)


def test_every_recombined_lf_of_a_real_slice_parses():
    for name, file in (("geo", "train.txt"), ("atis", "train.tsv")):
        pool = real_slice(name, file, 400)
        for strategy in (AbsEntities(swap_placeholders=True), AbsWholePhrases()):
            for candidate in strategy.candidates(unique(pool)):
                parse_lisp(candidate.target)


# ------------------------------------------------------------------ configs


@pytest.mark.parametrize("override", OVERRIDES, ids=lambda path: path.stem)
def test_each_override_builds_the_wrapper_for_training_and_the_plain_reader_for_validation(override):
    base = "geo" if "_geo_" in override.name else "atis"
    params = Params.from_file(REPO / "jsonnet_configs" / f"{base}_transformer.jsonnet", str(override))
    train_reader = DatasetReader.from_params(params.pop("dataset_reader"))
    validation_reader = DatasetReader.from_params(params.pop("validation_dataset_reader"))
    assert isinstance(train_reader, RecombinationReader) and isinstance(train_reader.base_reader, TsvReader)
    assert type(validation_reader) is TsvReader


def test_validation_reading_is_never_augmented(tmp_path):
    path = write(tmp_path / "test.tsv", GEO_LIKE)
    params = Params.from_file(REPO / "jsonnet_configs" / "geo_transformer.jsonnet", str(REPO / "jsonnet_configs/overrides/recombination_geo_awp_ae_c2.jsonnet"))
    validation_reader = DatasetReader.from_params(params.pop("validation_dataset_reader"))
    assert [pair_of(e) for e in validation_reader.read(path)] == [pair_of(e) for e in examples(GEO_LIKE)]
    wrapper = DatasetReader.from_params(params.pop("dataset_reader"))
    assert wrapper.text_to_example("where is s0").tokens == ["where", "is", "s0"]  # predictions are not augmented either


@pytest.mark.parametrize(
    ("strategy", "key"),
    [
        ({"type": "abs_entitys"}, "dataset_reader.strategies.0.type"),
        ({"type": "abs_entities", "ratio": -0.5}, "dataset_reader.strategies.0.ratio"),
        ({"type": "concat", "k": 1}, "dataset_reader.strategies.0.k"),
        ({"type": "abs_whole_phrases", "max_phrase_length": 0}, "dataset_reader.strategies.0.max_phrase_length"),
    ],
)
def test_a_bad_strategy_is_a_configuration_error_naming_its_key(strategy, key):
    config = Params({"dataset_reader": {"type": "recombination", "base_reader": {"type": "tsv"}, "strategies": [strategy]}})
    with pytest.raises(ConfigurationError, match=key.replace(".", r"\.")):
        DatasetReader.from_params(config.pop("dataset_reader"))


def test_no_strategy_is_a_configuration_error():
    with pytest.raises(ConfigurationError, match="strategies"):
        reader()


# ------------------------------------------------------------------ end to end


def test_toolkit_train_learns_from_the_recombined_set(geo_slice, monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("TRAIN", str(geo_slice["train"]))
    monkeypatch.setenv("TEST", str(geo_slice["test"]))
    override = tmp_path / "recombination.jsonnet"
    override.write_text(
        "{ dataset_reader: { type: 'recombination', base_reader: { type: 'tsv' }, seed: 1,"
        "  strategies: [{ type: 'abs_whole_phrases', ratio: 0.5, min_support: 1 }, { type: 'concat', k: 2, ratio: 0.5 }] },"
        "  validation_dataset_reader: { type: 'tsv' }, grammar: { type: 'sequence', max_length: 120 }, trainer: { num_epochs: 2 } }",
        encoding="utf-8",
    )
    directory = tmp_path / "run"
    code, _out, err = run(monkeypatch, capsys, "train", FIXTURES / "tiny_seq2seq.jsonnet", "-s", directory, "-f", "-o", override)
    assert code == 0, err
    assert "</s>" in (directory / "vocabulary" / "tokens.txt").read_text(encoding="utf-8").split()
    assert "concat" in (directory / "vocabulary" / "symbols.txt").read_text(encoding="utf-8").split()
    assert (directory / "model.tar.gz").exists()
