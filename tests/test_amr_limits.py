"""Limits that follow the input, not a corpus (issue 53): the AMR grammar's caps and action budget, the searches'
step limits, and the word a search gives when it stopped at one.

Fitted on The Little Prince, the caps were 6 actions per token and 24 nodes per span, and the search's
``max_steps`` 400; another corpus needed 21 actions per token, 33 nodes at one span and 1,231 actions,
and fell back to one-node graphs. Little Prince sentences joined show the same: five of them (97 tokens)
need 6.5 actions per token, twelve (247 tokens) 8.9, as deeper stacks take more SWAPs.
"""

from collections import Counter

import penman
import pytest
import torch

from benchmarks.amr_alignment import lost_labels
from predictors.amr import penman_block, readable
from tests.conftest import FIXTURES, data_root
from toolkit.data.dataset_readers import DatasetReader
from toolkit.data.example import Example
from toolkit.decoding import BeamSearch, GreedySearch
from toolkit.grammars import Grammar, SequenceGrammar
from toolkit.models import Model
from toolkit.plugins import import_builtin_components
from toolkit.training.train import build_vocabulary
from transition_systems.amr import AmrTransitionSystem

import_builtin_components()


@pytest.fixture(scope="module")
def little_prince():
    folder = data_root() / "amr-little-prince"
    if not folder.exists():
        pytest.skip(f"The Little Prince AMR data not found at {folder}")
    reader = DatasetReader.by_name("penman")()
    return {split: reader.read(folder / f"amr-bank-struct-v3.0-{split}.txt") for split in ("train", "dev")}


def joined(examples: list[Example]) -> Example:
    """The sentences as one input, their graphs under one ``multi-sentence`` node (as a document's AMR)."""
    triples = [("m", ":instance", "multi-sentence")]
    for i, example in enumerate(examples, start=1):
        graph = AmrTransitionSystem.target(example)
        renamed = {variable: f"s{i}{variable}" for variable in graph.variables()}
        triples.append(("m", f":snt{i}", renamed[graph.top]))
        triples += [(renamed[source], role, target if role == ":instance" else renamed.get(target, target)) for source, role, target in graph.triples]
    return Example([token for example in examples for token in example.tokens], target=penman.Graph(triples, top="m"), meta={"path": "joined"})


def replayed(grammar: AmrTransitionSystem, example: Example, actions: list[str]):
    state = grammar.initial_state(example)
    for action in actions:
        state = state.apply(action)
    return state


@pytest.mark.parametrize("start, count", [(50, 5), (48, 12)], ids=["97 tokens", "247 tokens"])
def test_a_sentence_far_longer_than_training_is_derived_without_fallback(little_prince, start, count):
    short = [example for example in little_prince["train"] if len(example.tokens) <= 12]
    grammar = AmrTransitionSystem(restrict_pred_labels=False)  # every label allowed: any loss would be a cap's
    grammar.fit(short)
    long = joined(little_prince["dev"][start : start + count])
    assert len(long.tokens) > 8 * 12
    actions, status = grammar.run_oracle(long)
    # 645 and 2,210 actions: 6.5 and 8.9 per token, where the caps of 6 per token fell back
    assert status == "exact" and (len(actions) - 10) / len(long.tokens) > 6
    assert replayed(grammar, long, actions).result() == grammar.gold(long)
    assert len(actions) <= grammar.max_steps(long)


def test_a_dense_short_sentence_is_derived_without_fallback():
    """33 nodes that no word spells, force-aligned to one token of ten, each tied to the first and the one before:
    16 actions per token and 33 nodes at one span, as in the corpus where the caps of 6 and 24 fell back.
    """
    triples = [("h", ":instance", "hub")] + [(f"c{i}", ":instance", f"c{i}") for i in range(1, 33)]
    triples += [("h", f":op{i}", f"c{i}") for i in range(1, 33)] + [(f"c{i}", ":mod", f"c{i + 1}") for i in range(1, 32)]
    words = tuple(f"w{i}" for i in range(10))
    dense = Example(list(words), target=penman.Graph(triples, top="h"), meta={"lemmas": words})
    grammar = AmrTransitionSystem()
    actions, status = grammar.run_oracle(dense)
    state = replayed(grammar, dense, actions)
    assert status == "exact" and state.result() == grammar.gold(dense)
    assert (len(actions) - 10) / 10 > 16 and len(state.labels) == 33 and len(set(state.anchors)) == 1


