"""Copies with a sense make only PropBank's frames (``propbank_senses``): what a state allows, the oracle, and the record."""

import penman

from toolkit.data.example import Example
from transition_systems.amr import AmrTransitionSystem
from transition_systems.amr.actions import AmrAllowed, senses_of

FRAMES = "describe-01  ARG0: describer\ndescribe-02  ARG0: x\ngive-up-07  ARG0: abandoner\npossible-01  ARG1: thing\nsignal-07  ARG0: shower\n"


def example(tokens, graph, lemmas):
    return Example(tokens, penman.decode(graph), {"lemmas": lemmas})


def allowed_at(grammar, tokens, lemmas, position):
    """What the state allows with the cursor at *position* (SHIFTs before it)."""
    state = grammar.initial_state(Example(tokens, None, {"lemmas": lemmas}))
    for _ in range(position):
        state = state.apply("SHIFT")
    return state.allowed()


def test_senses_of_reads_verbs_and_phrasal_verbs():
    assert senses_of(["give-up-07", "describe-01", "describe-02", "have-degree-91", "and", "anticoagulate-101"]) == {
        "give-up": frozenset({"07"}),
        "describe": frozenset({"01", "02"}),
        "have-degree": frozenset({"91"}),
    }


def test_a_copy_makes_only_a_frame_propbank_has():
    frames = ["describe-01", "describe-02", "give-up-07", "possible-01"]
    grammar = AmrTransitionSystem(mentions="none", restrict_pred_labels=False, propbank_senses=True, propbank_frames=frames)
    tokens, lemmas = ["cells", "described", "gave", "it", "up"], ["cell", "describe", "give", "it", "up"]
    at_cell = allowed_at(grammar, tokens, lemmas, 0)
    assert "COPY_LEMMA" in at_cell and "COPY_SENSE01" not in at_cell and "COPY_LEMMA:01" not in at_cell  # no cell-01
    at_describe = allowed_at(grammar, tokens, lemmas, 1)
    assert "COPY_SENSE01" in at_describe and "COPY_LEMMA:02" in at_describe and "COPY_LEMMA:05" not in at_describe
    at_give = allowed_at(grammar, tokens, lemmas, 2)
    assert "COPY_LEMMA:up-07" in at_give and "COPY_LEMMA:up-08" not in at_give and "COPY_SENSE01" not in at_give
    assert len({at_cell, at_describe, at_give, allowed_at(grammar, tokens, lemmas, 1)}) == 3  # hashable: the model memoises its mask per answer
    assert "COPY_SENSE01" in AmrAllowed(create=True) and "COPY_SENSE01" not in AmrAllowed()  # answers built without senses: as before
    free = AmrTransitionSystem(mentions="none", restrict_pred_labels=False)  # without it, any sense, as before
    assert "COPY_LEMMA:01" in allowed_at(free, tokens, lemmas, 0) and "COPY_LEMMA:05" in allowed_at(free, tokens, lemmas, 1)


def test_fitting_records_the_frames_and_the_oracle_spells_a_non_frame_with_pred(tmp_path):
    (tmp_path / "propbank-amr-frames-arg-descr.txt").write_text(FRAMES)
    grammar = AmrTransitionSystem(dictionaries=str(tmp_path), mentions="none", restrict_pred_labels=False, propbank_senses=True)
    cells = example(["cells", "signal"], "(s / signal-07 :ARG0 (c / cell-01))", ["cell", "signal"])  # cell-01: a gold sense PropBank lacks
    fitted = grammar.fit([cells])
    assert fitted["propbank_frames"] == ["describe-01", "describe-02", "give-up-07", "possible-01", "signal-07"]
    actions = grammar.oracle(cells)
    assert "PRED:cell-01" in actions and "COPY_SENSE01" not in actions and "COPY_LEMMA:07" in actions
    rebuilt = AmrTransitionSystem(mentions="none", restrict_pred_labels=False, propbank_senses=True, propbank_frames=fitted["propbank_frames"])
    assert rebuilt.oracle(cells) == actions  # an archive parses with the frames it recorded, without the dictionaries
    unrecorded = AmrTransitionSystem(dictionaries=str(tmp_path), mentions="none", restrict_pred_labels=False)
    assert "propbank_frames" not in unrecorded.fit([cells])
