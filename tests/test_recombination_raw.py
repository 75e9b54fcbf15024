"""Recombination on GEO's raw data (entity names, Prolog queries) and the schema templates.

Hand-checked strategies on real training lines, the checks that drop a draw, determinism by seed,
every generated query executing and derived by the main job's grammar, the templates file, and the
main job's config (every strategy off by default, each switched on by an override). Needs the GEO
raw data under ``DATA_ROOT/geo-raw`` (skipped where missing) and, for the executor, ``swipl``
(skipped where missing; a failure with ``REQUIRE_SWIPL=1``).
"""

import copy
import functools
import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import FIXTURES, REPO, data_root, require_swipl, run
from toolkit.data.dataset_readers import DatasetReader, TsvReader
from toolkit.data.dataset_readers.recombination import ExampleCheck, GeoTemplates, RecombinationReader, Template, pair_of, read_templates
from toolkit.data.dataset_readers.recombination.abstraction import misread
from toolkit.data.dataset_readers.recombination.check import derives
from toolkit.data.dataset_readers.recombination.strategy import Candidate, RecombinationStrategy
from toolkit.data.dataset_readers.recombination.templates import SLOT, SLOT_TYPES, TEMPLATES
from toolkit.entities.anonymizer import Anonymizer
from toolkit.entities.lexicon import Entity
from toolkit.errors import ConfigurationError, DataError
from toolkit.execution.prolog import GeoQueryProlog
from toolkit.grammars.grammar import Grammar
from toolkit.params import Params

RAW = data_root() / "geo-raw"
MAIN = REPO / "jsonnet_configs" / "geo_raw_transformer.jsonnet"
QUESTIONS_ONLY = REPO / "jsonnet_configs" / "overrides" / "geo_raw_questions_only.jsonnet"


def needs_raw() -> Path:
    if not (RAW / "geo_prolog_train.tsv").is_file() or not (RAW / "geo_entities.json").is_file():
        pytest.skip(f"GEO raw data not found at {RAW}")
    return RAW


def main_config() -> dict:
    """The main job's config, evaluated once."""
    return copy.deepcopy(_main_config())


@functools.cache
def _main_config() -> dict:
    return Params.from_file(MAIN).as_dict()


def anonymizer_params() -> dict:
    """The main job's anonymizer."""
    return main_config()["dataset_reader"]["base_reader"]["anonymizer"]


def grammar_params() -> dict:
    """The main job's grammar: anonymized Prolog trees."""
    return main_config()["grammar"]


def raw_reader(strategies, *, execute: bool = True, seed: int = 13) -> RecombinationReader:
    """A recombination reader of raw GEO lines; its check runs the grammar's oracle and, with *execute*, Geobase."""
    needs_raw()
    check = {"grammar": grammar_params()}
    if execute:
        require_swipl()
        check["executor"] = {"type": "geoquery_prolog", "database": str(RAW), "max_inferences": 5_000_000}
    params = {
        "type": "recombination",
        "base_reader": {"type": "tsv", "anonymizer": anonymizer_params()},
        "strategies": strategies,
        "check": check,
        "seed": seed,
    }
    return DatasetReader.from_params(Params(params))


def training_lines(tmp_path: Path, *questions: str) -> Path:
    """A file of the real training lines whose questions are *questions*, in that order."""
    lines = {line.split("\t")[0]: line for line in (needs_raw() / "geo_prolog_train.tsv").read_text(encoding="utf-8").splitlines() if line.strip()}
    path = tmp_path / "train.tsv"
    path.write_text("".join(lines[question] + "\n" for question in questions), encoding="utf-8")
    return path


def training_slice(tmp_path: Path, size: int) -> Path:
    lines = (needs_raw() / "geo_prolog_train.tsv").read_text(encoding="utf-8").splitlines()[:size]
    path = tmp_path / "slice.tsv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def added(examples):
    return [example for example in examples if example.meta.get("recombination")]


# ------------------------------------------------------------------ hand-checked strategies on real lines


