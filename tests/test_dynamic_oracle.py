"""Dynamic oracles, held to an exhaustive search: an action is optimal exactly when the best tree
still reachable after it is as good as the best one reachable before it.
"""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import data_root
from tests.test_transition_systems import FISH, labelled, projective_heads, system
from toolkit.data.dataset_readers import DatasetReader
from toolkit.decoding.exploration import ExploredTensors, explore
from toolkit.grammars import Grammar
from toolkit.models import Model
from toolkit.plugins import import_builtin_components
from toolkit.training.train import build_vocabulary

import_builtin_components()

STATE_MLP = {"type": "state_mlp", "input_dim": 16, "dropout": 0.0}
STACK_TRANSFORMER = {"type": "stack_transformer", "input_dim": 16, "layers": {"num_layers": 1, "num_heads": 2, "ff_dim": 32, "dropout": 0.0}}
WRONG = "wrong"  # a relation no gold arc has: labeled costs count it


def best_loss(oracle, config) -> int:
    """The fewest words with a wrong head or relation in any final configuration reachable from *config*: every path tried.

    Relations are independent of what follows (a later arc can always take the gold one), so the
    search runs over heads alone and adds the relations already wrong under a right head.
    """
    gold, memo = oracle.gold, {}

    def wrong_heads(config):
        key = config.stack, config.buffer, config.heads
        if key not in memo:
            if config.is_final():
                memo[key] = sum(head != gold.heads[word] for word, head in enumerate(config.heads) if word)
            else:
                steps = {symbol.partition(":")[0]: symbol for symbol in config.allowed().expand(["root", "x"])}  # one relation per kind
                memo[key] = min(wrong_heads(config.apply(symbol)) for symbol in steps.values())
        return memo[key]

    wrong_relations = sum(head == gold.heads[word] and config.labels[word] != gold.labels[word] for word, head in enumerate(config.heads) if word)
    return wrong_relations + wrong_heads(config)


def walk(oracle, choices):
    """A configuration reached from the start by valid actions picked by *choices* (indices, taken modulo the options)."""
    config = oracle.start
    relations = sorted(set(oracle.gold.labels[1:]) | {WRONG})
    for choice in choices:
        if config.is_final():
            break
        options = config.allowed().expand(relations)
        config = config.apply(options[choice % len(options)])
    return config


@settings(max_examples=150, deadline=None)
@given(projective_heads(max_words=7), st.data(), st.lists(st.integers(0, 50), max_size=14))
def test_arc_hybrid_optimal_actions_are_exactly_those_that_lose_nothing(heads, data, choices):
    ex = labelled(heads, data)
    oracle = system("arc_hybrid").dynamic_oracle(ex)
    config = walk(oracle, choices)
    if config.is_final():
        return
    relations = sorted(set(oracle.gold.labels[1:]) | {WRONG})
    before = best_loss(oracle, config)
    outcomes = {symbol: best_loss(oracle, config.apply(symbol)) for symbol in config.allowed().expand(relations)}
    assert min(outcomes.values()) == before  # some action always loses nothing
    optimal = oracle.optimal(config)
    assert {symbol for symbol, after in outcomes.items() if after == before} == {symbol for symbol in outcomes if symbol in optimal}
    for kind, cost, *_ in oracle.system.action_costs(config, oracle.gold):  # the counts themselves, not only which are zero
        assert cost == min(after for symbol, after in outcomes.items() if symbol.partition(":")[0] == kind) - before


def test_arc_hybrid_costs_by_hand():
    """The sentence "She ate the fish" after SHIFT She and SHIFT ate: stack [root, She, ate], buffer [the, fish]."""
    oracle = system("arc_hybrid").dynamic_oracle(FISH)
    config = oracle.start.apply("SHIFT").apply("SHIFT")
    costs = {kind: cost for kind, cost, *_ in oracle.system.action_costs(config, oracle.gold)}
    # "She" is below its head and "ate" above its own (the root): both are lost already, at no
    # action's cost. Popping "ate" now (LEFT-ARC the -> ate, RIGHT-ARC She -> ate) loses its object
    # "fish" as well; SHIFT "the" loses nothing more.
    assert costs == {"SHIFT": 0, "LEFT-ARC": 1, "RIGHT-ARC": 1}
    assert set(oracle.optimal(config).any_relation.moves) == {"SHIFT"} and not oracle.optimal(config).symbols
    # Back one step, with "She" on top and "ate" in front: LEFT-ARC:nsubj is the one optimal symbol.
    before = oracle.start.apply("SHIFT")
    optimal = oracle.optimal(before)
    assert optimal.symbols == {"LEFT-ARC:nsubj"} and "LEFT-ARC:obj" not in optimal and "SHIFT" not in optimal


def test_after_a_mistake_the_oracle_still_finds_the_best_tree():
    """SHIFT past "She" (the static oracle's path lost): "She" and "ate" are wrong whatever follows, and the oracle still gets "the" and "fish" right."""
    oracle = system("arc_hybrid").dynamic_oracle(FISH)
    config = oracle.start.apply("SHIFT").apply("SHIFT")  # She and ate on the stack: She can no longer get its head
    while not config.is_final():
        optimal = oracle.optimal(config)
        config = config.apply(sorted(optimal.symbols)[0] if optimal.symbols else optimal.any_relation.expand(["dep", "root"])[0])
    assert oracle.loss(config) == 2 and config.heads[3:] == (4, 2)


