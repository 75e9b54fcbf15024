"""Fuzzing with hypothesis: readers on random and mutated files, searches on random scores.

A reader may only ever read a file cleanly or raise :class:`DataError` naming the file; any other
exception is a bug the CLI would show as a traceback. The mutated files are the first 20 lines (or
blocks) of the real data sets with random byte deletions, insertions and duplications. A search
must always end in a final grammar state, whatever the scores say.

Each test draws 50 examples (about ten seconds in all); ``FUZZ_EXAMPLES=5000 pytest tests/test_fuzz.py``
runs a longer campaign.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import penman
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import data_root
from tests.test_search import SENTENCES, tiny_model
from toolkit.data.dataset_readers import ConlluReader, ParallelTextReader, PenmanReader, TsvReader
from toolkit.data.example import Example
from toolkit.decoding import BeamSearch, GreedySearch
from toolkit.errors import DataError
from toolkit.grammars import BracketedGrammar, SequenceGrammar
from toolkit.metrics import parse_sexpr
from tree_codecs import LcrsDfsCodec, NaryDfsCodec, TreePairsReader

FUZZ = settings(
    max_examples=int(os.environ.get("FUZZ_EXAMPLES", 50)),
    deadline=None,
    database=None,  # nothing written into the repository
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# ------------------------------------------------------------------ readers and their real data


def first_lines(path: Path, count: int = 20) -> bytes:
    with open(path, "rb") as file:
        return b"".join(line for _, line in zip(range(count), file))


def first_blocks(path: Path, count: int = 20) -> bytes:
    return b"\n\n".join(path.read_bytes().split(b"\n\n")[:count]) + b"\n\n"


@pytest.fixture(scope="module")
def samples() -> dict[str, dict[str, bytes]]:
    """Each reader's files (name -> bytes): the first 20 lines or blocks of a real data set."""
    root = data_root()
    sources = {
        "tsv": lambda: {"data.tsv": first_lines(root / "geo" / "train.txt")},
        "conllu": lambda: {"data.conllu": first_blocks(root / "ud-english-ewt" / "en_ewt-ud-dev.conllu")},
        "penman": lambda: {"data.txt": first_blocks(root / "amr-little-prince" / "amr-bank-struct-v3.0-train.txt")},
        "parallel_text": lambda: {"data.de": first_lines(root / "multi30k" / "train.de"), "data.en": first_lines(root / "multi30k" / "train.en")},
        "tree_pairs": lambda: {"data.tsv": first_lines(root / "geo" / "train.txt")},
        "tree_pairs_prolog": lambda: {"data.tsv": first_lines(root / "jobs" / "train.txt")},
    }
    found = {}
    for name, load in sources.items():
        try:
            found[name] = load()
        except FileNotFoundError:
            continue
    return found


READERS: dict[str, Callable[[], object]] = {
    "tsv": TsvReader,
    "conllu": ConlluReader,
    "penman": lambda: PenmanReader(lemmas=False),
    "parallel_text": lambda: ParallelTextReader("de", "en"),
    "tree_pairs": lambda: TreePairsReader(LcrsDfsCodec(), source_column=1),
    "tree_pairs_prolog": lambda: TreePairsReader(NaryDfsCodec(format="prolog", max_degree=16), source_column=1),
}
EMPTY_FILES = {
    name: ["data.de", "data.en"] if name == "parallel_text" else ["data.txt" if name == "penman" else "data.conllu" if name == "conllu" else "data.tsv"]
    for name in READERS
}


def read_cleanly_or_data_error(name: str, directory: Path, files: dict[str, bytes]) -> None:
    """Write *files*, read the first with reader *name*: examples that look right, or a DataError naming a file."""
    for file, data in files.items():
        (directory / file).write_bytes(data)
    paths = {str(directory / file) for file in files}
    try:
        examples = READERS[name]().read(directory / next(iter(files)))
    except DataError as error:
        assert error.path in paths, f"the error names no data file: {error}"
        return
    assert examples
    for example in examples:
        assert isinstance(example, Example) and example.tokens and all(isinstance(token, str) and token for token in example.tokens)
        assert example.meta["path"] in paths and example.meta["line"] >= 1
        if isinstance(example.target, penman.Graph):
            assert all(target is not None for _, _, target in example.target.triples), example.target.triples
            penman.encode(example.target)  # a graph read is a graph that can be written back
        if example.token_paths is not None:
            assert len(example.token_paths) == len(example.tokens)


# ------------------------------------------------------------------ mutations

INTERESTING = [
    b"\t",
    b"\n",
    b"\r\n",
    b"\r",
    b"(",
    b")",
    b'"',
    b"#",
    b"# ::id x\n",
    b"# sent_id = x\n",
    b":ARG0 ",
    b"/",
    b"_",
    b"-",
    b"0",
    b"\xef\xbb\xbf",
    b"\xff",
    b"\xc3",
    b"\x00",
    b" ",
]