def test_abs_entities_swaps_in_one_name_of_each_other_reading(tmp_path):
    """``maine`` is only a state: the other readings a state's name has are city, lake and river
    (new york, michigan, mississippi...), and each swap brings one, in question and query alike.
    """
    path = training_lines(tmp_path, "what is the capital of maine ?")
    reader = raw_reader({"entities": {"type": "abs_entities", "ratio": 10}})
    new = added(reader.read(path))
    lexicon = reader.base_reader.anonymizer.lexicon
    assert len(new) == 3
    readings = set()
    for example in new:
        name = example.meta["question"].removeprefix("what is the capital of ").removesuffix(" ?")
        (state,) = [entity for entity in lexicon.lookup(name) if entity.type == "state"]
        spelled = " ".join(lexicon.spelling(state))
        assert example.target == f"_answer ( A , ( _capital ( A ) , _loc ( A , B ) , _const ( B , _stateid ( {spelled} ) ) ) )"
        assert example.meta["anonymized_target"] == "_answer ( A , ( _capital ( A ) , _loc ( A , B ) , _const ( B , _stateid ( e0 ) ) ) )"
        readings.add(frozenset(example.tokens[5:-2]))  # the type words before e0
        assert example.meta["sources"] == [1]
    assert readings == {frozenset({"state", "city"}), frozenset({"state", "lake"}), frozenset({"state", "river"})}


def test_abs_whole_phrases_moves_a_phrase_seen_in_two_templates_into_a_third_line(tmp_path):
    """The words area and population fill "what is the _ of e0 ?" and "what is the _ of the largest state ?",
    so "population" goes into the third line; the other swaps give lines already there.
    """
    path = training_lines(
        tmp_path,
        "what is the area of idaho ?",
        "what is the population of idaho ?",
        "what is the area of the largest state ?",
        "what is the population of the largest state ?",
        "what is the area of the state with the capital albany ?",
    )
    new = added(raw_reader({"whole_phrases": {"type": "abs_whole_phrases", "ratio": 10}}).read(path))
    assert [(example.meta["question"], example.target) for example in new] == [
        (
            "what is the population of the state with the capital albany ?",
            "_answer ( A , ( _population ( B , A ) , _state ( B ) , _loc ( C , B ) , _capital ( C ) , _const ( C , _cityid ( albany , _ ) ) ) )",
        )
    ]
    assert new[0].tokens == "what is the population of the state with the capital city e0 ?".split()


def test_abs_whole_phrases_puts_a_described_set_where_an_entity_was(tmp_path):
    """A placeholder and "the largest state" fill two templates: the state in a third line becomes the largest state."""
    path = training_lines(
        tmp_path,
        "what is the area of idaho ?",
        "what is the area of the largest state ?",
        "what is the population of idaho ?",
        "what is the population of the largest state ?",
        "what is the population density of texas ?",
    )
    new = {(example.meta["question"], example.target) for example in added(raw_reader({"awp": {"type": "abs_whole_phrases", "ratio": 10}}).read(path))}
    assert ("what is the population density of the largest state ?", "_answer ( A , ( _density ( B , A ) , _largest ( B , _state ( B ) ) ) )") in new


def test_concat_joins_two_raw_lines_and_numbers_their_entities_through(tmp_path):
    path = training_lines(tmp_path, "what is the capital of maine ?", "how many people live in austin ?")
    new = added(raw_reader({"concat": {"type": "concat", "k": 2, "ratio": 1.0}}).read(path))
    capital = "_answer ( A , ( _capital ( A ) , _loc ( A , B ) , _const ( B , _stateid ( maine ) ) ) )"
    people = "_answer ( A , ( _population ( B , A ) , _const ( B , _cityid ( austin , _ ) ) ) )"
    by_source = {tuple(example.meta["sources"]): example for example in new}
    assert set(by_source) == {(1, 2), (2, 1)}
    first = by_source[1, 2]
    assert first.meta["question"] == "what is the capital of maine ? </s> how many people live in austin ?"
    assert first.tokens == "what is the capital of state e0 ? </s> how many people live in city e1 ?".split()
    assert first.target == f"_concat ( {capital} , {people} )"
    assert first.meta["anonymized_target"] == f"_concat ( {capital.replace('maine', 'e0')} , {people.replace('austin', 'e1')} )"


# ------------------------------------------------------------------ what is dropped


class Fixed(RecombinationStrategy):
    """Draws the given (question, query) pairs, in order (not registered: built here only)."""

    def __init__(self, pairs, ratio: float = 10.0) -> None:
        super().__init__(ratio)
        self.pairs = pairs

    def draws(self, examples, count, rng, anonymizer):
        return iter(Candidate(tuple(question.split()), query, ("test",)) for question, query in self.pairs)


