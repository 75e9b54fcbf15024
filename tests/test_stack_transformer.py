"""The Stack-Transformer decoder: hand-checked masks, no NaN on empty stacks and buffers, incremental
decoding equal to teacher forcing, searches that agree; and the labeled-SHIFT option of the systems.
"""

import json
import random
import sys
from collections import Counter

import pytest
import torch

from tests.conftest import FIXTURES, data_root
from toolkit.cli import main
from toolkit.data.dataset_readers.conllu import DependencyTree
from toolkit.data.example import Example
from toolkit.data.vocabulary import Vocabulary
from toolkit.decoding import BeamSearch, GreedySearch
from toolkit.errors import ConfigurationError
from toolkit.grammars import Grammar
from toolkit.models import EncoderDecoder
from toolkit.modules.decoders import Decoder, StackTransformerDecoder, TransformerDecoder
from toolkit.modules.encoders import TransformerEncoder
from toolkit.modules.transformer_settings import TransformerSettings
from toolkit.params import Params
from transition_systems import SHIFT, ValidActions, projectivize

# "She ate the fish": She <-nsubj- ate, ate <-root- ROOT, the <-det- fish, fish <-obj- ate.
FISH = Example("She ate the fish".split(), DependencyTree((2, 0, 4, 2), ("nsubj", "root", "det", "obj")))
SWIM = Example("Fish swim".split(), DependencyTree((2, 0), ("nsubj", "root")))
BIRDS = Example("Birds sing in trees".split(), DependencyTree((2, 0, 4, 2), ("nsubj", "root", "case", "obl")))


def tiny_model(seed=0, grammar=None, examples=(FISH, SWIM, BIRDS), randomize_positions=True, **decoder_options) -> EncoderDecoder:
    torch.manual_seed(seed)
    grammar = grammar or Grammar.from_params({"type": "arc_standard"})
    vocab = Vocabulary({"tokens": Counter(t for e in examples for t in e.tokens), "symbols": Counter(s for e in examples for s in grammar.oracle(e))})
    decoder = StackTransformerDecoder(16, TransformerSettings(num_layers=2, num_heads=4, ff_dim=32, dropout=0.0), **decoder_options)
    model = EncoderDecoder(vocab, grammar, TransformerEncoder(16, layers=TransformerSettings(num_layers=1, num_heads=2, ff_dim=32, dropout=0.0)), decoder)
    if randomize_positions:  # zero at initialisation; make them matter
        with torch.no_grad():
            for layer in decoder.layers:
                if getattr(layer, "position_embedding", None) is not None:
                    layer.position_embedding.normal_()
    return model.eval()


def teacher_forced_log_probs(model, batch):
    memory, mask = model.encode(batch["source"])
    features = model.decoder.batch_features(batch["features"], memory.device)
    hidden = model.decoder(model.target_embedding(batch["target_in"]) * model.embedding_scale, memory, mask, features)
    return torch.log_softmax(model.output_projection(hidden), -1)


# ------------------------------------------------------------------ masks


