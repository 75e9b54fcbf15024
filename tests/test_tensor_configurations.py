"""The tensor form of the transition systems (issue 75; ``toolkit.decoding.tensor_configurations``) against the Python configurations, its reference: the same
allowed symbols, features, partial trees and final trees after any action sequence, on random walks and on EWT's
oracle; and the same parses from a model decoding on either.
"""

import random
from collections import Counter

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import data_root
from toolkit.data.dataset_readers import DatasetReader
from toolkit.data.example import Example
from toolkit.data.vocabulary import Vocabulary
from toolkit.decoding import BeamSearch, GreedySearch
from toolkit.decoding.tensor_configurations import tensor_configurations, tensor_states
from toolkit.grammars import Grammar
from toolkit.models import EncoderDecoder
from toolkit.modules.decoders import Decoder
from toolkit.modules.encoders import TransformerEncoder
from toolkit.modules.transformer_settings import TransformerSettings
from toolkit.plugins import import_builtin_components
from transition_systems.arc_standard import ArcStandard

import_builtin_components()

# Padding, unknown and start come first, as in every vocabulary; then moves, arcs, a labeled SHIFT, a plugin's kind,
# an arc that carries the root relation and arcs that do not.
SYMBOLS = ["@@PADDING@@", "@@UNKNOWN@@", "@@START@@", "SHIFT", "SHIFT:the", "SWAP", "NO-ARC", "LEFT-ARC:nsubj", "LEFT-ARC:root"]
SYMBOLS += ["RIGHT-ARC:root", "RIGHT-ARC:obj", "RIGHT-ARC:nmod:poss"]
SYSTEMS = {
    "arc-standard": {"type": "arc_standard"},
    "arc-standard, any root, labeled SHIFT": {"type": "arc_standard", "root_label": None, "single_root": False, "shift_words": ["the"]},
    "arc-hybrid": {"type": "arc_hybrid"},
    "arc-hybrid, several roots": {"type": "arc_hybrid", "single_root": False},
    "arc-swap, budget": {"type": "arc_swap", "max_swaps_per_word": 0.5},
    "arc-swap, unbounded, labeled SHIFT": {"type": "arc_swap", "shift_words": ["the"]},
    "pseudo-projective arc-standard": {"type": "arc_standard", "non_projective": "pseudo_projective"},
}


def allowed_symbols(configuration) -> set[str]:
    return set() if configuration.is_final() else {symbol for symbol in SYMBOLS if symbol in configuration.allowed()}


def assert_same(configurations, tensors) -> None:
    """Row by row: the allowed symbols, the stack and buffer features, whether final, and the tree so far."""
    mask, (stack, buffer), finished = tensors.allowed_mask(), tensors.positions(), tensors.finished()
    for row, configuration in enumerate(configurations):
        assert {SYMBOLS[i] for i in mask[row].nonzero().flatten().tolist()} == allowed_symbols(configuration)
        features = configuration.features()
        assert tuple(p for p in stack[row].tolist() if p >= 0) == features["stack"]
        assert tuple(p for p in buffer[row].tolist() if p >= 0) == features["buffer"]
        assert bool(finished[row]) == configuration.is_final()
    assert tensors.results() == [configuration.result() for configuration in configurations]


@settings(max_examples=40, deadline=None)
@given(system=st.sampled_from(sorted(SYSTEMS)), lengths=st.lists(st.integers(0, 7), min_size=1, max_size=4), seed=st.integers(0, 2**16))
def test_random_walks_allow_the_same_symbols_and_build_the_same_trees(system, lengths, seed):
    grammar = Grammar.from_params(dict(SYSTEMS[system]))
    choose = random.Random(seed)
    sentences = [Example([choose.choice(["the", "dog", "saw", "a"]) for _ in range(n)]) for n in lengths]
    configurations = [grammar.initial_state(sentence) for sentence in sentences]
    tensors = tensor_states(grammar, sentences, SYMBOLS, "cpu")
    for _ in range(3 * max(lengths) + 4):
        assert_same(configurations, tensors)
        chosen = [choose.choice(sorted(allowed)) if (allowed := allowed_symbols(c)) else SYMBOLS[0] for c in configurations]
        configurations = [c if c.is_final() else c.apply(symbol) for c, symbol in zip(configurations, chosen)]
        tensors = tensors.apply(torch.tensor([SYMBOLS.index(symbol) for symbol in chosen]))
    assert_same(configurations, tensors)
    assert all(c.is_final() for c in configurations)  # every walk ends within 2n actions (arc-swap's budget: n/2 swaps)