@pytest.mark.parametrize("name", ["arc_standard", "arc_swap"])
def test_systems_without_a_dynamic_oracle_say_so(name):
    assert system(name).dynamic_oracle(FISH) is None and not system(name).has_dynamic_oracle


# ------------------------------------------------------------------ training with exploration


def tiny_parser(system_name="arc_hybrid", decoder=STATE_MLP, probability=1.0, after_epochs=0, tensor_states=None):
    """A random width-16 parser that explores, its vocabulary from a few EWT sentences; and those sentences as its batch."""
    path = data_root() / "ud-english-ewt" / "en_ewt-ud-dev.conllu"
    if not path.exists():
        pytest.skip(f"{path} not found")
    examples = [e for e in DatasetReader.from_params({"type": "conllu", "max_examples": 16}).read(path) if len(e.tokens) <= 16][:8]
    grammar = Grammar.from_params({"type": system_name})
    torch.manual_seed(0)
    model = Model.from_params(
        {
            "type": "encoder_decoder",
            "encoder": {"type": "transformer", "input_dim": 16, "layers": {"num_layers": 1, "num_heads": 2, "ff_dim": 32, "dropout": 0.0}},
            "decoder": decoder,
            "exploration": {"probability": probability, "after_epochs": after_epochs, "tensor_states": tensor_states},
        },
        vocab=build_vocabulary(examples, grammar),
        grammar=grammar,
    )
    return model, model.collate([model.index(e) for e in examples])


def replayed(oracle, model, path):
    """The configurations a path of symbol ids passes through, and the one it ends in."""
    configs, config = [], oracle.start
    for symbol in model.symbols(path):
        configs.append(config)
        config = config.apply(symbol)
    return configs, config


def as_lists(paths):
    """Explored paths as lists, from tensor states (state_mlp, told to) or Python states."""
    return paths.as_paths() if isinstance(paths, ExploredTensors) else paths


@pytest.mark.parametrize(
    ("decoder", "tensor_states"),
    [(STATE_MLP, False), (STATE_MLP, True), (STACK_TRANSFORMER, None)],
    ids=["state_mlp", "state_mlp on tensors", "stack_transformer"],
)
def test_an_untrained_parser_wanders_and_every_target_is_optimal_where_it_stands(decoder, tensor_states):
    model, batch = tiny_parser(decoder=decoder, probability=1.0, tensor_states=tensor_states)
    explored = explore(model, batch, batch["oracles"], 1.0)
    assert isinstance(explored, ExploredTensors) == bool(tensor_states)
    paths = as_lists(explored)
    assert paths.left_gold > 0  # a random model errs
    wrong = 0
    for oracle, taken, targets, features in zip(batch["oracles"], paths.taken, paths.targets, paths.features):
        configs, final = replayed(oracle, model, taken)
        expected = [config.features() for config in configs]
        assert final.is_final()
        assert features == expected if isinstance(features, list) else torch.equal(features, model.decoder.slot_positions(expected))
        assert all(symbol in oracle.optimal(config) for config, symbol in zip(configs, model.symbols(targets)))
        wrong += oracle.loss(final)
    assert wrong > 0


def test_following_the_oracle_alone_builds_every_gold_tree():
    model, batch = tiny_parser(probability=0.0)
    paths = as_lists(explore(model, batch, batch["oracles"], 0.0))
    assert paths.left_gold == 0 and paths.taken == paths.targets
    for oracle, taken in zip(batch["oracles"], paths.taken):
        assert oracle.loss(replayed(oracle, model, taken)[1]) == 0


def test_the_model_explores_from_the_epoch_its_config_names_and_never_when_validating():
    model, batch = tiny_parser(after_epochs=1)
    model.train()
    model.start_epoch(0)
    static = model(batch)
    assert model.explored_steps == 0
    model.start_epoch(1)
    torch.manual_seed(1)
    encodings, encode = [], model.encode
    model.encode = lambda *args: encodings.append(1) or encode(*args)
    loss = model(batch)["loss"]
    assert len(encodings) == 1  # the path is explored from the encoding the step trains on
    assert model.explored_steps == sum(len(o.start.buffer) * 2 for o in batch["oracles"])  # arc-hybrid: 2n steps each
    loss.backward()
    assert torch.isfinite(loss) and loss.item() != static["loss"].item()
    model.eval()
    before = model.explored_steps
    model(batch)
    assert model.explored_steps == before


def test_a_grammar_without_a_dynamic_oracle_trains_on_its_static_one_and_says_so(caplog):
    model, batch = tiny_parser("arc_standard")
    assert model.exploration is None and "oracles" not in batch
    assert "'arc_standard' has no dynamic oracle" in caplog.text


def test_an_oracle_survives_pickling_as_data_loader_workers_and_the_index_cache_need():
    import pickle

    oracle = system("arc_hybrid").dynamic_oracle(FISH)
    copy = pickle.loads(pickle.dumps(oracle))
    config = copy.start.apply("SHIFT")
    assert copy.optimal(config) == oracle.optimal(oracle.start.apply("SHIFT"))