def test_masks_of_a_known_action_sequence():
    """Output t predicts action t, so it sees the state before action t; hand-checked for "She ate the fish"."""
    model = tiny_model(stack_heads=[0], buffer_heads=[2])
    assert model.grammar.oracle(FISH) == ["SHIFT", "SHIFT", "LEFT-ARC:nsubj", "SHIFT", "SHIFT", "LEFT-ARC:det", "RIGHT-ARC:obj", "RIGHT-ARC:root"]
    batch = model.collate([model.index(FISH), model.index(SWIM)])
    index = model.decoder.batch_features(batch["features"], torch.device("cpu"))
    ranks = index.dense(2, 8, 4, torch.device("cpu"))
    assert ranks.shape == (2, 2, 8, 4)
    _ = -1
    stack_depth = [  # before each action; the root is not a token
        [_, _, _, _],  # SHIFT          stack: (empty)
        [0, _, _, _],  # SHIFT          She
        [1, 0, _, _],  # LEFT-ARC:nsubj ate She
        [_, 0, _, _],  # SHIFT          ate
        [_, 1, 0, _],  # SHIFT          the ate
        [_, 2, 1, 0],  # LEFT-ARC:det   fish the ate
        [_, 1, _, 0],  # RIGHT-ARC:obj  fish ate
        [_, 0, _, _],  # RIGHT-ARC:root ate
    ]
    buffer_position = [
        [0, 1, 2, 3],
        [_, 0, 1, 2],
        [_, _, 0, 1],
        [_, _, 0, 1],
        [_, _, _, 0],
        [_, _, _, _],
        [_, _, _, _],
        [_, _, _, _],
    ]
    assert ranks[0, 0].tolist() == stack_depth and ranks[1, 0].tolist() == buffer_position
    # "Fish swim": 4 actions, then padding steps with empty stack and buffer; its source has 2 tokens.
    assert ranks[0, 1].tolist() == [[_, _, _, _], [0, _, _, _], [1, 0, _, _], [_, 0, _, _]] + [[_] * 4] * 4
    assert ranks[1, 1].tolist() == [[0, 1, _, _], [_, 0, _, _], [_, _, _, _], [_, _, _, _]] + [[_] * 4] * 4

    memory_mask = batch["source"] != Vocabulary.PAD_INDEX
    guide = model.decoder.guide(index, memory_mask, 8)
    assert guide.mask.shape == (2, 4, 8, 5)  # (B, H, T, S + the null slot)
    assert torch.equal(guide.mask[:, 0, :, :4], ranks[0] >= 0)  # head 0: the stack
    assert torch.equal(guide.mask[:, 2, :, :4], ranks[1] >= 0)  # head 2: the buffer
    for free in (1, 3):
        assert torch.equal(guide.mask[:, free, :, :4], memory_mask[:, None, :].expand(2, 8, 4))
    assert guide.mask[:, [0, 2], :, 4].all() and not guide.mask[:, [1, 3], :, 4].any()  # the null slot

    # Search builds the same rows from each hypothesis's current state.
    state = model.grammar.initial_state(FISH)
    for t, action in enumerate(model.grammar.oracle(FISH)):
        step = model.decoder.step_features([state.features()], torch.device("cpu")).dense(1, 1, 4, torch.device("cpu"))
        assert step[0, 0, 0].tolist() == stack_depth[t] and step[1, 0, 0].tolist() == buffer_position[t]
        state = state.apply(action)


def test_positions_beyond_max_position_share_the_last_embedding():
    model = tiny_model(max_position=2)
    index = model.decoder.batch_features([model.index(FISH)["features"]], torch.device("cpu"))
    guide = model.decoder.guide(index, torch.ones(1, 4, dtype=torch.bool), 8)
    assert guide.ranks.max() == 1 and guide.ranks[1, 0, 0].tolist() == [0, 1, 1, 1]


@pytest.mark.parametrize("options", [{}, {"stack_heads": [0], "buffer_heads": []}, {"position_embeddings": False}])
def test_empty_stack_or_buffer_gives_no_nan(options):
    """The first step has an empty stack, the last ones an empty buffer, padding steps both: the null slot catches them."""
    model = tiny_model(**options).train()
    one_word = Example(["Hi"], DependencyTree((0,), ("root",)))
    batch = model.collate([model.index(FISH), model.index(one_word)])
    output = model(batch)
    assert torch.isfinite(output["loss"])
    output["loss"].backward()
    assert all(torch.isfinite(p.grad).all() for p in model.parameters() if p.grad is not None)
    model.eval()
    assert torch.isfinite(teacher_forced_log_probs(model, batch)).all()


# ------------------------------------------------------------------ decoding


@pytest.mark.parametrize("options", [{}, {"masked_layers": [1], "stack_heads": [3], "buffer_heads": [0, 2]}])
def test_incremental_decoding_equals_teacher_forcing(options):
    """Step by step, with the search's cache reordered midway, the log-probabilities equal teacher forcing's."""
    assert_incremental_decoding_equals_teacher_forcing(tiny_model(**options))