def test_rows_held_still_and_rows_reordered_keep_their_configurations():
    grammar = Grammar.from_params({"type": "arc_standard"})
    sentences = [Example(["a", "b"]), Example(["c"])]
    tensors = tensor_states(grammar, sentences, SYMBOLS, "cpu")
    shift = SYMBOLS.index("SHIFT")
    moved = tensors.apply(torch.tensor([shift, shift]), moving=torch.tensor([True, False]))
    assert moved.positions()[0][:, :1].tolist() == [[0], [-1]]  # only the first row shifted
    swapped = moved.select(torch.tensor([1, 0]))
    assert swapped.positions()[1].tolist() == [[0, -1], [1, -1]]
    assert swapped.with_rows(torch.tensor([0, 1]), moved).positions()[1].tolist() == moved.positions()[1].tolist()


def test_a_plugin_that_changes_the_rules_gets_no_tensor_form():
    class Stubborn(ArcStandard):
        def valid(self, config):
            return super().valid(config)

    assert tensor_states(Stubborn(), [Example(["a"])], SYMBOLS, "cpu") is None
    assert tensor_states(ArcStandard(), [Example(["a"])], SYMBOLS, "cpu") is not None


@pytest.fixture(scope="module")
def treebank():
    path = data_root() / "ud-english-ewt" / "en_ewt-ud-dev.conllu"
    if not path.exists():
        pytest.skip(f"EWT not found at {path}")
    return DatasetReader.by_name("conllu")().read(path)[:120]


@pytest.mark.parametrize("system", ["arc-standard", "arc-hybrid", "arc-swap, unbounded, labeled SHIFT", "pseudo-projective arc-standard"])
def test_the_oracle_of_real_sentences_replays_on_tensors_to_the_same_trees(treebank, system):
    grammar = Grammar.from_params(dict(SYSTEMS[system]))
    examples = [example for example in treebank if not grammar.skips(example)]
    symbols = ["@@PADDING@@", "@@UNKNOWN@@", "@@START@@", *sorted({s for e in examples for s in grammar.oracle(e)})]
    oracles = [grammar.oracle(example) for example in examples]
    tensors = tensor_states(grammar, examples, symbols, "cpu")
    ids = {symbol: i for i, symbol in enumerate(symbols)}
    for step in range(max(map(len, oracles))):
        taken = torch.tensor([ids[oracle[step]] if step < len(oracle) else 0 for oracle in oracles])
        allowed = tensors.allowed_mask()
        assert all(allowed[row, i] for row, i in enumerate(taken.tolist()) if step < len(oracles[row]))
        tensors = tensors.apply(taken)
    assert bool(tensors.finished().all())
    assert tensors.results() == [grammar.replay(example).result() for example in examples]


def random_parser(grammar: Grammar, examples, decoder: str, seed: int = 0) -> EncoderDecoder:
    """An untrained parser: its random choices walk every kind of configuration."""
    grammar.fit(examples)
    torch.manual_seed(seed)
    counters = {"tokens": Counter(t for e in examples for t in e.tokens), "symbols": Counter(s for e in examples for s in grammar.oracle(e))}
    settings_ = {"num_layers": 1, "num_heads": 2, "ff_dim": 32, "dropout": 0.0}
    options = {"state_mlp": {"dropout": 0.0}, "stack_transformer": {"layers": settings_}, "transformer": {"layers": settings_}}[decoder]
    decoder_module = Decoder.from_params({"type": decoder, "input_dim": 16, **options})
    encoder = TransformerEncoder(16, layers=TransformerSettings(**settings_))
    return EncoderDecoder(Vocabulary(counters), grammar, encoder, decoder_module).eval()


@pytest.mark.parametrize("decoder", ["state_mlp", "stack_transformer", "transformer"])
@pytest.mark.parametrize("system", ["arc-standard, any root, labeled SHIFT", "arc-hybrid", "arc-swap, budget", "pseudo-projective arc-standard"])
def test_greedy_parses_on_tensors_are_the_parses_on_python_states(treebank, system, decoder):
    grammar = Grammar.from_params(dict(SYSTEMS[system]))
    examples = [example for example in treebank[:60] if not grammar.skips(example)]
    model = random_parser(grammar, examples, decoder)
    assert model.tensor_states(examples[:2]) is not None
    on_tensors = model.predict(examples, GreedySearch())
    on_states = model.predict(examples, GreedySearch(tensor_states=False))
    assert on_tensors == on_states
    assert len({tree.heads for tree in on_tensors}) > len(examples) // 2  # the parses differ: the walks were not all alike