def test_draws_that_disagree_fail_to_derive_or_to_answer_are_dropped_by_reason(tmp_path):
    require_swipl()
    path = training_lines(tmp_path, "what is the capital of maine ?")
    check = ExampleCheck(GeoQueryProlog(str(RAW), max_inferences=5_000_000), Grammar.from_params(grammar_params()))
    base = TsvReader(anonymizer=Anonymizer.from_params(anonymizer_params()))
    strategies = {
        "fixed": Fixed(
            [
                (
                    "what is the capital of maine ?",
                    "_answer ( A , ( _capital ( A ) , _loc ( A , B ) , _const ( B , _stateid ( maine ) ) ) )",
                ),  # the line itself
                (
                    "what is the capital of ohio ?",
                    "_answer ( A , ( _capital ( A ) , _loc ( A , B ) , _const ( B , _stateid ( texas ) ) ) )",
                ),  # texas unmentioned
                (
                    "how many people live in new york ?",
                    "_answer ( A , ( _population ( B , A ) , _const ( B , _cityid ( ' new york ' , _ ) ) ) )",
                ),  # read as the state
                ("what lakes are in hawaii ?", "_answer ( A , ( _lake ( A ) , _loc ( A , B ) , _const ( B , _stateid ( hawaii ) ) ) )"),  # none
                ("what is the size of ohio ?", "_answer ( A , ( _size ( B , A ) , _const ( B , _stateid ( ohio ) ) )"),  # a bracket short
                ("what is the lake of ohio ?", "_answer ( A , ( _lake ( B , A ) , _const ( B , _stateid ( ohio ) ) ) )"),  # no lake/2
                (
                    "what is the capital of texas ?",
                    "_answer ( A , ( _capital ( A ) , _loc ( A , B ) , _const ( B , _stateid ( texas ) ) ) )",
                ),  # maine's, to the parser
                (
                    "what is the capital of mississippi ?",
                    "_answer ( A , ( _capital ( A ) , _loc ( A , B ) , _const ( B , _stateid ( mississippi ) ) ) )",
                ),  # kept
            ]
        )
    }
    reader = RecombinationReader(base, strategies, check=check)
    new = added(reader.read(path))
    assert [example.meta["question"] for example in new] == ["what is the capital of mississippi ?"]
    assert reader.report["fixed"] == {
        "wanted": 10,
        "added": 1,
        "dropped_empty": 1,
        "dropped_error": 1,
        "dropped_misread": 1,
        "dropped_oracle": 1,
        "dropped_repeat": 2,
        "dropped_unmatched": 1,
    }


def test_a_misread_is_a_reading_the_anonymizer_does_not_prefer():
    needs_raw()
    anonymizer = Anonymizer.from_params(anonymizer_params())
    as_city = anonymizer.anonymize(
        "how many people live in new york ?".split(), "_answer ( A , ( _population ( B , A ) , _const ( B , _cityid ( ' new york ' , _ ) ) ) )"
    )
    as_state = anonymizer.anonymize(
        "how many people live in new york ?".split(), "_answer ( A , ( _population ( B , A ) , _const ( B , _stateid ( ' new york ' ) ) ) )"
    )
    said = anonymizer.anonymize(
        "how many people live in new york city ?".split(), "_answer ( A , ( _population ( B , A ) , _const ( B , _cityid ( ' new york ' , _ ) ) ) )"
    )
    assert (misread(as_city, anonymizer), misread(as_state, anonymizer), misread(said, anonymizer)) == (True, False, False)


def test_the_oracle_check_replays_the_grammar():
    needs_raw()
    grammar = Grammar.from_params(grammar_params())
    reader = TsvReader(anonymizer=Anonymizer.from_params(anonymizer_params()))
    good = reader.example(
        "what is the capital of texas ?".split(), "_answer ( A , ( _capital ( A ) , _loc ( A , B ) , _const ( B , _stateid ( texas ) ) ) )", {}
    )
    truncated = reader.example("what is the capital of texas ?".split(), "_answer ( A , ( _capital ( A ) , _loc ( A , B ) )", {})
    assert derives(grammar, good) and not derives(grammar, truncated)
    assert ExampleCheck(grammar=grammar).problem(truncated) == "oracle"


# ------------------------------------------------------------------ every draw executes and derives; determinism