def test_grammars_bound_their_inputs_steps():
    sentence = Example(["a", "b", "c"], meta={"lemmas": ("a", "b", "c")})
    assert Grammar.by_name("arc_standard")().max_steps(sentence) == 6  # a SHIFT and an arc per word
    assert SequenceGrammar(max_length=50).max_steps(sentence) == 51  # the tokens and the end symbol
    amr, longer = AmrTransitionSystem(), Example(["a"] * 30, meta={"lemmas": ("a",) * 30})
    assert amr.max_steps(sentence) > amr.action_budget(3, amr.node_limit(3)) and amr.max_steps(longer) > 10 * amr.max_steps(sentence)


def tiny_model(examples: list[Example]) -> Model:
    """A random width-16 Stack-Transformer over the AMR actions of *examples*."""
    grammar = AmrTransitionSystem()
    grammar.fit(examples)
    torch.manual_seed(0)
    small = {"input_dim": 16, "layers": {"num_layers": 1, "num_heads": 2, "ff_dim": 32, "dropout": 0.0}}
    params = {"type": "encoder_decoder", "encoder": {"type": "transformer", **small}, "decoder": {"type": "stack_transformer", **small}}
    return Model.from_params(params, vocab=build_vocabulary(examples, grammar), grammar=grammar).eval()


def test_a_search_stopped_by_its_limit_says_so(little_prince):
    examples = [example for example in little_prince["dev"] if len(example.tokens) <= 10][:4]
    model = tiny_model(examples)
    for search in (GreedySearch(max_steps=3), BeamSearch(beam_size=2, max_steps=3)):
        outputs = model.predict(examples, search)
        assert search.cut_short == len(examples)
        assert all(penman.decode(output).metadata["warning"].startswith("cut short: decoding stopped after 3 actions") for output in outputs)
        block = penman_block(1, "a sentence", ["a", "sentence"], readable(outputs[0]))
        assert "\n# ::warning cut short: " in block and penman.decode(block).instances()  # the predictor's PENMAN keeps it
    # no max_steps: each input's own limit from the grammar, within which every parse ends
    search = GreedySearch()
    limits = search.step_limits(model, examples)
    assert limits == [min(model.grammar.max_steps(example), model.max_output_length) for example in examples] and len(set(limits)) > 1
    outputs = model.predict(examples, search)
    assert search.cut_short == 0 and all("cut short" not in output for output in outputs)


def test_a_wrapped_up_parse_says_so():
    unguarded = {"max_repeats_per_span": None, "max_actions_per_span": None}  # the budget alone: ten leaves repeat themselves
    grammar = AmrTransitionSystem(max_actions_per_token=1.0, max_actions_per_node=0.1, max_nodes_per_token=10.0, **unguarded)
    state = grammar.initial_state(Example(["a", "b"], meta={"lemmas": ("a", "b")}))
    for action in ["COPY_LEMMA", "COPY_LEMMA", "LA:ARG0"] + ["DEPENDENT:mod:y"] * 10:  # budget: int(2 + 0.1 x 12 nodes) + 10 = 13
        state = state.apply(action)
    assert state.steps == 13 and "DEPENDENT:mod:y" not in state.allowed()
    for action in ["SHIFT", "SHIFT", "LA:root", "CLOSE"]:
        state = state.apply(action)
    assert (
        state.is_final()
        and penman.decode(state.result()).metadata["warning"] == "wrapped up: the parse reached its action budget (13 actions for 2 tokens and 12 nodes)"
    )


def finish(state, limit: int = 60):
    """Drive a parse past its last token to CLOSE by the first allowed of the moves that end it."""
    for _ in range(limit):
        if state.is_final():
            return state
        allowed = state.allowed()
        state = state.apply(next(move for move in ("SHIFT", "CLOSE", "LA:root", "RA:mod", "REDUCE", "SWAP") if move in allowed))
    raise AssertionError("the parse did not end")


def test_a_span_that_repeats_itself_is_cut_and_the_parse_goes_on():
    grammar = AmrTransitionSystem(max_repeats_per_span=2)
    state = grammar.initial_state(Example(["a", "b"], meta={"lemmas": ("a", "b")}))
    for _ in range(3):
        state = state.apply("COPY_LEMMA")
    assert state.stopped == "it made 'a' 3 times from token 0, more than grammar.max_repeats_per_span = 2"
    assert "COPY_LEMMA" not in state.allowed() and "RA:mod" not in state.allowed() and "SHIFT" in state.allowed()
    state = state.apply("SHIFT")
    assert "COPY_LEMMA" in state.allowed()  # the next span is free again
    state = finish(state.apply("COPY_LEMMA"))
    assert penman.decode(state.result()).metadata["warning"].startswith("stopped: it made 'a' 3 times from token 0")
    assert len(state.labels) == 4  # the cut span's nodes stay, joined into the graph