@pytest.mark.parametrize("decoder", ["state_mlp", "stack_transformer"])
@pytest.mark.parametrize("system", ["arc-standard", "arc-swap, budget"])
def test_beam_parses_on_tensors_are_the_parses_on_python_states(treebank, system, decoder):
    grammar = Grammar.from_params(dict(SYSTEMS[system]))
    examples = treebank[:30]
    model = random_parser(grammar, examples, decoder, seed=1)
    on_tensors = model.predict(examples, BeamSearch(beam_size=4))
    assert on_tensors == model.predict(examples, BeamSearch(beam_size=4, tensor_states=False))
    assert on_tensors != model.predict(examples, GreedySearch())  # the beam found other parses: it did search


@pytest.mark.parametrize("options", [{}, {"labeled_shift_words": 20}], ids=["plain", "labeled SHIFT"])
def test_the_dynamic_oracle_on_tensors_is_the_python_oracle(treebank, options):
    """On random walks from EWT's trees (half of the steps off the optimal path), row by row the same optimal symbols."""
    from toolkit.decoding.tensor_oracle import TensorDynamicOracle

    grammar = Grammar.from_params({"type": "arc_hybrid", **options})
    grammar.fit(treebank)
    examples = [example for example in treebank[:60] if not grammar.skips(example)]
    symbols = ["@@PADDING@@", "@@UNKNOWN@@", "@@START@@", *sorted({s for e in examples[:40] for s in grammar.oracle(e)})]  # some relations missing
    oracles = [grammar.dynamic_oracle(example) for example in examples]
    configurations = [oracle.start for oracle in oracles]
    tensors = tensor_configurations(grammar, configurations, symbols, "cpu")
    gold, choose = TensorDynamicOracle.of(oracles, tensors), random.Random(0)
    while not all(c.is_final() for c in configurations):
        optimal = gold.optimal_mask(tensors, tensors.allowed_mask())
        chosen = []
        for row, (configuration, oracle) in enumerate(zip(configurations, oracles)):
            allowed = sorted(allowed_symbols_in(configuration, symbols))
            best = {s for s in allowed if s in oracle.optimal(configuration)}
            assert {symbols[i] for i in optimal[row].nonzero().flatten().tolist()} == best
            symbol = choose.choice(sorted(best) if best and choose.random() < 0.5 else allowed) if allowed else symbols[0]
            chosen.append(symbols.index(symbol))
            configurations[row] = configuration.apply(symbol) if allowed else configuration
        tensors = tensors.apply(torch.tensor(chosen))


def allowed_symbols_in(configuration, symbols) -> set[str]:
    return set() if configuration.is_final() else {symbol for symbol in symbols if symbol in configuration.allowed()}


def test_exploring_on_tensors_takes_the_paths_python_states_take(treebank):
    """The same random draws give the same paths, targets and features, so the same loss, with either form."""
    from toolkit.decoding.exploration import Exploration, ExploredTensors, explore

    grammar = Grammar.from_params({"type": "arc_hybrid"})
    examples = [example for example in treebank[:24] if not grammar.skips(example)]
    model = random_parser(grammar, examples, "state_mlp", seed=2)
    model.exploration, model.exploring = Exploration(probability=0.6), True  # index() keeps each dynamic oracle
    batch = model.collate([model.index(example) for example in examples])
    encoded = model.encode(batch["source"], batch)

    def explored(on_tensors: bool):
        model.exploration = Exploration(probability=0.6, tensor_states=on_tensors)
        assert isinstance(explore(model, batch, batch["oracles"], 0.6, encoded), ExploredTensors) == on_tensors
        torch.manual_seed(5)
        return model.explored(batch, encoded)

    on_tensors, on_states = explored(True), explored(False)
    assert torch.equal(on_tensors["target_in"], on_states["target_in"])
    assert torch.equal(on_tensors["target_out"], on_states["target_out"])
    features = model.decoder.batch_features(on_states["features"], "cpu")
    assert torch.equal(model.decoder.batch_features(on_tensors["features"], "cpu"), features)
    assert model.steps_off_gold > 0  # the model's own choices left the optimal path: the oracle answered off it


def test_the_grammar_layer_still_imports_no_torch():
    """The tensor form lives in the decoding layer: the grammars stay pure Python (docs/design.md)."""
    import subprocess
    import sys

    code = "import sys, toolkit.grammars, transition_systems, tree_codecs; print('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "False"