@pytest.fixture(scope="module")
def executor():
    require_swipl()
    with GeoQueryProlog(str(needs_raw())) as executor:  # evaluation's limits, not the check's lower ones
        yield executor


@pytest.mark.parametrize(
    "strategy",
    [
        {"type": "abs_entities", "ratio": 1.0},
        {"type": "abs_whole_phrases", "ratio": 1.0, "min_support": 1},
        {"type": "concat", "k": 2, "ratio": 1.0},
    ],
    ids=lambda strategy: strategy["type"],
)
def test_every_recombined_query_of_a_real_slice_executes_and_the_grammar_derives_it(strategy, executor, tmp_path):
    path = training_slice(tmp_path, 80)
    new = added(raw_reader({"s": strategy}).read(path))
    assert len(new) >= 20
    grammar = Grammar.from_params(grammar_params())
    targets = {line: target.strip() for line, target in enumerate((line.split("\t")[1] for line in path.read_text(encoding="utf-8").splitlines()), start=1)}
    for example in new:
        if strategy["type"] == "concat":  # parts the executor cannot run as one: they are the originals
            assert example.target == "_concat ( " + " , ".join(targets[line] for line in example.meta["sources"]) + " )"
        else:
            (denotation,) = executor.execute([example.target])
            assert denotation.ok and denotation.answers, (example.meta["question"], example.target, denotation)
        assert derives(grammar, example), example.target
    assert len({pair_of(example) for example in new}) == len(new)


def test_every_template_gives_examples_that_execute_and_that_the_grammar_derives(executor, tmp_path):
    templates = read_templates(TEMPLATES)
    path = training_slice(tmp_path, 60)
    reader = raw_reader({"templates": {"type": "geo_templates", "ratio": round(8 * len(templates) / 60, 2)}})  # about 8 rounds
    new = added(reader.read(path))
    assert {f"geo_templates.txt:{template.line}" for template in templates} <= {example.meta["sources"][0] for example in new}
    grammar = Grammar.from_params(grammar_params())
    for example in new:
        (denotation,) = executor.execute([example.target])
        assert denotation.ok and denotation.answers, (example.meta["question"], example.target, denotation)
        assert derives(grammar, example), example.target
    assert any(not example.meta["question"].endswith("?") for example in new)  # some without their question mark


@pytest.mark.parametrize(
    "strategies",
    [
        {"entities": {"type": "abs_entities", "ratio": 0.3}, "whole_phrases": {"type": "abs_whole_phrases", "ratio": 0.3}},
        {"concat": {"type": "concat", "ratio": 0.3}, "templates": {"type": "geo_templates", "ratio": 0.3}},
    ],
    ids=["abstraction", "concat_templates"],
)
def test_the_same_seed_gives_the_same_examples_and_another_seed_others(strategies, tmp_path):
    path = training_slice(tmp_path, 100)
    first, second, other = ([(e.meta["question"], e.target) for e in raw_reader(strategies, execute=False, seed=seed).read(path)] for seed in (13, 13, 14))
    assert len(first) > 100 and first == second
    assert first[:100] == other[:100] and first[100:] != other[100:]


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_whatever_is_kept_is_what_the_reader_makes_of_its_own_question_and_query(data, tmp_path_factory):
    """Any slice, any strategy, any seed: a kept example is the base reader's anonymization of its raw question
    and query (tokens, anonymized query, mentions), its mentions name every entity of the query, and the
    grammar derives it; no two examples are one to the parser.
    """
    lines = [line for line in (needs_raw() / "geo_prolog_train.tsv").read_text(encoding="utf-8").splitlines() if line.strip()]
    chosen = data.draw(st.lists(st.sampled_from(lines), min_size=3, max_size=30, unique=True))
    path = tmp_path_factory.mktemp("slice") / "train.tsv"
    path.write_text("\n".join(chosen) + "\n", encoding="utf-8")
    strategy = data.draw(
        st.sampled_from(
            [
                {"type": "abs_entities", "ratio": 2.0},
                {"type": "abs_whole_phrases", "ratio": 2.0, "min_support": 1},
                {"type": "concat", "ratio": 1.0},
                {"type": "geo_templates", "ratio": 1.0},
            ]
        )
    )
    reader = raw_reader({"s": strategy}, execute=False, seed=data.draw(st.integers(0, 999)))
    examples = reader.read(path)
    base, anonymizer = reader.base_reader, reader.base_reader.anonymizer
    for example in added(examples):
        again = base.example(example.meta["question"].split(), example.target, {})
        assert (again.tokens, again.meta["anonymized_target"], again.meta["mentions"]) == (
            example.tokens,
            example.meta["anonymized_target"],
            example.meta["mentions"],
        )
        assert anonymizer.anonymize(example.meta["question"].split(), example.target).unmatched == []
        assert derives(reader.check.grammar, example)
    assert len({pair_of(example) for example in examples}) == len({pair_of(example) for example in examples[: len(chosen)]}) + len(added(examples))