mutation = st.tuples(
    st.sampled_from(["delete", "insert", "duplicate"]),
    st.integers(min_value=0, max_value=1 << 30),  # where, taken modulo the length
    st.one_of(st.sampled_from(INTERESTING), st.binary(min_size=1, max_size=8)),  # inserted bytes
    st.integers(min_value=1, max_value=80),  # how many bytes to delete or duplicate
)


def mutate(data: bytes, operations: list[tuple[str, int, bytes, int]]) -> bytes:
    for kind, where, payload, length in operations:
        i = where % (len(data) + 1)
        if kind == "delete":
            data = data[:i] + data[i + length :]
        elif kind == "insert":
            data = data[:i] + payload + data[i:]
        else:
            data = data[:i] + data[i : i + length] + data[i:]
    return data


structured_text = st.lists(
    st.one_of(st.sampled_from([b.decode("latin-1") for b in INTERESTING]), st.text(alphabet="abs0123456789 :/.-_$", min_size=1, max_size=6)),
    max_size=120,
).map(lambda parts: "".join(parts).encode("utf-8", errors="surrogateescape"))


def sample_or_skip(samples: dict[str, dict[str, bytes]], name: str) -> dict[str, bytes]:
    if name not in samples:
        pytest.skip(f"no data for the {name} reader under {data_root()}")
    return samples[name]


@pytest.mark.parametrize("name", list(READERS))
@FUZZ
@given(data=st.one_of(st.binary(max_size=2000), structured_text), both_files=st.booleans())
def test_readers_on_random_bytes(name, data, both_files, tmp_path):
    files = dict.fromkeys(EMPTY_FILES[name], data)
    if name == "parallel_text" and not both_files:
        files["data.en"] = b"one line\n"
    read_cleanly_or_data_error(name, tmp_path, files)


@pytest.mark.parametrize("name", list(READERS))
@FUZZ
@given(operations=st.lists(mutation, min_size=1, max_size=8), which=st.integers(min_value=0, max_value=1))
def test_readers_on_mutated_real_files(name, operations, which, samples, tmp_path):
    files = dict(sample_or_skip(samples, name))
    target = list(files)[which % len(files)]
    files[target] = mutate(files[target], operations)
    read_cleanly_or_data_error(name, tmp_path, files)


@pytest.mark.parametrize("name", list(READERS))
def test_unmutated_samples_read_cleanly(name, samples, tmp_path):
    """The fuzzing starts from files that read: the mutations, not the samples, make the errors."""
    files = sample_or_skip(samples, name)
    for file, data in files.items():
        (tmp_path / file).write_bytes(data)
    assert len(READERS[name]().read(tmp_path / next(iter(files)))) >= 15


# ------------------------------------------------------------------ searches on random scores


def random_scores(model, seed: int, scale: float):
    """A decode_step that ignores the model: log-softmax of random logits (finite, possibly very peaked)."""
    generator = torch.Generator().manual_seed(seed)

    def step(prefix, context, states):
        logits = torch.randn(prefix.size(0), len(model.target_tokens), generator=generator) * scale
        return torch.log_softmax(logits, dim=-1), context

    return step


@FUZZ
@given(
    seed=st.integers(min_value=0, max_value=2**31 - 1),
    scale=st.sampled_from([0.01, 1.0, 10.0, 1000.0]),
    max_length=st.integers(min_value=2, max_value=14),
    beam_size=st.integers(min_value=1, max_value=6),
    length_penalty=st.sampled_from([0.0, 0.6, 1.0, 2.0]),
    early_stopping=st.booleans(),
    bracketed=st.booleans(),
)
def test_beam_search_on_random_scores_always_finishes_well_formed(seed, scale, max_length, beam_size, length_penalty, early_stopping, bracketed):
    """Whatever the scores, every sentence ends in a final state within max_length; bracketed outputs are balanced."""
    grammar = BracketedGrammar(max_length=max_length) if bracketed else SequenceGrammar(max_length=max_length)
    model = tiny_model(grammar)
    model.decode_step = random_scores(model, seed, scale)
    examples = [Example(sentence) for sentence in SENTENCES]
    batch = model.collate([model.index(example) for example in examples])
    for search in (BeamSearch(beam_size=beam_size, length_penalty=length_penalty, early_stopping=early_stopping), GreedySearch()):
        states = search.search(model, batch, [grammar.initial_state(example) for example in examples])
        assert len(states) == len(examples)
        for state in states:
            assert state.is_final(), type(search).__name__
            symbols = state.result().split()
            assert len(symbols) <= max_length
            if bracketed:
                parse_sexpr(state.result())  # raises on unbalanced brackets