def test_a_span_that_makes_no_progress_is_cut():
    grammar = AmrTransitionSystem(max_actions_per_span=4, max_repeats_per_span=None)
    state = grammar.initial_state(Example(["a", "b"], meta={"lemmas": ("a", "b")}))
    state = state.apply("COPY_LEMMA")  # 1 action, and 3 earned by the node
    for value in "tuvwxyz":  # leaves: 8 actions in all, past 4 + 3 for the node
        assert not state.stopped
        state = state.apply(f"DEPENDENT:mod:{value}")
    assert state.stopped.startswith("it took 8 actions at token 0 for 1 nodes without moving on") and state.allowed().shift


def test_the_oracle_is_never_cut_and_fitting_raises_the_guards():
    """Two nodes ``x`` from one token: a grammar that allows one per span cuts a parse, never the oracle; fitted, it allows them."""
    example = Example(["x", "y"], target=penman.decode("(a / x :ARG0 (b / x :ARG1 (c / y)))"), meta={"lemmas": ("x", "y")})
    grammar = AmrTransitionSystem(max_repeats_per_span=1, restrict_pred_labels=False)
    actions, status = grammar.run_oracle(example)
    assert status == "exact" and actions[:3] == ["COPY_LEMMA", "LA:root", "COPY_LEMMA"]
    with pytest.raises(ValueError, match="is not allowed"):
        replayed(grammar, example, actions)
    assert grammar.fit_caps([example]) == {"max_repeats_per_span": 3}  # 2 needed, and the margin
    assert replayed(grammar, example, actions).result() == grammar.gold(example)


def test_the_search_counts_the_outputs_it_stopped(little_prince, caplog):
    examples = [example for example in little_prince["dev"] if len(example.tokens) <= 12][:6]
    model = tiny_model(examples)
    model.grammar.max_repeats_per_span, model.grammar.max_actions_per_span = 1, 1  # a random model trips them
    for search in (GreedySearch(), BeamSearch(beam_size=2)):
        with caplog.at_level("INFO", logger="toolkit.decoding.search"):
            outputs = model.predict(examples, search)
        stopped = sum("# ::warning stopped: " in output for output in outputs)
        assert search.stopped == stopped > 0 and f"{stopped} of {len(examples)} outputs come from hypotheses the grammar stopped" in caplog.text
        assert all(penman.decode(output).instances() for output in outputs)


# six figure nodes from one token, as ISI's biomedical AMR makes them: past an unfitted grammar's max_repeats_per_span of 5
FIGURES = Example(
    "Figures 1A-1F show the cells .".split(),
    target=penman.decode(
        '(s / show-01 :ARG0 (a / and :op1 (f1 / figure :mod "1A") :op2 (f2 / figure :mod "1B") :op3 (f3 / figure :mod "1C")'
        ' :op4 (f4 / figure :mod "1D") :op5 (f5 / figure :mod "1E") :op6 (f6 / figure :mod "1F")) :ARG1 (c / cell))'
    ),
)


def test_a_replay_of_the_gold_actions_starts_where_the_oracle_does():
    """The oracle and its replays start at ``derivation_state``, which the span guards do not cut; a parse starts at
    ``initial_state``, which they cut unless the grammar is fitted on the data.
    """
    unfitted = AmrTransitionSystem()
    actions, status = unfitted.run_oracle(FIGURES)
    assert status == "exact" and actions.count("COPY_LEMMA") == 7  # six figures, and the cells
    state = unfitted.derivation_state(FIGURES)
    for action in actions:
        state = state.apply(action)
    assert state.result() == unfitted.gold(FIGURES)
    with pytest.raises(ValueError, match=r"'DEPENDENT:mod:\"1F\"' is not allowed"):
        replayed(unfitted, FIGURES, actions)
    fitted = AmrTransitionSystem()
    assert fitted.fit([FIGURES])["max_repeats_per_span"] == 8  # 6 needed, and the margin
    assert replayed(fitted, FIGURES, actions).result() == fitted.gold(FIGURES)


def test_lost_labels_counts_text_of_another_kind(little_prince):
    """``benchmarks/amr_alignment.py``'s count of the gold labels a grammar fitted on 40 Little Prince graphs does not
    allow, on scientific prose: it replays the oracle as training does, so no span guard cuts it.
    """
    on_the_book = AmrTransitionSystem()
    on_the_book.fit(little_prince["train"][:40])
    science = DatasetReader.by_name("penman")().read(FIXTURES / "amr_science_heldout.txt")
    lost = lost_labels(on_the_book, science)
    assert set(lost) <= {"never in training", "seen with other lemmas"} and sum(lost.values()) > 0
    assert lost_labels(on_the_book, [FIGURES]) == Counter({"never in training": 1})  # PRED:and at "show"; the copies are allowed
    itself = AmrTransitionSystem()
    itself.fit(science + [FIGURES])
    assert lost_labels(itself, science + [FIGURES]) == Counter()  # fitted on the text, it loses nothing of it