# ------------------------------------------------------------------ the templates file


def test_the_templates_file_says_how_it_was_written_and_covers_geobase():
    header = "\n".join(line for line in TEMPLATES.read_text(encoding="utf-8").splitlines() if line.startswith("#"))
    assert "schema" in header and "English" in header and "2026-11-27" in header and "test questions" in header
    templates = read_templates(TEMPLATES)
    assert len(templates) >= 100 and sum(len(template.wordings) for template in templates) >= 300
    slot_types = {SLOT.fullmatch("{" + name + "}").group(1) for template in templates for name in template.slots}
    assert slot_types == set(SLOT_TYPES)
    queries = " ".join(template.query for template in templates)
    wanted = "_lake _lakeid _mountain _mountainid _place _placeid _density _area _population _elevation _len _next_to _capital _major"
    wanted += " _largest _smallest _highest _lowest _longest _shortest _most _fewest _count _sum _more _higher _longer _abbreviation"
    assert [predicate for predicate in wanted.split() if f"{predicate} (" not in queries] == []
    assert "\\+ (" in queries and "\\+ _const" in queries  # negation and exclusion
    wordings = " ".join(wording for template in templates for wording in template.wordings)
    for word in ("surface", "inhabitants", "adjoin", "per square mile", "{state.abbr}", "pop."):
        assert word in wordings


def test_a_template_writes_names_as_users_do_and_as_the_data_spells_them():
    needs_raw()
    lexicon = Anonymizer.from_params(anonymizer_params()).lexicon
    template = Template(
        ("how many people live in {state.abbr} , not {state2} ?",),
        "_answer ( A , ( _population ( B , A ) , _const ( B , _stateid ( {state} ) ) , _x ( {state2} ) ) )",
        1,
    )
    entities = {"state": lexicon.state("ny"), "state2": Entity("north dakota", "state", "nd")}
    assert template.question(template.wordings[0], entities) == tuple("how many people live in NY , not north dakota ?".split())
    assert (
        template.target(entities, lexicon) == "_answer ( A , ( _population ( B , A ) , _const ( B , _stateid ( ' new york ' ) ) , _x ( ' north dakota ' ) ) )"
    )
    assert template.slots == ["state", "state2"]


@pytest.mark.parametrize(
    ("text", "line", "why"),
    [
        ("what is {county} ?\n=> _answer ( A , _x ( {county} ) )\n", 1, "unknown slot type 'county'"),
        ("# a comment\nwhat is {state}?\n=> _answer ( A , _x ( {state} ) )\n", 2, "no slot"),
        ("what is {state} ?\n=> _answer ( A , _x ( {state.abbr} ) )\n", 2, "belongs in the wordings"),
        ("what is {city.abbr} ?\n=> _answer ( A , _x ( {city} ) )\n", 1, "only a state has an abbreviation"),
        ("what is the capital ?\n=> _answer ( A , _x ( {state} ) )\n", 1, "names slots"),
        ("what is {state} ?\n", 1, "one '=> query' line last"),
        ("what is {state} ?\n=> _answer ( A , _x ( {state} ) )\n=> _answer ( A , _y ( {state} ) )\n", 1, "2 query lines"),
        ("what is {state} ?\n=> _answer ( A , _x ( {state} )\n", 2, "no Prolog term"),
        ("what is {state} ?\n=> _x ( A , {state} )\n", 2, "_answer"),
        ("\n# nothing\n", None, "no templates"),
    ],
)
def test_a_malformed_templates_file_is_a_data_error_naming_its_line(tmp_path, text, line, why):
    path = tmp_path / "templates.txt"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DataError, match=re.escape(why)) as caught:
        read_templates(path)
    assert caught.value.path == str(path) and caught.value.line == line