def assert_incremental_decoding_equals_teacher_forcing(model, examples=(FISH, SWIM)):
    """Decode the oracle's actions one step at a time, rows swapped and one duplicated midway as a beam does, against teacher forcing."""
    batch = model.collate([model.index(example) for example in examples])
    full = teacher_forced_log_probs(model, batch)
    oracles = [model.grammar.oracle(example) for example in examples]
    states = [model.grammar.initial_state(example) for example in examples]
    context = model.start_decoding(batch, use_cache=True)
    prefix = batch["target_in"]
    for t in range(prefix.size(1)):
        if t == 2:  # reorder as beam search does: hypotheses (rows) swapped and one duplicated
            index = torch.tensor([1, 0, 1])
            context, prefix, full = context.reorder(index), prefix[index], full[index]
            states, oracles = [states[i] for i in index], [oracles[i] for i in index]
        step, context = model.decode_step(prefix[:, : t + 1], context, states)
        for i, oracle in enumerate(oracles):
            if t < len(oracle):
                assert torch.allclose(step[i], full[i, t], atol=1e-5), (t, i)
        states = [state.apply(oracle[t]) if t < len(oracle) else state for state, oracle in zip(states, oracles)]


def test_beam_of_one_equals_greedy_and_batching_does_not_leak():
    for seed in range(3):
        model = tiny_model(seed=seed)
        examples = [FISH, SWIM, BIRDS]
        greedy = model.predict(examples, GreedySearch())
        assert model.predict(examples, BeamSearch(beam_size=1, length_penalty=0.0)) == greedy
        beam = model.predict(examples, BeamSearch(beam_size=3))
        assert [model.predict([example], BeamSearch(beam_size=3))[0] for example in examples] == beam
        assert all(tree.heads.count(0) == 1 for tree in greedy + beam)


def all_action_sequences(grammar, example, labels, symbols):
    """Every complete sequence of actions among *symbols* (depth-first through ``allowed``) for *example*."""
    sequences, todo = [], [(grammar.initial_state(example), [])]
    while todo:
        state, actions = todo.pop()
        if state.is_final():
            sequences.append(actions)
            continue
        todo.extend((state.apply(action), actions + [action]) for action in state.allowed().expand(labels) if action in symbols)
    return sequences


def test_a_wide_beam_finds_the_best_action_sequence():
    """With a beam wider than the number of sequences, beam search (reordering its caches every step)
    returns the sequence that teacher forcing scores highest.
    """
    sentence = Example("a b c d".split(), DependencyTree((2, 0, 2, 3), ("x", "root", "x", "y")))
    grammar = Grammar.from_params({"type": "arc_standard"})
    for seed in range(3):
        model = tiny_model(seed=seed, grammar=grammar, examples=[sentence], stack_heads=[0, 1], buffer_heads=[2, 3])
        sequences = all_action_sequences(grammar, sentence, ["x", "y", "root"], model.target_ids)
        assert len(sequences) == 135  # the symbols are SHIFT, LEFT-ARC:x, RIGHT-ARC:x, RIGHT-ARC:y and RIGHT-ARC:root
        indexed = []
        for actions in sequences:
            state, features = grammar.initial_state(sentence), []
            for action in actions:
                features.append(state.features())
                state = state.apply(action)
            indexed.append(
                {
                    "source": model.vocab.indices(sentence.tokens, "tokens"),
                    "target": model.vocab.indices(actions, "symbols"),
                    "features": model.decoder.index_features(features),
                }
            )
        batch = model.collate(indexed)
        log_probs = teacher_forced_log_probs(model, batch).gather(-1, batch["target_out"][..., None])[..., 0]
        scores = log_probs.sum(-1)
        best = sequences[int(scores.argmax())]
        state = grammar.initial_state(sentence)
        for action in best:
            state = state.apply(action)
        found = model.predict([sentence], BeamSearch(beam_size=len(sequences), length_penalty=0.0))[0]
        assert found == state.result()


def test_no_specialised_heads_is_the_plain_transformer():
    torch.manual_seed(0)
    plain = TransformerDecoder(16, layers=TransformerSettings(num_layers=2, num_heads=4, ff_dim=32, dropout=0.0)).eval()
    stack = StackTransformerDecoder(16, layers=TransformerSettings(num_layers=2, num_heads=4, ff_dim=32, dropout=0.0), stack_heads=[], buffer_heads=[]).eval()
    assert not stack.uses_features
    stack.load_state_dict(plain.state_dict())
    embedded, memory = torch.randn(2, 5, 16), torch.randn(2, 3, 16)
    mask = torch.tensor([[True, True, True], [True, True, False]])
    assert torch.allclose(stack(embedded, memory, mask), plain(embedded, memory, mask), atol=1e-6)


def test_configuration_errors_name_the_key():
    for options, key in [
        ({"stack_heads": [4]}, "model.decoder.stack_heads"),
        ({"buffer_heads": [1, 1]}, "model.decoder.buffer_heads"),
        ({"stack_heads": [1], "buffer_heads": [1]}, "stack_heads and buffer_heads"),
        ({"masked_layers": [2]}, "model.decoder.masked_layers"),
        ({"max_position": 0}, "model.decoder.max_position"),
        ({"positional_encoding": {"type": "tree"}}, r"model.decoder.positional_encoding.type: a tree encoding has no tree to read"),
        ({"layers": {"num_heads": 4, "num_layer": 2}}, r"unknown key 'model.decoder.layers.num_layer' \(did you mean 'num_layers'\?\)"),
    ]:
        config = {"type": "stack_transformer", "input_dim": 16, "layers": {"num_layers": 2, "num_heads": 4}, **options}
        with pytest.raises(ConfigurationError, match=key):
            Decoder.from_params(Params(config, "model.decoder."))


# ------------------------------------------------------------------ labeled SHIFT


def labeled(name="arc_standard", words=("the", "ate"), **options):
    return Grammar.from_params({"type": name, "shift_words": list(words), **options})


def test_labeled_shift_names_frequent_words_and_allows_exactly_one_shift():
    grammar = labeled()
    assert grammar.oracle(FISH) == [
        "SHIFT",
        "SHIFT:ate",
        "LEFT-ARC:nsubj",
        "SHIFT:the",
        "SHIFT",
        "LEFT-ARC:det",
        "RIGHT-ARC:obj",
        "RIGHT-ARC:root",
    ]
    state = grammar.initial_state(FISH)
    assert state.allowed() == ValidActions(frozenset({SHIFT}), root_label="root")  # "She" is not decorated: plain SHIFT
    state = state.apply("SHIFT")
    allowed = state.allowed()
    assert "SHIFT:ate" in allowed and SHIFT not in allowed and "SHIFT:the" not in allowed
    assert allowed.expand(["nsubj"]) == ["SHIFT:ate"]
    with pytest.raises(ValueError):
        state.apply("SHIFT")
    assert hash(allowed) == hash(state.allowed())  # still a memoisable value
    final = state
    for action in grammar.oracle(FISH)[1:]:
        final = final.apply(action)
    assert final.result() == FISH.target.without_upos()


def test_labeled_shift_words_are_fitted_on_training_data_and_required():
    grammar = Grammar.from_params({"type": "arc_swap", "labeled_shift_words": 2})
    with pytest.raises(ConfigurationError, match="grammar.labeled_shift_words needs the training words"):
        grammar.initial_state(FISH)
    assert grammar.fit([FISH, BIRDS, Example("the the ate".split())]) == {"shift_words": ["the", "ate"], "max_swaps_per_word": 0.0}
    assert grammar.oracle(FISH)[1] == "SHIFT:ate"
    assert grammar.fit([FISH]) == {}  # fitted once; the recorded words win
    assert grammar.data_report([FISH]) == {
        "non_projective_trees": 0,
        "shift_words": 2,
        "labeled_shifts": 2,
        "swaps": 0,  # arc_swap's own counts: FISH is projective
        "max_swaps_per_word": 0.0,
        "swap_budget_per_word": 0.0,
    }
    with pytest.raises(ConfigurationError, match="^shift_words: must be non-empty words"):
        Grammar.from_params({"type": "arc_standard", "shift_words": ["a b"]})
    with pytest.raises(ConfigurationError, match="^labeled_shift_words: must be >= 0"):
        Grammar.from_params({"type": "arc_hybrid", "labeled_shift_words": -1})