def test_a_strategy_of_ratio_zero_never_reads_its_file(tmp_path):
    path = training_slice(tmp_path, 5)
    reader = raw_reader({"templates": {"type": "geo_templates", "ratio": 0, "path": str(tmp_path / "missing.txt")}}, execute=False)
    assert len(reader.read(path)) == 5
    with pytest.raises(DataError, match="templates file not found"):
        GeoTemplates(path=str(tmp_path / "missing.txt")).templates  # noqa: B018 (the property reads the file)


# ------------------------------------------------------------------ the main job's config


def test_the_main_job_recombines_and_templates_and_its_questions_only_override_reads_the_file_alone():
    needs_raw()
    params = Params.from_file(MAIN)
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    validation = DatasetReader.from_params(params.pop("validation_dataset_reader"))
    assert isinstance(reader, RecombinationReader) and type(validation) is TsvReader
    assert {name: strategy.ratio for name, strategy in reader.strategies.items()} == {"entities": 0.1, "whole_phrases": 0.25, "concat": 0.1, "templates": 0.5}
    assert reader.check is not None and reader.check.executor is not None and reader.check.grammar is not None
    only = Params.from_file(MAIN, str(QUESTIONS_ONLY))
    assert only.as_dict()["trainer"]["num_epochs"] == 120
    reader = DatasetReader.from_params(only.pop("dataset_reader"))
    assert {name: strategy.ratio for name, strategy in reader.strategies.items()} == {"entities": 0, "whole_phrases": 0, "concat": 0, "templates": 0}
    path = RAW / "geo_prolog_train.tsv"
    plain = [(e.tokens, e.target, e.meta) for e in validation.read(path)]
    assert [(e.tokens, e.target, e.meta) for e in reader.read(path)] == plain and len(plain) == 600


def test_a_bad_strategy_setting_names_its_key_in_the_main_config():
    needs_raw()
    with pytest.raises(ConfigurationError, match=r"^dataset_reader\.strategies\.templates\.no_question_mark: must be a probability"):
        DatasetReader.from_params(Params.from_file(MAIN, json.dumps({"dataset_reader.strategies.templates.no_question_mark": 2})).pop("dataset_reader"))


def test_training_on_a_slice_with_every_strategy_on(monkeypatch, capsys, tmp_path):
    """A seconds-sized parser (2 epochs) on 40 raw lines with all four strategies: it trains, and its
    vocabulary has what only the new examples bring (a lake, two questions in one).
    """
    require_swipl()
    lines = (needs_raw() / "geo_prolog_train.tsv").read_text(encoding="utf-8").splitlines()
    (tmp_path / "train.tsv").write_text("\n".join(lines[:40]) + "\n", encoding="utf-8")
    (tmp_path / "test.tsv").write_text("\n".join(lines[40:50]) + "\n", encoding="utf-8")
    monkeypatch.setenv("TRAIN", str(tmp_path / "train.tsv"))
    monkeypatch.setenv("TEST", str(tmp_path / "test.tsv"))
    reader = {
        "type": "recombination",
        "base_reader": {"type": "tsv", "anonymizer": anonymizer_params()},
        "strategies": {
            "entities": {"type": "abs_entities", "ratio": 0.25},
            "whole_phrases": {"type": "abs_whole_phrases", "ratio": 0.25, "min_support": 1},
            "concat": {"type": "concat", "ratio": 0.25},
            "templates": {"type": "geo_templates", "ratio": 4.0},  # a round of every template
        },
        "check": {"executor": {"type": "geoquery_prolog", "database": str(RAW)}, "grammar": grammar_params()},
    }
    overrides = {
        "dataset_reader": reader,
        "validation_dataset_reader": {"type": "tsv", "anonymizer": anonymizer_params()},
        "grammar": grammar_params(),
        "metrics": [{"type": "exact_match"}],
        "trainer": {"num_epochs": 2},
    }
    directory = tmp_path / "run"
    code, _out, err = run(monkeypatch, capsys, "train", FIXTURES / "tiny_seq2seq.jsonnet", "-s", directory, "-f", "-o", json.dumps(overrides))
    assert code == 0, err
    symbols = (directory / "vocabulary" / "symbols.txt").read_text(encoding="utf-8")
    assert "_lakeid" in symbols and "_concat" in symbols
    assert "</s>" in (directory / "vocabulary" / "tokens.txt").read_text(encoding="utf-8").split()
    assert (directory / "model.tar.gz").exists()