@pytest.mark.parametrize("name", ["arc_standard", "arc_hybrid", "arc_swap"])
def test_labeled_shift_leaves_every_result_unchanged(name):
    rng = random.Random(name)
    vocabulary = ["a", "b", "c", "d"]
    plain, decorated = Grammar.from_params({"type": name}), labeled(name, words=["a", "b"])
    for _ in range(200):
        n = rng.randint(1, 8)
        order = rng.sample(range(1, n + 1), n)
        heads = [0] * n
        for i, word in enumerate(order[1:], start=1):
            heads[word - 1] = rng.choice(order[:i])
        if name != "arc_swap":
            heads = list(projectivize(heads)[0])
        example = Example([rng.choice(vocabulary) for _ in range(n)], DependencyTree(tuple(heads), tuple("root" if h == 0 else "x" for h in heads)))
        symbols = decorated.oracle(example)
        assert [s.split(":")[0] if s.startswith("SHIFT:") else s for s in symbols] == plain.oracle(example)
        assert [s for s in symbols if s.startswith("SHIFT:")] == [f"SHIFT:{t}" for t in example.tokens if t in "ab"] or name == "arc_swap"
        assert decorated.replay(example).result() == plain.replay(example).result() == example.target


@pytest.fixture
def ewt_dev100(tmp_path):
    source = data_root() / "ud-english-ewt" / "en_ewt-ud-dev.conllu"
    if not source.exists():
        pytest.skip(f"UD English-EWT not found at {source}")
    path = tmp_path / "dev100.conllu"
    path.write_text("\n\n".join(source.read_text(encoding="utf-8").split("\n\n")[:100]) + "\n\n", encoding="utf-8")
    return path


def toolkit_oracle(monkeypatch, capsys, *args):
    monkeypatch.setattr(sys, "argv", ["toolkit", "oracle", str(FIXTURES / "tiny_dependency.jsonnet"), *map(str, args)])
    monkeypatch.setenv("TRAIN", "unused")
    monkeypatch.setenv("TEST", "unused")
    try:
        main()
    except SystemExit as exit:
        assert not exit.code, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("grammar", [{"type": "arc_standard"}, {"type": "arc_swap"}])
def test_labeled_shift_round_trips_through_toolkit_oracle(ewt_dev100, monkeypatch, capsys, grammar):
    plain = toolkit_oracle(monkeypatch, capsys, ewt_dev100, "-o", json.dumps({"grammar": grammar}))
    decorated = toolkit_oracle(monkeypatch, capsys, ewt_dev100, "-o", json.dumps({"grammar": {**grammar, "labeled_shift_words": 50}}))
    assert decorated["shift_words"] == 50 and decorated["labeled_shifts"] > 0
    for key in ("exact_round_trips", "oracle_errors", "uas", "las", "mean_symbols", "max_symbols", "non_projective_trees"):
        assert decorated[key] == plain[key], key


def test_the_ewt_config_builds_every_ablation():
    """The config's ablation overrides build (vocabulary from a handful of sentences)."""
    overrides = [
        {},
        {"model.decoder.stack_heads": [], "model.decoder.buffer_heads": []},
        {"model.decoder.stack_heads": []},
        {"grammar.labeled_shift_words": 3},
    ]
    from toolkit.params import merge, unflatten
    from toolkit.training.train import build_vocabulary

    for override in overrides:
        params = Params.from_file(str(FIXTURES.parent.parent / "jsonnet_configs" / "ud_ewt_stack_transformer.jsonnet"), merge({}, unflatten(override)))
        grammar = Grammar.from_params(params.pop("grammar"))
        grammar.fit([FISH, SWIM, BIRDS])
        vocab = build_vocabulary([FISH, SWIM, BIRDS], grammar)
        from toolkit.models.model import Model

        model = Model.from_params(params.pop("model"), vocab=vocab, grammar=grammar)
        assert model.decoder.uses_features == ("model.decoder.buffer_heads" not in override)
        assert model.predict([FISH])[0].heads.count(0) == 1
